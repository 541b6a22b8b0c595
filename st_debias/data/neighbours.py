"""Exact top-K neighbour search restricted to a cosine range, in O(N·K) memory.

For each query the result holds the K corpus sentences with the *highest* guide cosine that lies in
``[low, high]`` (DebCSE §4.1: not-too-similar, not-too-different negatives; the K nearest inside the
range keep the pool tractable). The query itself is never its own neighbour.

Two exact torch strategies, both processing fixed-size blocks so that no N×N matrix exists:

* self-search over the whole corpus (``query_range=None``): the similarity matrix is symmetric, so only
  blocks on or above the diagonal are computed and each block feeds the running top-K of both its
  row block and its column block (half the matrix multiplications);
* a query slice (``query_range=(start, stop)``, the sharding unit): row chunks
  against the whole corpus.

Each block hands on only the cosines that would enter a row's running top-K (above its current K-th
best, and in range), so once the first blocks have filled the buffers, a block costs little more than
its matrix multiplication. Equal cosines are kept in corpus order: the lower index first. The two
strategies, and slices with other bounds, multiply blocks of other shapes, so their cosines may differ
in the last float32 bit.

``backend="faiss"`` (if ``faiss`` is installed) over-fetches with an inner-product flat index and
drops out-of-range hits; a row whose over-fetch may have cut off in-range neighbours (fewer than K
kept, and its last hit still at or above ``low``) is recomputed exactly with torch, so the result is
exact too (the order of equal cosines is faiss's).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from tqdm.auto import tqdm


@dataclass
class NeighbourTable:
    """Per-query neighbours: ``indices`` (n, K) int64 into the corpus, -1 where fewer than K exist in
    range; ``scores`` (n, K) float32 cosines (NaN at padding), sorted high to low."""

    indices: np.ndarray
    scores: np.ndarray

    def counts(self) -> np.ndarray:
        """Number of in-range neighbours per query."""
        return (self.indices >= 0).sum(axis=1)


def _merge(
    best_v: torch.Tensor,
    best_i: torch.Tensor,
    owner: torch.Tensor,
    index: torch.Tensor,
    value: torch.Tensor,
    k: int,
) -> None:
    """Merge sparse candidates into the running top-k buffers, in place.

    Candidate ``j`` offers corpus sentence ``index[j]`` with cosine ``value[j]`` to buffer row
    ``owner[j]``. ``owner`` is sorted, and each row's candidates come in increasing ``index``, all
    larger than the indices it already holds (blocks are visited in corpus order), so a stable sort
    on the cosine alone breaks ties by the lower corpus index.
    """
    if owner.numel() == 0:
        return
    rows, counts = torch.unique_consecutive(owner, return_counts=True)
    slot = torch.arange(owner.numel()) - torch.repeat_interleave(torch.cumsum(counts, 0) - counts, counts)
    line = torch.repeat_interleave(torch.arange(rows.numel()), counts)
    width = int(counts.max())
    offered_v = torch.full((rows.numel(), width), float("-inf"))
    offered_i = torch.full((rows.numel(), width), -1, dtype=torch.int64)
    offered_v[line, slot] = value
    offered_i[line, slot] = index
    all_v = torch.cat([best_v[rows], offered_v], dim=1)
    all_i = torch.cat([best_i[rows], offered_i], dim=1)
    top_v, pos = all_v.sort(dim=1, descending=True, stable=True)
    best_v[rows] = top_v[:, :k]
    best_i[rows] = all_i.gather(1, pos[:, :k])


def _floor(best_v: torch.Tensor, minimum: torch.Tensor) -> torch.Tensor:
    """Per row, the cosine a candidate must exceed: the k-th best so far, and at least ``minimum``."""
    return torch.maximum(best_v[:, -1], minimum)


def _finish(best_v: torch.Tensor, best_i: torch.Tensor, low: float) -> NeighbourTable:
    valid = torch.isfinite(best_v) & (best_v >= low)
    indices = torch.where(valid, best_i, torch.full_like(best_i, -1)).numpy()
    scores = torch.where(valid, best_v, torch.full_like(best_v, float("nan"))).numpy().astype(np.float32)
    return NeighbourTable(indices, scores)


def _check(embeddings: np.ndarray | torch.Tensor, k: int, low: float, high: float, block_size: int) -> torch.Tensor:
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    if block_size < 1:
        raise ValueError(f"block_size must be >= 1, got {block_size}")
    if not -1.0 <= low <= high:
        raise ValueError(f"Need -1 <= low <= high, got low={low}, high={high}")
    tensor = torch.as_tensor(np.asarray(embeddings, dtype=np.float32))
    if tensor.ndim != 2:
        raise ValueError(f"Embeddings must be 2-D (n, dim), got shape {tuple(tensor.shape)}")
    return tensor


def range_topk(
    embeddings: np.ndarray | torch.Tensor,
    k: int = 64,
    *,
    low: float = 0.25,
    high: float = 0.75,
    query_range: tuple[int, int] | None = None,
    block_size: int = 4096,
    backend: str = "torch",
    show_progress_bar: bool = True,
) -> NeighbourTable:
    """K nearest corpus neighbours with cosine in ``[low, high]`` for every sentence (or a slice).

    Args:
        embeddings: (N, dim) L2-normalised corpus embeddings (cosine = dot product).
        k: neighbours kept per query.
        low: lowest admissible cosine (DebCSE: 0.25).
        high: highest admissible cosine (DebCSE: 0.75).
        query_range: only search for queries ``start:stop`` of the corpus (a shard); ``None`` = all.
        block_size: rows per block; a block's similarities take ``block_size**2 * 4`` bytes, and while
            the first blocks fill the top-K buffers their candidates take a few times that.
        backend: ``"torch"`` (default) or ``"faiss"``.
        show_progress_bar: tqdm bar over blocks.

    Returns:
        A :class:`NeighbourTable` with one row per query.
    """
    corpus = _check(embeddings, k, low, high, block_size)
    n = corpus.shape[0]
    start, stop = query_range if query_range is not None else (0, n)
    if not 0 <= start <= stop <= n:
        raise ValueError(f"query_range {query_range} outside the corpus of {n} sentences")
    k_eff = max(1, min(k, n - 1)) if n > 1 else 1
    if backend == "faiss":
        return _faiss_range_topk(corpus, k, low, high, start, stop, block_size, show_progress_bar)
    if backend != "torch":
        raise ValueError(f"Unknown backend {backend!r}; use 'torch' or 'faiss'.")
    if query_range is None:
        table = _symmetric(corpus, k_eff, low, high, block_size, show_progress_bar)
    else:
        table = _rows(corpus, k_eff, low, high, start, stop, block_size, show_progress_bar)
    return _pad(table, k)


def _pad(table: NeighbourTable, k: int) -> NeighbourTable:
    missing = k - table.indices.shape[1]
    if missing <= 0:
        return table
    n = table.indices.shape[0]
    return NeighbourTable(
        np.concatenate([table.indices, np.full((n, missing), -1, dtype=np.int64)], axis=1),
        np.concatenate([table.scores, np.full((n, missing), np.nan, dtype=np.float32)], axis=1),
    )


def _just_below(low: float) -> torch.Tensor:
    """The float32 just below ``low``: ``cosine > _just_below(low)`` is ``cosine >= low``."""
    low_t = torch.tensor(low, dtype=torch.float32)
    return torch.nextafter(low_t, torch.tensor(float("-inf")))


@torch.no_grad()
def _rows(corpus, k, low, high, start, stop, block_size, show_progress_bar) -> NeighbourTable:
    n = corpus.shape[0]
    rows = stop - start
    best_v = torch.full((rows, k), float("-inf"))
    best_i = torch.full((rows, k), -1, dtype=torch.int64)
    above = _just_below(low)
    for q0 in tqdm(range(start, stop, block_size), desc="neighbour search", disable=not show_progress_bar):
        q1 = min(q0 + block_size, stop)
        queries = corpus[q0:q1]
        local_v = best_v[q0 - start : q1 - start]
        local_i = best_i[q0 - start : q1 - start]
        for c0 in range(0, n, block_size):
            c1 = min(c0 + block_size, n)
            sims = queries @ corpus[c0:c1].T
            lo, hi = max(q0, c0), min(q1, c1)
            if lo < hi:  # the queries themselves
                r = torch.arange(lo, hi)
                sims[r - q0, r - c0] = float("-inf")
            # Only cosines that would enter a row's top-k are gathered: after the first blocks, few.
            floor = _floor(local_v, above)
            r, c = ((sims > floor[:, None]) & (sims <= high)).nonzero(as_tuple=True)
            _merge(local_v, local_i, r, c + c0, sims[r, c], k)
    return _finish(best_v, best_i, low)


@torch.no_grad()
def _symmetric(corpus, k, low, high, block_size, show_progress_bar) -> NeighbourTable:
    n = corpus.shape[0]
    best_v = torch.full((n, k), float("-inf"))
    best_i = torch.full((n, k), -1, dtype=torch.int64)
    above = _just_below(low)
    bounds = [(b, min(b + block_size, n)) for b in range(0, n, block_size)]
    pairs = [(a, b) for a in range(len(bounds)) for b in range(a, len(bounds))]
    for a, b in tqdm(pairs, desc="neighbour search", disable=not show_progress_bar):
        (r0, r1), (c0, c1) = bounds[a], bounds[b]
        sims = corpus[r0:r1] @ corpus[c0:c1].T
        if a == b:
            sims.fill_diagonal_(float("-inf"))
        floor_r = _floor(best_v[r0:r1], above)
        in_range = sims <= high
        r, c = ((sims > floor_r[:, None]) & in_range).nonzero(as_tuple=True)
        _merge(best_v[r0:r1], best_i[r0:r1], r, c + c0, sims[r, c], k)
        if a == b:
            continue  # a diagonal block is its own transpose: its rows were its columns
        # The block also serves, transposed, its columns; nonzero over the transposed mask lists the
        # columns' candidates grouped by column, in row order.
        floor_c = _floor(best_v[c0:c1], above)
        c, r = ((sims > floor_c[None, :]) & in_range).T.nonzero(as_tuple=True)
        _merge(best_v[c0:c1], best_i[c0:c1], c, r + r0, sims[r, c], k)
    return _finish(best_v, best_i, low)


def _faiss_range_topk(corpus, k, low, high, start, stop, block_size, show_progress_bar) -> NeighbourTable:
    try:
        import faiss
    except ImportError as error:  # pragma: no cover - depends on the environment
        raise ImportError("backend='faiss' needs faiss: pip install 'st-debias[faiss]'") from error
    data = corpus.numpy()
    index = faiss.IndexFlatIP(data.shape[1])
    index.add(data)
    n = data.shape[0]
    fetch = min(n, 4 * k + 16)
    indices = np.full((stop - start, k), -1, dtype=np.int64)
    scores = np.full((stop - start, k), np.nan, dtype=np.float32)
    redo: list[int] = []
    for q0 in tqdm(range(start, stop, block_size), desc="faiss search", disable=not show_progress_bar):
        q1 = min(q0 + block_size, stop)
        sims, ids = index.search(data[q0:q1], fetch)
        for row in range(q1 - q0):
            query = q0 + row
            keep = (ids[row] >= 0) & (ids[row] != query) & (sims[row] <= high) & (sims[row] >= low)
            chosen = np.flatnonzero(keep)[:k]
            if fetch < n and len(chosen) < k and sims[row, -1] >= low:
                redo.append(query)  # in-range neighbours may lie past the fetch: recompute exactly
                continue
            indices[query - start, : len(chosen)] = ids[row, chosen]
            scores[query - start, : len(chosen)] = sims[row, chosen]
    for query in redo:
        exact = _rows(corpus, min(k, n - 1), low, high, query, query + 1, block_size, False)
        exact = _pad(exact, k)
        indices[query - start] = exact.indices[0]
        scores[query - start] = exact.scores[0]
    return NeighbourTable(indices, scores)
