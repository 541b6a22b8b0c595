"""How far a batch's similarity structure has moved from a reference (the start model's)."""

from __future__ import annotations

import torch
from torch import Tensor

from .similarity import at_least_float32, similarity_matrix


def similarity_drift(embeddings: Tensor, reference: Tensor) -> Tensor:
    r"""Mean squared change of the in-batch cosine similarities, off the diagonal:

    .. math::

        \frac{1}{B(B-1)} \sum_{i \ne j} \big(s(h_i, h_j) - s(h^*_i, h^*_j)\big)^2

    where :math:`h` are the current embeddings and :math:`h^*` the reference's for the same sentences. Only
    the cosines are compared, so the reference may be another model of another width: the rows must match.
    Zero for a batch of one row (no pair to compare). The maths runs in float32 or wider.
    """
    if embeddings.dim() != 2 or reference.dim() != 2 or embeddings.size(0) != reference.size(0):
        raise ValueError(f"similarity_drift: embeddings {tuple(embeddings.shape)} and reference "
                         f"{tuple(reference.shape)} must be matrices with the same rows (one per sentence).")
    rows = embeddings.size(0)
    if rows < 2:
        return embeddings.sum() * 0.0
    embeddings, reference = at_least_float32(embeddings), at_least_float32(reference)
    current = similarity_matrix(embeddings, embeddings)
    target = similarity_matrix(reference, reference)
    off_diagonal = ~torch.eye(rows, dtype=torch.bool, device=embeddings.device)
    return (current - target)[off_diagonal].pow(2).mean()
