"""Input checks shared by the losses: each accepts what is valid and names the problem otherwise."""

from __future__ import annotations

import math
import re

import pytest
import torch

from st_debias import core


def _columns(*rows: int) -> list[torch.Tensor]:
    return [torch.zeros(count, 3, dtype=torch.float64) for count in rows]


@pytest.mark.parametrize("count, minimum, maximum", [(2, 2, 2), (3, 2, None), (5, 2, 5)])
def test_check_num_columns_accepts_the_layouts_in_range(count, minimum, maximum):
    core.check_num_columns(_columns(*[4] * count), minimum, maximum, "Loss", "anchor, positive")


@pytest.mark.parametrize(
    "count, minimum, maximum, expected",
    [(1, 2, 2, "expects 2 input columns"), (4, 2, 3, "expects 2..3 input columns"), (1, 2, None, "expects 2..n input")],
)
def test_check_num_columns_names_the_expected_layout(count, minimum, maximum, expected):
    """Guards against an extra id column read as a hard negative without a word."""
    with pytest.raises(ValueError, match=rf"Loss {re.escape(expected)}.*\(anchor, positive\), got {count}"):
        core.check_num_columns(_columns(*[4] * count), minimum, maximum, "Loss", "anchor, positive")


def test_check_num_columns_refuses_columns_of_different_lengths_and_an_empty_batch():
    with pytest.raises(ValueError, match=r"same number of rows, got sizes \[3, 4\]"):
        core.check_num_columns(_columns(4, 3), 2, 2, "Loss", "anchor, positive")
    with pytest.raises(ValueError, match=r"empty batch \(0 rows\)"):
        core.check_num_columns(_columns(0, 0), 2, 2, "Loss", "anchor, positive")


def test_check_not_empty_names_the_remedy():
    core.check_not_empty(1, "Loss")
    with pytest.raises(ValueError, match=r"Loss: got an empty batch.*dataloader_drop_last=True"):
        core.check_not_empty(0, "Loss")


def test_check_row_weights_flattens_valid_weights():
    weights = torch.tensor([[0.0], [1.5], [2.0]], dtype=torch.float64)
    assert core.check_row_weights(weights, 3, "Loss").tolist() == [0.0, 1.5, 2.0]


@pytest.mark.parametrize(
    "values, message",
    [
        ([1.0, 2.0], r"one weight per row \(3\), got 2"),
        ([1.0, math.nan, math.nan], r"NaN \(rows \[1, 2\]\)"),
        ([1.0, math.inf, 1.0], "contain inf"),
        ([1.0, -0.5, 1.0], "non-negative, got min -0.5"),
    ],
)
def test_check_row_weights_names_what_is_wrong(values, message):
    with pytest.raises(ValueError, match=message):
        core.check_row_weights(torch.tensor(values, dtype=torch.float64), 3, "Loss")


def test_check_finite_names_column_and_rows():
    """Guards against an error that does not say where the NaN is."""
    good, bad = torch.zeros(3, 2), torch.zeros(3, 2)
    bad[1, 0] = math.inf
    core.check_finite([good], "guide embeddings", "Loss")
    with pytest.raises(ValueError, match=r"Loss: guide embeddings contain NaN or inf \(column 1, rows \[1\]\)"):
        core.check_finite([good, bad], "guide embeddings", "Loss")


@pytest.mark.parametrize(
    "check, valid, invalid",
    [
        (core.check_finite_number, [-2.0, 0, 3], [math.nan, math.inf, -math.inf, "1"]),
        (core.check_positive, [1e-9, 2, 20.0], [0, -1.0, math.inf, math.nan, None]),
        (core.check_non_negative, [0, 0.0, 5.5], [-1e-9, math.inf, math.nan, "0"]),
    ],
    ids=["finite_number", "positive", "non_negative"],
)
def test_number_checks_accept_and_refuse_at_their_bounds(check, valid, invalid):
    """Guards against an off-by-bound (0 accepted as positive, 0 refused as non-negative) or NaN passing
    a comparison that is always False."""
    for value in valid:
        check(value, "scale", "Loss")
    for value in invalid:
        with pytest.raises(ValueError, match=r"Loss: scale must be"):
            check(value, "scale", "Loss")
