"""InfoNCE over logits, masks and weights, and the weighted mean over rows."""

from __future__ import annotations

import math

import pytest
import torch

from st_debias import core


def _logits(seed: int, rows: int = 3, columns: int = 5) -> torch.Tensor:
    return torch.randn(rows, columns, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def test_infonce_is_cross_entropy_without_masks():
    """Guards against a sign or reduction error in the plain case (must equal cross-entropy)."""
    logits, positive = _logits(1), torch.tensor([0, 3, 1])
    expected = torch.nn.functional.cross_entropy(logits, positive)
    torch.testing.assert_close(core.infonce(logits, positive), expected, rtol=0, atol=1e-12)


def test_masking_equals_removing_the_column():
    """Guards against masked candidates left in the denominator as exp(0) (zeroed logits)."""
    logits, positive = _logits(2), torch.tensor([0, 1, 2])
    keep = torch.ones_like(logits, dtype=torch.bool)
    keep[:, 4] = False
    torch.testing.assert_close(
        core.infonce(logits, positive, keep=keep), core.infonce(logits[:, :4], positive), rtol=0, atol=1e-12
    )


def test_candidate_weights_zero_masks_and_one_is_neutral():
    """Guards against weights applied to the positive, or applied linearly to the logits."""
    logits, positive = _logits(3), torch.tensor([0, 1, 2])
    ones = torch.ones_like(logits)
    torch.testing.assert_close(core.infonce(logits, positive, candidate_weights=ones), core.infonce(logits, positive))
    weights = ones.clone()
    weights[:, 4] = 0
    keep = weights.bool()
    torch.testing.assert_close(
        core.infonce(logits, positive, candidate_weights=weights), core.infonce(logits, positive, keep=keep)
    )


def test_row_with_only_its_positive_is_zero():
    """Guards against NaN/inf for a row whose denominator is empty (the batch-of-one case)."""
    logits = _logits(4, rows=1, columns=1).requires_grad_(True)
    loss = core.infonce(logits, torch.tensor([0]))
    assert loss.item() == 0.0
    loss.backward()
    assert logits.grad.item() == 0.0
    nothing_left = core.infonce_per_row(_logits(4, rows=1, columns=2), torch.tensor([0]), keep=torch.tensor([[True, False]]), include_positive=False)
    assert nothing_left.item() == 0.0


def test_weighted_mean_divides_by_the_row_count():
    """Guards against normalising by the weight sum (weights must act as importance weights)."""
    values = torch.tensor([1.0, 2.0, 3.0, 4.0])
    assert core.weighted_mean(values, torch.tensor([2.0, 0.0, 0.0, 0.0])).item() == 0.5


def _reference_row(logits: list[float], positive: int, keep: list[bool], weights: list[float], include_positive: bool) -> float:
    """-L[p] + log Σ_j keep_j w_j e^{L_j}, the positive counted with weight 1 (or left out), empty → 0."""
    terms = [
        (1.0 if j == positive else weights[j]) * math.exp(value)
        for j, value in enumerate(logits)
        if (j == positive and include_positive) or (j != positive and keep[j])
    ]
    total = math.fsum(terms)
    return 0.0 if total == 0.0 else math.log(total) - logits[positive]


@pytest.mark.parametrize("include_positive", [True, False])
def test_infonce_per_row_and_weighted_mean_equal_the_formula(include_positive):
    """Guards against masks, candidate weights, row weights or ``include_positive`` applied to the wrong
    entries (checked against the module docstring's formula, written out with Python floats)."""
    logits, positive = _logits(5, rows=4, columns=6), torch.tensor([0, 5, 2, 3])
    generator = torch.Generator().manual_seed(6)
    keep = torch.rand(4, 6, generator=generator) > 0.3
    weights = torch.rand(4, 6, generator=generator, dtype=torch.float64) * 2
    row_weights = torch.tensor([0.5, 1.0, 2.0, 0.0], dtype=torch.float64)
    per_row = core.infonce_per_row(logits, positive, keep, weights, include_positive)
    expected = [
        _reference_row(logits[i].tolist(), int(positive[i]), keep[i].tolist(), weights[i].tolist(), include_positive)
        for i in range(4)
    ]
    torch.testing.assert_close(per_row, torch.tensor(expected, dtype=torch.float64), rtol=0, atol=1e-12)
    mean = core.infonce(logits, positive, keep, weights, row_weights, include_positive)
    expected_mean = math.fsum(w * v for w, v in zip(row_weights.tolist(), expected)) / 4
    assert abs(mean.item() - expected_mean) < 1e-12
