"""``data.mix``: NLI rows replace a share of the built rows, seeded; the recipe check refuses bad shares."""

from __future__ import annotations

import pytest
from datasets import Dataset

from st_debias.data.io.nli import load_nli_triplets
from st_debias.evaluation.sts_data import evaluation_sentences
from st_debias.recipes.config import load_recipe
from st_debias.recipes.data import mix_rows


def _rows(count: int) -> Dataset:
    return Dataset.from_dict(
        {"anchor": [f"a{i}" for i in range(count)], "positive": [f"p{i}" for i in range(count)],
         "negative": [f"n{i}" for i in range(count)]}
    )


def test_mix_replaces_its_share_with_real_triplets_deterministically():
    rows, report = mix_rows(_rows(200), {"rows": 200}, {"nli": 0.25}, wanted=160, seed=3)
    assert len(rows) == 160 and report["rows_used"] == 160 and report["rows_built_used"] == 120
    anchors = rows["anchor"]
    assert sorted(a for a in anchors if a.startswith("a") and a[1:].isdigit()) == sorted(f"a{i}" for i in range(120))
    triplets = load_nli_triplets(exclude=evaluation_sentences())
    kept = set(zip(triplets.anchors, triplets.positives, triplets.negatives, strict=True))
    mixed = [r for r in zip(rows["anchor"], rows["positive"], rows["negative"], strict=True) if r[0] not in set(_rows(200)["anchor"])]
    assert len(mixed) == 40 and set(mixed) <= kept
    assert report["mix"]["nli"]["rows"] == 40 and report["mix"]["nli"]["repeats"] == 0
    again, _ = mix_rows(_rows(200), {}, {"nli": 0.25}, wanted=160, seed=3)
    assert again["anchor"] == anchors
    other, _ = mix_rows(_rows(200), {}, {"nli": 0.25}, wanted=160, seed=4)
    assert other["anchor"] != anchors


@pytest.mark.parametrize(
    ("mix", "kind", "message"),
    [({"nli": 1.2}, "minimal_pairs", r"share in \(0, 1\)"), ({"wiki": 0.2}, "minimal_pairs", "unknown"),
     ({"nli": 0.3}, "simcse", "needs \\(anchor, positive, negative\\) rows")],
)
def test_recipe_refuses_a_bad_mix(tmp_path, mix, kind, message):
    path = tmp_path / "r.yaml"
    path.write_text(
        f"name: r\nversion: 1\ndata:\n  kind: {kind}\n  mix: {mix}\nloss:\n  name: MultipleNegativesRankingLoss\n",
        encoding="utf-8",
    )
    with pytest.raises(ValueError, match=message):
        load_recipe(path)


def test_negation_meaning_rows_reverse_the_negation_cue_and_are_cached(tmp_path, monkeypatch):
    """Rows ("X is not A", "X is B", "X is not B") and ("X is not B", "X is A", "X is not A") from real corpus
    sentences: the negated anchor's positive has no negation, its negative one; a second call reads the cache."""
    from st_debias.data.lexicon import safe_antonym
    from st_debias.data.negation.negator import negation_count
    from st_debias.data.text import words
    from st_debias.recipes import data as recipe_data
    from tests.conftest import first_sentences

    sentences = first_sentences(3000)
    rows, described = recipe_data.mix_source_rows("negation_meaning", sentences=sentences, cache_dir=tmp_path)
    assert described["quadruples"] >= 10 and len(rows) == 2 * described["quadruples"]
    for anchor, positive, negative in rows:
        assert negation_count(anchor) == 1 and negation_count(positive) == 0 and negation_count(negative) == 1
    for (not_a, b, not_b), (not_b_again, a, not_a_again) in zip(rows[::2], rows[1::2], strict=True):
        assert (not_b_again, not_a_again) == (not_b, not_a)
        changed = [(x, y) for x, y in zip(words(a), words(b), strict=True) if x != y]
        assert len(changed) == 1 and safe_antonym(changed[0][0]) == changed[0][1]
    monkeypatch.setattr("st_debias.data.negation.meaning.negation_meaning_quadruples", lambda *a, **k: 1 / 0)
    again, _ = recipe_data.mix_source_rows("negation_meaning", sentences=sentences, cache_dir=tmp_path)
    assert again == rows
    mixed, report = mix_rows(_rows(400), {}, {"nli": 0.2, "negation_meaning": 0.1}, wanted=400, seed=1,
                             sentences=sentences, cache_dir=tmp_path)
    assert report["mix"]["negation_meaning"]["rows"] == 40 and report["mix"]["nli"]["rows"] == 80
    assert report["rows_built_used"] == 280 and len(mixed) == 400


def test_a_source_without_rows_is_reported_and_skipped(tmp_path, caplog):
    """Forty sentences hold no "X is A" with a curated antonym: the recipe still trains, on its own rows."""
    sentences = ["The cat sat on the mat."] * 40
    with caplog.at_level("WARNING"):
        rows, report = mix_rows(_rows(40), {}, {"negation_meaning": 0.2}, wanted=40, seed=0, sentences=sentences,
                                cache_dir=tmp_path)
    assert len(rows) == 40 and report["rows_built_used"] == 40 and report["mix"]["negation_meaning"]["rows"] == 0
    assert "gave no row" in caplog.text
