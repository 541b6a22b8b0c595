"""Embedding a corpus in contiguous slices, each cached under its own key (the IPW benchmarks split encoding this
way to time it per slice), and putting the slices back together in order."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from st_debias.data.io.embeddings import encode_corpus, shard_bounds


def encode_shard(sentences: Sequence[str], index: int, count: int, model: Any = None, **kwargs: Any) -> np.ndarray:
    """Encode (and cache) only the ``index``-th of ``count`` slices of the corpus; see :func:`merge_shards`."""
    start, stop = shard_bounds(len(sentences), index, count)
    return encode_corpus(sentences[start:stop], model, **kwargs)


def merge_shards(parts: Sequence[np.ndarray]) -> np.ndarray:
    """Concatenate shard embeddings in shard order (the inverse of :func:`encode_shard`).

    Raises:
        ValueError: no shards, or shards of different embedding sizes.
    """
    if not parts:
        raise ValueError("No shards to merge.")
    dims = {part.shape[1] for part in parts if len(part)}
    if len(dims) > 1:
        raise ValueError(f"Shards have different embedding sizes: {sorted(dims)}")
    return np.concatenate(parts, axis=0)
