"""Stop training cleanly on SIGTERM/SIGINT: finish the step, save a checkpoint, then report the interruption."""

from __future__ import annotations

import signal
import sys
import threading
from types import FrameType
from typing import Any

from transformers import TrainerCallback


class TrainingInterrupted(RuntimeError):
    """Training stopped on a signal after saving ``checkpoint``; exit with ``exit_code`` (128 + signal)."""

    def __init__(self, signum: int, step: int, checkpoint: str | None) -> None:
        self.signum, self.step, self.checkpoint = signum, step, checkpoint
        self.exit_code = 128 + signum
        saved = f"checkpoint saved: {checkpoint}" if checkpoint else "no checkpoint could be saved"
        super().__init__(f"interrupted by {signal.Signals(signum).name} at step {step}; {saved}.")


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
