"""Evaluation reuse: a stored entry is used only for the same weights, inference settings, data and settings."""

from __future__ import annotations

import copy
import json
import logging
import shutil
from pathlib import Path

import pytest
import torch

import st_debias.evaluation.evaluate as evaluate_module
from st_debias.evaluation.evaluate import evaluate_model
from st_debias.evaluation.reuse import (
    DATA_PLACEHOLDER,
    EvaluationKey,
    evaluate_or_reuse,
    evaluation_key,
    packaged_dir,
    stored_entry,
)
from st_debias.files import atomic_write_json
from tests.evaluation.conftest import leaves

TASKS = ("sts", "bias")


@pytest.fixture
def counted(monkeypatch):
    """Counts the real ``evaluate_model`` calls made through ``evaluate_or_reuse``."""
    calls: list[str] = []

    def spy(model, *args, **kwargs):
        calls.append(kwargs.get("label"))
        return evaluate_model(model, *args, **kwargs)

    monkeypatch.setattr(evaluate_module, "evaluate_model", spy)
    return calls


@pytest.fixture
def packaged(tmp_path: Path, tiny_model, mini_data: Path) -> tuple[Path, dict]:
    """A packaged-evaluations folder holding the tiny model's evaluation on ``mini_data``."""
    folder = tmp_path / "packaged"
    result = evaluate_model(tiny_model, TASKS, mini_data, label="tiny", show_progress_bar=False)
    key = evaluation_key(tiny_model, TASKS, mini_data)
    atomic_write_json(folder / "tiny.json", stored_entry(key, result, mini_data), indent=1)
    return folder, result


def _reuse(model, data, tmp_path: Path, folder: Path, **kwargs):
    return evaluate_or_reuse(
        model, TASKS, data, label="start", cache_dir=tmp_path / "cache", packaged=folder, **kwargs
    )


def test_match_reuses_the_packaged_entry_and_says_so(
    tiny_model, mini_data: Path, tmp_path: Path, packaged, counted, capsys
) -> None:
    folder, computed = packaged
    result = _reuse(tiny_model, mini_data, tmp_path, folder)
    assert counted == []
    assert result["sts"] == computed["sts"] and result["bias"] == computed["bias"]
    assert result["sources"] == computed["sources"]  # data paths restored to this data folder
    assert result["model"] == "start"
    assert result["reused_from"]["kind"] == "packaged"
    assert result["reused_from"]["path"] == str(folder / "tiny.json")
    err = capsys.readouterr().err
    assert (
        "Reusing the evaluation of start shipped with st_debias" in err and str(folder / "tiny.json") in err
    )


def test_reused_entry_writes_data_paths_as_a_fresh_evaluation_does(
    tiny_model, mini_data: Path, tmp_path: Path, packaged, monkeypatch
) -> None:
    """With ``$ST_DEBIAS_DATA`` naming the data folder, a reused entry must not bring this machine's paths back."""
    monkeypatch.setenv("ST_DEBIAS_DATA", str(mini_data))
    folder, _ = packaged
    fresh = evaluate_model(tiny_model, TASKS, mini_data, label="tiny", show_progress_bar=False)
    reused = _reuse(tiny_model, mini_data, tmp_path, folder, show_progress_bar=False)
    assert reused["sources"] == fresh["sources"]
    assert str(mini_data.resolve()) not in json.dumps(reused)
    assert reused["sources"]["sts"]["STSBenchmark"]["source"].startswith("$ST_DEBIAS_DATA/sts/")


def test_stored_entry_keeps_no_path_of_the_data_folder(tiny_model, mini_data: Path, packaged) -> None:
    folder, _ = packaged
    text = (folder / "tiny.json").read_text()
    assert str(mini_data.resolve()) not in text
    assert DATA_PLACEHOLDER in text


def test_fingerprint_mismatch_recomputes(
    tiny_model, mini_data: Path, tmp_path: Path, packaged, counted
) -> None:
    """Failure mode: a checkpoint of the same architecture must not get the start model's scores."""
    folder, computed = packaged
    changed = copy.deepcopy(tiny_model)
    with torch.no_grad():
        next(changed.parameters()).add_(1e-3)
    result = _reuse(changed, mini_data, tmp_path, folder, show_progress_bar=False)
    assert counted == ["start"]
    assert "reused_from" not in result
    assert result["fingerprint"] != computed["fingerprint"]


def test_inference_settings_mismatch_recomputes(
    tiny_model, mini_data: Path, tmp_path: Path, packaged, counted
) -> None:
    """Failure mode: same weights but a shorter max_seq_length gives other embeddings; no reuse."""
    folder, _ = packaged
    shorter = copy.deepcopy(tiny_model)
    shorter.max_seq_length = 8
    result = _reuse(shorter, mini_data, tmp_path, folder, show_progress_bar=False)
    assert counted == ["start"] and "reused_from" not in result


