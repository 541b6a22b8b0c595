"""``st-debias-torchrun``: ``torchrun`` with the exit codes and one-line errors of every other st-debias command.

It takes torchrun's arguments unchanged (``st-debias-torchrun --nproc_per_node 4 -m st_debias.cli train ...``).
torchrun itself ends with exit 1 and a launcher traceback whenever it stops early; this wrapper says what
happened in one line instead:

* the launcher got SIGTERM or SIGINT (a pre-empted job, Ctrl-C): torchrun stops the workers with the same
  signal, each of which saves a checkpoint (``st-debias train`` does on a signal); exit 128 + the signal's
  number, as a single process would;
* a worker failed (bad input, an error in training): its own message is above; exit with that worker's code
  (2 for bad input), or 1 when a worker was killed by a signal.
"""

from __future__ import annotations

import signal
import sys


def main(argv: list[str] | None = None) -> int:
    from torch.distributed.elastic.multiprocessing.api import SignalException
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError
    from torch.distributed.run import main as torchrun

    try:
        torchrun(argv)
    except SignalException as error:
        number = int(error.sigval)
        print(
            f"st-debias-torchrun: stopped by {signal.Signals(number).name}; the workers were sent the same signal "
            "(a training run saves a checkpoint: run the same command with --resume to go on).",
            file=sys.stderr,
        )
        return 128 + number
    except ChildFailedError as error:
        rank, failure = error.get_first_failure()
        code = failure.exitcode
        how = f"exit code {code}" if code >= 0 else f"signal {signal.Signals(-code).name}"
        print(f"st-debias-torchrun: worker rank {rank} stopped with {how} (its message is above).", file=sys.stderr)
        return code if 0 < code < 256 else 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
