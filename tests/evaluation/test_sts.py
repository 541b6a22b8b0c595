"""STS suite: the fast unique-sentence path equals sentence-transformers' evaluator; the dev evaluator."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import spearmanr

from st_debias.evaluation import STSSuite, spearman_x100, sts_dev_evaluator
from st_debias.evaluation.embeddings import EmbeddingCache
from st_debias.evaluation.sts_data import STS_TASKS, load_sts


def test_spearman_x100_matches_scipy():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=50), rng.normal(size=50)
    assert spearman_x100(x, y) == pytest.approx(100 * spearmanr(x, y)[0], abs=1e-12)
    assert spearman_x100([1, 2, 3], [10, 20, 30]) == pytest.approx(100.0)
    with pytest.raises(ValueError, match="equal-length"):
        spearman_x100([1.0], [1.0])


def test_fast_path_equals_embedding_similarity_evaluator(tiny_model, mini_data):
    """The cached cosine path must give EmbeddingSimilarityEvaluator's spearman on the same pairs."""
    evaluator = sts_dev_evaluator(mini_data)
    reference = evaluator(tiny_model)["sts-dev_spearman_cosine"] * 100
    data = load_sts("STSBenchmark-dev", mini_data)
    cache = EmbeddingCache(tiny_model)
    ours = spearman_x100(cache.cosine(data.sentences1, data.sentences2), data.scores)
    assert ours == pytest.approx(reference, abs=1e-4)
    assert abs(ours) > 1e-3, "degenerate: a random model should still give a non-zero correlation"


def test_dev_evaluator_is_named_for_checkpoint_selection(tiny_model, mini_data):
    """The trainer prefixes 'eval_': recipes select checkpoints on eval_sts-dev_spearman_cosine."""
    evaluator = sts_dev_evaluator(mini_data)
    assert evaluator.name == "sts-dev"
    metrics = evaluator(tiny_model)
    assert evaluator.primary_metric == "sts-dev_spearman_cosine"
    assert "sts-dev_spearman_cosine" in metrics
    assert len(evaluator.scores) == len(load_sts("STSBenchmark-dev", mini_data))


def test_suite_scores_every_task_and_averages(tiny_model, mini_data):
    suite = STSSuite(data_dir=mini_data)
    scores = suite.evaluate(EmbeddingCache(tiny_model))
    assert list(scores) == [*STS_TASKS, "avg"]
    assert scores["avg"] == pytest.approx(np.mean([scores[t] for t in STS_TASKS]))
    assert len({round(scores[t], 6) for t in STS_TASKS}) == len(STS_TASKS), "tasks must not share one number"
    assert set(suite.sources()) == set(STS_TASKS)


def test_suite_uses_all_pairs_not_subset_mean(fake_encoder_cls, tmp_path):
    """SimCSE 'all' setting: one correlation over all pairs, not the mean of per-subset correlations."""
    import json

    (tmp_path / "sts").mkdir()
    rows = []
    # within each subset cosine falls as the score rises (Spearman -100); subset B is shifted by 1 rad
    table = {}
    for i in range(4):
        for subset, offset in (("A", 0.0), ("B", 1.0)):
            s1, s2 = f"{subset}{i}x", f"{subset}{i}y"
            angle = 0.2 * i + offset
            table[s1] = [1.0, 0.0]
            table[s2] = [np.cos(angle), np.sin(angle)]
            rows.append({"sentence1": s1, "sentence2": s2, "score": float(i), "subset": subset})
    (tmp_path / "sts" / "sts12.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8"
    )
    scores = STSSuite(["STS12"], tmp_path).evaluate(EmbeddingCache(fake_encoder_cls(table, dim=2)))
    gold = [r["score"] for r in rows]
    cos = [np.cos(0.2 * i + off) for i in range(4) for off in (0.0, 1.0)]
    assert scores["STS12"] == pytest.approx(100 * spearmanr(cos, gold)[0])
    # the mean of the per-subset correlations would be -100 here; the all-pairs correlation is not
    assert scores["STS12"] > -99.0


def test_suite_needs_tasks():
    with pytest.raises(ValueError, match="at least one task"):
        STSSuite([])


def test_subset_scores_tell_calibration_from_ranking(fake_encoder_cls, tmp_path):
    """Each subset ranks its pairs exactly backwards (-100) while the pooled score does not say so."""
    import json

    (tmp_path / "sts").mkdir()
    rows, table = [], {}
    for i in range(4):
        for subset, offset in (("A", 0.0), ("B", 1.0)):
            s1, s2 = f"{subset}{i}x", f"{subset}{i}y"
            table[s1] = [1.0, 0.0]
            table[s2] = [np.cos(0.2 * i + offset), np.sin(0.2 * i + offset)]
            rows.append({"sentence1": s1, "sentence2": s2, "score": float(i), "subset": subset})
    rows.append({"sentence1": "A0x", "sentence2": "A1y", "score": 2.0, "subset": "C"})
    (tmp_path / "sts" / "sts12.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    suite = STSSuite(["STS12"], tmp_path)
    cache = EmbeddingCache(fake_encoder_cls(table, dim=2))
    subsets = suite.subset_scores(cache)["STS12"]
    assert list(subsets) == ["A", "B", "C"]
    assert subsets["A"]["spearman"] == pytest.approx(-100.0) and subsets["B"]["spearman"] == pytest.approx(-100.0)
    assert suite.evaluate(cache)["STS12"] > -99.0
    assert subsets["B"]["mean_cosine"] == pytest.approx(np.mean([np.cos(0.2 * i + 1.0) for i in range(4)]))
    assert subsets["C"] == {"spearman": None, "pairs": 1, "mean_cosine": pytest.approx(np.cos(0.2))}


def test_subset_scores_on_the_real_stsb_dev_genres(tiny_model, shared_data):
    """STS-B dev's three genres, each scored on its own pairs; SICK-R has no subsets and is left out."""
    suite = STSSuite(["STSBenchmark-dev", "SICK-R"], shared_data)
    data = suite.data["STSBenchmark-dev"]
    cache = EmbeddingCache(tiny_model)
    subsets = suite.subset_scores(cache)
    assert list(subsets) == ["STSBenchmark-dev"]
    genres = subsets["STSBenchmark-dev"]
    assert set(genres) == {"main-captions", "main-forums", "main-news"}
    assert sum(block["pairs"] for block in genres.values()) == len(data) == 1500
    cosines = cache.cosine(data.sentences1, data.sentences2)
    chosen = np.asarray(data.subsets) == "main-forums"
    expected = spearman_x100(cosines[chosen], np.asarray(data.scores)[chosen])
    assert genres["main-forums"]["spearman"] == pytest.approx(expected)
    assert genres["main-forums"]["mean_cosine"] == pytest.approx(float(cosines[chosen].mean()))
    assert len({round(block["spearman"], 6) for block in genres.values()}) == 3
