"""Inputs at the edges of float32: the losses keep their value and gradient at extreme norms, and refuse NaN/inf.

The decision (``st_debias.core.similarity``): cosine scorers see each row divided by its largest absolute entry,
and batch standardisation each feature (with ``eps`` rescaled), so a float32 norm or variance never overflows or
underflows. DebiasInfoNCE standardises like ``BatchNorm1d`` (``eps`` 1e-5): a batch whose features spread far
below √eps counts as constant, by design, so at tiny norms its loss is the uniform one.
"""

from __future__ import annotations

import math

import pytest
import torch

from st_debias.losses import DebiasInfoNCE, FocalInfoNCE, InstanceWeightedMNRL, MarginNegationLoss

LOSSES = {
    "FocalInfoNCE": (lambda: FocalInfoNCE(None, scale=20.0, margin=0.3), 3),
    "InstanceWeightedMNRL": (lambda: InstanceWeightedMNRL(None), 3),
    "DebiasInfoNCE": (lambda: DebiasInfoNCE(None, in_batch_negatives="both"), 4),
    "MarginNegationLoss": (lambda: MarginNegationLoss(None, alpha=0.1, beta=0.1, margin_weight=1.0), 4),
}


def _loss_and_gradients(name: str, scale: float) -> tuple[float, list[torch.Tensor]]:
    build, count = LOSSES[name]
    generator = torch.Generator().manual_seed(5)
    columns = [(torch.randn(6, 8, generator=generator) * scale).requires_grad_() for _ in range(count)]
    loss = build().compute_loss_from_embeddings(columns, None)
    total = sum(loss.values()) if isinstance(loss, dict) else loss
    total.backward()
    return total.item(), [column.grad * scale for column in columns]  # the gradient at scale 1 (cosine: 1/scale)


@pytest.mark.parametrize("scale", [1e20, 1e30, 1e-20, 1e-30])
@pytest.mark.parametrize("name", list(LOSSES))
def test_extreme_input_norms_keep_the_loss_and_its_gradient(name: str, scale: float) -> None:
    """Failure: at input norms >= 1e20 or <= 1e-30 every loss fell silently to its uniform value with zero gradient
    (the float32 norm overflowed or underflowed)."""
    if name == "DebiasInfoNCE" and scale < 1:
        pytest.skip("BatchNorm's eps makes such a batch constant, by design: test_debias_infonce_at_tiny_norms")
    expected, expected_gradients = _loss_and_gradients(name, 1.0)
    value, gradients = _loss_and_gradients(name, scale)
    assert value == pytest.approx(expected, rel=1e-4)
    for got, want in zip(gradients, expected_gradients, strict=True):
        assert torch.isfinite(got).all()
        torch.testing.assert_close(got, want, rtol=1e-3, atol=1e-5)


def test_debias_infonce_at_tiny_norms_is_the_documented_uniform_loss() -> None:
    """The documented decision: DebiasInfoNCE standardises with BatchNorm's eps, so features spread far below √eps
    are constant (0) and the loss is that of equal logits, log(number of candidates), not a silent other value."""
    value, _ = _loss_and_gradients("DebiasInfoNCE", 1e-30)
    candidates = 1 + 2 + 2 * 6 - 2  # the positive, 2 hard negatives, both in-batch blocks without the own rows
    assert value == pytest.approx(2 * math.log(candidates), rel=1e-5)  # symmetric: two terms


@pytest.mark.parametrize("bad", [math.inf, -math.inf, math.nan])
@pytest.mark.parametrize("name", list(LOSSES))
def test_a_non_finite_input_is_refused_naming_the_loss(name: str, bad: float) -> None:
    """Failure: DebiasInfoNCE with an inf input returned a finite loss with NaN gradients."""
    build, count = LOSSES[name]
    columns = [torch.randn(6, 8) for _ in range(count)]
    columns[1][2, 3] = bad
    with pytest.raises(ValueError, match=rf"^{name}: input embeddings contain NaN or inf \(column 1, rows \[2\]\)"):
        build().compute_loss_from_embeddings(columns, None)
