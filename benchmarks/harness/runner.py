"""The training runner of the recipe studies (``compare/compare.py``, ``selection/select_dev.py``): train one
recipe, write its result file stamped with :func:`benchmarks.harness.provenance.stamp`, and reuse an earlier
result only when its stamp matches the current code (or when ``reuse_stale`` says so)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.harness.provenance import stamp, stamp_differences, write_stamped_json

ARCHIVE = "archive"
"""Subfolder of a results folder for result files without a provenance stamp (its README says what they are)."""


def result_files(folder: Path) -> tuple[list[Path], list[Path]]:
    """The ``*-seed*.json`` result files of ``folder``, and the archived (unstamped) ones of ``folder/archive``
    whose name has no file in ``folder``: a table is built from both, a stamped rerun replacing the archived
    file."""
    current = sorted(folder.glob("*-seed*.json"))
    names = {path.name for path in current}
    archived = [path for path in sorted((folder / ARCHIVE).glob("*-seed*.json")) if path.name not in names]
    return current, archived


def reusable(target: Path, current: dict[str, Any], reuse_stale: bool = False, tag: str = "bench") -> bool:
    """Whether ``target`` holds a result that may be reused instead of training again.

    A result whose stamp differs from ``current`` (other commit, package or builder version, a dirty tree,
    or no stamp at all) is rerun unless ``reuse_stale``; the reason is printed either way.
    """
    if not target.exists():
        return False
    old = json.loads(target.read_text()).get("provenance")
    differences = stamp_differences(old, current)
    if not differences:
        print(f"[{tag}] {target.name} matches this code, reusing", flush=True)
        return True
    reason = "; ".join(differences)
    if reuse_stale:
        print(f"[{tag}] {target.name} is stale ({reason}), reusing as asked (--reuse-stale)", flush=True)
        return True
    print(f"[{tag}] {target.name} is stale ({reason}), running again", flush=True)
    return False


def train_and_record(
    target: Path,
    recipe,
    *,
    work_dir: Path,
    entry: Callable[[Any, float], dict[str, Any]],
    model: str | None = None,
    evaluate: bool = True,
    quiet: bool = False,
    reuse_stale: bool = False,
    tag: str = "bench",
    **train_options: Any,
) -> Path:
    """Train ``recipe`` into ``work_dir`` and write ``entry(result, wall_seconds)`` to ``target``, unless
    ``target`` already holds a reusable result (see :func:`reusable`). ``train_options`` go to
    :func:`st_debias.recipes.train_recipe` (e.g. ``gradient_share_every``)."""
    current = stamp()
    if reusable(target, current, reuse_stale, tag):
        return target
    from st_debias.recipes import train_recipe

    start = time.perf_counter()
    # No reusable result: a leftover run folder is from an interrupted or stale attempt, so it is replaced.
    result = train_recipe(
        recipe, model=model, output_dir=work_dir, evaluate=evaluate, show_progress_bar=not quiet, overwrite=True,
        **train_options,
    )
    return write_stamped_json(target, entry(result, round(time.perf_counter() - start, 1)), current, indent=1)
