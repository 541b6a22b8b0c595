"""Bias-probe data: CANNOT file order and parsing, the word-order corpus slice, training-pair files."""

from __future__ import annotations

import pytest

from st_debias.evaluation.bias_data import (
    load_negation_pairs,
    load_word_order_sentences,
    read_negation_tsv,
)
from st_debias.evaluation.pairs import load_pair_rows
from st_debias.paths import DataNotFoundError


def test_default_negation_probe_is_sorted_files_first_3000(shared_data):
    """The reported probe's '0.86 / 75.5 %' (docs/evaluation.md) is reproduced by files sorted by name, first 3,000 pairs."""
    pairs = load_negation_pairs(shared_data)
    assert len(pairs) == 3000
    assert pairs.files == {
        "glue_diagnostic.tsv": 154,
        "nan_nli.tsv": 117,
        "wikifactcheck_english_0.tsv": 904,
        "wikifactcheck_english_1.tsv": 1825,
    }
    assert pairs.sentences[0] == "The cat sat on the mat."
    assert pairs.negations[0] == "The cat did not sit on the mat."
    assert len(load_negation_pairs(shared_data, limit=None)) == 15241


def test_negation_tsv_keeps_bare_quotes(tmp_path):
    path = tmp_path / "q.tsv"
    path.write_text(
        'sentence\tnegated\tparaphrase\nHe said "yes.\tHe said "no.\t\nA\tNot A\tAlso A\n', encoding="utf-8"
    )
    rows = read_negation_tsv(path)
    assert rows == [('He said "yes.', 'He said "no.', None), ("A", "Not A", "Also A")]
    (tmp_path / "bad.tsv").write_text("a\tb\n", encoding="utf-8")
    with pytest.raises(ValueError, match="lacks the column"):
        read_negation_tsv(tmp_path / "bad.tsv")


def test_missing_probe_folder_names_it(tmp_path):
    with pytest.raises(DataNotFoundError, match="probes/cannot"):
        load_negation_pairs(tmp_path)


def test_load_pair_rows_formats(tmp_path):
    (tmp_path / "p.csv").write_text('sent0,sent1,hard_neg\n"a, b",c,d\n', encoding="utf-8")
    (tmp_path / "p.tsv").write_text('a\tb\nsaid "x\ty\n', encoding="utf-8")
    assert load_pair_rows(tmp_path / "p.csv") == [["a, b", "c", "d"]]
    assert load_pair_rows(tmp_path / "p.tsv") == [['said "x', "y"]]
    with pytest.raises(DataNotFoundError, match="does not exist"):
        load_pair_rows(tmp_path / "missing.jsonl")
    (tmp_path / "p.jsonl").write_text(
        '{"dataset": "snli", "split": "dev", "sent0": "a", "sent1": "b", "hard_neg": "c"}\n', encoding="utf-8"
    )
    assert load_pair_rows(tmp_path / "p.jsonl") == [["a", "b", "c"]], (
        "bookkeeping fields are not text columns"
    )
    assert load_pair_rows(tmp_path / "p.jsonl", columns=["sent1", "sent0"]) == [["b", "a"]]
    assert load_pair_rows(tmp_path / "p.csv", columns=["sent1", "sent0"]) == [["c", "a, b"]]
    with pytest.raises(ValueError, match="no column"):
        load_pair_rows(tmp_path / "p.csv", columns=["anchor"])
    (tmp_path / "p.txt").write_text("x", encoding="utf-8")
    with pytest.raises(ValueError, match="rows files are .csv, .tsv"):
        load_pair_rows(tmp_path / "p.txt")


def test_word_order_slice_is_the_corpus_tail(tmp_path):
    """The probe reads the LAST lines (training reads from the first), with their line numbers."""
    corpus = tmp_path / "c.txt"
    corpus.write_text("".join(f"sentence number {i} here\n" for i in range(1, 11)), encoding="utf-8")
    tail = load_word_order_sentences(path=corpus, count=3)
    assert tail.sentences == [f"sentence number {i} here" for i in (8, 9, 10)]
    assert tail.describe()["lines"] == [8, 10] and tail.total_lines == 10
    assert len(load_word_order_sentences(path=corpus, count=50)) == 10
    with pytest.raises(DataNotFoundError, match="corpus/wiki_sentences.txt"):
        load_word_order_sentences(tmp_path)
    with pytest.raises(ValueError, match="count must be"):
        load_word_order_sentences(path=corpus, count=0)


