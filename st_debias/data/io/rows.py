"""Reading the user's own training rows: (anchor, positive[, negative…]) in CSV, TSV, JSON Lines, Parquet or a
saved ``datasets`` folder, loaded with ``datasets`` and checked before any model is loaded.

Example:
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "pairs.csv").write_text("anchor,positive\\nA man plays.,A man is playing.\\nIt rains.,Rain falls.\\n")
    >>> rows = read_rows(folder / "pairs.csv")
    >>> rows.column_names, len(rows)
    (['anchor', 'positive'], 2)
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from datasets import Dataset

__all__ = ["LABEL_COLUMNS", "PAIR_METADATA_FIELDS", "ROW_FILE_SUFFIXES", "check_row_sources", "read_rows", "rows_file_reason"]

#: File suffix -> the ``datasets`` builder that reads it (and its options).
ROW_FILE_SUFFIXES: dict[str, tuple[str, dict[str, str]]] = {
    ".csv": ("csv", {}),
    ".tsv": ("csv", {"delimiter": "\t"}),
    ".jsonl": ("json", {}),
    ".json": ("json", {}),
    ".parquet": ("parquet", {}),
}
#: Numeric columns the trainer hands to the loss as labels (per-row weights), kept after the text columns.
LABEL_COLUMNS = ("label", "score")
#: Bookkeeping fields of a rows file that are not text columns (unless named in ``columns``).
PAIR_METADATA_FIELDS = frozenset(
    {"dataset", "split", "subset", "genre", "source", "id", "pair_id", "label", "year"}
)
# A header line: two or more identifier-like names joined by commas or tabs, no spaces ("anchor,positive").
_HEADER = re.compile(r"^[A-Za-z_][\w-]{0,40}(?:[,\t][A-Za-z_][\w-]{0,40})+$")


def rows_file_reason(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` looks like a rows file rather than one sentence per line (None when it does not): a rows
    suffix, a header line, tab-separated fields or JSON objects on the first lines."""
    path = Path(path)
    if path.suffix.lower() in ROW_FILE_SUFFIXES:
        return f"its suffix {path.suffix} is a rows file's"
    with path.open(encoding="utf-8", errors="replace") as handle:
        head = [line.rstrip("\n") for _, line in zip(range(20), handle, strict=False)]
    lines = [line for line in head if line.strip()]
    if not lines:
        return None
    if _HEADER.match(lines[0].strip()):
        return f"its first line {lines[0][:60]!r} is a header of columns"
    if sum("\t" in line for line in lines) > len(lines) / 2:
        return "most of its first lines hold tab-separated fields"
    if sum(line.lstrip().startswith("{") for line in lines) > len(lines) / 2:
        return "its first lines are JSON objects"
    return None


def _load(path: Path) -> Dataset:
    from datasets import Dataset, DatasetDict, load_dataset, load_from_disk

    if path.is_dir():
        if (path / "dataset").is_dir() and (path / "report.json").is_file():  # an `st-debias build` output
            path = path / "dataset"
        loaded = load_from_disk(str(path))
        if isinstance(loaded, DatasetDict):
            if "train" not in loaded:
                raise ValueError(f"{path}: a DatasetDict without a 'train' split (splits: {list(loaded)})")
            loaded = loaded["train"]
        return loaded
    if not path.is_file():
        raise FileNotFoundError(f"Rows file {path.resolve()} does not exist")
    builder = ROW_FILE_SUFFIXES.get(path.suffix.lower())
    if builder is None:
        raise ValueError(
            f"{path}: rows files are {', '.join(ROW_FILE_SUFFIXES)} or a folder saved with Dataset.save_to_disk"
        )
    name, options = builder
    try:
        loaded = load_dataset(name, data_files=str(path), split="train", **options)
    except Exception as error:  # noqa: BLE001 - datasets raises many types for one malformed file
        raise ValueError(f"{path}: cannot be read as {path.suffix.lstrip('.')} rows ({type(error).__name__}: {error})") from error
    assert isinstance(loaded, Dataset)
    return loaded


def read_rows(path: str | os.PathLike[str], columns: Sequence[str] | None = None) -> Dataset:
    """The training rows of ``path``: text columns in (anchor, positive, negative…) order, then a label.

    Args:
        path: a ``.csv`` (with a header), ``.tsv``, ``.jsonl``/``.json``, ``.parquet`` file, or a folder saved
            with ``Dataset.save_to_disk`` (its ``train`` split for a ``DatasetDict``).
        columns: the text columns in (anchor, positive, negative…) order; default: every string column in the
            file's order but bookkeeping fields (:data:`PAIR_METADATA_FIELDS`: ``id``, ``source``, ``split``…). A ``label`` or ``score`` column is kept last either way, as ``label``.

    Raises:
        FileNotFoundError: ``path`` does not exist.
        ValueError: an unreadable file, a named column missing, fewer than two text columns, or an empty or
            non-text cell (the message names the file, the row and the column).
    """
    path = Path(path)
    dataset = _load(path)
    features = dataset.features
    if columns is not None:
        missing = [name for name in columns if name not in features]
        if missing:
            raise ValueError(f"{path}: no column(s) {missing}; the columns are {list(features)}")
        texts = list(columns)
    else:
        texts = [name for name, feature in features.items()
                 if getattr(feature, "dtype", None) in ("string", "large_string")
                 and name not in LABEL_COLUMNS and name not in PAIR_METADATA_FIELDS]
    if len(texts) < 2:
        raise ValueError(
            f"{path}: {len(texts)} text column(s) {texts}; training rows need an anchor and a positive (and "
            f"optionally negatives). The columns are {list(features)}."
        )
    labels = [name for name in LABEL_COLUMNS if name in features and name not in texts][:1]
    dataset = dataset.select_columns([*texts, *labels])
    if labels and labels[0] != "label":  # the losses read per-row weights from "label"
        dataset = dataset.rename_column(labels[0], "label")
    if len(dataset) == 0:
        raise ValueError(f"{path}: no rows")
    for name in texts:
        for index, value in enumerate(dataset[name]):
            if not isinstance(value, str) or not value.strip():
                shown = json.dumps(value)[:40]
                raise ValueError(f"{path}: row {index + 1}, column {name!r}: {shown} is not a non-empty text")
    return dataset


def check_row_sources(
    corpus: str | os.PathLike[str] | None,
    rows: str | os.PathLike[str] | None,
    row_columns: Sequence[str] | None = None,
    sentences: int | None = None,
) -> None:
    """The checks of ``train``'s row sources that need no model and no torch, made before either loads: one
    source, files that exist, a corpus that is not a rows file.

    Raises:
        FileNotFoundError: a named file or folder that does not exist.
        ValueError: ``--rows`` beside ``--corpus`` or ``--sentences``, ``--row-columns`` without ``--rows``, or a
            rows file given as the corpus (pointed to ``--rows``).
    """
    if rows is None:
        if row_columns:
            raise ValueError("--row-columns names the columns of --rows, which is not given")
        if corpus is not None:
            if not Path(corpus).is_file():
                raise FileNotFoundError(f"Corpus file {Path(corpus).resolve()} does not exist (one sentence per line expected).")
            reason = rows_file_reason(corpus)
            if reason:
                raise ValueError(
                    f"--corpus {corpus}: {reason}, but a corpus is one sentence per line. Training rows (anchor, "
                    "positive[, negative]) go to --rows."
                )
        return
    if corpus is not None or sentences is not None:
        raise ValueError("--rows gives the training rows: leave out --corpus and --sentences, which build them")
    if not Path(rows).exists():
        raise FileNotFoundError(f"Rows file {Path(rows).resolve()} does not exist")
