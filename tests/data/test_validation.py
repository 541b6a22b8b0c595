"""Bad input to the data builders fails early with a message naming where; any iterable of sentences works."""

from __future__ import annotations

import pytest

from st_debias.data.io.corpus import read_sentences
from st_debias.datafiles import DataFileError


def test_non_utf8_corpus_names_file_line_and_byte(data_root, tmp_path):
    """Failure mode: a Latin-1 corpus gave ``'utf-8' codec can't decode byte 0xe9 in position 1366``, no file, no line."""
    lines = (data_root / "corpus" / "wiki_sentences.txt").read_text(encoding="utf-8").splitlines()[:40]
    encoded = [line.encode("utf-8") for line in lines]
    encoded[29] = "Caf\u00e9 society ".encode("latin-1") + encoded[29]  # one Latin-1 line in a UTF-8 file
    corpus = tmp_path / "latin1.txt"
    corpus.write_bytes(b"\n".join(encoded))
    with pytest.raises(DataFileError, match=r"latin1.txt:30: is not valid UTF-8: byte 0xe9 at column 4"):
        read_sentences(corpus)
