"""The losses a recipe may name (one registry), a recipe's loss section and its checks, and the section → loss
object step."""

from __future__ import annotations

import inspect
import logging
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from st_debias.registry import LOSS_GROUP, Registry, check_loss

if TYPE_CHECKING:
    from collections.abc import Sequence

    from datasets import Dataset

    from .extensions import RecipeExtension

logger = logging.getLogger(__name__)

#: Every loss a recipe may name: class name → class; st_debias's own, and those of installed packages
#: (:mod:`st_debias.registry`). The one list: the recipe check and :func:`build_loss` both read it.
LOSSES: Registry[type] = Registry("loss", LOSS_GROUP, {
    "MultipleNegativesRankingLoss": "sentence_transformers.sentence_transformer.losses:MultipleNegativesRankingLoss",
    "FocalInfoNCE": "st_debias.losses:FocalInfoNCE",
    "InstanceWeightedMNRL": "st_debias.losses:InstanceWeightedMNRL",
    "DebiasInfoNCE": "st_debias.losses:DebiasInfoNCE",
    "MarginNegationLoss": "st_debias.losses:MarginNegationLoss",
    # GradCache forms: the same loss at any batch size; ``mini_batch_size`` sets the memory.
    "CachedMultipleNegativesRankingLoss":
        "sentence_transformers.sentence_transformer.losses:CachedMultipleNegativesRankingLoss",
    "CachedFocalInfoNCE": "st_debias.losses:CachedFocalInfoNCE",
    "CachedInstanceWeightedMNRL": "st_debias.losses:CachedInstanceWeightedMNRL",
    "CachedDebiasInfoNCE": "st_debias.losses:CachedDebiasInfoNCE",
    "CachedMarginNegationLoss": "st_debias.losses:CachedMarginNegationLoss",
}, check_loss)

#: Loss parameters that take a function: the sentence-transformers functions a recipe may name for them.
#: Every registered loss scores a batch with a matrix similarity ``fct(a, b) -> (len(a), len(b))``.
CALLABLE_PARAMS: dict[str, tuple[str, ...]] = {
    "similarity_fct": ("cos_sim", "dot_score", "euclidean_sim", "manhattan_sim"),
}

#: Constructor arguments the recipe machinery sets itself, with where a recipe sets them instead.
RESERVED_PARAMS = {
    "model": "the start model is passed by the trainer",
    "guide": "set loss.guide (start, or a model name/path)",
    "labels": "set from the rows' label column and loss.guide_mode",
}


def reads_guide(name: str) -> bool:
    """Whether the registered loss ``name`` takes a guide model and the rows' ``label`` column (it has a
    ``from_recipe`` classmethod, :mod:`st_debias.registry`)."""
    return callable(getattr(loss_class(name), "from_recipe", None))


def takes_guide(name: str) -> bool:
    """Whether the registered loss ``name`` reads ``loss.guide``: its ``takes_guide`` class attribute, by default
    whether it has ``from_recipe`` (a loss may have ``from_recipe`` for its ``label`` column alone)."""
    return bool(getattr(loss_class(name), "takes_guide", reads_guide(name)))


@dataclass
class LossConfig:
    """The loss class and its arguments, a guide for InstanceWeightedMNRL, and an optional recall term."""

    name: str = "MultipleNegativesRankingLoss"
    params: dict[str, Any] = field(default_factory=dict)
    guide: str | None = None  # "start" = frozen copy of the start model, or a model name/path
    guide_mode: str = "precomputed"  # or "live"
    recall_gamma: float | None = None


def loss_class(name: str) -> type:
    """The class registered under ``name`` in :data:`LOSSES`.

    Raises:
        ValueError: ``name`` is not registered.
    """
    if name not in LOSSES:
        raise ValueError(f"Unknown loss {name!r}; choose one of {list(LOSSES)}.")
    return LOSSES[name]


def uncached_name(name: str) -> str | None:
    """The loss a registered ``Cached…`` loss computes (``CachedFocalInfoNCE`` → ``FocalInfoNCE``), else None."""
    inner = name.removeprefix("Cached")
    return inner if inner != name and inner in LOSSES else None


def _parameters(name: str) -> list[str]:
    """The parameters of a registered loss a recipe may set; a cached loss's ``**loss_kwargs`` are its
    uncached loss's parameters."""
    parameters = inspect.signature(loss_class(name)).parameters
    accepted = [
        p for p, spec in parameters.items() if spec.kind is not spec.VAR_KEYWORD and p not in RESERVED_PARAMS
    ]
    inner = uncached_name(name)
    if inner and any(spec.kind is spec.VAR_KEYWORD for spec in parameters.values()):
        accepted += [p for p in _parameters(inner) if p not in accepted]
    return accepted


def resolve_params(params: dict[str, Any]) -> dict[str, Any]:
    """``params`` with each function parameter's name (``similarity_fct: dot_score``) replaced by the
    sentence-transformers function of that name.

    Raises:
        ValueError: a name outside :data:`CALLABLE_PARAMS` (the message lists the accepted names).
    """
    import sentence_transformers.util

    resolved = dict(params)
    for key, names in CALLABLE_PARAMS.items():
        if key in resolved:
            value = resolved[key]
            if value not in names:
                raise ValueError(f"loss.params.{key} must be one of {list(names)}, got {value!r}.")
            resolved[key] = getattr(sentence_transformers.util, value)
    return resolved


