"""Tensor functions every st_debias loss composes: similarities, candidate layouts, masks, logits, InfoNCE.

No ``nn.Module`` and no model lives here, so each piece is testable on plain tensors.
"""

from __future__ import annotations

from .candidates import one_hot_mask, own_row_mask, positive_index, threshold_mask
from .distributed import gather_rows
from .infonce import infonce, infonce_per_row, weighted_mean
from .logits import focal, scaled
from .noise import adversarial_noise
from .preservation import similarity_drift
from .similarity import (
    SimilarityFct,
    at_least_float32,
    batch_standardize,
    rowwise_similarity,
    similarity_matrix,
)
from .validation import (
    check_finite,
    check_finite_number,
    check_non_negative,
    check_not_empty,
    check_num_columns,
    check_positive,
    check_row_weights,
)

__all__ = [
    "SimilarityFct",
    "adversarial_noise",
    "at_least_float32",
    "batch_standardize",
    "check_finite",
    "check_finite_number",
    "check_non_negative",
    "check_not_empty",
    "check_num_columns",
    "check_positive",
    "check_row_weights",
    "focal",
    "gather_rows",
    "infonce",
    "infonce_per_row",
    "one_hot_mask",
    "own_row_mask",
    "positive_index",
    "rowwise_similarity",
    "scaled",
    "similarity_drift",
    "similarity_matrix",
    "threshold_mask",
    "weighted_mean",
]