def test_data_checksum_mismatch_recomputes_and_says_why(
    tiny_model, mini_data: Path, tmp_path: Path, packaged, counted, capsys
) -> None:
    """Failure mode: an edited evaluation file (one gold score) must not reuse scores computed on the old file."""
    folder, computed = packaged
    edited = tmp_path / "edited_data"
    shutil.copytree(mini_data, edited)
    path = edited / "sts" / "sts12.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[0])
    record["score"] = 5.0 - float(record["score"])
    path.write_text("\n".join([json.dumps(record), *lines[1:]]) + "\n", encoding="utf-8")

    result = _reuse(tiny_model, edited, tmp_path, folder)
    assert counted == ["start"] and "reused_from" not in result
    assert result["sts"]["STS12"] != computed["sts"]["STS12"]
    assert "data checksums differ (sts/sts12.jsonl)" in capsys.readouterr().err


def test_negation_pair_count_is_part_of_the_key(
    tiny_model, mini_data: Path, tmp_path: Path, packaged, counted
) -> None:
    folder, _ = packaged
    result = _reuse(tiny_model, mini_data, tmp_path, folder, negation_pairs=5, show_progress_bar=False)
    assert counted == ["start"] and result["bias"]["negation"]["pairs"] == 5


def test_a_computed_evaluation_is_cached_for_the_next_run(
    tiny_model_other, mini_data: Path, tmp_path: Path, packaged, counted, capsys
) -> None:
    folder, _ = packaged
    first = _reuse(tiny_model_other, mini_data, tmp_path, folder)
    second = _reuse(tiny_model_other, mini_data, tmp_path, folder)
    assert counted == ["start"]
    assert second["reused_from"]["kind"] == "cache"
    assert second["sts"] == first["sts"]
    assert "cached" in capsys.readouterr().err


def test_mteb_and_hub_data_are_never_reused(tiny_model, mini_data: Path, tmp_path: Path, monkeypatch) -> None:
    assert evaluation_key(tiny_model, ("sts", "mteb"), mini_data) is None
    assert evaluation_key(tiny_model, TASKS, tmp_path / "no-such-folder") is None
    (tmp_path / "partial" / "sts").mkdir(parents=True)
    assert evaluation_key(tiny_model, TASKS, tmp_path / "partial") is None


def test_packaged_start_evaluation_matches_the_shared_data(shared_data: Path) -> None:
    """The shipped all-MiniLM-L6-v2 entry is keyed on the shared data files as they are now, with no local path."""
    path = packaged_dir() / "all-MiniLM-L6-v2.json"
    entry = json.loads(path.read_text(encoding="utf-8"))
    key = EvaluationKey.from_dict(entry["key"])
    assert key.tasks == tuple(sorted(TASKS)) and key.negation_pairs == 3000
    from st_debias.datafiles import file_sha256
    from st_debias.evaluation.reuse import evaluation_data_files

    files = evaluation_data_files(TASKS, shared_data)
    assert {name: file_sha256(file) for name, file in files.items()} == key.data
    assert str(shared_data.resolve()) not in path.read_text(encoding="utf-8")
    assert entry["result"]["fingerprint"] == key.fingerprint
    assert entry["result"]["computed_by"]["script"] == "scripts/package_start_evaluation.py"


@pytest.mark.slow
def test_packaged_start_evaluation_is_reused_for_the_default_model(shared_data: Path, tmp_path: Path) -> None:
    """The real default model loads with the packaged key's fingerprint and inference settings."""
    from st_debias.paths import load_model

    model = load_model("default")
    result = evaluate_or_reuse(model, TASKS, shared_data, label="start", cache_dir=tmp_path)
    assert result["reused_from"]["kind"] == "packaged"
    packaged = json.loads((packaged_dir() / "all-MiniLM-L6-v2.json").read_text(encoding="utf-8"))
    assert result["sts"] == packaged["result"]["sts"]


