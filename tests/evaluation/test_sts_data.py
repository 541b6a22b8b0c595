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


def _sts_copy(shared_data, tmp_path, name: str, line_number: int, change) -> object:
    """A copy of the first 20 lines of the real ``sts/<name>`` with line ``line_number`` changed by ``change``."""
    lines = (shared_data / "sts" / name).read_text(encoding="utf-8").splitlines()[:20]
    record = json.loads(lines[line_number - 1])
    changed = change(record)
    lines[line_number - 1] = changed if isinstance(changed, str) else json.dumps(record)
    target = tmp_path / name
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return target


BAD_RECORDS = [
    (
        "NaN score",
        lambda r: r.update(score="NaN"),
        r"sts12.jsonl:3: field 'score' must be a number in \[0, 5\], got 'NaN'",
    ),
    (
        "NaN literal",
        lambda r: json.dumps(r).replace(f'"score": {r["score"]}', '"score": NaN'),
        r"sts12.jsonl:3: field 'score' must be a number in \[0, 5\], got nan",
    ),
    (
        "score 500",
        lambda r: r.update(score=500),
        r"sts12.jsonl:3: field 'score' must be a number in \[0, 5\], got 500",
    ),
    ("null score", lambda r: r.update(score=None), r"sts12.jsonl:3: field 'score' must be .*got null"),
    ("text score", lambda r: r.update(score="abc"), r"sts12.jsonl:3: field 'score' must be .*got 'abc'"),
    (
        "null sentence",
        lambda r: r.update(sentence2=None),
        r"sts12.jsonl:3: field 'sentence2' must be a non-empty string, got null",
    ),
    ("empty sentence", lambda r: r.update(sentence1="  "), r"sts12.jsonl:3: field 'sentence1' is empty"),
    ("truncated line", lambda r: json.dumps(r)[:57], r"sts12.jsonl:3: is not valid JSON"),
]


@pytest.mark.parametrize(("case", "change", "message"), BAD_RECORDS, ids=[case for case, _, _ in BAD_RECORDS])
def test_bad_sts_record_names_file_line_and_field(shared_data, tmp_path, case, change, message):
    """Failure mode: one bad record in an STS file gave ``STS12: nan`` with exit 0 (NaN), was accepted (500),
    or gave a traceback without file and line (null, "abc", truncated JSON, null sentence)."""
    bad = _sts_copy(shared_data, tmp_path, "sts12.jsonl", 3, change)
    with pytest.raises(sts_data.DataFileError, match=message):
        load_sts_file(bad, name="STS12")
    (tmp_path / "sts").mkdir()
    bad.rename(tmp_path / "sts" / "sts12.jsonl")
    with pytest.raises(ValueError, match=message):
        load_sts("STS12", tmp_path)


def test_sick_scores_are_checked_on_the_sick_scale(shared_data, tmp_path):
    """Failure mode: a SICK score of 0.5 (below SICK's 1–5 scale) was accepted; STS files keep 0–5."""
    bad = _sts_copy(shared_data, tmp_path, "sick_test.jsonl", 2, lambda r: r.update(score=0.5))
    with pytest.raises(
        sts_data.DataFileError, match=r"sick_test.jsonl:2: field 'score' must be a number in \[1, 5\]"
    ):
        load_sts_file(bad, name="SICK-R")
    assert load_sts_file(shared_data / "sts" / "sick_test.jsonl", name="SICK-R").scores[0] == 3.3


def test_non_utf8_sts_file_names_the_line(shared_data, tmp_path):
    """Failure mode: a Latin-1 byte gave ``'utf-8' codec can't decode byte 0xe9 in position ...``, no file, no line."""
    good = _sts_copy(shared_data, tmp_path, "sts12.jsonl", 1, lambda r: None)
    lines = good.read_bytes().split(b"\n")
    lines[4] = lines[4].replace(b'"sentence1": "', '"sentence1": "café '.encode("latin-1"), 1)
    good.write_bytes(b"\n".join(lines))
    with pytest.raises(sts_data.DataFileError, match=r"sts12.jsonl:5: is not valid UTF-8: byte 0xe9"):
        load_sts_file(good)
