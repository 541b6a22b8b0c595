"""A training run's output folder: who owns it (``run.json``), fresh start vs resume, and complete checkpoints.

``run.json`` records what makes two runs the same run, by content: recipe (name, version, data and loss
sections), start model (its resolved path, a fingerprint of its weights and one of its tokenizer), corpus (its
resolved path and the sha256 of its bytes) and seed, plus a ``run_id`` drawn when the run starts. Every checkpoint
records the ``run_id`` of the run that wrote it (in ``trainer_state.json``,
:class:`~st_debias.recipes.callbacks.CheckpointOwner`).
``--resume`` continues only a run with the same identity, from a checkpoint that records its ``run_id``; a new
run into a folder that already holds one needs ``--overwrite``. Budget fields (steps, batch size, learning rate)
may change on resume: that is how a run is extended.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import uuid
import zipfile
from pathlib import Path
from typing import Any

from st_debias.files import atomic_write_json, check_writable_folder

from .config import Recipe

logger = logging.getLogger(__name__)

RUN_FILE = "run.json"
# What a run writes into its folder: removed by --overwrite (nothing else in the folder is touched).
RUN_OUTPUTS = (RUN_FILE, "checkpoints", "model", "eval", "data_report.json")
CHECKPOINT_PREFIX = "checkpoint-"
# The trainer writes trainer_state.json last: a checkpoint without it (or without whole weights) was cut short.
CHECKPOINT_WEIGHTS = ("model.safetensors", "pytorch_model.bin")


def run_identity(
    recipe: Recipe, model: str, corpus: str | os.PathLike[str] | None, start_model: Any = None
) -> dict[str, Any]:
    """The fields a resumed run must share with the run in its folder.

    Args:
        recipe: the recipe (name, version, data and loss sections and seed are recorded).
        model: the resolved model name (:func:`st_debias.paths.resolve_model_name`); a local path is recorded
            resolved, so a relative and an absolute path to one folder are the same model.
        corpus: the corpus file (None: the shared default) or the --rows file or folder, recorded resolved with the
            sha256 of its bytes.
        start_model: the loaded start model, whose weights and tokenizer are fingerprinted (None: not recorded).
    """
    from st_debias.data.io.corpus import WIKI_CORPUS
    from st_debias.datafiles import file_sha256
    from st_debias.paths import data_file

    local = Path(model).expanduser()
    identity: dict[str, Any] = {
        "recipe": recipe.name,
        "recipe_version": recipe.version,
        "data": recipe.to_dict()["data"],
        "loss": recipe.to_dict()["loss"],
        "model": str(local.resolve()) if local.exists() else model,
        "corpus": str(Path(corpus).resolve()) if corpus is not None else "default",
        "seed": recipe.training.seed,
    }
    if start_model is not None:
        from st_debias.fingerprint import model_fingerprint, tokenizer_fingerprint

        identity["model_weights"] = model_fingerprint(start_model)
        identity["model_tokenizer"] = tokenizer_fingerprint(start_model)
    corpus_file = Path(corpus) if corpus is not None else data_file(WIKI_CORPUS)
    if corpus_file.is_file():
        identity["corpus_sha256"] = file_sha256(corpus_file)
    elif corpus_file.is_dir():  # a saved datasets folder of --rows: every file's bytes, in name order
        digest = hashlib.sha256()
        for path in sorted(p for p in corpus_file.rglob("*") if p.is_file()):
            digest.update(f"{path.relative_to(corpus_file).as_posix()}\0{file_sha256(path)}\0".encode())
        identity["corpus_sha256"] = digest.hexdigest()
    return identity


def _read_run(run_dir: Path, what: str) -> dict[str, Any]:
    """``run_dir/run.json`` as a dict; ``ValueError`` naming it when it is missing or unreadable."""
    run_file = run_dir / RUN_FILE
    if not run_file.is_file():
        raise ValueError(
            f"{what}: {run_dir} holds no {RUN_FILE}, so it is not a st-debias training run this version "
            "can verify; start a new run (a new --output, or --overwrite)."
        )
    try:
        recorded = json.loads(run_file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ValueError(f"{what}: {run_file} is unreadable ({error}).") from error
    if not isinstance(recorded, dict):
        raise ValueError(f"{what}: {run_file} is not a run record (a JSON object).")
    return recorded


def _check_same_run(run_dir: Path, identity: dict[str, Any], what: str) -> dict[str, Any]:
    """The record in ``run_dir/run.json``; ``ValueError`` unless it records ``identity`` (naming every
    difference)."""
    recorded = _read_run(run_dir, what)
    differences = [
        f"{key}: folder has {recorded.get(key)!r}, this run has {value!r}"
        for key, value in identity.items()
        if recorded.get(key) != value
    ]
    if differences:
        raise ValueError(
            f"{what}: {run_dir} holds a different run ({_describe(recorded)}); refusing to continue it as "
            f"{_describe(identity)}. Differences: "
            + "; ".join(differences)
            + ". Resume with the same recipe, model, corpus and seed (same files, same contents), or use a new "
            "--output."
        )
    return recorded


def _describe(identity: dict[str, Any]) -> str:
    return f"recipe {identity.get('recipe')!r} v{identity.get('recipe_version')}, model {identity.get('model')}, seed {identity.get('seed')}"


def prepare_output(output_dir: Path, identity: dict[str, Any], *, resume: bool, overwrite: bool) -> str | None:
    """Check ``output_dir`` before any long work, then record ``identity`` in it; return the run's ``run_id``
    (drawn for a new run, read from ``run.json`` on resume; None for a resumed run of an older version).

    Raises:
        ValueError: resuming a folder that holds another run (or none), or a new run into a folder that
            holds one without ``overwrite``.
        OSError: the folder cannot be written.
    """
    check_writable_folder(output_dir)
    _remove_staging(output_dir)
    if resume:
        return _check_same_run(output_dir, identity, "--resume").get("run_id")
    existing = [name for name in RUN_OUTPUTS if (output_dir / name).exists()]
    if existing and _holds_results(output_dir):
        if not overwrite:
            raise ValueError(
                f"{output_dir} already holds a run ({', '.join(existing)}); pass --resume to continue it or "
                "--overwrite to replace it, or choose a new --output."
            )
        for name in existing:
            target = output_dir / name
            shutil.rmtree(target) if target.is_dir() else target.unlink()
        logger.warning("--overwrite: removed %s from %s.", ", ".join(existing), output_dir)
    elif existing:  # leftovers of a run that stopped before its first checkpoint: nothing to keep
        for name in existing:
            target = output_dir / name
            shutil.rmtree(target) if target.is_dir() else target.unlink()
    run_id = uuid.uuid4().hex
    atomic_write_json(output_dir / RUN_FILE, {**identity, "run_id": run_id})
    return run_id


def _remove_staging(output_dir: Path) -> None:
    """Remove what a killed run left half-written in ``output_dir`` (the caller holds the folder's lock)."""
    for path in output_dir.glob(".*.tmp"):  # staged model/ (st_debias.files.staged_folder), temporary files
        if path.exists():
            shutil.rmtree(path) if path.is_dir() else path.unlink()
            logger.warning("Removed %s, left half-written by a run that was killed.", path)


def _holds_results(output_dir: Path) -> bool:
    """True when a run left a checkpoint or a model (a run.json alone is from a run that failed before training)."""
    return any((output_dir / "checkpoints").glob(f"{CHECKPOINT_PREFIX}*")) or any(
        (output_dir / name).exists() for name in ("model", "eval", "data_report.json")
    )


def checkpoint_problem(folder: Path) -> str | None:
    """Why ``folder`` is not a complete checkpoint (cut short by a kill or a full disk), or None when it is.

    Complete means: ``trainer_state.json`` parses and records a step, the weights file is whole (a safetensors
    header that parses and a file as long as it says; a ``.bin`` that is a whole zip archive), and every other
    ``.pt``/``.pth`` state file (optimizer, scheduler, random state) is a whole zip archive.
    """
    state = folder / "trainer_state.json"
    if not state.is_file():
        return "no trainer_state.json"
    try:
        recorded = json.loads(state.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        return f"trainer_state.json does not parse ({error})"
    if not isinstance(recorded, dict) or not isinstance(recorded.get("global_step"), int):
        return "trainer_state.json records no global_step"
    weights = [folder / name for name in CHECKPOINT_WEIGHTS if (folder / name).is_file()]
    if not weights:
        return f"no weights ({' or '.join(CHECKPOINT_WEIGHTS)})"
    for path in [weights[0], *sorted(folder.glob("*.pt")), *sorted(folder.glob("*.pth"))]:
        if path.suffix == ".safetensors":
            problem = _safetensors_problem(path)
        else:  # torch.save writes a zip archive, whose directory is at its end: a cut-short one has none
            problem = None if zipfile.is_zipfile(path) else f"{path.name} is not a whole torch file (cut short?)"
        if problem is not None:
            return problem
    return None


def _safetensors_problem(path: Path) -> str | None:
    """Why a ``.safetensors`` file is not whole, or None: its header must parse and its data must all be there."""
    size = path.stat().st_size
    try:
        with path.open("rb") as stream:
            length = int.from_bytes(stream.read(8), "little")
            if size < 8 or length > size - 8:
                raise ValueError("header longer than the file")
            header = json.loads(stream.read(length))
        end = max((entry["data_offsets"][1] for key, entry in header.items() if key != "__metadata__"), default=0)
    except (OSError, ValueError, KeyError, TypeError, IndexError) as error:
        return f"{path.name} has no readable header ({error})"
    if 8 + length + end > size:
        return f"{path.name} is cut short ({size:,} of {8 + length + end:,} bytes)"
    return None


def resume_checkpoint(
    checkpoints_dir: Path,
    requested: bool | str,
    identity: dict[str, Any] | None = None,
    run_id: str | None = None,
    steps: int | None = None,
) -> str:
    """The checkpoint to resume from: the given one (checked) or the newest complete one in ``checkpoints_dir``.

    A given checkpoint outside ``checkpoints_dir`` must belong to a run folder (``<run>/checkpoints/<name>``) whose
    ``run.json`` records ``identity``. Incomplete checkpoints (a kill or full disk while saving) are skipped with
    a warning that names each one and why. With ``identity`` given, the checkpoint and the best checkpoint it
    records (found by step in the same folder) must record the ``run_id`` of their run folder.

    Args:
        checkpoints_dir: the run's ``checkpoints`` folder.
        requested: True (the newest complete checkpoint) or a checkpoint path.
        identity: the resumed run's identity (:func:`run_identity`); None skips every ownership check.
        run_id: the ``run_id`` recorded in this run's ``run.json``.
        steps: the run's step budget (``--steps``); a checkpoint past it is refused.

    Raises:
        ValueError: the given checkpoint is incomplete or from another run, a checkpoint does not record its
            folder's run, ``steps`` is below the checkpoint's step, or no checkpoint is complete.
    """
    if requested is not True:
        folder = Path(requested)
        problem = checkpoint_problem(folder)
        if problem is not None:
            raise ValueError(
                f"--resume {folder}: not a complete checkpoint ({problem}); it may have been cut short while saving."
            )
        if identity is not None and folder.resolve().parent != checkpoints_dir.resolve():
            run_id = _check_same_run(folder.resolve().parent.parent, identity, f"--resume {folder}").get("run_id")
    else:
        newest, skipped = newest_complete_checkpoint(checkpoints_dir)
        if newest is None:
            found = f" (incomplete only: {'; '.join(skipped)})" if skipped else ""
            raise ValueError(f"--resume: no complete checkpoint in {checkpoints_dir}{found}.")
        if skipped:
            logger.warning("Skipped incomplete checkpoint(s) %s; resuming from %s.", "; ".join(skipped), newest)
        folder = newest
    if identity is not None:
        _check_owned(folder, run_id)
        best = best_checkpoint_by_step(folder)
        if best is not None and best.is_dir():
            _check_owned(best, run_id)
    step = checkpoint_step(folder)
    if steps is not None and step is not None and steps < step:
        raise ValueError(
            f"--resume {folder}: the checkpoint is at step {step}, past --steps {steps}; pass --steps {step} or "
            "more to continue (or finish) this run."
        )
    return str(folder)


def _trainer_state(folder: Path) -> dict[str, Any]:
    """A checkpoint's ``trainer_state.json`` (``{}`` when it is missing or unreadable)."""
    try:
        recorded = json.loads((folder / "trainer_state.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return recorded if isinstance(recorded, dict) else {}


def checkpoint_run_id(folder: Path) -> str | None:
    """The ``run_id`` a checkpoint records (:class:`~st_debias.recipes.callbacks.CheckpointOwner`), or None when it records none."""
    from .callbacks import CheckpointOwner

    owner = (_trainer_state(folder).get("stateful_callbacks") or {}).get(CheckpointOwner.__name__)
    if isinstance(owner, list):  # the trainer stores several instances of one callback as a list
        owner = owner[0] if owner else None
    run_id = (owner or {}).get("args", {}).get("run_id") if isinstance(owner, dict) else None
    return run_id if isinstance(run_id, str) else None


def checkpoint_step(folder: Path) -> int | None:
    """The ``global_step`` a checkpoint records, or None."""
    step = _trainer_state(folder).get("global_step")
    return step if isinstance(step, int) else None


def checkpoint_number(name: str) -> int | None:
    """The step in a checkpoint folder's name (``checkpoint-12``: 12), or None for any other name."""
    digits = name[len(CHECKPOINT_PREFIX) :] if name.startswith(CHECKPOINT_PREFIX) else ""
    return int(digits) if digits.isdigit() else None


def recorded_best_step(best_global_step: Any, best_model_checkpoint: Any) -> int | None:
    """The best checkpoint's step a trainer state records: ``best_global_step``, else the number in the recorded
    path's last part (older transformers); None when none is recorded."""
    if isinstance(best_global_step, int) and best_global_step > 0:
        return best_global_step
    return checkpoint_number(Path(best_model_checkpoint).name) if isinstance(best_model_checkpoint, str) else None


def best_checkpoint_by_step(folder: Path) -> Path | None:
    """The best checkpoint recorded by checkpoint ``folder``, found by its step beside ``folder`` (never through the
    recorded path, which may point into another run's folder); None when none is recorded."""
    state = _trainer_state(folder)
    step = recorded_best_step(state.get("best_global_step"), state.get("best_model_checkpoint"))
    return None if step is None else folder.parent / f"{CHECKPOINT_PREFIX}{step}"


def _check_owned(folder: Path, run_id: str | None) -> None:
    """``ValueError`` naming ``folder`` unless it records ``run_id`` (the run of the folder it sits in)."""
    found = checkpoint_run_id(folder)
    if run_id is None or found != run_id:
        recorded = f"run {found}" if found else "no run"
        raise ValueError(
            f"--resume: checkpoint {folder} does not belong to this run: it records {recorded}, the run folder's "
            f"{RUN_FILE} records run {run_id}. It was copied from another run or written by an older version; "
            "remove it, or start a new run (a new --output, or --overwrite)."
        )


def newest_complete_checkpoint(checkpoints_dir: Path) -> tuple[Path | None, list[str]]:
    """The newest complete checkpoint in ``checkpoints_dir`` (None if none), and each newer one skipped, with why."""
    candidates = sorted(
        (path for path in checkpoints_dir.glob(f"{CHECKPOINT_PREFIX}*") if checkpoint_number(path.name) is not None),
        key=lambda path: checkpoint_number(path.name) or 0,
        reverse=True,
    )
    skipped = []
    for path in candidates:
        problem = checkpoint_problem(path)
        if problem is None:
            return path, skipped
        skipped.append(f"{path} ({problem})")
    return None, skipped
