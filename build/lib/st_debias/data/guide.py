"""Precompute a guide model's embeddings into the label column, for InstanceWeightedMNRL(labels="guide_embeddings").

The guide's forward then runs once per unique text before training instead of once per column per step.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from datasets import Dataset


def attach_guide_embeddings(
    dataset: Dataset,
    guide: Any,
    text_columns: Sequence[str] | None = None,
    weight_column: str | None = None,
    batch_size: int = 128,
    show_progress_bar: bool = True,
) -> Dataset:
    """Return ``dataset`` with a ``label`` column holding each row's guide embeddings (and weight).

    Every unique text is encoded once by ``guide`` (a SentenceTransformer, in eval mode). Per row the
    label is ``[weight?, guide(col_1) ..., guide(col_n)]`` flattened, in the order of ``text_columns``
    (default: every string column except ``weight_column``), matching the loss's column order.

    Args:
        dataset: training rows with text columns (anchor, positive, negative_1, ...).
        guide: the frozen guide SentenceTransformer.
        text_columns: the text columns, in the order the loss receives them.
        weight_column: a per-row weight column to put first (use ``labels="weights_and_guide_embeddings"``),
            removed from the output.
        batch_size: encoding batch size.
        show_progress_bar: tqdm progress while encoding.

    Raises:
        ValueError: a named column is missing, not text, or the dataset already has a ``label`` column
            other than ``weight_column``.
    """
    if text_columns is None:
        text_columns = [
            name for name, feature in dataset.features.items()
            if getattr(feature, "dtype", None) == "string" and name != weight_column
        ]
    text_columns = list(text_columns)
    missing = [c for c in [*text_columns, *([weight_column] if weight_column else [])] if c not in dataset.column_names]
    if missing:
        raise ValueError(f"attach_guide_embeddings: columns {missing} not in the dataset (has {dataset.column_names}).")
    if not text_columns:
        raise ValueError("attach_guide_embeddings: no text columns found.")
    if "label" in dataset.column_names and weight_column != "label":
        raise ValueError("attach_guide_embeddings: the dataset already has a 'label' column; pass it as weight_column or drop it.")
    for column in text_columns:
        bad = [i for i, value in enumerate(dataset[column]) if not isinstance(value, str) or not value.strip()]
        if bad:
            raise ValueError(f"attach_guide_embeddings: column {column!r} has empty or non-string texts at rows {bad[:10]}.")

    unique = sorted({text for column in text_columns for text in dataset[column]})
    vectors = guide.encode(unique, batch_size=batch_size, show_progress_bar=show_progress_bar, convert_to_numpy=True)
    index = {text: i for i, text in enumerate(unique)}
    parts = [vectors[[index[t] for t in dataset[column]]] for column in text_columns]
    if weight_column is not None:
        weights = np.asarray(dataset[weight_column], dtype=np.float32)[:, None]
        parts.insert(0, weights)
    labels = np.concatenate(parts, axis=1).astype(np.float32)
    keep = [c for c in dataset.column_names if c in text_columns]
    return dataset.select_columns(keep).add_column("label", labels.tolist())
