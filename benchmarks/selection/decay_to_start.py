"""An experimental bound on drift: after each optimiser step, pull every trainable weight back toward its start
value by ``learning rate × strength × (θ − θ_start)`` (``select_dev.py --decay-to-start STRENGTH``).

The recall regulariser adds γ(θ − θ_start) to the gradient, which Adam then normalises: where the loss's own
gradient is tiny, the pull sets the update's direction. Applied after the step instead (decoupled, as AdamW
applies weight decay), the pull shrinks the drift without steering Adam's step.
"""

from __future__ import annotations

import torch
from transformers import TrainerCallback


class DecayToStart(TrainerCallback):
    def __init__(self, strength: float) -> None:
        if not strength > 0:
            raise ValueError(f"--decay-to-start must be > 0, got {strength!r}.")
        self.strength = strength
        self.start: dict[str, torch.Tensor] = {}

    def __repr__(self) -> str:  # recorded in a run's started.json: the same for the same setting
        return f"DecayToStart(strength={self.strength:g})"

    def on_train_begin(self, args, state, control, model=None, **kwargs):
        if state.global_step > 0:
            raise ValueError("DecayToStart cannot resume a run: the start weights are the ones training began with.")
        self.start = {name: p.detach().clone() for name, p in model.named_parameters() if p.requires_grad}

    @torch.no_grad()
    def on_step_end(self, args, state, control, model=None, lr_scheduler=None, **kwargs):
        rate = lr_scheduler.get_last_lr()[0] * self.strength
        for name, parameter in model.named_parameters():
            start = self.start.get(name)
            if start is not None:
                parameter.sub_(rate * (parameter - start))
