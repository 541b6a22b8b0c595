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
from .similarity import batch_standardize, cosine_matrix, rowwise_cosine
from .validation import (
    check_has_negatives,
    check_non_negative,
    check_num_columns,
    check_positive,
    check_row_weights,
)

__all__ = [
    "adversarial_noise",
    "batch_standardize",
    "check_has_negatives",
    "check_non_negative",
    "check_num_columns",
    "check_positive",
    "check_row_weights",
    "cosine_matrix",
    "focal",
    "gather_rows",
    "infonce",
    "infonce_per_row",
    "one_hot_mask",
    "own_row_mask",
    "positive_index",
    "rowwise_cosine",
    "scaled",
    "similarity_drift",
    "threshold_mask",
    "weighted_mean",
]
