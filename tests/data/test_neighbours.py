"""Exact range top-K search against a brute-force N×N reference."""

from __future__ import annotations

import numpy as np
import pytest

from st_debias.data.neighbours import range_topk


def _clustered(n: int = 900, dim: int = 32, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(20, dim))
    x = centres[rng.integers(0, 20, n)] + 0.9 * rng.normal(size=(n, dim))
    x[5] = x[6]  # an exact duplicate (cosine 1: never a neighbour with high < 1)
    if n > 100:
        x[41] = x[40]  # ties in one block: wherever both are kept, the lower index must come first
        x[100] = x[10]  # and across blocks of 64
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def _brute(x: np.ndarray, k: int, low: float, high: float):
    sims = x @ x.T
    np.fill_diagonal(sims, -np.inf)
    sims[sims > high] = -np.inf
    order = np.argsort(-sims, axis=1, kind="stable")[:, :k]
    vals = np.take_along_axis(sims, order, 1)
    ok = vals >= low
    return np.where(ok, order, -1), np.where(ok, vals, np.nan)


@pytest.mark.parametrize("block", [64, 250, 5000])
def test_symmetric_and_row_search_match_brute_force(block):
    """Guards against a block-merge bug (lost neighbours at block edges, self-matches, transposed blocks)."""
    x = _clustered()
    want_i, want_v = _brute(x, 12, 0.25, 0.75)
    for table in (range_topk(x, 12, block_size=block, show_progress_bar=False),
                  range_topk(x, 12, block_size=block, query_range=(0, len(x)), show_progress_bar=False)):
        np.testing.assert_allclose(np.nan_to_num(table.scores, nan=-9), np.nan_to_num(want_v, nan=-9), atol=1e-5)
        np.testing.assert_array_equal(table.indices, want_i)
        # Ties go to the lower corpus index, whatever the blocks.
        for first, second in ((40, 41), (10, 100)):
            holds_both = (table.indices == first).any(axis=1) & (table.indices == second).any(axis=1)
            assert holds_both.sum() > 5
            position = {i: np.argmax(table.indices[holds_both] == i, axis=1) for i in (first, second)}
            assert np.all(position[first] < position[second])
        rows = np.arange(len(x))[:, None]
        assert not np.any(table.indices == rows)  # never itself
        valid = table.indices >= 0
        assert np.all((table.scores[valid] >= 0.25) & (table.scores[valid] <= 0.75))


def test_query_shards_concatenate_to_the_full_search():
    x = _clustered(500)
    full = range_topk(x, 8, block_size=128, show_progress_bar=False)
    parts = [range_topk(x, 8, block_size=128, query_range=r, show_progress_bar=False)
             for r in [(0, 123), (123, 400), (400, 500)]]
    np.testing.assert_allclose(np.nan_to_num(np.concatenate([p.scores for p in parts])),
                               np.nan_to_num(full.scores), atol=1e-6)
    np.testing.assert_array_equal(np.concatenate([p.indices for p in parts]), full.indices)


def test_fewer_than_k_in_range_is_padded():
    x = _clustered(50)
    table = range_topk(x, 100, low=0.7, high=0.75, show_progress_bar=False)
    assert table.indices.shape == (50, 100)
    assert np.all(table.counts() < 100)
    assert np.all(np.isnan(table.scores[table.indices < 0]))


def test_bad_arguments_raise():
    x = _clustered(10)
    with pytest.raises(ValueError, match="k must be"):
        range_topk(x, 0)
    with pytest.raises(ValueError, match="low <= high"):
        range_topk(x, 3, low=0.8, high=0.2)
    with pytest.raises(ValueError, match="2-D"):
        range_topk(x[0], 3)
    with pytest.raises(ValueError, match="backend"):
        range_topk(x, 3, backend="annoy")
    with pytest.raises(ValueError, match="block_size"):
        range_topk(x, 3, block_size=0)


def test_faiss_backend_matches_torch():
    pytest.importorskip("faiss")
    x = _clustered(400)
    a = range_topk(x, 10, show_progress_bar=False)
    b = range_topk(x, 10, backend="faiss", block_size=97, show_progress_bar=False)
    np.testing.assert_allclose(np.nan_to_num(a.scores, nan=-9), np.nan_to_num(b.scores, nan=-9), atol=1e-5)


def test_faiss_backend_recomputes_rows_whose_fetch_cut_off_in_range_neighbours():
    """50 near-copies fill most of each copy's over-fetch (4·10 + 16 hits) above ``high``; the in-range
    sentences past the fetch must still be found, as the exact search finds them."""
    pytest.importorskip("faiss")
    rng = np.random.default_rng(1)
    axis = np.eye(64)[0]
    copies = axis + 0.01 * rng.normal(size=(50, 64))
    others = rng.normal(size=(150, 64))
    others[:, 0] = 0.0
    others /= np.linalg.norm(others, axis=1, keepdims=True)
    cosines = rng.uniform(0.3, 0.6, size=(150, 1))
    x = np.concatenate([copies, cosines * axis + np.sqrt(1 - cosines**2) * others]).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    exact = range_topk(x, 10, show_progress_bar=False)
    fetched = range_topk(x, 10, backend="faiss", show_progress_bar=False)
    assert np.all(exact.counts()[:50] == 10)
    np.testing.assert_allclose(np.nan_to_num(fetched.scores, nan=-9), np.nan_to_num(exact.scores, nan=-9), atol=1e-5)
