"""The training runner shared by ``compare.py`` and ``select_dev.py``: train one recipe, write its result
file stamped with :func:`st_debias.provenance.stamp`, and reuse an earlier result only when its stamp
matches the current code (or when ``reuse_stale`` says so)."""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from st_debias.provenance import stamp, stamp_differences


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


def write_result(target: Path, entry: dict[str, Any], provenance: dict[str, Any]) -> Path:
    """Write ``entry`` with its ``provenance`` to ``target`` atomically (temp file, then rename)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    with os.fdopen(handle, "w") as out:
        out.write(json.dumps({**entry, "provenance": provenance}, indent=1, default=str))
    os.replace(temp, target)
    return target


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
    return write_result(target, entry(result, round(time.perf_counter() - start, 1)), current)
