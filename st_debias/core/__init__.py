"""Tensor functions every st_debias loss composes: similarities, candidate layouts, masks, logits, InfoNCE.

No ``nn.Module`` and no model lives here, so each piece is testable on plain tensors.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from st_debias._exports import lazy_exports

if TYPE_CHECKING:
    from st_debias.core.candidates import one_hot_mask, own_row_mask, positive_index, threshold_mask
    from st_debias.core.distributed import gather_rows
    from st_debias.core.infonce import infonce, infonce_per_row, weighted_mean
    from st_debias.core.logits import focal, scaled
    from st_debias.core.noise import adversarial_noise
    from st_debias.core.preservation import similarity_drift
    from st_debias.core.similarity import (
        SimilarityFct,
        at_least_float32,
        batch_standardize,
        rowwise_similarity,
        similarity_matrix,
    )
    from st_debias.core.validation import (
        check_finite,
        check_finite_number,
        check_non_negative,
        check_not_empty,
        check_num_columns,
        check_positive,
        check_row_weights,
    )

_EXPORTS = {
    "one_hot_mask": "st_debias.core.candidates",
    "own_row_mask": "st_debias.core.candidates",
    "positive_index": "st_debias.core.candidates",
    "threshold_mask": "st_debias.core.candidates",
    "gather_rows": "st_debias.core.distributed",
    "infonce": "st_debias.core.infonce",
    "infonce_per_row": "st_debias.core.infonce",
    "weighted_mean": "st_debias.core.infonce",
    "focal": "st_debias.core.logits",
    "scaled": "st_debias.core.logits",
    "adversarial_noise": "st_debias.core.noise",
    "similarity_drift": "st_debias.core.preservation",
    "SimilarityFct": "st_debias.core.similarity",
    "at_least_float32": "st_debias.core.similarity",
    "batch_standardize": "st_debias.core.similarity",
    "rowwise_similarity": "st_debias.core.similarity",
    "similarity_matrix": "st_debias.core.similarity",
    "check_finite": "st_debias.core.validation",
    "check_finite_number": "st_debias.core.validation",
    "check_non_negative": "st_debias.core.validation",
    "check_not_empty": "st_debias.core.validation",
    "check_num_columns": "st_debias.core.validation",
    "check_positive": "st_debias.core.validation",
    "check_row_weights": "st_debias.core.validation",
}

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

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
