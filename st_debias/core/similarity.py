"""Similarity matrices between embedding sets, computed in float32 or wider.

The default scorer is sentence-transformers' ``cos_sim`` (as in MultipleNegativesRankingLoss). Every
input below float32 (float16, bfloat16) is upcast first, so a matmul never rounds scores to 3 decimal
digits and a zero embedding never meets an ``eps`` that underflows to 0 (a NaN in float16). The scores are
computed with autocast switched off, so mixed-precision training (``bf16=True``, ``fp16=True``) does not
round them back down.

Extreme norms: a float32 norm squares its entries, so rows of norm ≥ ~1e19 overflow to inf and rows of norm
≤ ~1e-19 underflow to 0, and their cosines (and so every loss) silently fell to the uniform value with zero
gradient. Cosine scorers therefore see each row divided by its largest absolute entry first (the cosine is
scale-invariant, so the value is unchanged wherever it was computable), and :func:`batch_standardize` divides each
feature by its largest absolute value with ``eps`` rescaled to match (the same value, exactly). Non-finite inputs
are refused by the losses (:func:`~st_debias.core.validation.check_num_columns`).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import torch
from sentence_transformers.util import cos_sim, dot_score, pairwise_cos_sim, pairwise_dot_score
from torch import Tensor

SimilarityFct = Callable[[Tensor, Tensor], Tensor]

CONSTANT_VARIANCE = 1e-6
"""Features with batch variance below this × eps count as constant in :func:`batch_standardize`."""

# Row-wise counterparts of the matrix scorers, so that s(a_i, b_i) costs O(B), not O(B²).
_PAIRWISE: dict[SimilarityFct, SimilarityFct] = {cos_sim: pairwise_cos_sim, dot_score: pairwise_dot_score}


def at_least_float32(x: Tensor) -> Tensor:
    """``x`` upcast to float32 when its floating dtype is narrower (float16, bfloat16); else unchanged.

    The gradient flowing back is cast to ``x``'s dtype saturating at its largest finite value, not overflowing
    to inf: a (near-)zero embedding has a float32 cosine gradient of about 1/eps (1e12), which float16 cannot
    hold, and the inf turned into NaN further back. A NaN gradient stays NaN.
    """
    if x.is_floating_point() and torch.finfo(x.dtype).bits < 32:
        return _SaturatingUpcast.apply(x)
    return x


class _SaturatingUpcast(torch.autograd.Function):
    """``x.float()`` whose backward clamps the gradient to the finite range of ``x``'s dtype before casting."""

    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Tensor:
        ctx.dtype = x.dtype
        return x.float()

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> Tensor:
        limit = torch.finfo(ctx.dtype).max
        return grad.clamp(-limit, limit).to(ctx.dtype)


def full_precision(x: Tensor) -> AbstractContextManager[Any]:
    """A context in which autocast is off on ``x``'s device (so float32 inputs give float32 results)."""
    device = x.device.type
    if device in ("cpu", "cuda") and torch.is_autocast_enabled(device):
        return torch.autocast(device_type=device, enabled=False)
    return nullcontext()


#: Scorers that depend on the rows' directions only: each input row is divided by its largest absolute entry first.
_SCALE_INVARIANT = (cos_sim, pairwise_cos_sim)


def _unit_max_rows(x: Tensor) -> Tensor:
    """``x`` with each row divided by its largest absolute entry (a zero row unchanged): same directions, norms
    between 1 and √dim, so that a norm computed in float32 neither overflows nor underflows."""
    largest = x.detach().abs().amax(dim=-1, keepdim=True)
    return x / torch.where(largest > 0, largest, torch.ones_like(largest))


def _scorer_input(x: Tensor, similarity_fct: SimilarityFct) -> Tensor:
    x = at_least_float32(x)
    return _unit_max_rows(x) if similarity_fct in _SCALE_INVARIANT else x


def similarity_matrix(a: Tensor, b: Tensor, similarity_fct: SimilarityFct = cos_sim) -> Tensor:
    """``similarity_fct`` of every row of ``a`` with every row of ``b``: shape ``(len(a), len(b))``."""
    with full_precision(a):
        return similarity_fct(_scorer_input(a, similarity_fct), _scorer_input(b, similarity_fct))


def rowwise_similarity(a: Tensor, b: Tensor, similarity_fct: SimilarityFct = cos_sim) -> Tensor:
    """``similarity_fct(a[i], b[i])`` for each row: shape ``(len(a),)``.

    ``cos_sim`` and ``dot_score`` use their pairwise versions; any other scorer is evaluated as a
    matrix and its diagonal taken.
    """
    pairwise = _PAIRWISE.get(similarity_fct)
    with full_precision(a):
        a, b = _scorer_input(a, similarity_fct), _scorer_input(b, similarity_fct)
        return pairwise(a, b) if pairwise is not None else similarity_fct(a, b).diagonal()


def batch_standardize(x: Tensor, eps: float = 1e-5) -> Tensor:
    """Batch normalisation without affine parameters: standardise each feature over the rows.

    Always uses the statistics of ``x`` itself (no running averages), in training and eval mode alike,
    and lets gradients flow through the statistics, like ``BatchNorm1d(affine=False)`` in training mode.
    Computed in float32 or wider.

    One departure from ``BatchNorm1d``: a feature whose batch variance is below ``CONSTANT_VARIANCE``
    × ``eps`` is constant up to rounding and comes out as exactly 0 with no gradient. BatchNorm would
    return that rounding noise scaled by 1/√eps; a column constant in every feature (the same text in
    every row) then becomes a near-zero vector, whose cosine has gradients of ~1/‖z‖ (1e10 seen).
    The value changes by at most √``CONSTANT_VARIANCE`` (1e-3) per such feature.

    Each feature is divided by its largest absolute value ``s`` first and ``eps`` by ``s²``: the same value,
    exactly, without a variance that overflows float32 (features ≥ ~1e19). Features whose spread is far below
    √``eps`` (inputs of norm ≤ ~1e-6, as in ``BatchNorm1d``) are constant by this definition and come out as 0.
    """
    x = at_least_float32(x)
    largest = x.detach().abs().amax(dim=0, keepdim=True)
    largest = torch.where(largest > 0, largest, torch.ones_like(largest))
    z = x / largest
    eps_z = eps / largest.square()  # inf where largest² underflows: such a feature is constant (0), as unscaled
    mean = z.mean(dim=0, keepdim=True)
    var = z.var(dim=0, unbiased=False, keepdim=True)
    standardized = (z - mean) / torch.sqrt(var + eps_z)
    return torch.where(var > CONSTANT_VARIANCE * eps_z, standardized, torch.zeros_like(standardized))

