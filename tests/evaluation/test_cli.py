"""``st-debias eval``: results.json with one entry per model, report, saved model folders, clear errors."""

from __future__ import annotations

import json

import pytest

from st_debias.cli import main
from st_debias.evaluation import evaluate_model
from st_debias.evaluation.bias_data import NEGATION_MEANING_LINES
from st_debias.evaluation.sts_data import STS_TASKS
from tests.evaluation.conftest import MINI_CORPUS_LINES, MINI_NEGATION_MEANING_LINES


def test_eval_two_models_side_by_side(tiny_st_dir, mini_data, tmp_path, capsys):
    """A folder saved by training evaluates like any model; results.json holds one entry per model."""
    out = tmp_path / "eval"
    code = main(
        ["eval", str(tiny_st_dir), str(tiny_st_dir), "--tasks", "sts,bias", "--output", str(out),
         "--data-dir", str(mini_data), "--negation-pairs", "20", "--no-progress"]
    )  # fmt: skip
    assert code == 0
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert len(results) == 2
    entry = results[0]
    assert set(entry["sts"]) == {*STS_TASKS, "avg"}
    assert entry["bias"]["negation"]["pairs"] == 20
    assert entry["bias"]["cont_oppn"]["STSBenchmark"]["eligible"] is True
    assert entry["sources"]["sts"]["SICK-R"]["pairs"] == 60
    assert entry["sources"]["negation"]["files"] == {"glue_diagnostic.tsv": 12, "nan_nli.tsv": 8}
    word_order = entry["bias"]["word_order"]
    assert word_order["pairs"] + word_order["skipped_short"] + word_order["skipped_unchanged"] == 1000
    assert 0.0 <= word_order["share_above"] <= 1.0 and word_order["threshold"] == 0.9
    last = NEGATION_MEANING_LINES[0] + MINI_NEGATION_MEANING_LINES + MINI_CORPUS_LINES
    assert entry["sources"]["word_order"]["lines"] == [last - 999, last] and entry["sources"]["word_order"]["seed"] == 0
    meaning = entry["bias"]["negation_meaning"]
    assert meaning["items"] == entry["sources"]["negation_meaning"]["items"] >= 5
    assert 0.0 <= meaning["paraphrase_over_negated_antonym"] <= 1.0 and -2.0 < meaning["polarity_cluster"] < 2.0
    removed = meaning["without_negation_direction"]
    assert 0.0 <= removed["paraphrase_over_affirmative"] <= 1.0 and removed["direction_length"] > 0.0
    assert (out / "negation_meaning.png").exists()
    sides = entry["bias"]["cont_oppn"]["STSBenchmark"]["oppn_sides"]
    assert set(sides) == {"high_overlap_low_score", "low_overlap_high_score", "on_median"}
    assert results[0]["sts"] == results[1]["sts"]
    assert (out / "report.md").exists() and (out / "sts_scores.png").exists()
    assert (out / "word_order_cosine_hist.png").exists()
    printed = capsys.readouterr().out
    assert "| metric |" in printed and "| word order mean cosine ↓ |" in printed
    assert "Oppn: high overlap, low score" in printed
    assert "| negation meaning (i) without the negations' common direction ↑ |" in printed


def test_unique_sentences_encoded_once_across_tasks(tiny_model, mini_data):
    entry = evaluate_model(tiny_model, data_dir=mini_data, show_progress_bar=False, negation_pairs=10)
    assert (
        entry["encoded_sentences"]
        < sum(2 * info["pairs"] for info in entry["sources"]["sts"].values())
        + 2 * entry["sources"]["negation"]["pairs"]
        + 2 * entry["sources"]["word_order"]["pairs"]
        + 4 * entry["sources"]["negation_meaning"]["items"]
    )
    assert entry["fingerprint"] and "timing_s" in entry


@pytest.mark.filterwarnings("ignore:.*get_sentence_embedding_dimension.*:FutureWarning")
@pytest.mark.filterwarnings("ignore:The fill_missing parameter:DeprecationWarning")
def test_evaluate_model_mteb_block(tiny_model, mini_data):
    entry = evaluate_model(tiny_model, tasks="sts,mteb", data_dir=mini_data, show_progress_bar=False)
    assert "bias" not in entry
    for task in STS_TASKS:
        assert entry["mteb"][task] == pytest.approx(entry["sts"][task], abs=1e-3)
    assert (
        entry["sources"]["mteb"]["sources"]["SICK-R"]["pairs"]
        == entry["sources"]["sts"]["SICK-R"]["pairs"]
        == 60
    )


