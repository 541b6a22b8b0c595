"""The lab mix source ``negation_meaning_phrases_half`` (benchmarks/negation_teacher/phrase_rows.py) on real corpus
sentences: the sentence rows' pairs, cut to their words, the held-out half left out."""

from __future__ import annotations

import pytest

from benchmarks.negation_meaning.held_out_pairs import half_pair_rows, in_training_half
from benchmarks.negation_teacher.distill_margin import row_group
from benchmarks.negation_teacher.phrase_rows import PHRASES_HALF, SOURCE, phrase_quadruple, phrase_rows
from st_debias.data.lexicon import safe_antonym
from st_debias.recipes.mix_sources import MIX_SOURCES
from tests.conftest import first_sentences


def test_the_phrase_quadruple_is_the_swapped_word_and_its_negations() -> None:
    assert phrase_quadruple("The road is narrow.", "The road is wide.") == ("narrow", "not narrow", "wide", "not wide")
    with pytest.raises(ValueError, match="Not one swapped word"):
        phrase_quadruple("The road is narrow.", "The street is wide.")


def test_rows_are_the_sentence_rows_cut_to_their_phrases(tmp_path) -> None:
    sentences = first_sentences(6000)
    rows, described = phrase_rows(sentences=sentences, cache_dir=tmp_path)
    sentence_rows, _ = half_pair_rows(sentences=sentences, cache_dir=tmp_path)
    # One phrase row per sentence row, in order: the same pairs at the same frequency.
    assert len(rows) == len(sentence_rows) == 2 * described["kept_quadruples"] > 0
    assert described["kept_pairs"] == len({tuple(sorted((row[0].removeprefix("not "), row[1]))) for row in rows}) > 0
    for (not_a, b, not_b), (sentence_not_a, sentence_b, sentence_not_b) in zip(rows, sentence_rows, strict=True):
        a = not_a.removeprefix("not ")
        assert not_b == f"not {b}" and safe_antonym(a) == b and in_training_half(tuple(sorted((a, b))))
        assert a in sentence_not_a.lower() and b in sentence_b.lower() and b in sentence_not_b.lower()
        # The floor's groups read them as negation-meaning rows.
        assert row_group(not_a, b, not_b) == "meaning"
    assert MIX_SOURCES[SOURCE] is PHRASES_HALF
    assert phrase_rows(sentences=sentences, cache_dir=tmp_path)[0] == rows