def test_word_order_slice_is_disjoint_from_the_training_read(shared_data):
    """Recipes read the corpus with ``read_sentences(path, limit)`` from line 1: the tail never overlaps it."""
    from st_debias.data.io.corpus import read_sentences

    tail = load_word_order_sentences(shared_data)
    assert tail.describe()["lines"] == [199_001, 200_000]
    head = set(read_sentences(shared_data / "corpus" / "wiki_sentences.txt", limit=64 * 1000 * 3))
    assert not head & set(tail.sentences)


def test_word_order_file_with_a_non_utf8_byte_names_file_and_line(tmp_path):
    """Failure: a latin-1 byte in the word-order probe's file gave `'utf-8' codec can't decode ...`, no file or line."""
    corpus = tmp_path / "corpus.txt"
    corpus.write_bytes(b"First line here.\nSecond line.\nCaf\xe9 au lait.\nLast line.\n")
    with pytest.raises(ValueError, match=rf"{corpus}:3: is not valid UTF-8: byte 0xe9 at column 4"):
        load_word_order_sentences(path=corpus, count=2)


def test_negation_meaning_items_on_real_sentences_claim_their_polarity(shared_data):
    """Each item of the held-out Wikipedia range: A and B affirmative, 'not A' and 'not B' with one negation,
    B = A with one adjective replaced by its curated antonym, and 'not A' / 'not B' the negator's output."""
    from st_debias.data.lexicon import safe_antonym
    from st_debias.data.negation.negator import Negator, negation_count
    from st_debias.data.text import words
    from st_debias.evaluation.bias_data import NEGATION_MEANING_LINES, load_negation_meaning_items

    start = NEGATION_MEANING_LINES[0]
    items = load_negation_meaning_items(shared_data, lines=(start, start + 4000))
    assert len(items) >= 30 and items.line_range == (start + 1, start + 4000)
    assert sum(items.declined.values()) + len(items) == 4000
    corpus = (shared_data / "corpus" / "wiki_sentences.txt").read_text(encoding="utf-8").splitlines()
    for k in range(len(items)):
        a, not_a, b, not_b = items.affirmative[k], items.negated[k], items.antonym[k], items.negated_antonym[k]
        assert corpus[items.lines[k] - 1].strip() == a
        assert negation_count(a) == negation_count(b) == 0
        assert negation_count(not_a) == negation_count(not_b) == 1
        changed = [(x, y) for x, y in zip(words(a), words(b), strict=True) if x != y]
        assert len(changed) == 1 and safe_antonym(changed[0][0]) == changed[0][1], (a, b)
        assert not_a != a and not_b != b
    again = load_negation_meaning_items(shared_data, lines=(start, start + 4000), negator=Negator())
    assert again.negated == items.negated and again.negated_antonym == items.negated_antonym
    # Both antonym kinds occur in real items, and each item's kind is its swapped word's.
    prefixed = items.prefixed_antonyms()
    assert 0 < sum(prefixed) < len(items)
    for k, is_prefixed in enumerate(prefixed):
        word, antonym = next((x, y) for x, y in zip(words(items.affirmative[k]), words(items.antonym[k])) if x != y)
        assert is_prefixed == (antonym.endswith(word) or word.endswith(antonym)), (word, antonym)


def test_negation_meaning_items_refuse_a_bad_range_or_an_empty_one(tmp_path):
    from st_debias.evaluation.bias_data import load_negation_meaning_items

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("The cat sat on the mat.\n", encoding="utf-8")
    with pytest.raises(ValueError, match="range"):
        load_negation_meaning_items(path=corpus, lines=(5, 5))
    with pytest.raises(DataNotFoundError, match="no negation-meaning item"):
        load_negation_meaning_items(path=corpus, lines=(0, 10))
    with pytest.raises(DataNotFoundError, match="Missing corpus"):
        load_negation_meaning_items(path=tmp_path / "absent.txt")


def test_negation_meaning_items_are_cached_on_disk(mini_data, tmp_path, monkeypatch):
    """Built once per corpus: a new process (memory cleared) reads the cached quadruples without parsing; the probe
    and the data.mix rows share that one cache (st_debias.data.negation.meaning)."""
    from st_debias.data.negation import meaning
    from st_debias.evaluation import bias_data

    monkeypatch.setenv("ST_DEBIAS_CACHE", str(tmp_path))
    bias_data._memoised_negation_meaning_items.cache_clear()
    first = bias_data.load_negation_meaning_items(mini_data)
    assert len(list((tmp_path / "negation-meaning").glob("*.json"))) == 1
    bias_data._memoised_negation_meaning_items.cache_clear()

    def refuse(*args, **kwargs):
        raise AssertionError("parsed again")

    monkeypatch.setattr(meaning, "negation_meaning_quadruples", refuse)
    assert bias_data.load_negation_meaning_items(mini_data) == first
    bias_data._memoised_negation_meaning_items.cache_clear()
