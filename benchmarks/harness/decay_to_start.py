"""The pull back toward the start weights after each optimiser step: the callback behind the lab's recipe setting
``training.decay_to_start`` (:mod:`benchmarks.harness.recipe_knobs`)."""

from __future__ import annotations

import torch
from transformers import TrainerCallback


class DecayToStart(TrainerCallback):
    r"""After each optimiser step, move every trainable weight back toward its start value:

    .. math::

        \theta \leftarrow \theta - \eta_t \, s \, (\theta - \theta_0)

    with :math:`\eta_t` the learning rate, :math:`s` the ``strength`` and :math:`\theta_0` the weights the
    trainer was built with. The recall regulariser adds :math:`\gamma(\theta - \theta_0)` to the gradient, which
    Adam then normalises; applied after the step instead, as AdamW applies weight decay, the pull shrinks the
    distance from the start without steering the step. With :math:`\eta_t s = 1` the weights return exactly to
    the start. The start weights are copied when the trainer is built, before a checkpoint is loaded, so a resumed
    run pulls toward the same weights as the run it continues.

    Args:
        strength: :math:`s` (> 0); ``training.decay_to_start`` in a recipe.
    """

    def __init__(self, strength: float) -> None:
        if not strength > 0:
            raise ValueError(f"DecayToStart: strength must be > 0, got {strength!r}.")
        self.strength = strength
        self.start: dict[str, torch.Tensor] = {}

    def __repr__(self) -> str:
        return f"DecayToStart(strength={self.strength:g})"

    def on_init_end(self, args, state, control, model=None, **kwargs):  # noqa: ANN001 - the TrainerCallback signature
        self.start = {name: p.detach().clone() for name, p in model.named_parameters() if p.requires_grad}

    @torch.no_grad()
    def on_step_end(self, args, state, control, model=None, lr_scheduler=None, **kwargs):  # noqa: ANN001
        rate = lr_scheduler.get_last_lr()[0] * self.strength
        for name, parameter in model.named_parameters():
            start = self.start.get(name)
            if start is not None:
                parameter.sub_(rate * (parameter - start))