def test_missing_data_exit_code_and_message(tiny_st_dir, tmp_path, capsys):
    code = main(
        [
            "eval",
            str(tiny_st_dir),
            "--output",
            str(tmp_path / "o"),
            "--data-dir",
            str(tmp_path / "nowhere"),
        ]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert str((tmp_path / "nowhere").resolve()) in err and "ST_DEBIAS_DATA" in err


def test_unknown_task_group(tiny_st_dir, tmp_path, capsys):
    assert main(["eval", str(tiny_st_dir), "--tasks", "sts,glue", "--output", str(tmp_path)]) == 2
    assert "glue" in capsys.readouterr().err
    with pytest.raises(ValueError, match="Unknown evaluation task group"):
        evaluate_model("unused", tasks=("sts", "glue"))


def test_training_pair_file_through_cli(tiny_st_dir, mini_data, tmp_path):
    """DebCSE-style pair statistics from a file, with the evaluated model as the guide."""
    pairs = tmp_path / "pairs.jsonl"
    rows = [
        {"anchor": "the cat sat", "positive": "the cat sat", "negative": "a dog ran"},
        {"anchor": "birds fly south", "positive": "birds fly", "negative": "fish swim"},
    ]
    pairs.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "eval"
    code = main(
        ["eval", str(tiny_st_dir), "--tasks", "bias", "--output", str(out), "--data-dir", str(mini_data),
         "--negation-pairs", "5", "--pairs", str(pairs), "--no-progress"]
    )  # fmt: skip
    assert code == 0
    entry = json.loads((out / "results.json").read_text(encoding="utf-8"))[0]
    stats = entry["bias"]["training_pairs"]
    assert stats["lexical_overlap"]["positive"] == pytest.approx((1 + 2 / 3) / 2)
    assert stats["guide_cosine"]["positive"] > stats["guide_cosine"]["negative"]
    assert "sts" not in entry
    assert entry["sources"]["training_pairs"]["source"] == str(pairs)
    assert "pair lexical overlap, positive" in (out / "report.md").read_text(encoding="utf-8")


@pytest.mark.filterwarnings("ignore:.*get_sentence_embedding_dimension.*:FutureWarning")
@pytest.mark.filterwarnings("ignore:The fill_missing parameter:DeprecationWarning")
def test_cli_mteb_prints_one_row_per_task(tiny_st_dir, mini_data, tmp_path, capsys):
    """Issue 12: `--tasks mteb` printed only the MTEB average."""
    out = tmp_path / "eval"
    code = main(
        ["eval", str(tiny_st_dir), "--tasks", "mteb", "--output", str(out), "--data-dir", str(mini_data),
         "--mteb-tasks", "STS16,STSBenchmark-Oppn,CANNOTNegationPC", "--no-progress"]
    )  # fmt: skip
    assert code == 0
    printed = capsys.readouterr().out
    for task in ("STS16", "STSBenchmark-Oppn"):
        assert f"| MTEB {task} |" in printed
    entry = json.loads((out / "results.json").read_text(encoding="utf-8"))[0]
    chance = entry["sources"]["mteb"]["chance"]["CANNOTNegationPC"]
    assert f"| MTEB CANNOTNegationPC (chance {chance:.1f}) |" in printed
    # A Spearman is never averaged with an average precision.
    assert "| MTEB avg cosine_spearman of 2 tasks |" in printed and "| MTEB avg cosine_ap of 1 task |" in printed
    assert list(entry["mteb"]) == [
        "STS16", "STSBenchmark-Oppn", "CANNOTNegationPC", "avg cosine_spearman", "avg cosine_ap"
    ]  # fmt: skip


def test_cli_unknown_local_mteb_task_names_task_and_folder(tiny_st_dir, mini_data, tmp_path, capsys):
    code = main(
        ["eval", str(tiny_st_dir), "--tasks", "mteb", "--output", str(tmp_path / "o"), "--data-dir",
         str(mini_data), "--mteb-tasks", "STS17", "--mteb-data", "local"]
    )  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err
    assert "'STS17' has no local copy" in err and str(mini_data) in err


def test_eval_refuses_a_model_with_nan_embeddings(tiny_bert_dir, mini_data, tmp_path, capsys):
    """Failure: a model with a NaN weight (a diverged run) was evaluated, exit 0, with average `nan`."""
    import torch

    from tests.conftest import load_tiny_model

    model = load_tiny_model(tiny_bert_dir)
    with torch.no_grad():
        next(model.parameters()).fill_(float("nan"))  # every word embedding, as after a diverged step
    model.save(str(tmp_path / "nan-model"))
    out = tmp_path / "eval"
    code = main(["eval", str(tmp_path / "nan-model"), "--tasks", "sts", "--output", str(out),
                 "--data-dir", str(mini_data), "--no-progress"])  # fmt: skip
    assert code == 2
    assert "gives non-finite (NaN or infinite) embeddings for" in capsys.readouterr().err
    assert not (out / "results.json").exists()


def test_results_json_is_strict_json(tmp_path):
    """Failure: a NaN score was written as a bare `NaN`, which strict JSON readers reject."""
    from st_debias.evaluation import write_results

    def refuse(constant: str):
        raise ValueError(f"not JSON: {constant}")

    path = write_results([{"model": "m", "sts": {"STS12": float("nan"), "avg": 71.5}, "x": [float("-inf")]}], tmp_path)
    (entry,) = json.loads(path.read_text(encoding="utf-8"), parse_constant=refuse)
    assert entry["sts"] == {"STS12": None, "avg": 71.5} and entry["x"] == [None]
    assert entry["non_finite"] == {"sts.STS12": "nan", "x[0]": "-inf"}


def test_ctrl_c_outside_training_prints_one_line(tiny_st_dir, tmp_path, capsys, monkeypatch):
    """Failure: Ctrl-C while evaluating (outside the training loop) printed a KeyboardInterrupt traceback."""
    import st_debias.evaluation.evaluate as evaluate_module

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(evaluate_module, "evaluate_model", interrupted)
    try:
        code = main(["eval", str(tiny_st_dir), "--tasks", "sts", "--output", str(tmp_path / "eval"), "--no-progress"])
    except KeyboardInterrupt:
        pytest.fail("KeyboardInterrupt escaped the command: the user sees a traceback")
    assert code == 130
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1] == "st-debias eval: interrupted by SIGINT (Ctrl-C); stopped."


