"""Reading the data files users and the project bring, with errors that name file, line and field.

Every reader of a data file (STS ``.jsonl``, corpus ``.txt``, probe ``.tsv``) goes through these helpers
so that bad input fails on load, never later as a NaN score or a traceback without a location:

* :func:`text_lines` yields ``(line_number, line)`` and turns a decoding error into a
  :class:`DataFileError` naming the line and the byte;
* :func:`parse_json_line`, :func:`require_text` and :func:`require_score` check one record's fields;
* :func:`tsv_records` reads a headed TSV (the CANNOT probe layout) and checks its columns and fields.
"""

from __future__ import annotations

import csv
import hashlib
import json
import logging
import math
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)


def file_sha256(path: str | os.PathLike[str]) -> str:
    """The sha256 of a file's bytes (the checksum data manifests, evaluation keys and ``run.json`` record), read
    in blocks so that a large corpus is not held in memory."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class DataFileError(ValueError):
    """A data file holds a value it must not: the message starts with ``file:line`` and names the field.

    Attributes:
        path: the file.
        line: 1-based line number (None when the problem is not on one line).
        field: the field at fault (None when the whole line is).
    """

    def __init__(
        self, path: str | os.PathLike[str], line: int | None, problem: str, field: str | None = None
    ):
        self.path = Path(path)
        self.line = line
        self.field = field
        where = f"{self.path}:{line}" if line is not None else str(self.path)
        what = f"field {field!r} " if field is not None else ""
        super().__init__(f"{where}: {what}{problem}")


def _undecodable_line(path: Path, encoding: str) -> DataFileError:
    """Find the first line of ``path`` that does not decode and describe it."""
    with path.open("rb") as handle:
        for line_number, raw in enumerate(handle, start=1):
            try:
                raw.decode(encoding)
            except UnicodeDecodeError as error:
                byte = raw[error.start : error.start + 1]
                return DataFileError(
                    path,
                    line_number,
                    f"is not valid {encoding.upper()}: byte 0x{byte.hex()} at column {error.start + 1} "
                    f"({error.reason}). Re-encode the file as UTF-8 (e.g. iconv -f latin1 -t utf-8).",
                )
    return DataFileError(path, None, f"is not valid {encoding.upper()}.")


def text_lines(path: str | os.PathLike[str], *, encoding: str = "utf-8") -> Iterator[tuple[int, str]]:
    """``(line_number, line without its newline)`` for each line of a text file, numbered from 1.

    A UTF-8 byte-order mark at the start of the file is removed with a warning naming the file (read with
    ``encoding="utf-8-sig"``, a file expected to start with one, it is removed silently); it would otherwise
    begin the first sentence.

    Raises:
        DataFileError: a line is not valid in ``encoding``, or holds a NUL byte (a binary file, or text in
            UTF-16); the message names the line and the column.
    """
    path = Path(path)
    line_number = 0
    try:
        with path.open(encoding=encoding, newline=None) as handle:
            for line_number, line in enumerate(handle, start=1):  # noqa: B007 - read after the loop
                if line_number == 1 and line.startswith("\ufeff"):
                    logger.warning("%s starts with a UTF-8 byte-order mark; it was removed.", path)
                    line = line[1:]
                if "\0" in line:
                    raise DataFileError(
                        path, line_number, f"holds a NUL byte at column {line.index(chr(0)) + 1}: a binary file, or "
                        "text in another encoding (UTF-16?); save it as UTF-8 text.",
                    )
                yield line_number, line.rstrip("\n")
    except UnicodeDecodeError as error:
        raise _undecodable_line(path, encoding) from error


def parse_json_line(path: str | os.PathLike[str], line_number: int, line: str) -> dict[str, Any]:
    """One JSON object of a ``.jsonl`` file.

    Raises:
        DataFileError: the line is not valid JSON (e.g. truncated) or not an object.
    """
    try:
        record = json.loads(line)
    except json.JSONDecodeError as error:
        raise DataFileError(
            path, line_number, f"is not valid JSON ({error.msg} at column {error.colno})."
        ) from error
    if not isinstance(record, dict):
        raise DataFileError(path, line_number, f"expected a JSON object, got {type(record).__name__}.")
    return record


def require_text(value: object, path: str | os.PathLike[str], line_number: int, field: str) -> str:
    """``value`` if it is a string with a non-space character, else a :class:`DataFileError`."""
    if not isinstance(value, str):
        shown = "null" if value is None else f"{type(value).__name__} {value!r:.40}"
        raise DataFileError(path, line_number, f"must be a non-empty string, got {shown}.", field)
    if not value.strip():
        raise DataFileError(path, line_number, "is empty; every sentence must have text.", field)
    return value


def require_score(
    value: object,
    path: str | os.PathLike[str],
    line_number: int,
    field: str,
    score_range: tuple[float, float],
) -> float:
    """``value`` as a finite float within ``score_range`` (inclusive), else a :class:`DataFileError`.

    Numbers and numeric strings are accepted (``"4.2"``); ``null``, ``"abc"``, ``NaN``, infinities, booleans
    and values outside the range are not.
    """
    low, high = score_range
    expected = f"a number in [{low:g}, {high:g}]"
    if value is None or isinstance(value, bool):
        raise DataFileError(path, line_number, f"must be {expected}, got {json.dumps(value)}.", field)
    try:
        score = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise DataFileError(path, line_number, f"must be {expected}, got {value!r:.40}.", field) from None
    if not math.isfinite(score) or not low <= score <= high:
        raise DataFileError(path, line_number, f"must be {expected}, got {value!r:.40}.", field)
    return score


def tsv_records(
    path: str | os.PathLike[str],
    required: Sequence[str],
    optional: Sequence[str] = (),
    *,
    encoding: str = "utf-8",
) -> Iterator[tuple[int, dict[str, str]]]:
    """``(line_number, {column: value})`` for each row of a tab-separated file with a header line.

    Read with ``csv.QUOTE_NONE`` (sentences hold bare double quotes). Each row must have as many fields as the
    header; the ``required`` columns must be non-empty strings; ``optional`` columns are kept when present.
    Blank lines are skipped. ``encoding="utf-8-sig"`` reads a file that starts with a byte-order mark.

    Raises:
        DataFileError: not UTF-8, a header without a required column, a row with a different number of
            fields, an empty required field. The message names file, line and column.
    """
    lines = text_lines(path, encoding=encoding)
    first = next(lines, None)
    if first is None:
        raise DataFileError(path, None, f"is empty; expected a header naming {list(required)}.")
    header = next(csv.reader([first[1]], delimiter="\t", quoting=csv.QUOTE_NONE))
    missing = [column for column in required if column not in header]
    if missing:
        raise DataFileError(path, 1, f"header {header} lacks the column(s) {missing}.")
    kept = [column for column in (*required, *optional) if column in header]
    for line_number, line in lines:
        if not line.strip():
            continue
        fields = next(csv.reader([line], delimiter="\t", quoting=csv.QUOTE_NONE))
        if len(fields) != len(header):
            raise DataFileError(
                path, line_number, f"has {len(fields)} tab-separated fields, the header has {len(header)}."
            )
        row = dict(zip(header, fields, strict=True))
        for column in required:
            require_text(row[column], path, line_number, column)
        yield line_number, {column: row[column] for column in kept}