def test_quick_evaluation_is_the_full_entry_restricted_exactly(
    tiny_model, mini_data: Path, tmp_path: Path, packaged, counted, capsys
) -> None:
    """The quick 'before' column cut from the packaged full entry equals evaluating only the quick sets."""
    from st_debias.evaluation import QUICK_STS_TASKS, compare_table

    folder, _ = packaged
    reused = _reuse(tiny_model, mini_data, tmp_path, folder, sts_tasks=QUICK_STS_TASKS)
    assert counted == []
    assert "restricted to STSBenchmark, SICK-R" in capsys.readouterr().err
    direct = evaluate_model(tiny_model, TASKS, mini_data, show_progress_bar=False, sts_tasks=QUICK_STS_TASKS)
    assert reused["sts"] == direct["sts"]
    # Encoding other sentences alongside changes the padding of a batch: float32 noise of ~1e-9, no more.
    got, want = leaves(reused["bias"]), leaves(direct["bias"])
    floats = {k for k, v in want.items() if isinstance(v, float)}
    assert {k: got[k] for k in floats} == pytest.approx({k: want[k] for k in floats}, rel=1e-6, abs=1e-9)
    assert {k: v for k, v in got.items() if k not in floats} == {
        k: v for k, v in want.items() if k not in floats
    }
    assert reused["sources"] == direct["sources"]
    assert reused["evaluation"]["sts_tasks"] == list(QUICK_STS_TASKS)

    table = compare_table([reused, direct])
    assert "STS-7 avg" not in table and "quick evaluation, not STS-7" in table
    assert "STS12" not in table and "SICK-R" in table


def test_quick_evaluation_without_stored_entry_evaluates_the_quick_sets(
    tiny_model_other, mini_data: Path, tmp_path: Path, counted
) -> None:
    from st_debias.evaluation import QUICK_STS_TASKS

    result = _reuse(
        tiny_model_other,
        mini_data,
        tmp_path,
        tmp_path / "none",
        sts_tasks=QUICK_STS_TASKS,
        show_progress_bar=False,
    )
    assert counted == ["start"]
    assert set(result["sts"]) == {"STSBenchmark", "SICK-R", "avg"}


def test_quick_evaluation_refuses_a_set_list_without_sts_b(tiny_model, mini_data: Path) -> None:
    """Failure mode: the bias probes read STS-B test; leaving it out must be an error, not a KeyError later."""
    with pytest.raises(ValueError, match="need STSBenchmark"):
        evaluate_model(tiny_model, TASKS, mini_data, show_progress_bar=False, sts_tasks=("SICK-R",))


def test_transfer_is_added_to_a_reused_entry(
    tiny_model, mini_data: Path, tmp_path: Path, packaged, monkeypatch, capsys
) -> None:
    """Asking for sts,bias,transfer reuses the stored sts/bias entry and computes only the transfer tasks."""
    import st_debias.evaluation.evaluate as evaluate_module_itself

    folder, stored = packaged
    asked: list[tuple] = []

    def fake_transfer(model, tasks, data_dir=None, **kwargs):
        asked.append(tuple(tasks))
        return {"scores": {"MR": 70.0, "avg": 70.0}, "selection": {"MR": 69.0, "avg": 69.0},
                "details": {"MR": {"C": [1.0]}}, "sources": {"MR": {"protocol": "cv"}}, "timing_s": {"MR": 1.0}}  # fmt: skip

    monkeypatch.setattr(evaluate_module_itself, "evaluate_transfer", fake_transfer)
    result = evaluate_or_reuse(
        tiny_model, ("sts", "bias", "transfer"), mini_data, label="start", cache_dir=tmp_path / "cache",
        packaged=folder, transfer_tasks=("MR",),
    )  # fmt: skip
    assert asked == [("MR",)]
    assert result["reused_from"]["kind"] == "packaged" and result["sts"] == stored["sts"]
    assert result["transfer"] == {"MR": 70.0, "avg": 70.0} and result["transfer_selection"]["avg"] == 69.0
    assert result["sources"]["transfer"] == {"MR": {"protocol": "cv"}}
    assert "Reusing" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("damage", "reason"),
    [(lambda text: text[: len(text) // 2], "JSONDecodeError"), (lambda text: '{"model": "x"}', "KeyError: 'key'")],
    ids=["cut-short", "other-schema"],
)
def test_a_corrupt_evaluation_cache_entry_is_named_and_rebuilt(
    damage, reason: str, tiny_model_other, mini_data: Path, tmp_path: Path, packaged, counted, caplog
) -> None:
    """Failure: a cut-short cache entry gave a bare JSON error, a wrong-schema one a KeyError traceback, on every
    later run, though the README says corrupt entries are rebuilt."""
    folder, _ = packaged
    first = _reuse(tiny_model_other, mini_data, tmp_path, folder)
    (entry,) = (tmp_path / "cache" / "eval").glob("*.json")
    entry.write_text(damage(entry.read_text()))
    with caplog.at_level(logging.WARNING):
        again = _reuse(tiny_model_other, mini_data, tmp_path, folder)
    assert f"Evaluation cache entry {entry} is unreadable ({reason}" in caplog.text and "rebuilding it" in caplog.text
    assert counted == ["start", "start"] and again["sts"] == first["sts"]
    assert _reuse(tiny_model_other, mini_data, tmp_path, folder)["reused_from"]["kind"] == "cache", "not rewritten"
