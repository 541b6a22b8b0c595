"""Turn a recipe's loss section into a loss object (and, for a precomputed guide, the label column)."""

from __future__ import annotations

import logging
from typing import Any

from datasets import Dataset

from .config import Recipe

logger = logging.getLogger(__name__)


def build_loss(recipe: Recipe, model: Any, rows: Dataset, guide: Any | None = None, show_progress_bar: bool = True):
    """Return ``(loss, rows)``; rows gain a ``label`` column when the guide is precomputed."""
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss

    from st_debias.losses import (
        DebiasInfoNCE,
        FocalInfoNCE,
        InstanceWeightedMNRL,
        MarginNegationLoss,
        RecallRegularizer,
        SimilarityPreservation,
    )

    spec = recipe.loss
    params = dict(spec.params)
    classes = {
        "MultipleNegativesRankingLoss": MultipleNegativesRankingLoss,
        "FocalInfoNCE": FocalInfoNCE,
        "DebiasInfoNCE": DebiasInfoNCE,
        "MarginNegationLoss": MarginNegationLoss,
    }
    if spec.name == "InstanceWeightedMNRL":
        has_weights = "label" in rows.column_names
        if guide is not None and spec.guide_mode == "precomputed":
            from st_debias.data.guide import attach_guide_embeddings

            rows = attach_guide_embeddings(
                rows, guide, weight_column="label" if has_weights else None, show_progress_bar=show_progress_bar
            )
            params["labels"] = "weights_and_guide_embeddings" if has_weights else "guide_embeddings"
            loss = InstanceWeightedMNRL(model, **params)
        else:
            params.setdefault("labels", "weights" if has_weights else "none")
            loss = InstanceWeightedMNRL(model, guide=guide, **params)
    else:
        if "label" in rows.column_names:
            # Only InstanceWeightedMNRL reads per-row weights; say so rather than drop them silently.
            logger.warning("Recipe %s: %s ignores per-row weights; dropping the label column.", recipe.name, spec.name)
            rows = rows.remove_columns("label")
        loss = classes[spec.name](model, **params)
    if spec.preservation_weight is not None:
        loss = SimilarityPreservation(model, loss, weight=spec.preservation_weight)
    if spec.recall_gamma is not None:
        loss = RecallRegularizer(loss, gamma=spec.recall_gamma)
    return loss, rows
