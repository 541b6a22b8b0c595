"""What ``train_recipe`` saved, loaded for scoring: a run's ``model/`` folder or one of its trainer checkpoints; and the
``label=model`` arguments of the scripts that score several models."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

HUB_PREFIX = "sentence-transformers/"
MODEL_HELP = f"label=model: a folder, default (the packaged model) or a {HUB_PREFIX} hub name"
"""The help of a ``label=model`` argument read by :func:`labelled_models`."""


def labelled_models(parser: argparse.ArgumentParser, specs: Sequence[str]) -> dict[str, str]:
    """``label=model`` arguments as label → model, in order. A model is a folder, the default model's name
    (``default``: the packaged copy, as ``st_debias.paths.resolve_model_name`` reads it) or a hub name under
    ``sentence-transformers/``. Exits through ``parser.error`` (status 2) on a malformed argument, a repeated label
    or a model that is none of these."""
    from st_debias.paths import resolve_model_name

    pairs = [spec.partition("=")[::2] for spec in specs]
    bad = [spec for spec, (label, path) in zip(specs, pairs, strict=True) if not label or not path]
    if bad:
        parser.error(f"models must be label=folder, got {', '.join(bad)}")
    labels = [label for label, _ in pairs]
    repeated = sorted({label for label in labels if labels.count(label) > 1})
    if repeated:
        parser.error(f"each model needs its own label; repeated: {', '.join(repeated)}")

    def found(path: str) -> bool:
        try:
            return Path(resolve_model_name(path)).exists()
        except FileNotFoundError:  # offline and neither a folder nor the installed default model
            return False

    missing = [path for _, path in pairs if not path.startswith(HUB_PREFIX) and not found(path)]
    if missing:
        parser.error(f"no model folder at {', '.join(missing)} (nor the default model or a {HUB_PREFIX} hub name)")
    return dict(pairs)


def run_model_of(folder: Path) -> Path | None:
    """The run's ``model/`` folder when ``folder`` is one of its trainer checkpoints (``checkpoints/checkpoint-N``),
    else None."""
    return folder.parent.parent / "model" if (folder / "trainer_state.json").is_file() else None


def recipe_file_of(folder: Path) -> Path:
    """The ``st_debias_recipe.yaml`` that names the recipe and seed of a model folder or of a checkpoint's run."""
    return (run_model_of(folder) or folder) / "st_debias_recipe.yaml"


def load_trained(folder: Path) -> tuple[SentenceTransformer, dict[str, Any], dict[str, Any]]:
    """The model, its recipe, and which weights were loaded (``checkpoint_step`` for a checkpoint, and
    ``max_seq_length``). A checkpoint holds the training length (32 tokens); it is set to the length of its run's
    ``model/``, so that it is scored as the saved model and the start model are."""
    from sentence_transformers import SentenceTransformer

    from st_debias.recipes.config import read_recipe_yaml

    recipe = read_recipe_yaml(recipe_file_of(folder).read_text(encoding="utf-8"))
    model = SentenceTransformer(str(folder))
    loaded: dict[str, Any] = {}
    run_model = run_model_of(folder)
    if run_model is not None:
        model.max_seq_length = SentenceTransformer(str(run_model)).max_seq_length
        loaded["checkpoint_step"] = json.loads((folder / "trainer_state.json").read_text())["global_step"]
    loaded["max_seq_length"] = model.max_seq_length
    return model, recipe, loaded
