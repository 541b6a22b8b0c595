"""Candidate layouts: each row's positive, its own row in every block, one-hot and guide-threshold masks."""

from __future__ import annotations

import pytest
import torch

from st_debias import core


@pytest.mark.parametrize("batch, offset", [(1, 0), (4, 0), (3, 5)])
def test_positive_index_points_at_the_rows_own_positive(batch, offset):
    """Guards against positives looked up at 0..B-1 on a process whose rows start at ``offset``."""
    index = core.positive_index(batch, offset)
    assert index.dtype == torch.long
    assert index.tolist() == [offset + row for row in range(batch)]


@pytest.mark.parametrize("batch, width, blocks, offset", [(2, 5, 2, 3), (3, 3, 1, 0), (1, 4, 3, 2)])
def test_own_row_mask_marks_the_rows_own_candidate_in_every_block(batch, width, blocks, offset):
    """Guards against the own-row diagonal placed at 0 on a rank whose rows start at ``offset``, or marked
    in the positive block only (a row's own hard negatives are in every later block)."""
    mask = core.own_row_mask(batch, width, blocks, offset=offset)
    assert mask.shape == (batch, width * blocks)
    expected = [[column % width == offset + row for column in range(width * blocks)] for row in range(batch)]
    assert mask.dtype == torch.bool and mask.tolist() == expected


def test_one_hot_mask_has_one_true_per_row():
    """Guards against the positive marked in the wrong column (or in several)."""
    index = torch.tensor([2, 0, 2, 4])
    mask = core.one_hot_mask(index, 5)
    assert mask.dtype == torch.bool and mask.shape == (4, 5)
    assert mask.tolist() == [[column == int(i) for column in range(5)] for i in index]


def test_threshold_mask_drops_candidates_at_or_above_the_threshold():
    """Guards against DCLR eq. 5's ``>=`` turned into ``>`` or the mask inverted (kept = below φ)."""
    similarity = torch.tensor([[0.2, 0.9, 0.95], [0.89, -1.0, 1.0]], dtype=torch.float64)
    expected = [[value < 0.9 - core.candidates.SIMILARITY_TOLERANCE for value in row] for row in similarity.tolist()]
    assert core.threshold_mask(similarity, 0.9).tolist() == expected == [[True, False, False], [True, True, False]]


def test_threshold_mask_tolerates_rounding_and_keeps_positives():
    """Guards against φ = 1 missing identical texts whose float32 cosine is 0.99999994, and against
    masking a kept entry."""
    similarity = torch.tensor([[1.0 - 6e-8, 0.5, 0.95]])
    keep = torch.tensor([[False, False, True]])
    assert core.threshold_mask(similarity, 1.0).tolist() == [[False, True, True]]
    assert core.threshold_mask(similarity, 0.9, keep=keep).tolist() == [[False, True, True]]
