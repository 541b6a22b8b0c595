"""Stop training cleanly on SIGTERM/SIGINT (finish the step, save a checkpoint, report the interruption), and
stop a diverged run (a non-finite loss or gradient) before the step is applied."""

from __future__ import annotations

import signal
import sys
import threading
from pathlib import Path
from types import FrameType
from typing import Any

from transformers import TrainerCallback

from .run_folder import newest_complete_checkpoint


class TrainingInterrupted(RuntimeError):
    """Training stopped on a signal after saving ``checkpoint``; exit with ``exit_code`` (128 + signal)."""

    def __init__(self, signum: int, step: int, checkpoint: str | None) -> None:
        self.signum, self.step, self.checkpoint = signum, step, checkpoint
        self.exit_code = 128 + signum
        saved = f"checkpoint saved: {checkpoint}" if checkpoint else "no checkpoint could be saved"
        super().__init__(f"interrupted by {signal.Signals(signum).name} at step {step}; {saved}.")


class TrainingDiverged(RuntimeError):
    """The loss or the gradient turned non-finite at ``step``; training stopped before applying it (exit 3)."""

    exit_code = 3

    def __init__(self, step: int, loss: float, grad_norm: float, checkpoint: str | None) -> None:
        self.step, self.loss, self.grad_norm, self.checkpoint = step, loss, grad_norm, checkpoint
        kept = (
            f"the last checkpoint, saved before it, is {checkpoint}"
            if checkpoint
            else "no checkpoint was saved before it"
        )
        super().__init__(
            f"training diverged at step {step}: loss {loss}, gradient norm {grad_norm}; the step was not applied "
            f"and no model was saved ({kept}). Train at a lower --learning-rate, or check the data for the cause."
        )


class StopOnNonFinite(TrainerCallback):
    """A trainer callback that raises :class:`TrainingDiverged` when a step's loss or gradient is not finite.

    It runs before the optimizer step, so the weights never take a non-finite update and every checkpoint saved
    before is finite. The loss is read from a forward hook on ``loss`` (the last micro-batch's value). Under
    ``torchrun`` the verdict is shared across processes, so every rank stops at the same step. Mixed precision
    with a loss scaler (``fp16``), where an overflowing step is skipped by design, checks the loss only.

    Args:
        loss: the loss module given to the trainer (returning a tensor or a dict of tensors).
        checkpoints_dir: where the run's checkpoints go (the newest complete one is named in the error).
    """

    def __init__(self, loss: Any, checkpoints_dir: Path) -> None:
        self.checkpoints_dir = Path(checkpoints_dir)
        self._loss: Any = None  # the last forward's loss (a detached scalar tensor)
        loss.register_forward_hook(self._record)

    def _record(self, module: Any, inputs: Any, output: Any) -> None:
        values = output.values() if isinstance(output, dict) else [output]
        self._loss = sum(value.detach().float().sum() for value in values)

    def on_pre_optimizer_step(self, args, state, control, model=None, **kwargs):  # noqa: ANN001 - TrainerCallback
        import torch
        import torch.distributed as dist

        device = args.device
        norms = [
            torch.linalg.vector_norm(p.grad.detach(), dtype=torch.float32).to(device)
            for p in (model.parameters() if model is not None else [])
            if p.grad is not None
        ]
        grad_norm = torch.linalg.vector_norm(torch.stack(norms)) if norms else torch.zeros((), device=device)
        loss = self._loss.to(device) if self._loss is not None else torch.zeros((), device=device)
        # With fp16's loss scaler an overflowing gradient is expected: the scaler skips that step itself.
        checked = loss if args.fp16 else torch.stack([loss, grad_norm])
        flag = (~torch.isfinite(checked)).any().to(torch.int32).reshape(1)
        if dist.is_available() and dist.is_initialized():
            dist.all_reduce(flag, op=dist.ReduceOp.MAX)
        if flag.item():
            checkpoint = newest_complete_checkpoint(self.checkpoints_dir)[0]
            raise TrainingDiverged(state.global_step + 1, float(loss), float(grad_norm), checkpoint and str(checkpoint))
        return control


class SaveAndStopOnSignal(TrainerCallback):
    """A trainer callback that turns SIGTERM/SIGINT into "save a checkpoint at the end of this step and stop".

    A second signal while the checkpoint is being written falls back to the default handler (exit at once).
    Under ``torchrun`` the stop decision is shared across processes, so every rank saves at the same step.
    """

    def __init__(self, signals: tuple[signal.Signals, ...] = (signal.SIGTERM, signal.SIGINT)) -> None:
        self.signals = signals
        self.received: int | None = None
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> SaveAndStopOnSignal:
        if threading.current_thread() is not threading.main_thread():
            return self  # signal handlers can only be set from the main thread; keep the defaults there
        for signum in self.signals:
            self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc_info: object) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        self._previous.clear()

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.received is not None:
            signal.signal(signum, signal.SIG_DFL)
            signal.raise_signal(signum)
            return
        self.received = signum
        print(
            f"\n[st-debias train] {signal.Signals(signum).name} received: saving a checkpoint after this step, then "
            "stopping (send it again to stop at once, without a checkpoint).",
            file=sys.stderr,
            flush=True,
        )

    def _stop_requested(self, device: Any) -> bool:
        import torch
        import torch.distributed as dist

        if not (dist.is_available() and dist.is_initialized()):
            return self.received is not None
        flag = torch.tensor([0 if self.received is None else self.received], device=device)
        dist.all_reduce(flag, op=dist.ReduceOp.MAX)
        if self.received is None and int(flag.item()):
            self.received = int(flag.item())
        return self.received is not None

    def on_step_end(self, args, state, control, **kwargs):  # noqa: ANN001 - the TrainerCallback signature
        if self._stop_requested(args.device):
            control.should_save = True
            control.should_training_stop = True
        return control
