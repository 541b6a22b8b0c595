"""Recipes: versioned YAML files that name the data, the loss and the training budget of one method."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

DATA_KINDS = ("simcse", "ipw", "negation", "minimal_pairs")
LOSS_NAMES = ("MultipleNegativesRankingLoss", "FocalInfoNCE", "InstanceWeightedMNRL", "DebiasInfoNCE", "MarginNegationLoss")


@dataclass
class TrainingConfig:
    """The training budget; every field can be overridden from the command line."""

    steps: int = 200
    batch_size: int = 64
    learning_rate: float = 3e-5
    warmup_ratio: float = 0.1
    max_seq_length: int = 32
    seed: int = 42
    eval_steps: int = 50
    sentences: int | None = None  # corpus sentences to use; default steps * batch_size


@dataclass
class DataConfig:
    """Which rows to build: ``simcse`` (anchor = positive), ``ipw`` (DebCSE), ``negation`` (OssCSE) or
    ``minimal_pairs`` (cue-balanced minimal pairs, :class:`st_debias.data.MinimalPairBuilder`)."""

    kind: str = "simcse"
    options: dict[str, Any] = field(default_factory=dict)


@dataclass
class LossConfig:
    """The loss class and its arguments, a guide for InstanceWeightedMNRL, and an optional recall term."""

    name: str = "MultipleNegativesRankingLoss"
    params: dict[str, Any] = field(default_factory=dict)
    guide: str | None = None  # "start" = frozen copy of the start model, or a model name/path
    guide_mode: str = "precomputed"  # or "live"
    recall_gamma: float | None = None
    preservation_weight: float | None = None  # SimilarityPreservation around the loss (before recall)


@dataclass
class Recipe:
    name: str
    version: int
    description: str
    data: DataConfig
    loss: LossConfig
    training: TrainingConfig

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def recipe_dir() -> Path:
    return Path(str(resources.files("st_debias.recipes") / "configs"))


def available_recipes() -> list[str]:
    return sorted(path.stem for path in recipe_dir().glob("*.yaml"))


def _section(cls, values: dict[str, Any] | None, where: str):
    values = dict(values or {})
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise ValueError(f"Recipe {where}: unknown keys {unknown}; allowed: {sorted(known)}.")
    return cls(**values)


def load_recipe(name_or_path: str | Path) -> Recipe:
    """Load a packaged recipe by name (``focal``) or any YAML file by path, validating every field."""
    path = Path(name_or_path)
    if not path.suffix:
        path = recipe_dir() / f"{name_or_path}.yaml"
    if not path.is_file():
        raise ValueError(f"Unknown recipe {str(name_or_path)!r}: choose one of {available_recipes()} or pass a YAML file path.")
    raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    for key in ("name", "version"):
        if key not in raw:
            raise ValueError(f"Recipe {path}: missing required key {key!r}.")
    unknown = sorted(set(raw) - {"name", "version", "description", "data", "loss", "training"})
    if unknown:
        raise ValueError(f"Recipe {path}: unknown top-level keys {unknown}.")
    recipe = Recipe(
        name=str(raw["name"]),
        version=int(raw["version"]),
        description=str(raw.get("description", "")),
        data=_section(DataConfig, raw.get("data"), f"{path} data"),
        loss=_section(LossConfig, raw.get("loss"), f"{path} loss"),
        training=_section(TrainingConfig, raw.get("training"), f"{path} training"),
    )
    if recipe.data.kind not in DATA_KINDS:
        raise ValueError(f"Recipe {path}: data.kind must be one of {DATA_KINDS}, got {recipe.data.kind!r}.")
    if recipe.loss.name not in LOSS_NAMES:
        raise ValueError(f"Recipe {path}: loss.name must be one of {LOSS_NAMES}, got {recipe.loss.name!r}.")
    if recipe.loss.guide_mode not in ("precomputed", "live"):
        raise ValueError(f"Recipe {path}: loss.guide_mode must be 'precomputed' or 'live'.")
    return recipe


def override(recipe: Recipe, **training: Any) -> Recipe:
    """A copy of ``recipe`` with the given training fields replaced (``None`` values are ignored)."""
    changes = {k: v for k, v in training.items() if v is not None}
    unknown = set(changes) - {f.name for f in dataclasses.fields(TrainingConfig)}
    if unknown:
        raise ValueError(f"Unknown training settings {sorted(unknown)}.")
    return dataclasses.replace(recipe, training=dataclasses.replace(recipe.training, **changes))
