"""Reading and validating the plain sentences users bring: nothing is dropped without being counted."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from st_debias.datafiles import text_lines
from st_debias.paths import data_file

WIKI_CORPUS = "corpus/wiki_sentences.txt"


def read_sentences(path: str | os.PathLike[str] | None = None, limit: int | None = None) -> list[str]:
    """Read one sentence per line (UTF-8).

    Args:
        path: a text file; ``None`` reads ``corpus/wiki_sentences.txt`` from the data folder
            (``$ST_DEBIAS_DATA``).
        limit: keep only the first ``limit`` lines (the shared corpus is in random order, so the head
            is a uniform sample).

    Raises:
        FileNotFoundError: ``path`` does not exist.
        st_debias.datafiles.DataFileError: a line is not UTF-8 (the message names file, line and byte).
    """
    target = Path(path) if path is not None else data_file(WIKI_CORPUS)
    if not target.is_file():
        raise FileNotFoundError(
            f"Sentence file {target.resolve()} does not exist (one sentence per line expected)."
        )
    out: list[str] = []
    for _, line in text_lines(target):
        if limit is not None and len(out) >= limit:
            break
        out.append(line)
    return out


@dataclass
class CleanedSentences:
    """Validated input: the kept sentences, their positions in the input, and what was skipped why."""

    sentences: list[str]
    positions: list[int]
    skipped: Counter[str] = field(default_factory=Counter)
    skipped_positions: list[tuple[int, str]] = field(default_factory=list)

    def skipped_between(self, start: int, stop: int) -> Counter[str]:
        """Skip reasons of the inputs at positions ``start:stop`` (for shards)."""
        return Counter(reason for position, reason in self.skipped_positions if start <= position < stop)


def clean_sentences(
    items: Iterable[object],
    *,
    on_empty: Literal["skip", "raise"] = "skip",
    on_duplicate: Literal["skip", "keep", "raise"] = "skip",
) -> CleanedSentences:
    """Validate user sentences.

    Non-strings always raise (a list of sentences holding ``None`` or a number is a caller bug).
    Empty/whitespace-only strings and exact duplicates (after stripping) are skipped and counted under
    ``"empty"`` and ``"duplicate"`` by default, or raise when asked. Surrounding whitespace is stripped.

    Raises:
        ValueError: a non-string item, or an empty/duplicate item with ``on_* == "raise"``.
    """
    if isinstance(items, str):
        raise ValueError("Expected a sequence of sentences, got a single string; wrap it in a list.")
    kept: list[str] = []
    positions: list[int] = []
    skipped: Counter[str] = Counter()
    log: list[tuple[int, str]] = []
    seen: set[str] = set()
    for position, item in enumerate(items):
        if not isinstance(item, str):
            raise ValueError(
                f"Sentence at position {position} is {type(item).__name__} ({item!r:.40}), not str: "
                "builders take plain strings only."
            )
        text = item.strip()
        if not text:
            if on_empty == "raise":
                raise ValueError(f"Sentence at position {position} is empty or whitespace only.")
            skipped["empty"] += 1
            log.append((position, "empty"))
            continue
        if text in seen and on_duplicate != "keep":
            if on_duplicate == "raise":
                raise ValueError(f"Sentence at position {position} is a duplicate: {text!r:.80}")
            skipped["duplicate"] += 1
            log.append((position, "duplicate"))
            continue
        seen.add(text)
        kept.append(text)
        positions.append(position)
    return CleanedSentences(kept, positions, skipped, log)


def sentence_list(
    sentences: Iterable[object], column: str | None = None, name: str = "sentences"
) -> list[object]:
    """The builders' input as a list: any iterable of sentences, a ``datasets`` column, or a ``Dataset``.

    Args:
        sentences: a list, tuple, generator, ``dataset["text"]`` column... of strings, or a
            ``datasets.Dataset`` (then ``column`` names its sentence column; it may be left out when the
            dataset has exactly one column).
        column: the sentence column of a ``Dataset``.
        name: what to call the input in error messages.

    Raises:
        ValueError: a single string (not a collection of sentences), no sentence at all, ``column`` missing
            or unknown for a ``Dataset``, or given for anything else.
    """
    if isinstance(sentences, str):
        raise ValueError(
            f"{name}: expected a collection of sentences, got a single string; wrap it in a list."
        )
    from datasets import Dataset

    if isinstance(sentences, Dataset):
        columns = sentences.column_names
        if column is None and len(columns) != 1:
            raise ValueError(
                f"{name}: a Dataset with columns {columns}; pass column=... to name the sentence column."
            )
        column = column if column is not None else columns[0]
        if column not in columns:
            raise ValueError(f"{name}: the Dataset has no column {column!r}; its columns are {columns}.")
        items = list(sentences[column])
    elif column is not None:
        raise ValueError(
            f"{name}: column={column!r} applies to a datasets.Dataset, got {type(sentences).__name__}."
        )
    else:
        items = list(sentences)
    if not items:
        raise ValueError(f"{name}: no sentences given.")
    return items
