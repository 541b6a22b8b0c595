"""One-line stage announcements printed before long steps (encoding, building rows, training).

Each long stage says what it is about to do, with counts, before its progress bar starts, so that a
user never faces a bare ``Batches: 0/498``. Lines start with :data:`STAGE_PREFIX` and go to stderr,
beside tqdm's bars, so scripts (``benchmarks/quickstart/bench_main_job.py``) can time the stages.
"""

from __future__ import annotations

import sys

STAGE_PREFIX = "[st-debias]"


def announce(message: str, enabled: bool = True) -> None:
    """Print ``[st-debias] message`` on its own line on stderr (nothing when ``enabled`` is false)."""
    if enabled:
        print(f"{STAGE_PREFIX} {message}", file=sys.stderr, flush=True)


def torch_threads() -> str:
    """``'N torch threads on M usable CPUs'``: the figure that explains most CPU encoding speeds."""
    import os

    import torch

    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    threads = torch.get_num_threads()
    return f"{threads} torch thread{'s' * (threads != 1)} on {usable} usable CPU{'s' * (usable != 1)}"
