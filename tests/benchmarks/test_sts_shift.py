"""The STS shift diagnosis (benchmarks/teacher_dip/sts_shift.py): its per-pair terms add up to Spearman, its
quadrants partition STS-B dev as the library's Cont/Oppn split does, and its command refuses bad arguments first."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.stats import spearmanr

from benchmarks.teacher_dip.sts_shift import QUADRANTS, main, quadrants, shift, spearman_terms, table


def test_the_terms_sum_to_spearman_with_ties() -> None:
    rng = np.random.default_rng(0)
    gold = rng.integers(0, 6, size=200).astype(np.float64)  # many ties, as STS gold scores have
    cosines = np.round(gold / 5 + rng.normal(0, 0.3, size=200), 2)  # ties in the cosines too
    terms = spearman_terms(cosines, gold)
    assert terms.shape == (200,)
    assert terms.sum() == pytest.approx(spearmanr(cosines, gold)[0], rel=1e-12)


def test_a_shift_splits_the_change_over_the_quadrants() -> None:
    rng = np.random.default_rng(1)
    gold = rng.uniform(0, 5, size=300)
    before = gold / 5 + rng.normal(0, 0.2, size=300)
    after = before.copy()
    groups = {QUADRANTS[0]: np.arange(0, 100), QUADRANTS[1]: np.arange(100, 300)}
    assert all(q["share"] == 0 for q in shift(before, after, gold, groups)["quadrants"].values())
    after[:100] = gold[:100] / 5  # the first group's cosines now follow the gold scores exactly
    result = shift(before, after, gold, groups)
    change = result["after"] - result["before"]
    assert change == pytest.approx(100 * (spearmanr(after, gold)[0] - spearmanr(before, gold)[0]), rel=1e-9)
    assert change > 0
    assert sum(q["share"] for q in result["quadrants"].values()) == pytest.approx(change, rel=1e-9)
    assert result["quadrants"][QUADRANTS[0]]["share"] > 0
    assert result["quadrants"][QUADRANTS[1]]["mean_cosine_change"] == 0.0
    assert result["quadrants"][QUADRANTS[1]]["share"] != 0, "unmoved pairs change share as others move past them"
    assert result["quadrants"][QUADRANTS[0]]["pairs"] == 100


def test_the_table_marks_an_empty_quadrant() -> None:
    gold = np.linspace(0, 5, 20)
    result = shift(gold / 5, gold[::-1] / 5, gold, {q: np.arange(0, 20) if q == QUADRANTS[0] else np.arange(0)
                                                    for q in QUADRANTS})
    line = table({"a → b": result})[-1]
    assert line.startswith("| a → b | 100.00 → -100.00 | -200.000 |") and "(–)" in line


def test_quadrants_partition_real_sts_b_dev_as_the_librarys_split(shared_data) -> None:
    from st_debias.evaluation.bias import cont_oppn_split
    from st_debias.evaluation.sts_data import load_sts

    data = load_sts("STSBenchmark-dev", shared_data)
    groups = quadrants(data.sentences1, data.sentences2, data.scores)
    assert list(groups) == list(QUADRANTS)
    every = np.concatenate(list(groups.values()))
    assert sorted(every.tolist()) == list(range(len(data.scores))), "each pair in exactly one quadrant"
    split = cont_oppn_split(data.sentences1, data.sentences2, data.scores)
    assert set(groups[QUADRANTS[0]]) | set(groups[QUADRANTS[1]]) == set(split.cont.tolist())
    assert groups[QUADRANTS[2]].tolist() == split.high_overlap_low_score.tolist()
    assert groups[QUADRANTS[3]].tolist() == split.low_overlap_high_score.tolist()
    gold = np.asarray(data.scores)
    assert (gold[groups[QUADRANTS[0]]] > split.median_score).all()
    assert min(len(g) for g in list(groups.values())[:4]) > 100


@pytest.mark.parametrize(("argv", "message"), [
    (["a=outputs/nowhere", "b=outputs/nowhere2"], "no model folder"),
    (["a", "b=sentence-transformers/x"], "label=folder"),
    (["a=sentence-transformers/x", "a=sentence-transformers/y"], "repeated: a"),
    (["a=sentence-transformers/x"], "at least two"),
    (["a=sentence-transformers/x", "b=sentence-transformers/y", "--shift", "a:c"], "--shift a:c"),
    (["a=sentence-transformers/x", "b=sentence-transformers/y", "--max-seq-length", "0"], "--max-seq-length"),
])
def test_bad_arguments_exit_2_before_any_work(argv, message, tmp_path, capsys) -> None:
    out = tmp_path / "shift.md"
    with pytest.raises(SystemExit) as exit_info:
        main([*argv, "--out", str(out)])
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err
    assert not list(tmp_path.iterdir()), "nothing written"


def test_missing_out_folder_exits_2(tmp_path, capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["a=sentence-transformers/x", "b=sentence-transformers/y", "--out", str(tmp_path / "no" / "x.md")])
    assert exit_info.value.code == 2 and "no folder" in capsys.readouterr().err


def test_end_to_end_on_two_tiny_models(tiny_st_dir, tiny_bert_dir, shared_data, tmp_path) -> None:
    out = tmp_path / "shift.md"
    assert main([f"one={tiny_st_dir}", f"two={tiny_bert_dir}", f"again={tiny_st_dir}", "--out", str(out)]) == 0
    result = json.loads(out.with_suffix(".json").read_text())
    shifts = result["shifts"]
    assert list(shifts) == ["one → two", "two → again"]
    there, back = shifts.values()
    assert there["before"] == pytest.approx(back["after"], abs=1e-9), "the same model scores the same"
    for one in shifts.values():
        assert sum(q["share"] for q in one["quadrants"].values()) == pytest.approx(one["after"] - one["before"], abs=1e-9)
    assert result["max_seq_length"] == 32 and "commit" in result["provenance"]
    assert out.with_suffix(".png").stat().st_size > 0
    assert "| one → two |" in out.read_text()
