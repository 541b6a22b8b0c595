"""st_debias losses: drop-in sentence-transformers losses that counter contrastive-learning shortcuts."""

from __future__ import annotations

from .cached import (
    CachedDebiasInfoNCE,
    CachedFocalInfoNCE,
    CachedInstanceWeightedMNRL,
    CachedLoss,
    CachedMarginNegationLoss,
)
from .debias_infonce import DebiasInfoNCE
from .focal_infonce import FocalInfoNCE
from .instance_weighted_mnrl import InstanceWeightedMNRL
from .margin_negation import MarginNegationLoss
from .recall_regularizer import RecallRegularizer
from .similarity_preservation import SimilarityPreservation

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

# Public path in model cards and reprs (sentence-transformers names a loss by its class's module).
for _loss_class in (
    CachedDebiasInfoNCE,
    CachedFocalInfoNCE,
    CachedInstanceWeightedMNRL,
    CachedLoss,
    CachedMarginNegationLoss,
    DebiasInfoNCE,
    FocalInfoNCE,
    InstanceWeightedMNRL,
    MarginNegationLoss,
    RecallRegularizer,
    SimilarityPreservation,
):
    _loss_class.__module__ = __name__
del _loss_class
