"""Logit transforms: plain InfoNCE scaling and Focal-InfoNCE's modulation (Hou & Li 2023, eq. 2)."""

from __future__ import annotations

import torch

from st_debias import core


def _similarities() -> torch.Tensor:
    return torch.rand(3, 4, generator=torch.Generator().manual_seed(1), dtype=torch.float64) * 2 - 1


def test_scaled_divides_by_the_temperature():
    """Guards against multiplying by τ instead of 1/τ (scale)."""
    similarity = _similarities()
    got = core.scaled(similarity, 20.0)
    assert got.tolist() == [[value * 20.0 for value in row] for row in similarity.tolist()]


def test_focal_squares_positives_and_shifts_negatives_by_the_margin():
    """Guards against the modulations swapped between positives and negatives, or the margin applied as
    s + m instead of s (s + m)."""
    similarity = _similarities()
    is_positive = torch.zeros(3, 4, dtype=torch.bool)
    is_positive[torch.arange(3), torch.tensor([0, 2, 3])] = True
    margin, scale = 0.3, 20.0
    got = core.focal(similarity, is_positive, margin, scale)
    expected = [
        [(s * s if positive else s * (s + margin)) * scale for s, positive in zip(row, flags)]
        for row, flags in zip(similarity.tolist(), is_positive.tolist())
    ]
    torch.testing.assert_close(got, torch.tensor(expected, dtype=torch.float64), rtol=0, atol=1e-12)


def test_focal_with_zero_margin_and_no_positive_is_the_squared_similarity():
    """Guards against a constant added to every logit (which the softmax would hide but the margin would not)."""
    similarity = _similarities()
    no_positive = torch.zeros_like(similarity, dtype=torch.bool)
    torch.testing.assert_close(core.focal(similarity, no_positive, 0.0, 1.0), similarity.pow(2), rtol=0, atol=1e-15)
