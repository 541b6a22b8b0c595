"""Trainer callbacks that show what drives a run, keep a resumed run's best checkpoint, mark each checkpoint with
its run, and apply a learning rate changed on resume."""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path

import torch
from torch import nn
from transformers import TrainerCallback
from transformers.trainer_callback import ExportableState


class GradientShareCallback(TrainerCallback):
    r"""Log how much each named part of a loss contributes to the gradient, every ``every`` steps.

    A loss that returns named parts (``{"contrastive": ..., "margin": ..., "recall": ...}``) is summed by
    the trainer, and Adam then rescales the sum: a part's weight says little about how much it moves the
    model. This callback measures it. On a measured step it takes, for each part :math:`l_k`, the gradient
    norm :math:`\|\nabla_\theta l_k\|` over the trainable parameters and logs

    * ``grad_norm/<part>``: that norm;
    * ``grad_share/<part>``: :math:`\|\nabla l_k\| / \sum_j \|\nabla l_j\|` (shares sum to 1).

    The figures go to the trainer's logs (and ``trainer.state.log_history``) at the next logging step.
    Cost: one extra backward pass per part on measured steps only.

    Args:
        loss: the loss module given to the trainer (it must return a dict of parts to be measured).
        every: measure every ``every`` optimizer steps (≥ 1).
        parameters: the parameters to measure (default: every trainable parameter of ``loss.model``).

    Example:
        ::

            loss = RecallRegularizer(model, MarginNegationLoss(model, margin_weight=1.0))
            trainer = SentenceTransformerTrainer(model=model, train_dataset=rows, loss=loss,
                                                 callbacks=[GradientShareCallback(loss, every=10)])
    """

    def __init__(self, loss: nn.Module, every: int = 10, parameters: Iterable[nn.Parameter] | None = None) -> None:
        if every < 1:
            raise ValueError(f"GradientShareCallback: every must be ≥ 1, got {every}.")
        self.loss = loss
        self.every = int(every)
        self._parameters = list(parameters) if parameters is not None else None
        self._measure = False
        self._pending: dict[str, float] = {}
        self.history: list[dict[str, float]] = []
        self._handle = loss.register_forward_hook(self._after_forward)

    def _trainable(self) -> list[nn.Parameter]:
        params = self._parameters if self._parameters is not None else list(self.loss.model.parameters())
        return [p for p in params if p.requires_grad]

    def _after_forward(self, module: nn.Module, inputs, output) -> None:
        if not (self._measure and torch.is_grad_enabled() and isinstance(output, dict)):
            return
        self._measure = False  # once per optimizer step, also under gradient accumulation
        params = self._trainable()
        norms: dict[str, float] = {}
        for name, value in output.items():
            if not value.requires_grad:
                norms[name] = 0.0
                continue
            grads = torch.autograd.grad(value, params, retain_graph=True, allow_unused=True)
            norms[name] = math.sqrt(sum(float(g.detach().float().pow(2).sum()) for g in grads if g is not None))
        total = sum(norms.values())
        entry = {f"grad_norm/{k}": v for k, v in norms.items()}
        entry.update({f"grad_share/{k}": (v / total if total > 0 else 0.0) for k, v in norms.items()})
        self._pending = entry

    def on_step_begin(self, args, state, control, **kwargs):
        self._measure = state.global_step % self.every == 0

    def on_log(self, args, state, control, logs=None, **kwargs):
        if not self._pending:
            return
        entry = {"step": state.global_step, **self._pending}
        self.history.append(entry)
        if logs is not None:
            logs.update(self._pending)
        if state.log_history:  # the trainer has already stored this step's logs: add ours to them
            state.log_history[-1].update(self._pending)
        self._pending = {}

    def remove(self) -> None:
        """Detach the hook from the loss."""
        self._handle.remove()


