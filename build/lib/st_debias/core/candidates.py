"""Candidate layouts: which columns of the score matrix are a row's positive, its own negatives, or in-batch.

Every in-batch loss scores B local anchors against a candidate matrix built by stacking columns
``[C_0 | C_1 | ... | C_n]`` (each with ``W`` rows, ``W`` = the gathered batch size). Column block 0 holds
the positives, so row ``i`` finds its positive at ``offset + i``; block ``k`` holds the ``k``-th hard
negative of every row.
"""

from __future__ import annotations

import torch
from torch import Tensor


def positive_index(batch_size: int, offset: int = 0, device: torch.device | None = None) -> Tensor:
    """Index of each local row's positive in a candidate matrix whose first block is the positives."""
    return torch.arange(offset, offset + batch_size, device=device)


def own_row_mask(
    batch_size: int, world_size_rows: int, num_blocks: int, offset: int = 0, device: torch.device | None = None
) -> Tensor:
    """Bool ``(B, W * num_blocks)``: True where the candidate belongs to the anchor's own row (any block)."""
    own = torch.zeros(batch_size, world_size_rows, dtype=torch.bool, device=device)
    own[torch.arange(batch_size, device=device), torch.arange(offset, offset + batch_size, device=device)] = True
    return own.repeat(1, num_blocks)


def one_hot_mask(index: Tensor, num_candidates: int) -> Tensor:
    """Bool ``(B, num_candidates)`` with True at ``index[i]`` in row ``i``."""
    mask = torch.zeros(index.numel(), num_candidates, dtype=torch.bool, device=index.device)
    mask[torch.arange(index.numel(), device=index.device), index] = True
    return mask


SIMILARITY_TOLERANCE = 1e-6


def threshold_mask(guide_similarity: Tensor, threshold: float, keep: Tensor | None = None) -> Tensor:
    """Keep-mask from a guide's similarities: False where ``similarity >= threshold`` (DCLR eq. 5).

    The comparison allows ``SIMILARITY_TOLERANCE`` of rounding, so that ``threshold=1.0`` does mask texts
    the guide embeds identically (float32 cosines of equal vectors often come out just below 1).
    Entries where ``keep`` is True (e.g. each row's positive) are always kept.
    """
    mask = guide_similarity < threshold - SIMILARITY_TOLERANCE
    if keep is not None:
        mask = mask | keep
    return mask
