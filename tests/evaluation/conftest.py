"""Fixtures for the evaluation tests: a small copy of the data and a fake encoder.

The small data folder (in a temporary directory) holds the first rows of each shared STS file and CANNOT
probe file, so the default suite runs in seconds on a loaded 2-core machine. The tiny models come from
``tests/conftest.py``.
"""

from __future__ import annotations

import collections
import itertools
import zlib
from pathlib import Path
from typing import Any

import pytest

from st_debias.evaluation.bias_data import NEGATION_MEANING_LINES

MINI_STS_ROWS = 60
MINI_PROBE_ROWS = 12
MINI_CORPUS_LINES = 40
#: Real corpus lines kept from the start of the negation-meaning range (about 1 in 80 makes an item).
MINI_NEGATION_MEANING_LINES = 1500


@pytest.fixture(scope="session")
def mini_data(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> Path:
    """A data folder with the first rows of every STS file and CANNOT probe file, and a corpus holding the
    real corpus's lines up to the first lines of the negation-meaning range, then its last lines."""
    source = shared_data
    target = tmp_path_factory.mktemp("mini_data")
    (target / "sts").mkdir()
    for path in sorted((source / "sts").glob("*.jsonl")):
        with path.open(encoding="utf-8") as handle:
            head = list(itertools.islice(handle, MINI_STS_ROWS))
        (target / "sts" / path.name).write_text("".join(head), encoding="utf-8")
    probes = target / "probes" / "cannot"
    probes.mkdir(parents=True)
    for path in sorted((source / "probes" / "cannot").glob("*.tsv")):
        with path.open(encoding="utf-8", newline="") as handle:
            head = list(itertools.islice(handle, MINI_PROBE_ROWS + 1))
        (probes / path.name).write_text("".join(head), encoding="utf-8")
    (target / "corpus").mkdir()
    start, _ = NEGATION_MEANING_LINES
    with (source / "corpus" / "wiki_sentences.txt").open(encoding="utf-8") as handle:
        # The corpus's head through the first lines of the negation-meaning range (real line numbers), then
        # its last lines.
        head = list(itertools.islice(handle, start + MINI_NEGATION_MEANING_LINES))
        tail = collections.deque(handle, maxlen=MINI_CORPUS_LINES)
    (target / "corpus" / "wiki_sentences.txt").write_text("".join(head + list(tail)), encoding="utf-8")
    return target


def leaves(value: Any, prefix: str = "") -> dict[str, Any]:
    """Flatten nested dicts/lists of a results entry into ``{path: leaf}`` (for approximate comparison)."""
    if isinstance(value, dict):
        return {k: v for key, item in value.items() for k, v in leaves(item, f"{prefix}/{key}").items()}
    if isinstance(value, list):
        return {k: v for i, item in enumerate(value) for k, v in leaves(item, f"{prefix}/{i}").items()}
    return {prefix: value}


class FakeEncoder:
    """A deterministic stand-in for a SentenceTransformer: ``encode`` looks vectors up in a table.

    Counts every sentence it is asked to encode (``calls`` holds each request), so tests can check that
    a cache encodes each unique sentence once.
    """

    def __init__(self, table: dict[str, list[float]] | None = None, dim: int = 4) -> None:
        self.table = table or {}
        self.dim = dim
        self.calls: list[list[str]] = []

    def encode(self, sentences, **kwargs):
        import numpy as np

        self.calls.append(list(sentences))
        rows = []
        for sentence in sentences:
            if sentence in self.table:
                rows.append(self.table[sentence])
            else:
                rng = np.random.default_rng(zlib.crc32(sentence.encode()))
                rows.append(rng.normal(size=self.dim))
        return np.asarray(rows, dtype=np.float32)


@pytest.fixture
def fake_encoder_cls():
    return FakeEncoder
