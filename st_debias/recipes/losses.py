"""The losses a recipe may name (one registry), their parameter check, and the recipe → loss object step."""

from __future__ import annotations

import importlib
import inspect
import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from datasets import Dataset

    from .config import Recipe

logger = logging.getLogger(__name__)

#: Every loss a recipe may name: class name → module (imported on use). The one list; ``LOSS_NAMES`` of
#: :mod:`st_debias.recipes.config` is its keys.
LOSSES: dict[str, str] = {
    "MultipleNegativesRankingLoss": "sentence_transformers.sentence_transformer.losses",
    "FocalInfoNCE": "st_debias.losses",
    "InstanceWeightedMNRL": "st_debias.losses",
    "DebiasInfoNCE": "st_debias.losses",
    "MarginNegationLoss": "st_debias.losses",
}

#: Constructor arguments the recipe machinery sets itself, with where a recipe sets them instead.
RESERVED_PARAMS = {
    "model": "the start model is passed by the trainer",
    "guide": "set loss.guide (start, or a model name/path)",
    "labels": "set from the rows' label column and loss.guide_mode",
}


def loss_class(name: str) -> type:
    """The class registered under ``name`` in :data:`LOSSES`.

    Raises:
        ValueError: ``name`` is not registered.
    """
    if name not in LOSSES:
        raise ValueError(f"Unknown loss {name!r}; choose one of {list(LOSSES)}.")
    return getattr(importlib.import_module(LOSSES[name]), name)


def check_loss_params(name: str, params: dict[str, Any]) -> None:
    """Check a recipe's ``loss.params`` against the loss's signature, then its values by building the loss
    without a model (every registered loss accepts ``model=None``).

    Raises:
        ValueError: an unknown or reserved parameter (the message lists the accepted ones), or a value the
            loss rejects.
    """
    cls = loss_class(name)
    signature = inspect.signature(cls)
    accepted = [p for p in signature.parameters if p not in RESERVED_PARAMS]
    reserved = sorted(set(params) & set(RESERVED_PARAMS))
    if reserved:
        raise ValueError(
            f"loss.params {reserved} are set by the recipe, not here: {RESERVED_PARAMS[reserved[0]]}."
        )
    unknown = sorted(set(params) - set(accepted))
    if unknown:
        raise ValueError(f"loss.params {unknown} are not parameters of {name}; it takes {accepted}.")
    try:
        cls(None, **params)
    except (TypeError, ValueError) as error:
        raise ValueError(f"loss.params for {name}: {error}") from error


def build_loss(
    recipe: Recipe, model: Any, rows: Dataset, guide: Any | None = None, show_progress_bar: bool = True
):
    """Return ``(loss, rows)``; rows gain a ``label`` column when the guide is precomputed."""
    from st_debias.losses import InstanceWeightedMNRL, RecallRegularizer, SimilarityPreservation

    spec = recipe.loss
    params = dict(spec.params)
    if spec.name == "InstanceWeightedMNRL":
        has_weights = "label" in rows.column_names
        if guide is not None and spec.guide_mode == "precomputed":
            from st_debias.data.guide import attach_guide_embeddings

            rows = attach_guide_embeddings(
                rows,
                guide,
                weight_column="label" if has_weights else None,
                show_progress_bar=show_progress_bar,
            )
            params["labels"] = "weights_and_guide_embeddings" if has_weights else "guide_embeddings"
            loss = InstanceWeightedMNRL(model, **params)
        else:
            params.setdefault("labels", "weights" if has_weights else "none")
            loss = InstanceWeightedMNRL(model, guide=guide, **params)
    else:
        if "label" in rows.column_names:
            # Only InstanceWeightedMNRL reads per-row weights; say so rather than drop them silently.
            logger.warning(
                "Recipe %s: %s ignores per-row weights; dropping the label column.", recipe.name, spec.name
            )
            rows = rows.remove_columns("label")
        if spec.name == "MarginNegationLoss":
            params.setdefault("return_parts", True)  # the trainer logs l_c and l_m separately
        loss = loss_class(spec.name)(model, **params)
    if spec.preservation_weight is not None:
        loss = SimilarityPreservation(
            model,
            loss,
            weight=spec.preservation_weight,
            return_parts=True,
            without_dropout=spec.preservation_without_dropout,
        )
    if spec.recall_gamma is not None:
        loss = RecallRegularizer(model, loss, gamma=spec.recall_gamma, return_parts=True)
    return loss, rows
