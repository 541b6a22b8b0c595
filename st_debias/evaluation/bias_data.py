"""Reading the bias-probe data: CANNOT negation pairs, the held-out Wikipedia slice of the word-order probe,
and training-pair files. The probe maths lives in :mod:`st_debias.evaluation.bias`.

* CANNOT: ``*.tsv`` files of ``probes/cannot`` sorted by name, rows in file order, first N pairs.
* Word-order sentences: the **last** N lines (default 1,000) of ``corpus/wiki_sentences.txt``. Training
  recipes read the corpus from its first line (``read_sentences(path, limit)``, steps × batch size lines, ×3
  for the negation recipe: 38,400 at the default 200 × 64), so the tail is held out unless a run reads
  more than 199,000 of the 200,000 lines.
* Negation-meaning items: Wikipedia lines 150,001–180,000 (below the word-order tail, above what a recipe
  of up to 1,000 steps × 64 rows reads, ×2 for minimal pairs) whose main clause carries a gradable adjective
  with a curated antonym; each gives a sentence, its negation, the antonym version and its negation.
* Training-pair files: ``.jsonl``, ``.csv`` or ``.tsv`` rows of (anchor, positive, negatives…).
"""

from __future__ import annotations

import os
from collections import deque
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from st_debias.data.io.corpus import WIKI_CORPUS
from st_debias.datafiles import text_lines, tsv_records
from st_debias.paths import DATA_ENV, DataNotFoundError, data_file, portable_path

#: The CANNOT probe files in the default order: sorted by file name. With the first 3,000 pairs this is
#: glue_diagnostic (154), nan_nli (117), wikifactcheck_english_0 (904), and the first 1,825 of
#: wikifactcheck_english_1 — the order that reproduces docs/evaluation.md (mean cosine 0.86, 75.5 % > 0.8).
CANNOT_DIR = "probes/cannot"
DEFAULT_NEGATION_PAIRS = 3000

#: Lines taken from the end of the Wikipedia corpus for the word-order probe.
DEFAULT_WORD_ORDER_LINES = 1000


@dataclass(frozen=True)
class NegationPairs:
    """Sentence / negation pairs (and optional paraphrases) with their provenance."""

    sentences: list[str]
    negations: list[str]
    paraphrases: list[str | None]
    source: str
    files: dict[str, int]

    def __len__(self) -> int:
        return len(self.sentences)

    def describe(self) -> dict[str, Any]:
        """JSON-ready provenance: folder, pairs taken from each file (in order), total."""
        return {
            "source": portable_path(self.source),
            "order": "files sorted by name, rows in file order, first N pairs",
            "files": self.files,
            "pairs": len(self),
            "paraphrase_pairs": sum(p is not None for p in self.paraphrases),
        }


def read_negation_tsv(path: str | os.PathLike[str]) -> list[tuple[str, str, str | None]]:
    """Rows ``(sentence, negated, paraphrase|None)`` of a CANNOT-style TSV with a header.

    Columns by header name: ``sentence``, ``negated``, and optionally ``paraphrase`` (read with
    ``csv.QUOTE_NONE``: sentences contain bare double quotes).

    Raises:
        st_debias.datafiles.DataFileError: not UTF-8, a header without ``sentence`` or ``negated``, a row with
            the wrong number of fields or an empty sentence; the message names file, line and column.
    """
    return [
        (row["sentence"], row["negated"], row.get("paraphrase") or None)
        for _, row in tsv_records(path, ["sentence", "negated"], optional=["paraphrase"])
    ]


