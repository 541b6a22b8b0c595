"""Similarity and batch normalisation on plain tensors: precision, scorers, degenerate inputs."""

from __future__ import annotations

import pytest
import torch
from sentence_transformers.util import cos_sim, dot_score

from st_debias import core


def _pair(seed: int, rows: int = 5, dim: int = 7, dtype: torch.dtype = torch.float32):
    generator = torch.Generator().manual_seed(seed)
    return [torch.randn(rows, dim, generator=generator).to(dtype) for _ in range(2)]


@pytest.mark.parametrize(
    "dtype, expected",
    [
        (torch.float16, torch.float32),
        (torch.bfloat16, torch.float32),
        (torch.float32, torch.float32),
        (torch.float64, torch.float64),
        (torch.int64, torch.int64),
    ],
)
def test_at_least_float32(dtype, expected):
    """Guards against downcasting float64 oracles or casting integer index tensors."""
    assert core.at_least_float32(torch.zeros(2, dtype=dtype)).dtype == expected


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_similarity_is_float32_and_exact(dtype):
    """Guards against scores rounded to half precision (ties and a 2.5e-2 loss error in bf16)."""
    a, b = _pair(1, dtype=dtype)
    scores = core.similarity_matrix(a, b)
    assert scores.dtype == torch.float32
    torch.testing.assert_close(scores, cos_sim(a.float(), b.float()), rtol=0, atol=1e-6)


def test_float16_zero_row_has_similarity_zero():
    """Guards against NaN from a zero embedding in float16 (a normaliser eps that underflows to 0)."""
    a, b = _pair(2, dtype=torch.float16)
    a[0] = 0
    scores = core.similarity_matrix(a, b)
    assert torch.isfinite(scores).all() and torch.all(scores[0] == 0)
    assert torch.all(core.rowwise_similarity(a, b)[0] == 0)


@pytest.mark.parametrize(
    "scorer",
    [cos_sim, dot_score, lambda x, y: -torch.cdist(x, y)],
    ids=["cos_sim", "dot_score", "custom"],
)
def test_rowwise_similarity_is_the_diagonal(scorer):
    """Guards against the pairwise shortcut disagreeing with the matrix scorer (or a custom scorer
    being replaced by cosine)."""
    a, b = _pair(3, dtype=torch.float64)
    torch.testing.assert_close(core.rowwise_similarity(a, b, scorer), scorer(a, b).diagonal(), rtol=0, atol=1e-12)


def test_batch_standardize_matches_batchnorm():
    """Guards against biased/unbiased variance mix-ups or a missing eps (BatchNorm1d, training mode)."""
    x = torch.randn(8, 6, generator=torch.Generator().manual_seed(4), dtype=torch.float64)
    expected = torch.nn.BatchNorm1d(6, affine=False, track_running_stats=False).double()(x)
    torch.testing.assert_close(core.batch_standardize(x), expected, rtol=0, atol=1e-12)


def test_batch_standardize_constant_features_are_zero_without_gradient():
    """Guards against BatchNorm amplifying the rounding noise of a constant feature by 1/√eps (the
    source of 1e10 gradients once a cosine normalises an all-constant column)."""
    x = torch.randn(6, 4, generator=torch.Generator().manual_seed(5))
    x[:, 1] = 0.3  # constant up to float32 rounding of the mean
    x = x.requires_grad_(True)
    z = core.batch_standardize(x)
    assert torch.all(z[:, 1] == 0)
    (z * torch.arange(24.0).reshape(6, 4)).sum().backward()
    assert torch.all(x.grad[:, 1] == 0)
    assert torch.all(x.grad[:, [0, 2, 3]].abs().sum(dim=0) > 0)


def test_batch_standardize_half_precision_is_float32():
    """Guards against batch statistics computed in float16 (variance underflow, overflow of squares)."""
    x = torch.randn(6, 4, generator=torch.Generator().manual_seed(6)).half()
    assert core.batch_standardize(x).dtype == torch.float32


def test_full_precision_switches_autocast_off_only_where_it_is_on():
    """Guards against scores computed in bfloat16 under ``bf16=True`` training (autocast rounds a float32
    matmul), and against a context that fails outside autocast."""
    a, b = _pair(7)
    with core.similarity.full_precision(a):
        assert (a @ b.T).dtype == torch.float32
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert (a @ b.T).dtype == torch.bfloat16  # sanity: autocast does round the plain matmul
        with core.similarity.full_precision(a):
            exact = a @ b.T
    assert exact.dtype == torch.float32
    torch.testing.assert_close(exact, a @ b.T, rtol=0, atol=0)


@pytest.mark.parametrize("scale", [1e20, 1e-30])
def test_cosine_scores_keep_their_value_at_extreme_norms(scale):
    """Failure: rows of norm >= 1e20 (the float32 norm overflows) or <= 1e-30 (it underflows) scored cosine 0."""
    generator = torch.Generator().manual_seed(0)
    a, b = torch.randn(4, 6, generator=generator), torch.randn(5, 6, generator=generator)
    torch.testing.assert_close(core.similarity_matrix(a * scale, b * scale), core.similarity_matrix(a, b))
    torch.testing.assert_close(core.rowwise_similarity(a * scale, b[:4] * scale), core.rowwise_similarity(a, b[:4]))


def test_batch_standardize_keeps_its_value_at_huge_norms():
    """Failure: features of size 1e20 overflowed the float32 variance and were standardised to 0."""
    x = torch.randn(8, 5, generator=torch.Generator().manual_seed(1))
    torch.testing.assert_close(core.batch_standardize(x * 1e20), core.batch_standardize(x), rtol=1e-4, atol=1e-4)
