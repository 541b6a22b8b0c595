"""IPWBuilder on real Wikipedia sentences with a tiny guide model (its cosines sit in ~[0.92, 0.98],
hence the test negative range)."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from st_debias.data.builders import merge_builds
from st_debias.data.io.embeddings import encode_corpus
from st_debias.data.ipw.builder import IPWBuilder, sample_negatives, to_input_examples
from st_debias.data.ipw.propensity import negative_probabilities, pairwise_word_edit
from st_debias.data.paraphrase.edits import WordDeletion, WordNetSynonym
from st_debias.data.text import lexical_overlap

RANGE = (0.93, 0.97)


def _builder(model, cache_dir, **kwargs) -> IPWBuilder:
    params = dict(
        positive_generators=[WordDeletion(num_candidates=2), WordNetSynonym(num_candidates=1)],
        pool_size=16, negative_range=RANGE, cache_dir=cache_dir, show_progress_bar=False, seed=3,
    )
    params.update(kwargs)
    return IPWBuilder(model, **params)


@pytest.fixture(scope="module")
def built(session_tiny_model, cache_dir, wiki):
    builder = _builder(session_tiny_model, cache_dir)
    dataset = builder.build(wiki[:150])
    return builder, dataset


def test_columns_rows_and_accounting(built, wiki):
    builder, dataset = built
    assert dataset.column_names == ["anchor", "positive", "negative_1", "negative_2"]
    report = builder.report
    assert report.inputs == 150 and report.rows == len(dataset) > 100
    assert report.anchors + sum(report.skipped.values()) == 150
    for row in dataset:
        assert row["anchor"] in wiki[:150]
        assert row["positive"] != row["anchor"]
        assert row["negative_1"] != row["negative_2"]
        assert row["anchor"] not in (row["negative_1"], row["negative_2"])
    stats = report.statistics
    for key in ("positive_lexical_overlap", "positive_cosine", "negative_lexical_overlap", "negative_cosine"):
        assert np.isfinite(stats[key])
    assert RANGE[0] <= stats["negative_cosine"] <= RANGE[1]
    want = np.mean([lexical_overlap(r["anchor"], r["negative_1"]) for r in dataset] +
                   [lexical_overlap(r["anchor"], r["negative_2"]) for r in dataset])
    assert stats["negative_lexical_overlap"] == pytest.approx(want)
    assert stats["positive_lexical_overlap"] > stats["negative_lexical_overlap"]


def test_deterministic_under_seed_and_seed_matters(built, session_tiny_model, cache_dir, wiki):
    _, dataset = built
    again = _builder(session_tiny_model, cache_dir).build(wiki[:150])
    assert again.to_dict() == dataset.to_dict()
    other = _builder(session_tiny_model, cache_dir, seed=4).build(wiki[:150])
    assert other.to_dict() != dataset.to_dict()


def test_shards_merge_to_the_unsharded_build(built, session_tiny_model, cache_dir, wiki):
    """Guards against shard-dependent random streams or off-by-one anchor slices."""
    _, dataset = built
    sentences = wiki[:150]
    parts = []
    for index in range(3):
        builder = _builder(session_tiny_model, cache_dir)
        parts.append((builder.build(sentences, shard=(index, 3)), builder.report))
    merged, report = merge_builds(parts)
    assert merged.to_dict() == dataset.to_dict()
    assert report.inputs == 150 and report.rows == len(dataset)
    full = built[0].report.statistics
    for key in ("positive_lexical_overlap", "negative_cosine", "negative_pairs", "positive_pairs"):
        assert report.statistics[key] == pytest.approx(full[key], rel=1e-9), key


def test_negatives_follow_eq_1_to_4_on_the_pool(session_tiny_model, cache_dir, wiki):
    """The recorded probability of each drawn negative equals eq. 4 recomputed from its pool."""
    sentences = wiki[:150]
    emb = encode_corpus(sentences, session_tiny_model, cache_dir=cache_dir, show_progress_bar=False)
    sample = sample_negatives(sentences, emb, pool_size=16, negative_range=RANGE, seed=0,
                              temperature=0.05, show_progress_bar=False)
    from st_debias.data.ipw.neighbours import range_topk

    table = range_topk(emb, 16, low=RANGE[0], high=RANGE[1], show_progress_bar=False)
    row = int(np.flatnonzero((sample.chosen >= 0).all(1))[0])
    pool = table.indices[row][table.indices[row] >= 0]
    edit = pairwise_word_edit([sentences[row]] * len(pool), [sentences[j] for j in pool])
    cos = emb[pool] @ emb[row]
    probs = negative_probabilities(edit[None], cos[None].astype(np.float64), temperature=0.05)[0]
    for j, p in zip(sample.chosen[row], sample.probability[row]):
        assert j in pool
        assert p == pytest.approx(probs[list(pool).index(j)], rel=1e-5)


def test_anchor_with_no_candidate_in_range_is_counted(session_tiny_model, cache_dir, wiki):
    builder = _builder(session_tiny_model, cache_dir, negative_range=(0.975, 0.985))
    dataset = builder.build(wiki[:150])
    skipped = builder.report.skipped
    assert skipped["no_negative_candidates"] + skipped["too_few_negative_candidates"] > 0
    assert builder.report.anchors + sum(skipped.values()) == 150
    assert len(dataset) == builder.report.rows


def test_bad_input(session_tiny_model, cache_dir, wiki):
    builder = _builder(session_tiny_model, cache_dir)
    with pytest.raises(ValueError, match="not str"):
        builder.build(wiki[:20] + [None])
    with pytest.raises(ValueError, match="single string"):
        builder.build("Just one sentence.")
    with pytest.raises(ValueError, match="at least 2"):
        builder.build(["", "   ", "Only this one."])
    dataset = builder.build(wiki[:60] + ["", wiki[0], "  "])
    report = builder.report
    assert report.skipped["empty"] == 2 and report.skipped["duplicate"] == 1
    assert report.inputs == 63 and report.anchors + sum(report.skipped.values()) == 63
    assert len(dataset) == report.rows


def test_weight_column_last_and_input_examples(session_tiny_model, cache_dir, wiki):
    builder = _builder(session_tiny_model, cache_dir, weight=lambda row: 1.0 + row["positive_probability"])
    dataset = builder.build(wiki[:60])
    assert dataset.column_names[-1] == "label"
    assert all(1.0 < w <= 2.0 for w in dataset["label"])
    examples = to_input_examples(dataset)
    assert len(examples) == len(dataset)
    assert examples[0].texts == [dataset[0][c] for c in ("anchor", "positive", "negative_1", "negative_2")]
    assert examples[0].label == pytest.approx(dataset[0]["label"])


def test_embeddings_are_cached_on_disk(session_tiny_model, tmp_path, wiki, monkeypatch):
    calls = []
    original = session_tiny_model.encode

    def counting(*args, **kwargs):
        calls.append(len(args[0]))
        return original(*args, **kwargs)

    monkeypatch.setattr(session_tiny_model, "encode", counting)
    first = encode_corpus(wiki[:40], session_tiny_model, cache_dir=tmp_path, show_progress_bar=False)
    second = encode_corpus(wiki[:40], session_tiny_model, cache_dir=tmp_path, show_progress_bar=False)
    assert calls == [40]
    np.testing.assert_array_equal(first, second)
    encode_corpus(wiki[:41], session_tiny_model, cache_dir=tmp_path, show_progress_bar=False)
    assert calls == [40, 41]  # a different corpus is a different key
    assert list(tmp_path.rglob("*.npy"))


def test_missing_positive_fallback(session_tiny_model, cache_dir, wiki):
    class Nothing(WordDeletion):
        name = "nothing"

        def edit(self, tokens, rng):
            return None

    skip = _builder(session_tiny_model, cache_dir, positive_generators=[Nothing()])
    assert len(skip.build(wiki[:40])) == 0
    assert skip.report.skipped["no_positive_candidates"] > 0
    fallback = _builder(session_tiny_model, cache_dir, positive_generators=[Nothing()], on_missing_positive="anchor")
    rows = fallback.build(wiki[:40])
    assert len(rows) > 0 and all(r["anchor"] == r["positive"] for r in rows)
    assert fallback.report.statistics["positive_fallbacks"] == len(rows)


def test_embedding_cache_follows_the_weights_not_the_path(tmp_path, wiki):
    """Failure mode: a model retrained into the same folder read its predecessor's cached embeddings, because
    a path was cached under its name ("path:<folder>") rather than its weights."""
    from tests.conftest import build_tiny_model_dir

    folder = tmp_path / "guide"
    build_tiny_model_dir(folder, seed=0)
    first = encode_corpus(wiki[:8], str(folder), cache_dir=tmp_path / "cache", show_progress_bar=False)
    shutil.rmtree(folder)
    build_tiny_model_dir(folder, seed=1)
    second = encode_corpus(wiki[:8], str(folder), cache_dir=tmp_path / "cache", show_progress_bar=False)
    assert not np.allclose(first, second)
