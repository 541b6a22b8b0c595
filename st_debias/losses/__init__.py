"""st_debias losses: drop-in sentence-transformers losses that counter contrastive-learning shortcuts."""

from __future__ import annotations

from typing import TYPE_CHECKING

from st_debias._exports import lazy_exports

if TYPE_CHECKING:
    from st_debias.losses.cached import (
        CachedDebiasInfoNCE,
        CachedFocalInfoNCE,
        CachedInstanceWeightedMNRL,
        CachedLoss,
        CachedMarginNegationLoss,
    )
    from st_debias.losses.debias_infonce import DebiasInfoNCE
    from st_debias.losses.focal_infonce import FocalInfoNCE
    from st_debias.losses.instance_weighted_mnrl import InstanceWeightedMNRL
    from st_debias.losses.margin_negation import MarginNegationLoss
    from st_debias.losses.recall_regularizer import RecallRegularizer
    from st_debias.losses.similarity_preservation import SimilarityPreservation

_EXPORTS = {
    "CachedDebiasInfoNCE": "st_debias.losses.cached",
    "CachedFocalInfoNCE": "st_debias.losses.cached",
    "CachedInstanceWeightedMNRL": "st_debias.losses.cached",
    "CachedLoss": "st_debias.losses.cached",
    "CachedMarginNegationLoss": "st_debias.losses.cached",
    "DebiasInfoNCE": "st_debias.losses.debias_infonce",
    "FocalInfoNCE": "st_debias.losses.focal_infonce",
    "InstanceWeightedMNRL": "st_debias.losses.instance_weighted_mnrl",
    "MarginNegationLoss": "st_debias.losses.margin_negation",
    "RecallRegularizer": "st_debias.losses.recall_regularizer",
    "SimilarityPreservation": "st_debias.losses.similarity_preservation",
}

__all__ = [
    "CachedDebiasInfoNCE",
    "CachedFocalInfoNCE",
    "CachedInstanceWeightedMNRL",
    "CachedLoss",
    "CachedMarginNegationLoss",
    "DebiasInfoNCE",
    "FocalInfoNCE",
    "InstanceWeightedMNRL",
    "MarginNegationLoss",
    "RecallRegularizer",
    "SimilarityPreservation",
]

# Shown as st_debias.losses.<Name> in model cards and reprs (sentence-transformers names a loss by its class's module).
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, present_as_package=True)
