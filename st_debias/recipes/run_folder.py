"""A training run's output folder: who owns it (``run.json``), fresh start vs resume, and complete checkpoints.

``run.json`` records what makes two runs the same run: recipe (name, version, data and loss sections),
start model, corpus and seed. ``--resume`` continues only a run with the same identity; a new run into a
folder that already holds one needs ``--overwrite``. Budget fields (steps, batch size, learning rate) may
change on resume: that is how a run is extended.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import socket
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from st_debias.files import atomic_write_json, check_writable_folder

from .config import Recipe

logger = logging.getLogger(__name__)

RUN_FILE = "run.json"
# Held (flock) by the process training into the folder; never removed, so every run locks the same file.
LOCK_FILE = ".run.lock"
# What a run writes into its folder: removed by --overwrite (nothing else in the folder is touched).
RUN_OUTPUTS = (RUN_FILE, "checkpoints", "model", "eval", "data_report.json")
CHECKPOINT_PREFIX = "checkpoint-"
# The trainer writes trainer_state.json last: a checkpoint without it (or without whole weights) was cut short.
CHECKPOINT_WEIGHTS = ("model.safetensors", "pytorch_model.bin")


@contextmanager
def hold_run_folder(output_dir: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``output_dir`` for the whole run, so no second run trains into it.

    The lock is an ``flock`` on ``output_dir/.run.lock``: the kernel releases it when the holder exits, however
    it exits, so a lock left by a killed run is taken over (with a warning naming it). The file records the
    holder's pid, host and start time for the refusal message.

    A run refused before it claimed a folder that the lock created (a model that cannot train, say) removes that
    folder again, so that nothing is left behind.

    Raises:
        ValueError: another live process holds the folder (named by pid and start time).
        OSError: the folder cannot be written.
    """
    created = not output_dir.exists()
    try:
        yield from _locked(output_dir)
    except BaseException:
        if created and output_dir.is_dir() and {entry.name for entry in output_dir.iterdir()} <= {LOCK_FILE}:
            shutil.rmtree(output_dir, ignore_errors=True)
        raise


def _locked(output_dir: Path) -> Iterator[None]:
    """The body of :func:`hold_run_folder`: create and lock ``output_dir/.run.lock`` while the caller runs."""
    check_writable_folder(output_dir)
    try:
        import fcntl
    except ImportError:  # not a POSIX system (Windows): no flock
        logger.warning("No file locking on this platform: nothing stops a second run into %s.", output_dir)
        yield
        return
    handle = open(output_dir / LOCK_FILE, "a+", encoding="utf-8")  # noqa: SIM115 - held until the run ends
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ValueError(
                f"{output_dir} is in use by another st-debias train ({_holder(handle)}); wait for it to finish, "
                "stop it, or choose another --output."
            ) from None
        previous = _holder(handle, default="")
        if previous:
            logger.warning("%s: taking over the lock of a run that is no longer running (%s).", output_dir, previous)
        handle.seek(0)
        handle.truncate()
        started = datetime.now(timezone.utc).isoformat(timespec="seconds")
        json.dump({"pid": os.getpid(), "host": socket.gethostname(), "started": started}, handle)
        handle.flush()
        try:
            yield
        finally:
            handle.seek(0)
            handle.truncate()  # an empty lock file: the run ended normally
    finally:
        handle.close()  # releases the flock


def _holder(handle: Any, default: str = "pid unknown: it is starting") -> str:
    """The holder recorded in an open lock file, in words."""
    handle.seek(0)
    try:
        holder = json.loads(handle.read() or "null")
    except ValueError:
        holder = None
    if not isinstance(holder, dict):
        return default
    return f"pid {holder.get('pid')} on {holder.get('host')}, started {holder.get('started')}"


def run_identity(recipe: Recipe, model: str, corpus: str | os.PathLike[str] | None) -> dict[str, Any]:
    """The fields a resumed run must share with the run in its folder."""
    return {
        "recipe": recipe.name,
        "recipe_version": recipe.version,
        "data": recipe.to_dict()["data"],
        "loss": recipe.to_dict()["loss"],
        "model": model,
        "corpus": str(Path(corpus).resolve()) if corpus is not None else "default",
        "seed": recipe.training.seed,
    }


def _check_same_run(run_dir: Path, identity: dict[str, Any], what: str) -> None:
    """Raise ``ValueError`` unless ``run_dir/run.json`` records ``identity`` (naming every difference)."""
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
            + ". Resume with the same recipe, model, corpus and seed, or use a new --output."
        )


def _describe(identity: dict[str, Any]) -> str:
    return f"recipe {identity.get('recipe')!r} v{identity.get('recipe_version')}, model {identity.get('model')}, seed {identity.get('seed')}"


def prepare_output(output_dir: Path, identity: dict[str, Any], *, resume: bool, overwrite: bool) -> None:
    """Check ``output_dir`` before any long work, then record ``identity`` in it.

    Raises:
        ValueError: resuming a folder that holds another run (or none), or a new run into a folder that
            holds one without ``overwrite``.
        OSError: the folder cannot be written.
    """
    check_writable_folder(output_dir)
    _remove_staging(output_dir)
    if resume:
        _check_same_run(output_dir, identity, "--resume")
        return
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
    atomic_write_json(output_dir / RUN_FILE, identity)


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
    checkpoints_dir: Path, requested: bool | str, identity: dict[str, Any] | None = None
) -> str:
    """The checkpoint to resume from: the given one (checked) or the newest complete one in ``checkpoints_dir``.

    A given checkpoint outside ``checkpoints_dir`` must belong to a run folder (``<run>/checkpoints/<name>``) whose
    ``run.json`` records ``identity``. Incomplete checkpoints (a kill or full disk while saving) are skipped with
    a warning that names each one and why.

    Raises:
        ValueError: the given checkpoint is incomplete or from another run, or no checkpoint is complete.
    """
    if requested is not True:
        folder = Path(requested)
        problem = checkpoint_problem(folder)
        if problem is not None:
            raise ValueError(
                f"--resume {folder}: not a complete checkpoint ({problem}); it may have been cut short while saving."
            )
        if identity is not None and folder.resolve().parent != checkpoints_dir.resolve():
            _check_same_run(folder.resolve().parent.parent, identity, f"--resume {folder}")
        return str(folder)
    newest, skipped = newest_complete_checkpoint(checkpoints_dir)
    if newest is None:
        found = f" (incomplete only: {'; '.join(skipped)})" if skipped else ""
        raise ValueError(f"--resume: no complete checkpoint in {checkpoints_dir}{found}.")
    if skipped:
        logger.warning("Skipped incomplete checkpoint(s) %s; resuming from %s.", "; ".join(skipped), newest)
    return str(newest)


def newest_complete_checkpoint(checkpoints_dir: Path) -> tuple[Path | None, list[str]]:
    """The newest complete checkpoint in ``checkpoints_dir`` (None if none), and each newer one skipped, with why."""
    candidates = sorted(
        (
            path
            for path in checkpoints_dir.glob(f"{CHECKPOINT_PREFIX}*")
            if path.name[len(CHECKPOINT_PREFIX) :].isdigit()
        ),
        key=lambda path: int(path.name[len(CHECKPOINT_PREFIX) :]),
        reverse=True,
    )
    skipped = []
    for path in candidates:
        problem = checkpoint_problem(path)
        if problem is None:
            return path, skipped
        skipped.append(f"{path} ({problem})")
    return None, skipped
