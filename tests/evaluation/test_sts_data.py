"""Loading STS data: fields, counts, provenance, and the errors users see when data is missing."""

from __future__ import annotations

import json

import pytest

from st_debias.evaluation import sts_data
from st_debias.evaluation.sts_data import STS_TASKS, load_sts, load_sts_file
from st_debias.paths import DataNotFoundError

SENTEVAL_PAIRS = {
    "STS12": 3108,
    "STS13": 1500,
    "STS14": 3750,
    "STS15": 3000,
    "STS16": 1186,
    "STSBenchmark": 1379,
    "SICK-R": 4927,
    "STSBenchmark-dev": 1500,
}


@pytest.mark.parametrize("name", [*STS_TASKS, "STSBenchmark-dev"])
def test_pair_counts_match_senteval(shared_data, name):
    """Guards against reading the wrong split (e.g. MTEB's 9,927-pair SICK-R) or dropping rows."""
    data = load_sts(name, shared_data)
    assert len(data) == SENTEVAL_PAIRS[name]
    assert data.describe()["pairs"] == SENTEVAL_PAIRS[name]
    assert data.describe()["source"].endswith(sts_data.LOCAL_FILES[name].split("/")[-1])
    assert len(data.describe()["sha256"]) == 64
    if name == "SICK-R":
        assert data.describe()["note"] == "SentEval SICK-R test (4,927 pairs)"


def test_processed_text_is_the_senteval_field(tmp_path):
    """The protocol feeds ``sentence1`` (SentEval text), not ``sentence1_raw``; ``raw`` opts in to the other."""
    path = tmp_path / "x.jsonl"
    rows = [
        {
            "sentence1": "a man ' s dog .",
            "sentence2": "b",
            "sentence1_raw": "A man's dog.",
            "sentence2_raw": "B",
            "score": 1,
        },
        {"sentence1": "c", "sentence2": "d", "sentence1_raw": "C", "sentence2_raw": "D", "score": 4.5},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    processed = load_sts_file(path)
    raw = load_sts_file(path, text="raw")
    assert processed.sentences1 == ["a man ' s dog .", "c"]
    assert raw.sentences1 == ["A man's dog.", "C"]
    assert processed.scores == [1.0, 4.5]
    with pytest.raises(ValueError, match="text must be"):
        load_sts_file(path, text="cased")


def test_record_without_score_names_the_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"sentence1": "a", "sentence2": "b"}) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad.jsonl:1: record has no field 'score'"):
        load_sts_file(path)


def test_missing_file_says_where_it_looked_and_how_to_fix(tmp_path):
    """A configured but incomplete data folder: the error names the full path and ST_DEBIAS_DATA."""
    with pytest.raises(DataNotFoundError) as info:
        load_sts("STS12", tmp_path)
    message = str(info.value)
    assert str((tmp_path / "sts" / "sts12.jsonl").resolve()) in message
    assert "ST_DEBIAS_DATA" in message
    assert "not tried because a data folder was configured" in message


def test_no_folder_offline_refuses_hub(monkeypatch):
    monkeypatch.delenv("ST_DEBIAS_DATA", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(DataNotFoundError, match="ST_DEBIAS_DATA.*offline mode"):
        load_sts("STS12")


def test_no_folder_online_falls_back_to_hub(monkeypatch):
    """The hub is the normal fallback when no data folder is configured and the process is online."""
    monkeypatch.delenv("ST_DEBIAS_DATA", raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("ST_DEBIAS_OFFLINE", raising=False)
    asked = []

    def fake_hub(name):
        asked.append(name)
        return sts_data.STSData(name, ["a", "b"], ["c", "d"], [1.0, 2.0], source="hub:mteb/sickr-sts:test")

    monkeypatch.setattr(sts_data, "_load_from_hub", fake_hub)
    data = load_sts("SICK-R")
    assert asked == ["SICK-R"]
    assert data.source.startswith("hub:")


def test_hub_failure_reports_both_places(monkeypatch):
    monkeypatch.delenv("ST_DEBIAS_DATA", raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("ST_DEBIAS_OFFLINE", raising=False)

    def broken(name):
        raise ConnectionError("no network")

    monkeypatch.setattr(sts_data, "_load_from_hub", broken)
    with pytest.raises(DataNotFoundError, match=r"ST_DEBIAS_DATA.*mteb/sts13-sts.*no network"):
        load_sts("STS13")


def test_unknown_task():
    with pytest.raises(ValueError, match="Unknown STS task 'STS17'"):
        load_sts("STS17")


def test_mismatched_columns_rejected():
    with pytest.raises(ValueError, match="must be equal"):
        sts_data.STSData("x", ["a"], ["b", "c"], [1.0], source="test")
