"""The training runner of the recipe studies (``compare/compare.py``, ``selection/select_dev.py``): train one
recipe, write its result file stamped with :func:`benchmarks.harness.provenance.stamp`, and reuse an earlier
result only when its stamp matches the current code (or when ``reuse_stale`` says so). A run cut short (a
session's end) continues from its newest complete checkpoint with ``resume``, but only under the code, recipe and
options it started with (``started.json`` in its work folder records them)."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.harness.provenance import stamp, stamp_differences, write_stamped_json
from st_debias.files import atomic_write_json

ARCHIVE = "archive"
"""Subfolder of a results folder for result files without a provenance stamp (its README says what they are)."""

STARTED = "started.json"
"""File of a run's work folder recording the code (stamp), recipe and options the run started with."""


def _seed_files(folder: Path) -> list[Path]:
    return sorted(path for path in folder.glob("*-seed*.json") if re.search(r"-seed\d+\.json$", path.name))


def result_files(folder: Path) -> tuple[list[Path], list[Path]]:
    """The ``<name>-seed<N>.json`` result files of ``folder`` (not ``…-seed<N>-test.json`` and other files
    scored from a run), and the archived (unstamped) ones of ``folder/archive``
    whose name has no file in ``folder``: a table is built from both, a stamped rerun replacing the archived
    file."""
    current = _seed_files(folder)
    names = {path.name for path in current}
    archived = [path for path in _seed_files(folder / ARCHIVE) if path.name not in names]
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


def _check_same_start(work_dir: Path, started_with: dict[str, Any], tag: str) -> None:
    """Stop (``SystemExit``, naming every difference) unless the run in ``work_dir`` started as
    ``started_with`` says: under the same code, with the same recipe and options."""
    path = work_dir / STARTED
    recorded = json.loads(path.read_text()) if path.is_file() else None
    if not isinstance(recorded, dict) or "provenance" not in recorded:
        raise SystemExit(
            f"[{tag}] error: cannot resume {work_dir}: it holds no record of how it started ({STARTED}); "
            "run without --resume to start again"
        )
    differences = stamp_differences(recorded["provenance"], started_with["provenance"])
    differences += [
        f"{field} differs" for field in ("recipe", "options") if recorded.get(field) != started_with[field]
    ]
    if differences:
        raise SystemExit(
            f"[{tag}] error: cannot resume {work_dir}: it started otherwise ({'; '.join(differences)}); "
            "resume with the commit and the command it started with, or run without --resume to start again"
        )


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
    resume: bool = False,
    **train_options: Any,
) -> Path:
    """Train ``recipe`` into ``work_dir`` and write ``entry(result, wall_seconds)`` to ``target``, unless
    ``target`` already holds a reusable result (see :func:`reusable`). ``train_options`` go to
    :func:`st_debias.recipes.train_recipe` (e.g. ``gradient_share_every``).

    With ``resume``, a run left in ``work_dir`` continues from its newest complete checkpoint when it started
    under the current code with the same recipe and options (``started.json`` records them; the result then
    records ``resumed_from`` and only this part's wall time); without a checkpoint it starts afresh.
    Otherwise a leftover run folder is replaced.

    Raises:
        SystemExit: another live run holds ``work_dir``; or ``resume`` and the run in ``work_dir`` started under
            other code, or with another recipe or options (the differences named).
    """
    current = stamp()
    if reusable(target, current, reuse_stale, tag):
        return target
    from st_debias.files import hold_output_folder
    from st_debias.recipes import train_recipe
    from st_debias.recipes.run_folder import newest_complete_checkpoint

    # What must not change while a run is cut short and resumed: the code, and what it was asked to train.
    started_with = json.loads(json.dumps({  # as read back from started.json (lists for tuples)
        "provenance": current,
        "recipe": recipe.to_dict() if hasattr(recipe, "to_dict") else recipe,
        "options": {"model": model, "evaluate": evaluate, **train_options},
    }, default=str))
    checkpoint = newest_complete_checkpoint(work_dir / "checkpoints")[0] if resume else None
    try:
        with hold_output_folder(work_dir):  # no run may be training into it meanwhile
            if checkpoint is not None:
                _check_same_start(work_dir, started_with, tag)
                print(f"[{tag}] resuming {work_dir} from {checkpoint.name}", flush=True)
            else:
                if resume:
                    print(f"[{tag}] nothing to resume in {work_dir}: starting the run", flush=True)
                atomic_write_json(work_dir / STARTED, started_with)
    except ValueError as error:  # the folder is in use by a live run
        raise SystemExit(f"[{tag}] error: {error}") from None
    start = time.perf_counter()
    result = train_recipe(
        recipe, model=model, output_dir=work_dir, evaluate=evaluate, show_progress_bar=not quiet,
        overwrite=checkpoint is None, resume_from_checkpoint=True if checkpoint is not None else None,
        **train_options,
    )
    record = entry(result, round(time.perf_counter() - start, 1))
    if checkpoint is not None:
        record["resumed_from"] = checkpoint.name
    return write_stamped_json(target, record, current, indent=1)
