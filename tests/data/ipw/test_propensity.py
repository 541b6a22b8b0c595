"""DebCSE eq. 1–6 against a direct float64 loop, and the sampler against its probabilities."""

from __future__ import annotations

import math

import numpy as np
import pytest

from st_debias.data.ipw.propensity import (
    masked_softmax,
    negative_probabilities,
    pairwise_word_edit,
    positive_probabilities,
    sample_without_replacement,
    word_edit_distance,
)


def _softmax(values: list[float], t: float = 1.0) -> list[float]:
    exps = [math.exp(v / t) for v in values]
    return [e / sum(exps) for e in exps]


def _direct(edit: list[float], cos: list[float], lam: float, kind: str, t: float = 1.0, ts: float = 1.0):
    """Eq. 1–6 exactly as printed in the paper, one pool, plain Python."""
    s_sur = [1 - p for p in _softmax(edit, ts)]  # eq. 1
    s_sem = _softmax(cos, ts)  # eq. 2
    if kind == "neg":
        raw = [(1 - lam) * a + lam * (1 - b) for a, b in zip(s_sur, s_sem)]  # eq. 3
    else:
        raw = [(1 - lam) * (1 - a) + lam * b for a, b in zip(s_sur, s_sem)]  # eq. 5
    return _softmax(raw, t)  # eq. 4 / 6


@pytest.mark.parametrize("kind", ["neg", "pos"])
@pytest.mark.parametrize(("lam", "t", "ts"), [(0.8, 1.0, 1.0), (0.3, 0.05, 1.0), (1.0, 0.2, 0.1), (0.0, 1.0, 0.5)])
def test_probabilities_match_direct_equations(kind, lam, t, ts):
    """Guards against a wrong sign/complement in eq. 1, 3 or 5, or a temperature applied in the wrong place."""
    rng = np.random.default_rng(7)
    edit = rng.uniform(0, 1, size=(3, 6))
    cos = rng.uniform(0.25, 0.75, size=(3, 6))
    mask = np.ones((3, 6), dtype=bool)
    mask[1, 4:] = False  # ragged pool: the oracle sees only the valid entries
    mask[2, 1] = False
    fn = negative_probabilities if kind == "neg" else positive_probabilities
    kwargs = {"lambda_n" if kind == "neg" else "lambda_p": lam}
    got = fn(edit, cos, mask, temperature=t, similarity_temperature=ts, **kwargs)
    for r in range(3):
        valid = np.flatnonzero(mask[r])
        want = _direct(edit[r, valid].tolist(), cos[r, valid].tolist(), lam, kind, t, ts)
        np.testing.assert_allclose(got[r, valid], want, rtol=1e-12, atol=1e-15)
        assert np.all(got[r, ~mask[r]] == 0)


def test_paper_direction_negatives_prefer_surface_similar_semantic_far():
    """A candidate with small edit distance and low cosine must get the highest P_neg; for positives the
    opposite corner (large edit, high cosine) wins."""
    edit = np.array([[0.1, 0.9, 0.5]])
    cos = np.array([[0.3, 0.7, 0.5]])
    p_neg = negative_probabilities(edit, cos, temperature=0.01)
    p_pos = positive_probabilities(edit, cos, temperature=0.01)
    assert p_neg.argmax() == 0
    assert p_pos.argmax() == 1


def test_temperature_one_is_nearly_flat_and_lower_temperature_sharpens():
    rng = np.random.default_rng(0)
    edit, cos = rng.uniform(size=(1, 50)), rng.uniform(0.25, 0.75, size=(1, 50))
    flat = negative_probabilities(edit, cos)
    sharp = negative_probabilities(edit, cos, temperature=0.001)
    assert flat.max() / flat.min() <= math.e + 1e-9
    assert sharp.max() > 5 * flat.max()


def test_lambda_outside_unit_interval_raises():
    with pytest.raises(ValueError, match="lambda_n"):
        negative_probabilities(np.zeros((1, 2)), np.zeros((1, 2)), lambda_n=1.5)
    with pytest.raises(ValueError, match="temperature"):
        masked_softmax(np.zeros((1, 2)), temperature=0)


def test_gumbel_top_m_first_draw_follows_probabilities():
    """The first draw of the sampler must be distributed as P (it is the exact Plackett–Luce sampler)."""
    probs = np.array([0.5, 0.3, 0.15, 0.05, 0.0])
    rng = np.random.default_rng(1)
    draws = 40000
    noise = rng.gumbel(size=(draws, 5))
    picks = sample_without_replacement(np.tile(probs, (draws, 1)), 2, noise)
    freq = np.bincount(picks[:, 0], minlength=5) / draws
    np.testing.assert_allclose(freq, probs, atol=0.01)
    assert np.all(picks[:, 0] != picks[:, 1])  # without replacement
    assert not np.any(picks == 4)  # zero probability is never drawn
    # second draw given first = 0 follows P renormalised without item 0
    second = picks[picks[:, 0] == 0, 1]
    np.testing.assert_allclose(np.bincount(second, minlength=5)[1:4] / len(second), [0.6, 0.3, 0.1], atol=0.02)


def test_sampler_pads_rows_with_too_few_candidates():
    picks = sample_without_replacement(np.array([[0.0, 1.0, 0.0]]), 2, np.zeros((1, 3)))
    assert picks.tolist() == [[1, -1]]


def test_word_edit_distance_is_word_level_and_normalised():
    assert word_edit_distance("The cat sat.", "the cat sat") == 0.0
    assert word_edit_distance("a b c", "a c") == pytest.approx(1 / 3)
    assert word_edit_distance("one two", "three four five six") == 1.0
    got = pairwise_word_edit(["a b c d", "x y"], ["a b d", "x y"])
    np.testing.assert_allclose(got, [0.25, 0.0])
