"""Statistics of a training-pair file: the lexical overlap and guide cosine of its positive and negative pairs
(``st-debias eval --pairs``; DebCSE Tables 1 and 4)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from st_debias.data.io.report import pair_statistics
from st_debias.data.io.rows import LABEL_COLUMNS, PAIR_METADATA_FIELDS, read_rows
from st_debias.evaluation.embeddings import EmbeddingCache
from st_debias.paths import DataNotFoundError

__all__ = ["PAIR_METADATA_FIELDS", "load_pair_rows", "training_pair_statistics"]


def load_pair_rows(
    path: str | os.PathLike[str], limit: int | None = None, columns: Sequence[str] | None = None
) -> list[list[str]]:
    """The text rows of a training-pair file, read as ``st-debias train --rows`` reads it
    (:func:`~st_debias.data.io.rows.read_rows`: CSV/TSV with a header, JSON Lines, Parquet, a saved ``datasets``
    folder): column 0 the anchor, 1 the positive, the rest negatives; bookkeeping fields
    (:data:`~st_debias.data.io.rows.PAIR_METADATA_FIELDS`) and labels are not text columns.

    Raises:
        DataNotFoundError: the file does not exist.
        ValueError: an unreadable file, or a named column missing.
    """
    if not Path(path).exists():
        raise DataNotFoundError(f"Training-pair file {Path(path).resolve()} does not exist")
    rows = read_rows(path, columns)
    texts = [rows[name] for name in rows.column_names if name not in LABEL_COLUMNS]
    return [list(row) for row in zip(*texts, strict=True)][:limit]


def _rows(dataset: Any) -> list[list[str]]:
    if hasattr(dataset, "column_names"):  # datasets.Dataset: columns in order
        columns = [dataset[name] for name in dataset.column_names]
        return [list(row) for row in zip(*columns, strict=True)]
    rows = []
    for row in dataset:
        rows.append(list(row.values()) if isinstance(row, dict) else list(row))
    return rows


def training_pair_statistics(
    dataset: Iterable[Any], guide: Any | None = None, batch_size: int = 64, show_progress_bar: bool = False
) -> dict[str, Any]:
    """Lexical overlap and guide cosine of a training set's (anchor, positive, negative…) rows.

    DebCSE Tables 1 and 4 report, for anchor–positive and anchor–negative pairs, the mean lexical
    overlap (shared words / longer length) and the mean cosine under a guide model. Column 0 is the
    anchor, column 1 the positive, further string columns are negatives. When a dataset has no negative
    column, the *in-batch* negative of row i is the positive of row i+1 (a fixed shift), which is what
    an in-batch contrastive loss sees.

    Args:
        dataset: a ``datasets.Dataset`` or an iterable of tuples/lists/dicts (column order = field order).
        guide: optional SentenceTransformer (or :class:`EmbeddingCache`) for the cosine statistics.
        batch_size: encode batch size for the guide.
        show_progress_bar: progress bar while the guide encodes.

    Raises:
        ValueError: fewer than two rows, or a row with fewer than two text columns.
    """
    rows = [[c for c in row if isinstance(c, str)] for row in _rows(dataset)]
    if len(rows) < 2 or any(len(r) < 2 for r in rows):
        raise ValueError(
            "training_pair_statistics needs ≥ 2 rows of (anchor, positive[, negatives…]) strings"
        )
    positive_pairs = [(r[0], r[1]) for r in rows]
    explicit = [(r[0], n) for r in rows for n in r[2:]]
    negative_pairs = explicit or [(rows[i][0], rows[(i + 1) % len(rows)][1]) for i in range(len(rows))]
    cosines: dict[str, Any] = {"positive": [], "negative": []}
    if guide is not None:
        cache = (
            guide
            if isinstance(guide, EmbeddingCache)
            else EmbeddingCache(guide, batch_size, show_progress_bar)
        )
        cache.prefetch([s for pair in positive_pairs + negative_pairs for s in pair])
        for side, pairs in (("positive", positive_pairs), ("negative", negative_pairs)):
            cosines[side] = cache.cosine(*zip(*pairs, strict=True))
    # One home for the pair maths: the builders' report computes the same statistics.
    stats = {
        side: pair_statistics(side, *zip(*pairs, strict=True), cosines[side])
        for side, pairs in (("positive", positive_pairs), ("negative", negative_pairs))
    }
    out: dict[str, Any] = {
        "rows": len(rows),
        "negative_kind": "explicit" if explicit else "in-batch (positive of the next row)",
        "negative_pairs": len(negative_pairs),
        "lexical_overlap": {side: stats[side][f"{side}_lexical_overlap"] for side in stats},
        "guide_cosine": {side: stats[side][f"{side}_cosine"] for side in stats} if guide is not None else None,
    }
    return out
