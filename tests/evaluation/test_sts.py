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


def _two_subset_set(tmp_path, shift: float):
    """An STS12 file of two subsets, each ranked exactly right by the fake encoder; subset B's cosines all lowered
    by ``shift`` radians. Returns the suite and its cache."""
    import json

    (tmp_path / "sts").mkdir(exist_ok=True)
    rows, table = [], {}
    for i in range(4):
        for subset, offset in (("A", 0.0), ("B", shift)):
            s1, s2 = f"{subset}{i}x", f"{subset}{i}y"
            angle = 0.2 * (3 - i) + offset  # a higher score, a smaller angle
            table[s1] = [1.0, 0.0]
            table[s2] = [np.cos(angle), np.sin(angle)]
            rows.append({"sentence1": s1, "sentence2": s2, "score": float(i), "subset": subset})
    table["C0x"], table["C0y"], table["C1y"] = [1.0, 0.0], [0.0, 1.0], [0.0, 1.0]
    rows += [
        {"sentence1": "C0x", "sentence2": "C0y", "score": 1.0, "subset": "C"},
        {"sentence1": "C0x", "sentence2": "C1y", "score": 4.0, "subset": "C"},
    ]
    (tmp_path / "sts" / "sts12.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return STSSuite(["STS12"], tmp_path), table


def test_subset_scores_tell_calibration_from_ranking(fake_encoder_cls, tmp_path):
    """Each subset keeps a perfect ranking while one subset's cosines shift: the pooled score falls, the subset
    scores stay at 100, and the mean cosines show the shift. Equal cosines give no Spearman (None), not NaN."""
    suite, table = _two_subset_set(tmp_path, shift=1.0)
    cache = EmbeddingCache(fake_encoder_cls(table, dim=2))
    subsets = suite.subset_scores(cache)["STS12"]
    assert list(subsets) == ["A", "B", "C"]
    assert subsets["A"]["spearman"] == pytest.approx(100.0) and subsets["B"]["spearman"] == pytest.approx(100.0)
    assert suite.evaluate(cache)["STS12"] < 90.0
    shifted = np.mean([np.cos(0.2 * (3 - i) + 1.0) for i in range(4)])
    assert subsets["B"]["mean_cosine"] == pytest.approx(shifted)
    assert subsets["A"]["mean_cosine"] - subsets["B"]["mean_cosine"] > 0.3
    assert subsets["C"] == {"spearman": None, "pairs": 2, "mean_cosine": pytest.approx(0.0, abs=1e-12)}


def test_evaluate_model_stores_the_subsets_and_a_quick_entry_keeps_its_sets_only(
    tiny_model, mini_data, shared_data, tmp_path
):
    """Real STS12 rows of two SemEval subsets, through evaluate_model; restricting the entry keeps what scoring
    only those sets gives (no empty block)."""
    import json
    import shutil

    from st_debias.evaluation import evaluate_model
    from st_debias.evaluation.reuse import restrict_entry

    folder = tmp_path / "data"
    shutil.copytree(mini_data, folder)
    records = [json.loads(line) for line in (shared_data / "sts" / "sts12.jsonl").read_text(encoding="utf-8").splitlines()]
    kept = [r for r in records if r["subset"] == "MSRpar"][:30] + [r for r in records if r["subset"] == "MSRvid"][:30]
    (folder / "sts" / "sts12.jsonl").write_text("".join(json.dumps(r) + "\n" for r in kept), encoding="utf-8")
    entry = evaluate_model(tiny_model, "sts", folder, show_progress_bar=False)
    subsets = entry["sts_subsets"]
    assert set(subsets) == {"STS12"} and list(subsets["STS12"]) == ["MSRpar", "MSRvid"]
    alone = STSSuite(["STS12"], folder).subset_scores(EmbeddingCache(tiny_model))["STS12"]
    for subset, block in alone.items():  # other sentences in the batch: float32 padding noise, no more
        assert subsets["STS12"][subset] == pytest.approx(block, rel=1e-6, abs=1e-9)
    assert restrict_entry(entry, ["STS12", "SICK-R"])["sts_subsets"] == subsets
    assert "sts_subsets" not in restrict_entry(entry, ["SICK-R"])


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
