"""One-line stage announcements printed before long steps (encoding, building rows, training).

Each long stage says what it is about to do, with counts, before its progress bar starts, so that a
user never faces a bare ``Batches: 0/498``. Lines start with :data:`STAGE_PREFIX` and go to stderr,
beside tqdm's bars, so scripts (``benchmarks/quickstart/bench_main_job.py``) can time the stages.
"""

from __future__ import annotations

import os
import sys

STAGE_PREFIX = "[st-debias]"


def announce(message: str, enabled: bool = True) -> None:
    """Print ``[st-debias] message`` on its own line on stderr (nothing when ``enabled`` is false)."""
    if enabled:
        print(f"{STAGE_PREFIX} {message}", file=sys.stderr, flush=True)


def usable_cores() -> int:
    """The CPUs this process may run on (its affinity mask where the platform has one)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def torch_threads() -> str:
    """``'N torch threads on M usable CPUs'``: the figure that explains most CPU encoding speeds."""
    import torch

    usable = usable_cores()
    threads = torch.get_num_threads()
    return f"{threads} torch thread{'s' * (threads != 1)} on {usable} usable CPU{'s' * (usable != 1)}"
