"""Logit transforms applied to cosine similarities before the softmax."""

from __future__ import annotations

import torch
from torch import Tensor


def scaled(similarity: Tensor, scale: float) -> Tensor:
    """Plain InfoNCE logits: ``s / tau`` with ``scale = 1 / tau``."""
    return similarity * scale


def focal(similarity: Tensor, is_positive: Tensor, margin: float, scale: float) -> Tensor:
    """Focal-InfoNCE logits (Hou & Li 2023, eq. 2): ``s^2 / tau`` for positives, ``s (s + m) / tau`` otherwise."""
    modulated = torch.where(is_positive, similarity * similarity, similarity * (similarity + margin))
    return modulated * scale