def load_negation_pairs(
    data_dir: str | os.PathLike[str] | None = None,
    limit: int | None = DEFAULT_NEGATION_PAIRS,
    folder: str | os.PathLike[str] | None = None,
) -> NegationPairs:
    """The CANNOT negation probe: ``*.tsv`` files of ``probes/cannot`` sorted by name, first ``limit`` pairs.

    Args:
        data_dir: data folder (default ``$ST_DEBIAS_DATA``).
        limit: number of pairs (None = all 15,241). The default 3,000 is the reported probe (docs/evaluation.md).
        folder: a folder of TSV files to use instead of ``<data_dir>/probes/cannot``.

    Raises:
        DataNotFoundError: the folder is missing or holds no ``.tsv`` file.
    """
    root = Path(folder) if folder is not None else data_file(CANNOT_DIR, data_dir)
    files = sorted(root.glob("*.tsv"))
    if not files:
        raise DataNotFoundError(
            f"No .tsv negation files in {root.resolve()}. Set {DATA_ENV} to a folder holding {CANNOT_DIR}/."
        )
    sentences: list[str] = []
    negations: list[str] = []
    paraphrases: list[str | None] = []
    taken: dict[str, int] = {}
    for path in files:
        if limit is not None and len(sentences) >= limit:
            break
        rows = read_negation_tsv(path)
        if limit is not None:
            rows = rows[: limit - len(sentences)]
        taken[path.name] = len(rows)
        for sentence, negation, paraphrase in rows:
            sentences.append(sentence)
            negations.append(negation)
            paraphrases.append(paraphrase)
    return NegationPairs(sentences, negations, paraphrases, str(root.resolve()), taken)


@dataclass(frozen=True)
class CorpusSlice:
    """Consecutive lines of a one-sentence-per-line corpus, with their 1-based line numbers."""

    sentences: list[str]
    source: str
    first_line: int
    last_line: int
    total_lines: int

    def __len__(self) -> int:
        return len(self.sentences)

    def describe(self) -> dict[str, Any]:
        """JSON-ready provenance: file, line range and how the slice was chosen."""
        return {
            "source": portable_path(self.source),
            "lines": [self.first_line, self.last_line],
            "total_lines": self.total_lines,
            "order": "last N lines of the corpus (training reads from the first line)",
        }


def load_word_order_sentences(
    data_dir: str | os.PathLike[str] | None = None,
    count: int = DEFAULT_WORD_ORDER_LINES,
    path: str | os.PathLike[str] | None = None,
) -> CorpusSlice:
    """The last ``count`` lines of the Wikipedia corpus (or of ``path``): the word-order probe's sentences.

    Args:
        data_dir: data folder (default ``$ST_DEBIAS_DATA``).
        count: lines to take from the end of the file (fewer if the file is shorter).
        path: a one-sentence-per-line file to use instead of ``<data_dir>/corpus/wiki_sentences.txt``.

    Raises:
        ValueError: ``count`` < 1.
        DataNotFoundError: the file is missing or empty.
        st_debias.datafiles.DataFileError: a line is not UTF-8 (named with its byte).
    """
    if count < 1:
        raise ValueError(f"count must be ≥ 1, got {count}")
    file = Path(path) if path is not None else data_file(WIKI_CORPUS, data_dir)
    if not file.is_file():
        raise DataNotFoundError(f"Missing corpus file {file.resolve()}. Set {DATA_ENV} or pass data_dir=...")
    total = 0
    tail: deque[str] = deque(maxlen=count)
    for total, line in text_lines(file):  # noqa: B007 - total is the line count afterwards
        tail.append(line)
    if not tail:
        raise DataNotFoundError(f"Corpus file {file.resolve()} is empty")
    return CorpusSlice(list(tail), str(file.resolve()), total - len(tail) + 1, total, total)


#: 0-based [start, stop) line range of the Wikipedia corpus the negation-meaning items are built from.
NEGATION_MEANING_LINES: tuple[int, int] = (150_000, 180_000)