def check_loss_params(name: str, params: dict[str, Any]) -> None:
    """Check a recipe's ``loss.params`` against the loss's signature, then its values by building the loss
    without a model (every registered loss but sentence-transformers' cached one accepts ``model=None``;
    for that one the uncached loss is built and ``mini_batch_size`` checked).

    Raises:
        ValueError: an unknown or reserved parameter (the message lists the accepted ones), an unknown
            function name, or a value the loss rejects.
    """
    cls = loss_class(name)
    accepted = _parameters(name)
    reserved = sorted(set(params) & set(RESERVED_PARAMS))
    if reserved:
        raise ValueError(
            f"loss.params {reserved} are set by the recipe, not here: {RESERVED_PARAMS[reserved[0]]}."
        )
    unknown = sorted(set(params) - set(accepted))
    if unknown:
        raise ValueError(f"loss.params {unknown} are not parameters of {name}; it takes {accepted}.")
    resolved = resolve_params(params)
    try:
        if cls.__module__.startswith("sentence_transformers") and uncached_name(name):
            size = resolved.get("mini_batch_size", 32)
            if isinstance(size, bool) or not isinstance(size, int) or size < 1:
                raise ValueError(f"mini_batch_size must be a positive int, got {size!r}.")
            inner = uncached_name(name)
            kept = set(_parameters(inner))
            loss_class(inner)(None, **{k: v for k, v in resolved.items() if k in kept})
        else:
            cls(None, **resolved)
    except (TypeError, ValueError) as error:
        raise ValueError(f"loss.params for {name}: {error}") from error


def check_loss_config(loss: LossConfig, where: str) -> None:
    """Check a recipe's loss section: the loss name, its parameters, the guide and the recall term.

    Raises:
        ValueError: the first problem found, naming ``where`` (the recipe) and the field.
    """
    if loss.name not in LOSSES:
        raise ValueError(f"Recipe {where}: loss.name must be one of {tuple(LOSSES)}, got {loss.name!r}.")
    if not isinstance(loss.params, dict):
        raise ValueError(f"Recipe {where}: loss.params must be a mapping, got {loss.params!r}.")
    try:
        check_loss_params(loss.name, loss.params)
    except ValueError as error:
        raise ValueError(f"Recipe {where}: {error}") from error
    if loss.guide_mode not in ("precomputed", "live"):
        raise ValueError(f"Recipe {where}: loss.guide_mode must be 'precomputed' or 'live'.")
    if loss.guide is not None:
        if not takes_guide(loss.name):
            readers = [name for name in LOSSES if takes_guide(name)]
            raise ValueError(f"Recipe {where}: loss.guide is read by {', '.join(readers)} only, not {loss.name}.")
        if not isinstance(loss.guide, str) or not loss.guide:
            raise ValueError(f"Recipe {where}: loss.guide must be 'start' or a model name/path, got {loss.guide!r}.")
    value = loss.recall_gamma
    if value is not None and (
        isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0
    ):
        raise ValueError(f"Recipe {where}: loss.recall_gamma must be a finite number >= 0, got {value!r}.")


def build_loss(
    spec: LossConfig, model: Any, rows: Dataset, guide: Any | None = None, show_progress_bar: bool = True,
    extensions: Sequence[RecipeExtension] = (),
):
    """Return ``(loss, rows)`` for a recipe's loss section; rows gain a ``label`` column when the guide is
    precomputed. Each of the recipe's ``extensions`` may wrap the loss (inside the recall term)."""
    from st_debias.losses import RecallRegularizer

    if not isinstance(spec, LossConfig):
        raise TypeError(f"build_loss takes a recipe's loss section (recipe.loss), got {type(spec).__name__}")
    params = resolve_params(spec.params)
    cls = loss_class(spec.name)
    if reads_guide(spec.name):
        loss, rows = cls.from_recipe(
            model, rows, params, guide=guide, guide_mode=spec.guide_mode, show_progress_bar=show_progress_bar
        )
    else:
        if "label" in rows.column_names:
            # Only a loss with from_recipe reads a label column (per-row weights); say so rather than drop it silently.
            logger.warning("%s ignores per-row weights; dropping the label column.", spec.name)
            rows = rows.remove_columns("label")
        if getattr(cls, "logs_parts", False):
            params.setdefault("return_parts", True)  # the trainer logs each term
        loss = cls(model, **params)
    for extension in extensions:
        loss = extension.wrap_loss(loss, model)
    if spec.recall_gamma is not None:
        loss = RecallRegularizer(model, loss, gamma=spec.recall_gamma, return_parts=True)
    return loss, rows


def check_row_columns(spec: LossConfig, count: int) -> None:
    """Refuse rows of ``count`` text columns that the recipe's loss cannot take, before any model is loaded: an
    st_debias loss declares its ``text_columns``; other losses (sentence-transformers' MNRL) take an anchor, a
    positive and any number of negatives.

    Raises:
        ValueError: naming the loss and the columns it takes.
    """
    name = uncached_name(spec.name) or spec.name
    fewest, most = getattr(loss_class(name), "text_columns", (2, None))
    if count < fewest or (most is not None and count > most):
        takes = f"{fewest}" if most == fewest else f"{fewest} or more"
        raise ValueError(f"{name} takes {takes} text columns per row, got {count}.")
