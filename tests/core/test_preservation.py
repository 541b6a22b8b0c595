"""Similarity drift: the mean squared change of the in-batch cosines, against a float64 loop."""

from __future__ import annotations

import pytest
import torch

from st_debias import core
from tests.reference import similarity_drift_reference


@pytest.mark.parametrize("seed, rows, dim", [(0, 4, 6), (1, 7, 3), (2, 2, 5), (3, 1, 4)])
def test_drift_equals_the_reference_loop(seed, rows, dim):
    """Guards against the diagonal counted, a sum instead of a mean over the B(B-1) pairs, or a batch of
    one giving NaN instead of 0."""
    g = torch.Generator().manual_seed(seed)
    current = torch.randn(rows, dim, generator=g, dtype=torch.float64)
    reference = torch.randn(rows, dim, generator=g, dtype=torch.float64)
    got = core.similarity_drift(current, reference).item()
    assert got == pytest.approx(similarity_drift_reference(current.tolist(), reference.tolist()), abs=1e-12)


def test_drift_gradcheck():
    """Guards against a gradient cut by a detach or an in-place edit (the term would not train)."""
    g = torch.Generator().manual_seed(5)
    current = torch.randn(5, 4, generator=g, dtype=torch.float64, requires_grad=True)
    reference = torch.randn(5, 4, generator=g, dtype=torch.float64)
    assert torch.autograd.gradcheck(lambda x: core.similarity_drift(x, reference), (current,))


def test_drift_is_zero_for_the_reference_itself_and_float16_is_finite():
    """Guards against a floor at the start weights, and NaN from a zero float16 row."""
    x = torch.randn(6, 8, generator=torch.Generator().manual_seed(6), dtype=torch.float64)
    assert core.similarity_drift(x, x).item() == pytest.approx(0.0, abs=1e-12)
    half = torch.zeros(4, 8, dtype=torch.float16)
    drift = core.similarity_drift(half, x[:4].half())
    assert drift.dtype == torch.float32 and torch.isfinite(drift)


def test_a_reference_of_another_width_is_compared_by_its_cosines():
    """Guards against truncating or padding a wider reference (another model) instead of comparing cosines."""
    g = torch.Generator().manual_seed(7)
    current = torch.randn(5, 3, generator=g, dtype=torch.float64)
    reference = torch.randn(5, 8, generator=g, dtype=torch.float64)
    got = core.similarity_drift(current, reference).item()
    assert got == pytest.approx(similarity_drift_reference(current.tolist(), reference.tolist()), abs=1e-12)


@pytest.mark.parametrize("reference", [torch.zeros(2, 4), torch.zeros(3, 4, 1)])
def test_row_mismatch_is_named(reference):
    """Guards against broadcasting a reference of other rows into a meaningless drift."""
    with pytest.raises(ValueError, match="same rows"):
        core.similarity_drift(torch.zeros(3, 4), reference)
