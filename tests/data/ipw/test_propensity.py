"""DebCSE eq. 1–6 against a direct float64 loop, the sampler against its probabilities, and the vectorised
per-anchor random streams and sampler against numpy's generators and a per-anchor reference."""

from __future__ import annotations

import math

import numpy as np
import pytest

from st_debias.data.ipw import propensity
from st_debias.data.ipw.propensity import (
    gumbel_noise,
    masked_softmax,
    negative_probabilities,
    pairwise_word_edit,
    positive_probabilities,
    random_raw,
    sample_without_replacement,
    word_edit_distance,
)
from tests.reference import propensity_reference, successive_sample_reference


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


ROW_IDS = np.array([0, 1, 2, 7, 199_999, 2**31, 2**32 - 1, 2**32, 2**40 + 5, 2**63 - 1], dtype=np.uint64)
STREAM_KEYS = [(0, 1), (3, 2), (2**32 + 7, 1), (2**100 + 3, 2**40)]  # the last two are multi-word entropy


@pytest.mark.parametrize(("seed", "stream"), STREAM_KEYS)
def test_random_raw_equals_numpy_pcg64_per_row(seed, stream):
    """Guards the vectorised SeedSequence hashing and 128-bit PCG64 arithmetic (one- and two-word keys)."""
    got = random_raw(ROW_IDS, seed, stream, 70)
    for row, row_id in enumerate(ROW_IDS.tolist()):
        want = np.random.PCG64(np.random.SeedSequence([seed, stream, row_id])).random_raw(70)
        np.testing.assert_array_equal(got[row], want)


@pytest.mark.parametrize(("seed", "stream"), STREAM_KEYS)
def test_gumbel_noise_equals_numpy_generator_per_row(seed, stream):
    got = gumbel_noise((len(ROW_IDS), 64), ROW_IDS, seed, stream)
    want = np.stack([np.random.default_rng([seed, stream, i]).gumbel(size=64) for i in ROW_IDS.tolist()])
    uniform = (1.0 - (random_raw(ROW_IDS, seed, stream, 64) >> np.uint64(11)) * 2.0**-53).ravel()
    inner = -np.log(uniform)
    libm_log = all(
        np.array_equal(np.log(values), [math.log(x) for x in values.tolist()]) for values in (uniform, inner)
    )
    if libm_log:  # numpy's float64 log is the C library's on these inputs: the noise is bit-identical
        assert got.tobytes() == want.tobytes()
    else:  # numpy's own SIMD log may round the last bit differently
        np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-15)


def test_gumbel_noise_does_not_depend_on_batching():
    """Sharded builds concatenate to the unsharded one only if a row's noise depends on its id alone."""
    ids = np.arange(1000, 1300)
    whole = gumbel_noise((300, 16), ids, 5, 1)
    order = np.random.default_rng(0).permutation(300)
    shuffled = gumbel_noise((300, 16), ids[order], 5, 1)
    assert shuffled.tobytes() == whole[order].tobytes()
    parts = [gumbel_noise((len(p), 16), p, 5, 1) for p in np.array_split(ids, 7)]
    assert np.concatenate(parts).tobytes() == whole.tobytes()
    assert gumbel_noise((0, 16), [], 5, 1).shape == (0, 16)


def test_gumbel_noise_redraws_like_numpy_when_the_uniform_is_one(monkeypatch):
    """numpy rejects U = 1 and draws again, shifting the rest of the row; such rows come from numpy itself."""
    ids = np.array([4, 9])
    real = random_raw(ids, 0, 1, 8)
    forced = real.copy()
    forced[1, 3] = 5  # top 53 bits zero: next_double = 0, U = 1
    monkeypatch.setattr(propensity, "random_raw", lambda *args: forced)
    got = gumbel_noise((2, 8), ids, 0, 1)
    np.testing.assert_array_equal(got[1], np.random.default_rng([0, 1, 9]).gumbel(size=8))
    assert np.isfinite(got).all()


def test_gumbel_noise_rejects_bad_row_ids():
    with pytest.raises(ValueError, match=">= 0"):
        gumbel_noise((1, 3), np.array([-1]), 0, 1)
    with pytest.raises(TypeError, match="integers"):
        gumbel_noise((1, 3), np.array([1.5]), 0, 1)
    with pytest.raises(ValueError, match="rows"):
        gumbel_noise((2, 3), [1], 0, 1)


@pytest.mark.parametrize("m", [1, 2, 5, 9, 12])
@pytest.mark.parametrize("layout", ["prefix", "scattered"])
def test_vectorised_sampling_equals_per_anchor_reference_on_ragged_pools(m, layout):
    """Eq. 1–4 on (n, K) matrices with masked pool slots, the vectorised noise and top-m selection give, for
    every anchor, what a per-anchor loop gives on its own pool: plain-Python eq. 1–4, the anchor's numpy
    stream ``default_rng([seed, 1, anchor])`` over the K slots, and successive sampling without replacement.
    Pools vary in size, some smaller than m (m = 9 and 12 also cover the full-sort path)."""
    rng = np.random.default_rng(11)
    n, k, seed = 400, 10, 7
    anchor_ids = rng.choice(200_000, size=n, replace=False)
    edit = rng.uniform(0, 1, size=(n, k))
    cos = rng.uniform(0.25, 0.75, size=(n, k))
    sizes = rng.integers(0, k + 1, size=n)
    mask = np.arange(k)[None, :] < sizes[:, None]
    if layout == "scattered":
        mask = rng.permuted(mask, axis=1)
    probs = negative_probabilities(edit, cos, mask, lambda_n=0.8, temperature=0.5, similarity_temperature=0.7)
    picks = sample_without_replacement(probs, m, gumbel_noise((n, k), anchor_ids, seed, 1))
    assert picks.shape == (n, m) and picks.dtype == np.int64
    for r in range(n):
        slots = np.flatnonzero(mask[r])
        if len(slots) == 0:
            assert picks[r].tolist() == [-1] * m and not probs[r].any()
            continue
        pool_edit, pool_cos = edit[r, slots].tolist(), cos[r, slots].tolist()
        pool_probs = propensity_reference(pool_edit, pool_cos, 0.8, "negative", 0.5, 0.7)
        noise = np.random.default_rng([seed, 1, int(anchor_ids[r])]).gumbel(size=k)[slots].tolist()
        want = [int(slots[j]) for j in successive_sample_reference(pool_probs, m, noise)]
        assert picks[r].tolist() == want + [-1] * (m - len(want)), r
        np.testing.assert_allclose(probs[r, slots], pool_probs, rtol=1e-12)


@pytest.mark.parametrize("m", [1, 3, 8, 9])
def test_top_m_selection_breaks_ties_like_a_stable_sort(m):
    """The argmax selection (m <= 8) and the full sort (m > 8) return the same draws, ties by column."""
    rng = np.random.default_rng(3)
    probs = np.round(rng.uniform(size=(200, 12)), 1)
    probs[rng.uniform(size=probs.shape) < 0.3] = 0.0
    noise = np.zeros_like(probs)  # many exact ties
    with np.errstate(divide="ignore"):
        keys = np.where(probs > 0, np.log(probs), -np.inf)
    order = np.argsort(-keys, axis=1, kind="stable")[:, :m]
    want = np.where(np.isfinite(np.take_along_axis(keys, order, axis=1)), order, -1)
    np.testing.assert_array_equal(sample_without_replacement(probs, m, noise), want)
