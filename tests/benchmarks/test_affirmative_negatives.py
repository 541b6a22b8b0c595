"""The lab mix source ``negation_meaning_affirmative`` (benchmarks/negation_meaning/affirmative_negatives.py): rows built
from real corpus sentences, checked for the polarity each column claims, and named by a recipe through the
lab's entry point."""

from __future__ import annotations

import pytest
from datasets import Dataset

from benchmarks.negation_meaning.affirmative_negatives import (
    AFFIRMATIVE_HALF,
    AFFIRMATIVE_NEGATIVES,
    HALF_SOURCE,
    SOURCE,
    affirmative_half_rows,
    affirmative_negative_rows,
)
from benchmarks.negation_meaning.held_out_pairs import antonym_pair, half_pair_rows, in_training_half
from st_debias.data.lexicon import safe_antonym
from st_debias.data.negation.negator import negation_count
from st_debias.data.text import words
from st_debias.recipes.config import load_recipe
from st_debias.recipes.data import mix_rows, mix_source_rows
from st_debias.recipes.mix_sources import MIX_SOURCES
from tests.conftest import first_sentences


def test_rows_put_the_negated_sentence_beside_its_antonym_and_away_from_what_it_negates(tmp_path) -> None:
    sentences = first_sentences(3000)
    rows, described = affirmative_negative_rows(sentences=sentences, cache_dir=tmp_path)
    assert described["quadruples"] >= 10 and len(rows) == 2 * described["quadruples"]
    for anchor, positive, negative in rows:
        # No negation cue between the two candidates: both are affirmative.
        assert negation_count(anchor) == 1 and negation_count(positive) == 0 and negation_count(negative) == 0
    library, _ = mix_source_rows("negation_meaning", sentences=sentences, cache_dir=tmp_path)
    for (not_a, b, a), (not_b, a_again, b_again), (meaning_not_a, meaning_b, meaning_not_b) in zip(
        rows[::2], rows[1::2], library[::2], strict=True
    ):
        # The same quadruple as the library's rows; each affirmative is the positive of one row, the negative of the other.
        assert (not_a, b, not_b) == (meaning_not_a, meaning_b, meaning_not_b)
        assert (a_again, b_again) == (a, b)
        changed = [(x, y) for x, y in zip(words(a), words(b), strict=True) if x != y]
        assert len(changed) == 1 and safe_antonym(changed[0][0]) == changed[0][1]


def test_the_half_rows_are_the_training_half_quadruples_rows_only(tmp_path) -> None:
    sentences = first_sentences(6000)
    every, _ = affirmative_negative_rows(sentences=sentences, cache_dir=tmp_path)
    half, described = affirmative_half_rows(sentences=sentences, cache_dir=tmp_path)
    # Real sentences hold pairs of both halves; the kept rows are the training half's, in order.
    assert 0 < len(half) < len(every) and len(half) == 2 * described["kept_quadruples"]
    assert half == [row for row in every if in_training_half(antonym_pair(row[1], row[2]))]
    # The same quadruples as the half-pairs meaning rows: each pair of rows shares its anchors with theirs.
    meaning, _ = half_pair_rows(sentences=sentences, cache_dir=tmp_path)
    assert [row[0] for row in half] == [row[0] for row in meaning]
    assert MIX_SOURCES[HALF_SOURCE] is AFFIRMATIVE_HALF
    assert affirmative_half_rows(sentences=sentences, cache_dir=tmp_path)[0] == half


def test_a_recipe_names_the_source_through_the_lab_entry_point(tmp_path, monkeypatch) -> None:
    path = tmp_path / "r.yaml"
    path.write_text(
        f"name: r\nversion: 1\ndata:\n  kind: minimal_pairs\n  mix: {{negation_meaning: 0.1, {SOURCE}: 0.1}}\n"
        "  mix_sentences: 3000\nloss:\n  name: MultipleNegativesRankingLoss\n",
        encoding="utf-8",
    )
    assert MIX_SOURCES[SOURCE] is AFFIRMATIVE_NEGATIVES and SOURCE not in MIX_SOURCES.builtin()
    recipe = load_recipe(path)
    with monkeypatch.context() as without:
        without.delitem(MIX_SOURCES, SOURCE)
        with pytest.raises(ValueError, match=f"data.mix source '{SOURCE}' is unknown"):
            load_recipe(path)
    built = Dataset.from_dict({"anchor": [f"a{i}" for i in range(100)], "positive": ["p"] * 100, "negative": ["n"] * 100})
    rows, report = mix_rows(built, {}, recipe.data.mix, wanted=100, seed=1, sentences=first_sentences(3000), cache_dir=tmp_path)
    assert report["mix"][SOURCE]["rows"] == 10 and report["mix"]["negation_meaning"]["rows"] == 10
    own = set(built["anchor"])
    mixed = [r for r in zip(rows["anchor"], rows["positive"], rows["negative"], strict=True) if r[0] not in own]
    assert sum(negation_count(negative) == 0 for _, _, negative in mixed) == 10
