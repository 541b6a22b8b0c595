"""Statistics of a training-pair file: the lexical overlap and guide cosine of its positive and negative pairs
(``st-debias eval --pairs``; DebCSE Tables 1 and 4)."""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from st_debias.data.io.report import pair_statistics
from st_debias.evaluation.embeddings import EmbeddingCache
from st_debias.paths import DataNotFoundError

__all__ = ["PAIR_METADATA_FIELDS", "load_pair_rows", "training_pair_statistics"]


#: Fields of a .jsonl training-pair file that are bookkeeping, not text columns.
PAIR_METADATA_FIELDS = frozenset(
    {"dataset", "split", "subset", "genre", "source", "id", "pair_id", "label", "year"}
)


def load_pair_rows(
    path: str | os.PathLike[str], limit: int | None = None, columns: Sequence[str] | None = None
) -> list[list[str]]:
    """Rows of a training-pair file: ``.jsonl``, ``.csv`` (quoted, header) or ``.tsv`` (header, ``QUOTE_NONE``).

    Column 0 is the anchor, 1 the positive, the rest negatives. ``columns`` names them explicitly (header or
    JSON field names); otherwise a ``.jsonl`` row uses its string fields in order minus
    :data:`PAIR_METADATA_FIELDS` (so ``{"dataset", "split", "sent0", "sent1", "hard_neg"}`` gives
    sent0/sent1/hard_neg) and a ``.csv``/``.tsv`` row uses every column.

    Raises:
        DataNotFoundError: the file does not exist.
        ValueError: unknown extension, or a named column is missing.
    """
    path = Path(path)
    if not path.is_file():
        raise DataNotFoundError(f"Training-pair file {path.resolve()} does not exist")
    rows: list[list[str]] = []
    with path.open(encoding="utf-8", newline="") as handle:
        if path.suffix == ".jsonl":
            for line_number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                record = json.loads(line)
                if columns is not None:
                    missing = [c for c in columns if c not in record]
                    if missing:
                        raise ValueError(f"{path}:{line_number}: no field(s) {missing}")
                    rows.append([record[c] for c in columns])
                else:
                    rows.append(
                        [v for k, v in record.items() if isinstance(v, str) and k not in PAIR_METADATA_FIELDS]
                    )
        elif path.suffix in (".csv", ".tsv"):
            if path.suffix == ".csv":
                reader = csv.reader(handle)
            else:
                reader = csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
            header = next(reader, None) or []
            index = list(range(len(header)))
            if columns is not None:
                missing = [c for c in columns if c not in header]
                if missing:
                    raise ValueError(f"{path}: header {header} has no column(s) {missing}")
                index = [header.index(c) for c in columns]
            rows = [[row[i] for i in index if i < len(row)] for row in reader if row]
        else:
            raise ValueError(f"{path}: training-pair files must be .jsonl, .csv or .tsv")
        if limit is not None:
            rows = rows[:limit]
    return rows


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
