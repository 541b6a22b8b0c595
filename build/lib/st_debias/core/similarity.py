"""Similarity matrices between embedding sets."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor


def cosine_matrix(a: Tensor, b: Tensor, eps: float = 1e-8) -> Tensor:
    """Cosine similarity of every row of ``a`` with every row of ``b``: shape ``(len(a), len(b))``."""
    return F.normalize(a, p=2, dim=-1, eps=eps) @ F.normalize(b, p=2, dim=-1, eps=eps).transpose(0, 1)


def rowwise_cosine(a: Tensor, b: Tensor, eps: float = 1e-8) -> Tensor:
    """Cosine similarity of ``a[i]`` with ``b[i]`` for each row: shape ``(len(a),)``."""
    return (F.normalize(a, p=2, dim=-1, eps=eps) * F.normalize(b, p=2, dim=-1, eps=eps)).sum(dim=-1)


def batch_standardize(x: Tensor, eps: float = 1e-5) -> Tensor:
    """Batch normalisation without affine parameters: standardise each feature over the rows.

    Always uses the statistics of ``x`` itself (no running averages), in training and eval mode alike,
    and lets gradients flow through the statistics, like ``BatchNorm1d(affine=False)`` in training mode.
    """
    mean = x.mean(dim=0, keepdim=True)
    var = x.var(dim=0, unbiased=False, keepdim=True)
    return (x - mean) / torch.sqrt(var + eps)
