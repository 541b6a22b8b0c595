"""Recipes: versioned YAML files that name the data, the loss and the training budget of one method.

:func:`load_recipe` validates the whole recipe when it is loaded, before any model is loaded or row built:
keys, types and ranges of the training budget, the data kind and its builder options (against the
builder's signature and its own checks), the loss name (one registry, :data:`st_debias.recipes.losses.LOSSES`)
and its parameters (against the loss's signature and its own checks), the guide and the recall term.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from st_debias.data.kinds import DATA_KINDS
from st_debias.datafiles import text_lines

from .losses import LOSSES, LossConfig, check_loss_config
from .mix_sources import MIX_SOURCES
from .selection import KEEP_CHOICES

#: Rows per batch every registered loss needs: each is an in-batch contrastive loss, whose negatives are the
#: other rows of the batch. With one row an (anchor, positive) pair has no negative, so the loss is a
#: constant 0 and nothing is learned.
MIN_BATCH_SIZE = 2


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
    #: Which weights the run saves: ``best`` (the checkpoint with the best STS-B dev score) or ``last`` (the
    #: final step's). Either way the start model is kept instead when it scores at least as high.
    keep: str = "best"

    def rows_wanted(self, processes: int | None = None) -> int:
        """The rows a run consumes, the one row budget of training, building and the data report: steps × batch
        size × processes (the batch size is per process; default: torchrun's ``WORLD_SIZE``, else 1)."""
        if processes is None:
            processes = int(os.environ.get("WORLD_SIZE", "1"))
        return self.steps * self.batch_size * processes


@dataclass
class DataConfig:
    """Which rows to build: ``kind``, a registered data kind (:data:`st_debias.data.kinds.DATA_KINDS`, each with
    its ``description``) with its builder's ``options``; and which rows of other sources to mix in (``mix``:
    source → share, :data:`st_debias.recipes.mix_sources.MIX_SOURCES`), for the kinds whose rows are (anchor,
    positive, negative)."""

    kind: str = "simcse"
    options: dict[str, Any] = field(default_factory=dict)
    #: Rows from other sources mixed in after building, as a share of the rows: ``{"nli": 0.3}``.
    mix: dict[str, float] = field(default_factory=dict)


@dataclass
class Recipe:
    name: str
    version: int
    description: str
    data: DataConfig
    loss: LossConfig
    training: TrainingConfig
    #: The values of the keys that registered recipe extensions add (:mod:`st_debias.recipes.extensions`):
    #: extension name → {key: value}, as the recipe sets them.
    extensions: dict[str, dict[str, Any]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The recipe as YAML keys: each extension's keys back in their section, so the dict loads again."""
        from .extensions import RECIPE_EXTENSIONS

        values = dataclasses.asdict(self)
        extensions = values.pop("extensions")
        for name, keys in extensions.items():
            values[RECIPE_EXTENSIONS[name].section].update(keys)
        return values


#: Each recipe section's own keys.
SECTION_CLASSES = {"data": DataConfig, "loss": LossConfig, "training": TrainingConfig}


def section_keys(section: str, without: str | None = None) -> set[str]:
    """The keys of a recipe section: st_debias's own and those of the registered extensions (but ``without``)."""
    from .extensions import extension_keys

    return {f.name for f in dataclasses.fields(SECTION_CLASSES[section])} | set(extension_keys(section, without))


class _RecipeYamlLoader(yaml.SafeLoader):
    """PyYAML's safe loader, reading ``3e-5`` as a float (YAML 1.2) rather than as a string (YAML 1.1), and refusing
    a key given twice in one mapping (PyYAML keeps the last silently: ``steps: 10 … steps: 30`` trained 30)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        first: dict[Any, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                seen = key in first
            except TypeError:  # an unhashable key: the base constructor names it
                continue
            if seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r} (first given on line {first[key]})", key_node.start_mark
                )
            first[key] = key_node.start_mark.line + 1
        return super().construct_mapping(node, deep=deep)


_RecipeYamlLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)[eE][-+]?\d+$"),
    list("-+0123456789."),
)


def read_recipe_yaml(text: str) -> Any:
    """Parse recipe YAML; exponent floats without a dot (``learning_rate: 1e-5``) are numbers, not strings."""
    return yaml.load(text, Loader=_RecipeYamlLoader)  # noqa: S506 - a SafeLoader subclass


def recipe_dir() -> Path:
    return Path(str(resources.files("st_debias.recipes") / "configs"))


def recipe_summary(name: str) -> tuple[int, str]:
    """``(version, description)`` of a packaged recipe, read without validating it (listing stays light:
    validation imports the loss classes, and with them torch)."""
    raw = read_recipe_yaml((recipe_dir() / f"{name}.yaml").read_text(encoding="utf-8")) or {}
    return int(raw.get("version", 0)), str(raw.get("description", ""))


def available_recipes() -> list[str]:
    return sorted(path.stem for path in recipe_dir().glob("*.yaml"))


def _version(value: object, path: Path) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"Recipe {path}: version must be an integer >= 1, got {value!r}.")
    return value


def _section(section: str, values: dict[str, Any] | None, where: str, extensions: dict[str, dict[str, Any]]):
    """The section's own keys as its dataclass; the keys of registered extensions go to ``extensions``."""
    from .extensions import split_extension_values

    if values is not None and not isinstance(values, dict):
        raise ValueError(f"Recipe {where}: expected a mapping, got {values!r}.")
    values = dict(values or {})
    unknown = sorted(set(values) - section_keys(section))
    if unknown:
        raise ValueError(f"Recipe {where}: unknown keys {unknown}; allowed: {sorted(section_keys(section))}.")
    own, extended = split_extension_values(section, values)
    extensions.update(extended)
    return SECTION_CLASSES[section](**own)


def _check_training(training: TrainingConfig, where: str) -> None:
    """Types and ranges of the training budget (``int`` fields take integers, ``float`` fields numbers)."""
    if training.keep not in KEEP_CHOICES:
        raise ValueError(f"Recipe {where}: training.keep must be one of {list(KEEP_CHOICES)}, got {training.keep!r}.")
    for item in dataclasses.fields(TrainingConfig):
        if item.name == "keep":
            continue
        value = getattr(training, item.name)
        optional = "None" in str(item.type)
        if value is None and optional:
            continue
        wants_int = str(item.type).startswith("int")
        ok_type = isinstance(value, int) if wants_int else isinstance(value, int | float)
        if isinstance(value, bool) or not ok_type or not math.isfinite(value):
            kind = "an integer" if wants_int else "a number"
            raise ValueError(f"Recipe {where}: training.{item.name} must be {kind}, got {value!r}.")
    positive = ("steps", "batch_size", "learning_rate", "max_seq_length", "eval_steps", "sentences")
    for name in positive:
        value = getattr(training, name)
        if value is not None and value <= 0:
            raise ValueError(f"Recipe {where}: training.{name} must be > 0, got {value!r}.")
    if not 0 <= training.warmup_ratio < 1:
        raise ValueError(f"Recipe {where}: training.warmup_ratio must be in [0, 1), got {training.warmup_ratio!r}.")


def _canonical_options(data: DataConfig, where: str) -> None:
    """Rename ``paraphrases``, the older spelling of the negation rows' ``generator`` option, in place, so that
    both spellings give one recipe (and one row-cache key)."""
    if data.kind != "negation" or not isinstance(data.options, dict) or "paraphrases" not in data.options:
        return
    if "generator" in data.options:
        raise ValueError(f"Recipe {where}: data.options gives generator and paraphrases (its older name); keep one.")
    data.options = {("generator" if key == "paraphrases" else key): value for key, value in data.options.items()}


def _check_mix(data: DataConfig, where: str) -> None:
    """``data.mix``: known sources, shares in (0, 1) that leave some built rows, a kind whose rows match."""
    if not isinstance(data.mix, dict):
        raise ValueError(f"Recipe {where}: data.mix must be a mapping of source → share, got {data.mix!r}.")
    for source, share in data.mix.items():
        if source not in MIX_SOURCES:
            raise ValueError(f"Recipe {where}: data.mix source {source!r} is unknown; choose from {tuple(MIX_SOURCES)}.")
        if isinstance(share, bool) or not isinstance(share, int | float) or not 0 < share < 1:
            raise ValueError(f"Recipe {where}: data.mix.{source} must be a share in (0, 1), got {share!r}.")
    if not data.mix:
        return
    if data.kind in DATA_KINDS and not DATA_KINDS[data.kind].mixable:
        mixable = tuple(name for name, kind in DATA_KINDS.items() if kind.mixable)
        raise ValueError(
            f"Recipe {where}: data.mix needs (anchor, positive, negative) rows: data.kind one of {mixable}, "
            f"got {data.kind!r}."
        )
    if sum(data.mix.values()) >= 1:
        raise ValueError(f"Recipe {where}: data.mix shares sum to {sum(data.mix.values()):g}; they must leave built rows (< 1).")


def _check_data(data: DataConfig, where: str) -> None:
    """The options of the data kind (:data:`st_debias.data.kinds.DATA_KINDS`), against the builder's signature and
    the builder's own range checks."""
    if not isinstance(data.options, dict):
        raise ValueError(f"Recipe {where}: data.options must be a mapping, got {data.options!r}.")
    try:
        DATA_KINDS[data.kind].check_options(data.options)
    except ValueError as error:
        raise ValueError(f"Recipe {where}: {error}") from error


def load_recipe(name_or_path: str | Path, training: dict[str, Any] | None = None) -> Recipe:
    """Load a packaged recipe by name (``focal``) or any YAML file by path, validating every field.

    The checks that need no import of torch run first (the file, its keys, the training budget with
    ``training`` applied, the names of the data kind, mix sources and loss), so that a bad recipe or a bad
    command-line value is refused in well under a second; the data options and the loss parameters, checked
    against the builder and the loss themselves, come last.

    Args:
        name_or_path: a packaged recipe's name or a YAML file.
        training: training fields to override (``None`` values are ignored), as :func:`override` does.

    Raises:
        ValueError: an unknown recipe, or any invalid field; the message names the file and the field.
    """
    path = Path(name_or_path)
    if not path.suffix:
        path = recipe_dir() / f"{name_or_path}.yaml"
    if not path.is_file():
        raise ValueError(f"Unknown recipe {str(name_or_path)!r}: choose one of {available_recipes()} or pass a YAML file path.")
    try:
        raw = read_recipe_yaml("\n".join(line for _, line in text_lines(path))) or {}
    except yaml.YAMLError as error:
        raise ValueError(f"Recipe {path}: not valid YAML: {error}") from error
    if not isinstance(raw, dict):
        raise ValueError(f"Recipe {path}: expected a mapping of keys (name, version, data, loss, training).")
    for key in ("name", "version"):
        if key not in raw:
            raise ValueError(f"Recipe {path}: missing required key {key!r}.")
    unknown = sorted(set(raw) - {"name", "version", "description", "data", "loss", "training"})
    if unknown:
        raise ValueError(f"Recipe {path}: unknown top-level keys {unknown}.")
    extensions: dict[str, dict[str, Any]] = {}
    recipe = Recipe(
        name=str(raw["name"]),
        version=_version(raw["version"], path),
        description=str(raw.get("description", "")),
        data=_section("data", raw.get("data"), f"{path} data", extensions),
        loss=_section("loss", raw.get("loss"), f"{path} loss", extensions),
        training=_section("training", raw.get("training"), f"{path} training", extensions),
        extensions=extensions,
    )
    _check_training(recipe.training, str(path))
    if training:
        recipe = override(recipe, **training)
    _canonical_options(recipe.data, str(path))
    _check_names(recipe, str(path))
    _check_data(recipe.data, str(path))
    check_loss_config(recipe.loss, str(path))
    _check_extensions(recipe, str(path))
    return recipe


def _check_extensions(recipe: Recipe, where: str) -> None:
    """Each extension the recipe sets keys of checks its values against the whole recipe."""
    from .extensions import recipe_extensions

    for extension in recipe_extensions(recipe):
        try:
            extension.check(recipe)
        except ValueError as error:
            raise ValueError(f"Recipe {where}: {error}") from error


def _check_names(recipe: Recipe, where: str) -> None:
    """The data kind and the loss are registered, and the batch can hold negatives: the checks that import no
    builder and no loss."""
    if recipe.data.kind not in DATA_KINDS:
        raise ValueError(f"Recipe {where}: data.kind must be one of {tuple(DATA_KINDS)}, got {recipe.data.kind!r}.")
    if recipe.loss.name not in LOSSES:
        raise ValueError(f"Recipe {where}: loss.name must be one of {tuple(LOSSES)}, got {recipe.loss.name!r}.")
    _check_mix(recipe.data, where)
    _check_batch_size(recipe, where)


def _check_batch_size(recipe: Recipe, where: str) -> None:
    """The batch holds at least :data:`MIN_BATCH_SIZE` rows: an in-batch loss learns nothing from one."""
    if recipe.training.batch_size < MIN_BATCH_SIZE:
        raise ValueError(
            f"Recipe {where}: training.batch_size (--batch-size) must be >= {MIN_BATCH_SIZE} for "
            f"{recipe.loss.name}, got {recipe.training.batch_size}: it is an in-batch loss, whose negatives are the "
            "batch's other rows; with one row the loss of a pair is 0 and nothing is learned."
        )


def override(recipe: Recipe, **training: Any) -> Recipe:
    """A copy of ``recipe`` with the given training keys replaced, st_debias's own and those of registered
    extensions (``None`` values are ignored)."""
    from .extensions import split_extension_values

    changes = {k: v for k, v in training.items() if v is not None}
    unknown = set(changes) - section_keys("training")
    if unknown:
        raise ValueError(f"Unknown training settings {sorted(unknown)}.")
    own, extended = split_extension_values("training", changes)
    extensions = {name: dict(values) for name, values in recipe.extensions.items()}
    for name, values in extended.items():
        extensions.setdefault(name, {}).update(values)
    training = dataclasses.replace(recipe.training, **own)
    _check_training(training, f"{recipe.name} (overridden)")
    recipe = dataclasses.replace(recipe, training=training, extensions=extensions)
    _check_batch_size(recipe, f"{recipe.name} (overridden)")
    if extended:
        _check_extensions(recipe, f"{recipe.name} (overridden)")
    return recipe
