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
from pathlib import Path
from typing import Any

from st_debias.files import atomic_write_json, check_writable_folder

from .config import Recipe

logger = logging.getLogger(__name__)

RUN_FILE = "run.json"
# What a run writes into its folder: removed by --overwrite (nothing else in the folder is touched).
RUN_OUTPUTS = (RUN_FILE, "checkpoints", "model", "eval", "data_report.json")
CHECKPOINT_PREFIX = "checkpoint-"
# The trainer writes trainer_state.json last: a checkpoint without it (or without weights) was cut short.
CHECKPOINT_REQUIRED = ("trainer_state.json",)
CHECKPOINT_WEIGHTS = ("model.safetensors", "pytorch_model.bin")


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
    run_file = output_dir / RUN_FILE
    if resume:
        if not run_file.is_file():
            raise ValueError(
                f"--resume: {output_dir} holds no {RUN_FILE}, so it is not a st-debias training run this version "
                "can verify; start a new run (a new --output, or --overwrite)."
            )
        try:
            recorded = json.loads(run_file.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise ValueError(f"--resume: {run_file} is unreadable ({error}).") from error
        differences = [
            f"{key}: folder has {recorded.get(key)!r}, this run has {value!r}"
            for key, value in identity.items()
            if recorded.get(key) != value
        ]
        if differences:
            raise ValueError(
                f"--resume: {output_dir} holds a different run ({_describe(recorded)}); refusing to continue it as "
                f"{_describe(identity)}. Differences: "
                + "; ".join(differences)
                + ". Resume with the same recipe, model, corpus and seed, or use a new --output."
            )
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
    atomic_write_json(run_file, identity)


def _holds_results(output_dir: Path) -> bool:
    """True when a run left a checkpoint or a model (a run.json alone is from a run that failed before training)."""
    return any((output_dir / "checkpoints").glob(f"{CHECKPOINT_PREFIX}*")) or any(
        (output_dir / name).exists() for name in ("model", "eval", "data_report.json")
    )


def is_complete_checkpoint(folder: Path) -> bool:
    """True when ``folder`` holds a trainer state and model weights (the trainer finished writing it)."""
    return all((folder / name).is_file() for name in CHECKPOINT_REQUIRED) and any(
        (folder / name).is_file() for name in CHECKPOINT_WEIGHTS
    )


def resume_checkpoint(checkpoints_dir: Path, requested: bool | str) -> str:
    """The checkpoint to resume from: the given one (checked) or the newest complete one in ``checkpoints_dir``.

    Partial checkpoints (a kill or full disk while saving) are skipped with a warning that names them.
    """
    if requested is not True:
        folder = Path(requested)
        if not is_complete_checkpoint(folder):
            raise ValueError(
                f"--resume {folder}: not a complete checkpoint (needs {', '.join(CHECKPOINT_REQUIRED)} and one of "
                f"{', '.join(CHECKPOINT_WEIGHTS)}); it may have been cut short while saving."
            )
        return str(folder)
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
        if is_complete_checkpoint(path):
            if skipped:
                logger.warning(
                    "Skipped partial checkpoint(s) %s; resuming from %s.", ", ".join(map(str, skipped)), path
                )
            return str(path)
        skipped.append(path)
    found = f" (partial only: {', '.join(map(str, skipped))})" if skipped else ""
    raise ValueError(f"--resume: no complete checkpoint in {checkpoints_dir}{found}.")
