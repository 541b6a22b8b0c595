"""A logsumexp InfoNCE over arbitrary logits, masks and weights, plus weighted reductions.

Given logits ``L`` of shape ``(B, C)`` and the index ``p_i`` of each row's positive, the per-row loss is

    l_i = -L[i, p_i] + log sum_j keep[i, j] * w[i, j] * exp(L[i, j])

where ``keep`` removes candidates from the denominator (true masking, not zeroed logits) and ``w`` are
optional non-negative candidate weights, applied as log-weights. The positive is always kept with
weight 1 unless ``include_positive`` is False (then the denominator holds only the other candidates).
A row left with no candidate in its denominator gets loss 0 when ``include_positive`` is True (the
positive alone) — it is never NaN or inf.
"""

from __future__ import annotations

import torch
from torch import Tensor

from .candidates import one_hot_mask


def infonce_per_row(
    logits: Tensor,
    positive: Tensor,
    keep: Tensor | None = None,
    candidate_weights: Tensor | None = None,
    include_positive: bool = True,
) -> Tensor:
    """Per-row InfoNCE loss, shape ``(B,)``. See the module docstring for the formula."""
    is_positive = one_hot_mask(positive, logits.size(1))
    denominator_logits = logits
    if candidate_weights is not None:
        # log(0) = -inf removes a candidate exactly like masking; weight 1 adds nothing.
        denominator_logits = denominator_logits + torch.where(
            is_positive, torch.zeros_like(candidate_weights), candidate_weights.log()
        )
    excluded = torch.zeros_like(is_positive)
    if keep is not None:
        excluded = ~(keep | is_positive)
    if not include_positive:
        excluded = excluded | is_positive
    denominator_logits = denominator_logits.masked_fill(excluded, float("-inf"))
    positive_logit = logits.gather(1, positive.unsqueeze(1)).squeeze(1)
    log_partition = torch.logsumexp(denominator_logits, dim=1)
    if not include_positive:
        # A row with nothing left in its denominator contributes 0 rather than +inf.
        empty = excluded.all(dim=1)
        log_partition = torch.where(empty, positive_logit.detach(), log_partition)
    return log_partition - positive_logit


def weighted_mean(values: Tensor, row_weights: Tensor | None = None) -> Tensor:
    """``sum_i w_i * values_i / B``: unit weights give the plain mean; weights act as importance weights."""
    if row_weights is None:
        return values.mean()
    return (values * row_weights.to(values.dtype)).sum() / values.numel()


def infonce(
    logits: Tensor,
    positive: Tensor,
    keep: Tensor | None = None,
    candidate_weights: Tensor | None = None,
    row_weights: Tensor | None = None,
    include_positive: bool = True,
) -> Tensor:
    """Mean (optionally row-weighted) InfoNCE loss over the batch."""
    return weighted_mean(infonce_per_row(logits, positive, keep, candidate_weights, include_positive), row_weights)
