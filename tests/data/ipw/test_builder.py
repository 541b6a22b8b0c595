"""IPWBuilder on real Wikipedia sentences with a tiny guide model (its cosines sit in ~[0.92, 0.98],
hence the test negative range).

The expected negatives and positives come from :mod:`tests.reference`, a slow re-implementation of DebCSE
§4.1–4.2 (eq. 1–6) that never imports ``st_debias``: brute-force in-range pool, word Levenshtein, the
printed softmaxes and successive sampling without replacement on the per-anchor Gumbel streams.
"""

from __future__ import annotations

import logging
import shutil

import numpy as np
import pytest

from st_debias.data.builders import merge_builds
from st_debias.data.generators import Candidate, CandidateGenerator
from st_debias.data.io.embeddings import encode_corpus
from st_debias.data.ipw.builder import IPWBuilder, sample_negatives, to_input_examples
from st_debias.data.paraphrase.edits import WordDeletion, WordNetSynonym
from tests.reference import (
    lexical_overlap_reference,
    propensity_reference,
    reference_words,
    successive_sample_reference,
    word_edit_reference,
)

RANGE = (0.93, 0.97)


def _builder(model, cache_dir, **kwargs) -> IPWBuilder:
    params = dict(
        positive_generators=[WordDeletion(num_candidates=2), WordNetSynonym(num_candidates=1)],
        pool_size=16,
        negative_range=RANGE,
        cache_dir=cache_dir,
        show_progress_bar=False,
        seed=3,
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
    want = np.mean(
        [lexical_overlap_reference(r["anchor"], r["negative_1"]) for r in dataset]
        + [lexical_overlap_reference(r["anchor"], r["negative_2"]) for r in dataset]
    )
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


def test_two_threads_draw_the_same_negatives_and_rows(built, session_tiny_model, cache_dir, wiki, monkeypatch):
    """``num_proc`` shares eq. 1–4 and the draws out over threads, also on a shard smaller than one chunk:
    every array, the rows and the report's counts and statistics equal one thread's (the draws are keyed by
    anchor, the search is the same)."""
    from st_debias.data.ipw import builder as ipw_builder

    pools = []

    class CountingPool(ipw_builder.ThreadPoolExecutor):
        def __init__(self, max_workers: int) -> None:
            pools.append(max_workers)
            super().__init__(max_workers)

    monkeypatch.setattr(ipw_builder, "ThreadPoolExecutor", CountingPool)
    sentences = wiki[:150]
    emb = encode_corpus(sentences, session_tiny_model, cache_dir=cache_dir, show_progress_bar=False)
    kwargs = dict(pool_size=16, negative_range=RANGE, seed=5, show_progress_bar=False)
    one = sample_negatives(sentences, emb, **kwargs)
    assert pools == []
    for num_proc, query_range, chunk_size in ((2, None, 4096), (3, (11, 140), 4096), (3, None, 7)):
        many = sample_negatives(
            sentences, emb, num_proc=num_proc, query_range=query_range, chunk_size=chunk_size, **kwargs
        )
        assert pools.pop() == num_proc and pools == []
        part = one if query_range is None else sample_negatives(sentences, emb, query_range=query_range, **kwargs)
        for name in ("anchor_ids", "chosen", "cosine", "probability", "pool_sizes"):
            assert getattr(many, name).tobytes() == getattr(part, name).tobytes(), (num_proc, name)
    builder, dataset = built
    parallel = _builder(session_tiny_model, cache_dir, num_proc=2)
    assert parallel.build(sentences).to_dict() == dataset.to_dict()
    assert pools == [2]
    assert parallel.report.skipped == builder.report.skipped and parallel.report.rows == builder.report.rows
    assert parallel.report.statistics == builder.report.statistics
    with pytest.raises(ValueError, match="num_proc must be an int >= 1"):
        _builder(session_tiny_model, cache_dir, num_proc=0)
    with pytest.raises(ValueError, match="chunk_size must be at least 1"):
        sample_negatives(sentences, emb, pool_size=16, chunk_size=0, show_progress_bar=False)
    empty = sample_negatives(sentences, emb, num_proc=2, query_range=(5, 5), chunk_size=7, **kwargs)
    assert empty.chosen.shape == (0, 2) and empty.anchor_ids.shape == (0,)


def test_build_ipw_takes_num_proc(tmp_path, monkeypatch, session_tiny_model) -> None:
    """``st-debias build ipw --num-proc`` used to be refused; it now reaches the builder."""
    from st_debias.data import builders
    from st_debias.data.kinds import DATA_KINDS

    seen = []
    monkeypatch.setattr(builders, "IPWBuilder", lambda model, **options: seen.append(options["num_proc"]) or 1 / 0)
    with pytest.raises(ZeroDivisionError):
        DATA_KINDS["ipw"].build(["A man plays.", "A dog runs."], seed=0, model=session_tiny_model, num_proc=3)
    assert seen == [3]


def _gumbel(seed: int, stream: int, anchor_id: int, size: int) -> list[float]:
    """The documented per-anchor noise stream (propensity.py): ``default_rng([seed, stream, anchor])``."""
    return np.random.default_rng([seed, stream, anchor_id]).gumbel(size=size).tolist()


def _oracle_negatives(sentences, embeddings, *, pool_size, low, high, lambda_n, tau, tau_s, seed, m=2):
    """anchor id -> (expected negative ids, their P_neg), from a brute-force pool and eq. 1–4."""
    emb = np.asarray(embeddings, dtype=np.float64)
    out = {}
    for i, anchor in enumerate(sentences):
        cosines = emb @ emb[i]
        in_range = [j for j in range(len(sentences)) if j != i and low <= cosines[j] <= high]
        pool = sorted(in_range, key=lambda j: -cosines[j])[:pool_size]  # the K nearest inside the range
        if len(pool) < m:
            continue
        probs = propensity_reference(
            [word_edit_reference(anchor, sentences[j]) for j in pool],
            [cosines[j] for j in pool],
            lambda_n,
            "negative",
            tau,
            tau_s,
        )
        picks = successive_sample_reference(probs, m, _gumbel(seed, 1, i, pool_size))
        out[i] = ([pool[k] for k in picks], [probs[k] for k in picks])
    return out


@pytest.mark.parametrize(("lambda_n", "tau", "tau_s"), [(0.8, 1.0, 1.0), (0.2, 0.05, 0.5)])
def test_negatives_follow_eq_1_to_4_on_the_pool(session_tiny_model, cache_dir, wiki, lambda_n, tau, tau_s):
    """Every anchor's drawn negatives and their recorded P_neg equal the oracle's (a swapped λ, a complement
    dropped in eq. 1/3, a temperature in the wrong place or a pool outside the range all change them)."""
    sentences = wiki[:150]
    emb = encode_corpus(sentences, session_tiny_model, cache_dir=cache_dir, show_progress_bar=False)
    sample = sample_negatives(
        sentences,
        emb,
        pool_size=16,
        negative_range=RANGE,
        lambda_n=lambda_n,
        temperature=tau,
        similarity_temperature=tau_s,
        seed=5,
        show_progress_bar=False,
    )
    want = _oracle_negatives(
        sentences,
        emb,
        pool_size=16,
        low=RANGE[0],
        high=RANGE[1],
        lambda_n=lambda_n,
        tau=tau,
        tau_s=tau_s,
        seed=5,
    )
    assert len(want) > 100
    for row, anchor_id in enumerate(sample.anchor_ids):
        if int(anchor_id) not in want:
            assert (sample.chosen[row] < 0).any()
            continue
        ids, probs = want[int(anchor_id)]
        assert sample.chosen[row].tolist() == ids, anchor_id
        np.testing.assert_allclose(sample.probability[row], probs, rtol=1e-5)


def test_negatives_do_not_depend_on_chunking_or_query_slices(session_tiny_model, cache_dir, wiki):
    """Edit distances, noise and draws are per anchor: chunks of any size give the same arrays as one pass,
    and anchor slices of the corpus (what sharding runs) the same draws (the guide cosines of a slice may
    differ in the last float32 bit, as the neighbour search multiplies other block shapes)."""
    sentences = wiki[:150]
    emb = encode_corpus(sentences, session_tiny_model, cache_dir=cache_dir, show_progress_bar=False)
    kwargs = dict(pool_size=16, negative_range=RANGE, seed=5, show_progress_bar=False)
    whole = sample_negatives(sentences, emb, **kwargs)
    fields = ("anchor_ids", "chosen", "cosine", "probability", "pool_sizes")
    for chunk_size in (1, 7):
        chunked = sample_negatives(sentences, emb, chunk_size=chunk_size, **kwargs)
        for name in fields:
            assert getattr(chunked, name).tobytes() == getattr(whole, name).tobytes(), (chunk_size, name)
    ranges = ((0, 40), (40, 41), (41, 150))
    slices = [sample_negatives(sentences, emb, query_range=r, **kwargs) for r in ranges]
    for name in fields:
        joined = np.concatenate([getattr(part, name) for part in slices])
        if name in ("cosine", "probability"):
            np.testing.assert_allclose(joined, getattr(whole, name), rtol=1e-5)
        else:
            np.testing.assert_array_equal(joined, getattr(whole, name))


def test_hand_computed_pool_of_three():
    """Eq. 1–4 by hand on a 4-sentence corpus whose guide cosines are set directly: anchor 0's pool in
    [0.25, 0.75] is sentences 1 and 2 (sentence 3 at cosine 0.9 is too close). Edits: "a b c d" → "a b c e"
    1/4, → "w x y z" 4/4. With λ_n = 0.8, T = T_s = 1:
    S_sur = 1 − softmax(0.25, 1) = (0.6792, 0.3208); S_sem = softmax(0.7, 0.3) = (0.5987, 0.4013);
    P̃ = 0.2·S_sur + 0.8·(1 − S_sem) = (0.4569, 0.5431); P = softmax(P̃) = (0.4785, 0.5215)."""
    angle = np.arccos([0.7, 0.3, 0.9])
    emb = np.zeros((4, 4))
    emb[0, 0] = 1.0
    for j, a in enumerate(angle, start=1):
        emb[j, 0], emb[j, j] = np.cos(a), np.sin(a)
    sentences = ["a b c d", "a b c e", "w x y z", "a b x y"]
    sample = sample_negatives(
        sentences,
        emb.astype(np.float32),
        num_negatives=2,
        pool_size=3,
        negative_range=(0.25, 0.75),
        seed=0,
        show_progress_bar=False,
    )
    assert sorted(sample.chosen[0].tolist()) == [1, 2]
    got = dict(zip(sample.chosen[0].tolist(), sample.probability[0].tolist()))
    assert got[1] == pytest.approx(0.4785, abs=1e-4)
    assert got[2] == pytest.approx(0.5215, abs=1e-4)
    assert sample.pool_sizes[0] == 2


class _Rewrites(CandidateGenerator):
    """Three fixed rewrites per sentence (written here, so the positive pool is known to the test)."""

    name = "rewrites"

    def generate(self, sentences, *, seed=0):
        out = []
        for sentence in sentences:
            tokens = sentence.split()
            texts = [" ".join(tokens[1:]), " ".join(tokens[:-1]), " ".join(tokens[1:-1])]
            out.append(
                [
                    Candidate(t, self.name)
                    for t in dict.fromkeys(texts)
                    if reference_words(t) and t != sentence
                ]
            )
        return out


@pytest.mark.parametrize(("lambda_p", "tau"), [(0.8, 1.0), (0.1, 0.02)])
def test_positives_follow_eq_5_and_6(session_tiny_model, cache_dir, wiki, lambda_p, tau):
    """Each row's positive is the oracle's draw from its anchor's pool and its P_pos (read through ``weight``)
    equals eq. 5–6 on guide cosines encoded here (a swapped λ_p or eq. 5 written as eq. 3 fails)."""
    sentences = wiki[:60]
    builder = _builder(
        session_tiny_model,
        cache_dir,
        positive_generators=[_Rewrites()],
        lambda_p=lambda_p,
        temperature=tau,
        weight=lambda row: row["positive_probability"],
    )
    dataset = builder.build(sentences)
    assert len(dataset) > 40
    pools = dict(zip(sentences, (c for c in _Rewrites().generate(sentences))))
    for row in dataset:
        anchor = row["anchor"]
        pool = [c.text for c in pools[anchor]]
        emb = session_tiny_model.encode([anchor, *pool], normalize_embeddings=True, convert_to_numpy=True)
        cosines = (emb[1:].astype(np.float64) @ emb[0].astype(np.float64)).tolist()
        probs = propensity_reference(
            [word_edit_reference(anchor, t) for t in pool], cosines, lambda_p, "positive", tau
        )
        [pick] = successive_sample_reference(probs, 1, _gumbel(3, 2, sentences.index(anchor), len(pool)))
        assert row["positive"] == pool[pick]
        assert row["label"] == pytest.approx(probs[pick], rel=1e-4)


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


@pytest.mark.parametrize("keep", [0, 100, -64], ids=["empty", "header-only", "cut-short"])
def test_a_cut_short_embedding_cache_entry_is_named_and_rebuilt(keep, session_tiny_model, tmp_path, wiki, caplog):
    """Failure: a .npy cut short by a kill or full disk failed every later run with an error blaming the corpus."""
    first = encode_corpus(wiki[:40], session_tiny_model, cache_dir=tmp_path, show_progress_bar=False)
    (entry,) = tmp_path.rglob("*.npy")
    entry.write_bytes(entry.read_bytes()[:keep])
    with caplog.at_level(logging.WARNING):
        again = encode_corpus(wiki[:40], session_tiny_model, cache_dir=tmp_path, show_progress_bar=False)
    assert f"Embedding cache entry {entry} is unreadable" in caplog.text and "rebuilding it" in caplog.text
    np.testing.assert_array_equal(first, again)
    np.testing.assert_array_equal(np.load(entry), first)


def test_missing_positive_fallback(session_tiny_model, cache_dir, wiki):
    class Nothing(WordDeletion):
        name = "nothing"

        def edit(self, tokens, rng):
            return None

    skip = _builder(session_tiny_model, cache_dir, positive_generators=[Nothing()])
    assert len(skip.build(wiki[:40])) == 0
    assert skip.report.skipped["no_positive_candidates"] > 0
    fallback = _builder(
        session_tiny_model, cache_dir, positive_generators=[Nothing()], on_missing_positive="anchor"
    )
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