def test_eval_default_reuses_the_packaged_evaluation(tmp_path, capsys):
    """``st-debias eval default`` re-encoded 35,319 sentences (387 s on a shared machine) although the evaluation
    shipped with the package fits, which ``train`` reuses. It is reused, the run says so, and the figures are the
    packaged ones."""
    from pathlib import Path

    packaged = Path(__file__).resolve().parents[2] / "st_debias" / "evaluation" / "packaged" / "all-MiniLM-L6-v2.json"
    expected = json.loads(packaged.read_text(encoding="utf-8"))["result"]
    code = main(["eval", "default", "--tasks", "sts,bias", "--output", str(tmp_path / "out"),
                 "--cache-dir", str(tmp_path / "cache"), "--no-progress"])  # fmt: skip
    assert code == 0
    entry = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    entry = entry[0] if isinstance(entry, list) else entry["results"][0]
    assert entry["reused_from"]["kind"] == "packaged"
    assert entry["sts"] == expected["sts"]
    assert "scores reused from the evaluation shipped with st_debias" in (tmp_path / "out" / "report.md").read_text(encoding="utf-8")


def test_eval_into_a_folder_in_use_is_refused(tiny_st_dir, mini_data, tmp_path, capsys):
    """Failure: two evals into one folder both exited 0, leaving results.json and report.md of different models."""
    from st_debias.files import hold_output_folder

    out = tmp_path / "eval"
    with hold_output_folder(out, "eval"):  # another eval writes into it meanwhile (the lock is per open file)
        code = main(["eval", str(tiny_st_dir), "--tasks", "sts", "--output", str(out), "--data-dir", str(mini_data),
                     "--no-progress"])  # fmt: skip
    assert code == 2
    assert f"{out} is in use by another st-debias eval (pid " in capsys.readouterr().err
    assert not (out / "results.json").exists()


def test_a_new_eval_replaces_every_file_of_the_earlier_one(tiny_st_dir, tiny_bert_dir, mini_data, tmp_path, capsys):
    """Failure: a later eval with fewer tasks left the earlier eval's plots beside its report, and a later eval that
    failed left the earlier results.json and report.md as if they were its own."""
    out = tmp_path / "eval"
    base = ["--output", str(out), "--data-dir", str(mini_data), "--negation-pairs", "10", "--no-progress"]
    assert main(["eval", str(tiny_st_dir), "--tasks", "sts,bias", *base]) == 0
    assert (out / "word_order_cosine_hist.png").exists()
    assert main(["eval", str(tiny_st_dir), "--tasks", "sts", *base]) == 0
    assert sorted(path.name for path in out.glob("*.png")) == ["sts_scores.png"]
    assert main(["eval", str(tmp_path / "no-such-model"), "--tasks", "sts", *base]) == 2
    assert sorted(path.name for path in out.iterdir() if not path.name.startswith(".")) == []


@pytest.mark.parametrize("failing", ["png", "results"])
def test_a_full_disk_while_eval_writes_is_exit_2_naming_the_file(tiny_st_dir, mini_data, tmp_path, monkeypatch, capsys, failing):
    """Failure: a full disk while eval wrote a plot or results.json crashed with a traceback naming no file."""
    import errno

    from matplotlib.figure import Figure

    from st_debias import files

    def disk_full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    if failing == "png":
        monkeypatch.setattr(Figure, "savefig", disk_full)
        named = "sts_scores.png"
    else:
        monkeypatch.setattr(files.os, "fsync", disk_full)
        named = "results.json"
    out = tmp_path / "eval"
    code = main(["eval", str(tiny_st_dir), "--tasks", "sts", "--output", str(out), "--data-dir", str(mini_data),
                 "--no-progress"])  # fmt: skip
    assert code == 2
    assert f"st-debias eval: [Errno 28] No space left on device writing {out / named}" in capsys.readouterr().err
    assert [path.name for path in out.glob("*") if ".tmp" in path.name] == []  # out itself may be gone