@dataclass(frozen=True)
class NegationMeaningItems:
    """Quadruples built from one sentence: "X is A", "X is not A", "X is B", "X is not B" (B = antonym of A).

    A is an unmodified adjective complement of the main verb (``is large``, ``remains stable``), the one
    position where negating the verb means the antonym.

    "X is not A" means "X is B" (the curated antonyms are gradable opposites), not "X is A", and not "X is not
    B". Every item is checked: the affirmative forms carry no negation word, the negated forms exactly one.

    Attributes:
        affirmative: the corpus sentence (A).
        negated: its main clause negated (not A).
        antonym: A's adjective replaced by its antonym (B), the paraphrase of ``negated``.
        negated_antonym: ``antonym`` negated (not B).
        lines: 1-based corpus line of each item.
        source: the corpus file.
        line_range: the 1-based first and last line scanned.
        declined: sentences left out, by reason.
    """

    affirmative: list[str]
    negated: list[str]
    antonym: list[str]
    negated_antonym: list[str]
    lines: list[int]
    source: str
    line_range: tuple[int, int]
    declined: dict[str, int]

    def __len__(self) -> int:
        return len(self.affirmative)

    def sentences(self) -> list[str]:
        """Every sentence of every item (for one batched encode)."""
        return [*self.affirmative, *self.negated, *self.antonym, *self.negated_antonym]

    def prefixed_antonyms(self) -> list[bool]:
        """Per item, whether B's adjective is A's with a negative prefix ("able"/"unable") rather than another
        word ("large"/"small"; :func:`~st_debias.data.lexicon.is_prefixed_antonym`).

        Raises:
            ValueError: an item whose "X is A" and "X is B" differ in more or fewer than one word.
        """
        from st_debias.data.lexicon import is_prefixed_antonym
        from st_debias.data.text import swapped_words

        return [is_prefixed_antonym(*swapped_words(a, b)) for a, b in zip(self.affirmative, self.antonym, strict=True)]

    def describe(self) -> dict[str, Any]:
        """JSON-ready provenance: file, lines scanned, items kept and sentences declined by reason."""
        return {
            "source": portable_path(self.source),
            "lines": list(self.line_range),
            "items": len(self),
            "declined": dict(sorted(self.declined.items())),
            "construction": "A = corpus sentence whose root has an unmodified curated gradable adjective as "
            "complement; "
            "B = A with its antonym; not A, not B = the rule negator on each",
        }


def load_negation_meaning_items(
    data_dir: str | os.PathLike[str] | None = None,
    lines: tuple[int, int] = NEGATION_MEANING_LINES,
    path: str | os.PathLike[str] | None = None,
    negator: Any | None = None,
) -> NegationMeaningItems:
    """Negation-meaning items from lines ``lines`` (0-based, ``[start, stop)``) of the Wikipedia corpus.

    Built by :func:`st_debias.data.negation.meaning.negation_meaning_quadruples`. Deterministic: the same
    file and range always give the same items. They are kept in memory for the process and their quadruples
    on disk (:func:`~st_debias.data.negation.meaning.cached_negation_meaning_quadruples`), so spaCy parses
    them once per corpus.

    Raises:
        ValueError: an empty or reversed range.
        DataNotFoundError: the corpus file is missing, or the range holds no usable sentence.
    """
    start, stop = lines
    if not 0 <= start < stop:
        raise ValueError(f"lines must be a range [start, stop) with 0 ≤ start < stop, got {lines}")
    file = Path(path) if path is not None else data_file(WIKI_CORPUS, data_dir)
    if not file.is_file():
        raise DataNotFoundError(f"Missing corpus file {file.resolve()}. Set {DATA_ENV} or pass data_dir=...")
    if negator is not None:
        return _build_negation_meaning_items(file, start, stop, negator)
    status = file.stat()
    return _memoised_negation_meaning_items(str(file.resolve()), status.st_size, status.st_mtime_ns, start, stop)


@lru_cache(maxsize=4)
def _memoised_negation_meaning_items(
    file: str, size: int, mtime_ns: int, start: int, stop: int
) -> NegationMeaningItems:
    """Items kept in memory for the process; their quadruples are cached on disk (keyed by the sentences)."""
    return _build_negation_meaning_items(Path(file), start, stop, None)


def _build_negation_meaning_items(file: Path, start: int, stop: int, negator: Any | None) -> NegationMeaningItems:
    from st_debias.data.negation.meaning import (
        cached_negation_meaning_quadruples,
        negation_meaning_quadruples,
    )

    numbers: list[int] = []
    sentences: list[str] = []
    for number, line in text_lines(file):
        if number > stop:
            break
        if number > start:
            numbers.append(number)
            sentences.append(line.strip())
    built = (
        negation_meaning_quadruples(sentences, negator) if negator is not None
        else cached_negation_meaning_quadruples(sentences)
    )
    if not len(built):
        raise DataNotFoundError(f"Lines {start + 1}–{stop} of {file.resolve()} hold no negation-meaning item")
    return NegationMeaningItems(
        affirmative=built.affirmative,
        negated=built.negated,
        antonym=built.antonym,
        negated_antonym=built.negated_antonym,
        lines=[numbers[i] for i in built.sources],
        source=str(file.resolve()),
        line_range=(start + 1, numbers[-1]),
        declined=dict(built.declined),
    )
