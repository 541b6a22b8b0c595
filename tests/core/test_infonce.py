"""InfoNCE over logits, masks and weights; candidate masks; noise negatives; validation."""

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


def test_own_row_mask_follows_the_offset():
    """Guards against the own-row diagonal placed at 0 on a rank whose rows start at ``offset``."""
    mask = core.own_row_mask(2, 5, 2, offset=3)
    assert mask.shape == (2, 10)
    assert mask.nonzero().tolist() == [[0, 3], [0, 8], [1, 4], [1, 9]]


def test_threshold_mask_tolerates_rounding_and_keeps_positives():
    """Guards against φ = 1 missing identical texts whose float32 cosine is 0.99999994, and against
    masking a kept entry."""
    similarity = torch.tensor([[1.0 - 6e-8, 0.5, 0.95]])
    keep = torch.tensor([[False, False, True]])
    assert core.threshold_mask(similarity, 1.0).tolist() == [[False, True, True]]
    assert core.threshold_mask(similarity, 0.9, keep=keep).tolist() == [[False, True, True]]


def test_gather_rows_outside_a_process_group_is_the_identity():
    """Guards against a gather that needs a process group (single-process training must not change)."""
    columns = [torch.ones(3, 2), torch.zeros(3, 2)]
    for enabled in (False, True):
        gathered, offset = core.gather_rows(columns, enabled)
        assert offset == 0 and all(g is c for g, c in zip(gathered, columns))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32])
def test_noise_negatives_are_finite_float32_and_raise_the_loss(dtype):
    """Guards against NaN noise in float16 (its 1e-12 floor is 0) and against descent instead of ascent."""
    generator = torch.Generator().manual_seed(7)
    anchors = torch.randn(4, 6, generator=generator).to(dtype)
    positives = anchors + 0.1 * torch.randn(4, 6, generator=generator).to(dtype)
    positive = torch.arange(4)
    noise = core.adversarial_noise(
        anchors, positives, positive, 4, steps=0, step_size=0.5, scale=20.0, generator=torch.Generator().manual_seed(8)
    )
    refined = core.adversarial_noise(
        anchors, positives, positive, 4, steps=4, step_size=0.5, scale=20.0, generator=torch.Generator().manual_seed(8)
    )
    assert refined.dtype == torch.float32 and torch.isfinite(refined).all()

    def loss(extra: torch.Tensor) -> float:
        return core.infonce(20.0 * core.similarity_matrix(anchors, torch.cat([positives.float(), extra])), positive).item()

    assert loss(refined) > loss(noise)


def test_check_finite_names_column_and_rows():
    """Guards against an error that does not say where the NaN is."""
    good, bad = torch.zeros(3, 2), torch.zeros(3, 2)
    bad[1, 0] = math.inf
    core.check_finite([good], "guide embeddings", "Loss")
    with pytest.raises(ValueError, match=r"Loss: guide embeddings contain NaN or inf \(column 1, rows \[1\]\)"):
        core.check_finite([good, bad], "guide embeddings", "Loss")