class FindBestCheckpoint(TrainerCallback):
    """Find a run's best checkpoint by its step in the run's own folders, never through the recorded path.

    The trainer records the best checkpoint as a path, relative when ``--output`` was, and follows it on resume:
    from another working directory, or after the run folder was renamed, that path is missing or, worse, names
    another run's checkpoint. The step (``best_global_step``) is recorded too; this callback points the state at
    ``checkpoint-<step>`` in ``checkpoints_dir``, or, for a step no later than the resumed checkpoint, beside that
    checkpoint (``--resume PATH`` of another folder), or at nothing when that folder is gone (the run then keeps its
    last weights, scored at the final step). It does so when training begins and after every save (where the
    trainer looks the step up in ``checkpoints_dir`` alone).

    Args:
        checkpoints_dir: the run's ``checkpoints`` folder.
        resumed: the checkpoint the run resumes from (None for a new run).
    """

    def __init__(self, checkpoints_dir: Path, resumed: str | Path | None = None) -> None:
        self.checkpoints_dir = Path(checkpoints_dir)
        self.resumed = Path(resumed) if resumed is not None else None
        self.resumed_step = 0

    def on_train_begin(self, args, state, control, **kwargs):  # noqa: ANN001 - the TrainerCallback signature
        self.resumed_step = state.global_step if self.resumed is not None else 0
        self._point(state)
        return control

    def on_save(self, args, state, control, **kwargs):  # noqa: ANN001 - the TrainerCallback signature
        self._point(state)
        return control

    def _point(self, state) -> None:  # noqa: ANN001 - a TrainerState
        from .run_folder import CHECKPOINT_PREFIX, recorded_best_step

        # best_global_step is not recorded by older transformers: then the step in the recorded path's name
        step = recorded_best_step(getattr(state, "best_global_step", None), state.best_model_checkpoint)
        if step is None:
            state.best_model_checkpoint = None
            return
        folder = self.resumed.parent if self.resumed is not None and step <= self.resumed_step else self.checkpoints_dir
        found = folder / f"{CHECKPOINT_PREFIX}{step}"
        state.best_model_checkpoint = str(found) if found.is_dir() else None


class CheckpointOwner(TrainerCallback, ExportableState):
    """Records the ``run_id`` of the run that writes a checkpoint in its ``trainer_state.json``
    (``stateful_callbacks``), the file written last, which completes the checkpoint; ``--resume`` refuses a
    checkpoint that does not record its run folder's ``run_id``
    (:func:`~st_debias.recipes.run_folder.resume_checkpoint`).

    Args:
        run_id: the ``run_id`` of the run folder's ``run.json``.
    """

    def __init__(self, run_id: str | None) -> None:
        self.run_id = run_id

    def state(self) -> dict:
        return {"args": {"run_id": self.run_id}, "attributes": {}}


class ResumedLearningRate(TrainerCallback):
    """Apply the run's learning rate to a resumed schedule.

    A checkpoint holds the scheduler's and the optimizer's state, and with them the learning rate the run began
    with: loaded on resume, it silently overrides ``--learning-rate``, and the first resumed step ran at the rate
    the old schedule ended on (0 at the end of a finished run). On resume this callback rescales the schedule's
    base rates so that the largest is ``args.learning_rate`` and sets each parameter group's rate to its base ×
    the schedule's factor at the resumed step: the schedule (warm-up, decay to ``--steps``) takes effect at the
    new rate from the first resumed step on.
    """

    def on_train_begin(self, args, state, control, optimizer=None, lr_scheduler=None, **kwargs):  # noqa: ANN001
        lambdas = getattr(lr_scheduler, "lr_lambdas", None)
        if state.global_step == 0 or optimizer is None or lambdas is None:
            return control
        scale = args.learning_rate / max(lr_scheduler.base_lrs)
        lr_scheduler.base_lrs = [base * scale for base in lr_scheduler.base_lrs]
        for group, base, factor in zip(optimizer.param_groups, lr_scheduler.base_lrs, lambdas, strict=True):
            group["initial_lr"] = base
            group["lr"] = base * factor(lr_scheduler.last_epoch)
        lr_scheduler._last_lr = [group["lr"] for group in optimizer.param_groups]
        return control
