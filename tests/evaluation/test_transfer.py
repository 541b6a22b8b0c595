"""SentEval transfer tasks: the readers on the real files, malformed lines, the protocol, the CLI and report."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest

from st_debias.cli import main
from st_debias.datafiles import DataFileError
from st_debias.evaluation import transfer
from st_debias.evaluation.transfer import (
    C_GRID,
    QUICK_TRANSFER_TASKS,
    evaluate_transfer,
    nested_cross_validation,
    pair_features,
    score_task,
    select_c_by_cross_validation,
    split_embedder,
)
from st_debias.evaluation.transfer_data import (
    SST2_QUICK,
    TRANSFER_TASKS,
    TREC_CLASSES,
    Split,
    TransferTask,
    load_transfer_task,
    read_mrpc_file,
    read_sentence_file,
    read_sst_file,
    read_trec_file,
)
from st_debias.paths import DataNotFoundError

# ---------------------------------------------------------------------------------------------------
# Readers, on the real files
# ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "sizes"),
    [
        ("MR", {"train": 10662}),
        ("CR", {"train": 3771}),
        ("SUBJ", {"train": 10000}),
        ("MPQA", {"train": 10603}),
        ("SST2", {"train": 67349, "dev": 872, "test": 1821}),
        ("TREC", {"train": 5452, "test": 500}),
        ("MRPC", {"train": 4076, "test": 1725}),
        (SST2_QUICK, {"train": 872, "test": 1821}),
    ],
)
def test_real_task_sizes_and_checksums(shared_data, name, sizes):
    task = load_transfer_task(name, shared_data)
    assert {split: len(rows) for split, rows in task.splits().items()} == sizes
    manifest = json.loads((shared_data / "transfer" / "manifest.json").read_text(encoding="utf-8"))["files"]
    for path, sha256 in task.files.items():
        assert path.startswith("$ST_DEBIAS_DATA/transfer/")
        assert manifest[path.removeprefix("$ST_DEBIAS_DATA/transfer/")]["sha256"] == sha256
    assert all(
        text == " ".join(text.split()) and text for split in task.splits().values() for text in split.texts
    )


def test_real_labels_follow_senteval(shared_data):
    """Positive (MR), objective (SUBJ) = 1; TREC by coarse class; MRPC's first pair is a paraphrase."""
    mr = load_transfer_task("MR", shared_data)
    assert mr.train.texts[0].startswith("the rock is destined to be the 21st century 's new")
    assert mr.train.labels[0] == 1 and mr.train.labels[-1] == 0 and sum(mr.train.labels) == 5331
    subj = load_transfer_task("SUBJ", shared_data)
    first_objective = (
        (shared_data / "transfer/SUBJ/subj.objective").read_text(encoding="latin-1").split("\n")[0]
    )
    assert subj.train.texts[0] == " ".join(first_objective.split()) and subj.train.labels[0] == 1
    assert subj.classes[1] == "objective"
    trec = load_transfer_task("TREC", shared_data)
    assert trec.train.texts[0] == "How did serfdom develop in and then leave Russia ?"
    assert TREC_CLASSES[trec.train.labels[0]] == "DESC"
    assert sorted(set(trec.train.labels)) == list(range(6))
    mrpc = load_transfer_task("MRPC", shared_data)
    assert mrpc.train.labels[0] == 1 and mrpc.train.texts[0].startswith("Amrozi accused his brother")
    assert mrpc.train.second[0].startswith("Referring to him as only")
    assert mrpc.pairs and len(mrpc.train.second) == len(mrpc.train.texts)


def test_blank_lines_skipped_and_counted(shared_data):
    cr = load_transfer_task("CR", shared_data)
    assert sum(cr.skipped_blank.values()) == 4
    assert cr.describe()["skipped_blank_lines"] == {
        "$ST_DEBIAS_DATA/transfer/CR/custrev.pos": 2,
        "$ST_DEBIAS_DATA/transfer/CR/custrev.neg": 2,
    }
    assert "skipped_blank_lines" not in load_transfer_task("MR", shared_data).describe()


def test_trec_latin1_line_is_read(shared_data):
    """train_5500.label has one Latin-1 byte; SentEval reads the file as Latin-1, so must we."""
    questions = read_trec_file(shared_data / "transfer/TREC/train_5500.label").texts
    assert any(any(ord(ch) > 127 for ch in q) for q in questions)


# ---------------------------------------------------------------------------------------------------
# Malformed input: an error naming file and line
# ---------------------------------------------------------------------------------------------------


def _file(tmp_path: Path, text: str, encoding: str = "utf-8") -> Path:
    path = tmp_path / "input.txt"
    path.write_bytes(text.encode(encoding))
    return path


@pytest.mark.parametrize(
    ("reader", "text", "line", "fragment"),
    [
        (read_sst_file, "good movie\t1\nno tab here\n", 2, "has 1 tab-separated fields"),
        (read_sst_file, "good movie\t1\nbad\t2\n", 2, "must be one of ['0', '1']"),
        (read_sst_file, "good movie\t1\n \t0\n", 2, "'sentence'"),
        (read_sst_file, "a\tb\t1\n", 1, "3 tab-separated fields"),
        (read_trec_file, "DESC:manner How ?\nNUM How many ?\n", 2, "COARSE:fine question"),
        (read_trec_file, "DESC:manner How ?\nWHAT:x Why ?\n", 2, "'class'"),
        (read_trec_file, "DESC:manner\n", 1, "COARSE:fine question"),
    ],
)
def test_malformed_line_names_file_and_line(tmp_path, reader, text, line, fragment):
    path = _file(tmp_path, text)
    with pytest.raises(DataFileError) as caught:
        reader(path)
    assert caught.value.line == line
    assert str(caught.value).startswith(f"{path}:{line}:")
    assert fragment in str(caught.value)


MRPC_HEADER = "\ufeffQuality\t#1 ID\t#2 ID\t#1 String\t#2 String\n"


@pytest.mark.parametrize(
    ("body", "line", "fragment"),
    [
        ("1\t1\t2\tA cat .\tA cat sits .\n2\t3\t4\tB .\tC .\n", 3, "'Quality'"),
        ("1\t1\t2\tA cat .\n", 2, "4 tab-separated fields"),
        ("1\t1\t2\tA cat .\t \n", 2, "'#2 String'"),
    ],
)
def test_malformed_mrpc_row_names_line(tmp_path, body, line, fragment):
    path = _file(tmp_path, MRPC_HEADER + body)
    with pytest.raises(DataFileError) as caught:
        read_mrpc_file(path)
    assert caught.value.line == line and fragment in str(caught.value)


def test_mrpc_reads_bom_header_and_rejects_missing_column(tmp_path):
    split = read_mrpc_file(_file(tmp_path, MRPC_HEADER + "0\t1\t2\tA  cat .\tA dog .\n"))
    assert split.texts == ["A cat ."] and split.second == ["A dog ."] and split.labels == [0]
    path = _file(tmp_path, "\ufeffQuality\t#1 String\n1\tA\n")
    with pytest.raises(DataFileError, match="lacks the column"):
        read_mrpc_file(path)


@pytest.mark.parametrize("reader", [read_sentence_file, read_sst_file, read_trec_file])
def test_file_without_examples_is_an_error(tmp_path, reader):
    with pytest.raises(DataFileError, match=str(tmp_path)):
        reader(_file(tmp_path, "\n  \n"))


def test_not_utf8_sst_names_line(tmp_path):
    path = tmp_path / "sentiment-dev"
    path.write_bytes(b"fine\t1\ncaf\xe9 noir\t0\n")
    with pytest.raises(DataFileError) as caught:
        read_sst_file(path)
    assert caught.value.line == 2 and "0xe9" in str(caught.value)


def test_missing_file_is_named(tmp_path):
    (tmp_path / "transfer").mkdir()
    with pytest.raises(DataNotFoundError, match="rt-polarity.pos"):
        load_transfer_task("MR", tmp_path)
    with pytest.raises(ValueError, match="Unknown transfer task"):
        load_transfer_task("SST5", tmp_path)


# ---------------------------------------------------------------------------------------------------
# Protocol
# ---------------------------------------------------------------------------------------------------


def test_pair_features_layout():
    u = np.array([[1.0, -2.0], [0.5, 3.0]])
    v = np.array([[4.0, 1.0], [0.5, -1.0]])
    features = pair_features(u, v)
    assert features.shape == (2, 8)
    np.testing.assert_array_equal(features[:, 0:2], u)
    np.testing.assert_array_equal(features[:, 2:4], v)
    np.testing.assert_array_equal(features[:, 4:6], [[3.0, 3.0], [0.0, 4.0]])
    np.testing.assert_array_equal(features[:, 6:8], [[4.0, -2.0], [0.25, -3.0]])


def test_split_embedder_gives_mrpc_layout(shared_data, session_tiny_model, tmp_path):
    """Both sides of a pair are encoded (and cached) together and laid out [u, v, |u−v|, u·v]."""
    mrpc = load_transfer_task("MRPC", shared_data)
    split = Split(mrpc.test.texts[:5], mrpc.test.labels[:5], mrpc.test.second[:5])
    embed = split_embedder(session_tiny_model, cache_dir=tmp_path, show_progress_bar=False)
    features = embed(split)
    u = session_tiny_model.encode(split.texts, convert_to_numpy=True)
    v = session_tiny_model.encode(split.second, convert_to_numpy=True)
    np.testing.assert_allclose(features, pair_features(u, v), rtol=1e-4, atol=1e-5)
    assert len(list((tmp_path / "embeddings").glob("*.npy"))) == 1
    np.testing.assert_array_equal(embed(split), features)  # the second call reads the cache


def test_split_embedder_encodes_shared_sentences_once(shared_data, session_tiny_model, tmp_path, monkeypatch):
    """Each distinct sentence goes through the encoder once (one call per task); each split reads its rows."""
    from st_debias.data.io import embeddings

    mrpc = load_transfer_task("MRPC", shared_data)
    mr = load_transfer_task("MR", shared_data)
    pairs = Split(mrpc.test.texts[:4], mrpc.test.labels[:4], mrpc.test.second[:4])
    reviews = Split([*mr.train.texts[:3], mrpc.test.texts[0]], [1, 1, 0, 0])  # one sentence of each task
    tasks = [TransferTask("P", "train_cv", pairs, ("0", "1"), test=pairs, pairs=True),
             TransferTask("R", "cv", reviews, ("0", "1"))]  # fmt: skip
    calls: list[list[str]] = []
    original = embeddings.encode_corpus
    monkeypatch.setattr(
        embeddings, "encode_corpus", lambda s, *a, **k: calls.append(list(s)) or original(s, *a, **k)
    )
    embed = split_embedder(session_tiny_model, tasks, cache_dir=tmp_path, show_progress_bar=False)
    assert [len(call) for call in calls] == [8, 3] and len(set(calls[0] + calls[1])) == 11
    alone = split_embedder(session_tiny_model, cache_dir=tmp_path / "alone", show_progress_bar=False)
    np.testing.assert_allclose(embed(pairs), alone(pairs), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(embed(reviews), alone(reviews), rtol=1e-4, atol=1e-5)
    assert len(calls) == 2 + 2  # the splits of the alone embedder were encoded on their own
    other = Split(mr.train.texts[5:7], [0, 1])
    np.testing.assert_allclose(embed(other), alone(other), rtol=1e-4, atol=1e-5)


def test_shared_sentences_are_encoded_in_senteval_order(shared_data, session_tiny_model, tmp_path, monkeypatch):
    """Whatever order the tasks are asked in, a sentence two tasks share is encoded with the earlier task in
    SentEval's order, so the vectors (and figures) do not depend on the order asked for."""
    from st_debias.data.io import embeddings

    mr = load_transfer_task("MR", shared_data)
    shared = mr.train.texts[0]
    first = TransferTask("MR", "cv", Split([shared, *mr.train.texts[1:4]], [1, 1, 0, 0]), ("0", "1"))
    later = TransferTask("SUBJ", "cv", Split([shared, *mr.train.texts[10:13]], [1, 1, 0, 0]), ("0", "1"))
    calls: list[list[str]] = []
    original = embeddings.encode_corpus
    monkeypatch.setattr(embeddings, "encode_corpus", lambda s, *a, **k: calls.append(list(s)) or original(s, *a, **k))
    asked_later_first = split_embedder(session_tiny_model, [later, first], cache_dir=tmp_path, show_progress_bar=False)
    assert shared in calls[0] and calls[0][1:] == mr.train.texts[1:4] and shared not in calls[1]
    asked_in_order = split_embedder(session_tiny_model, [first, later], cache_dir=tmp_path, show_progress_bar=False)
    np.testing.assert_array_equal(asked_later_first(later.train), asked_in_order(later.train))


def test_cross_validation_figures_do_not_depend_on_processes():
    features, labels = _separable(5, n=90)
    one = select_c_by_cross_validation(features, labels, seed=2, grid=C_GRID[:3], n_jobs=1)
    two = select_c_by_cross_validation(features, labels, seed=2, grid=C_GRID[:3], n_jobs=2)
    assert one[:2] == two[:2]
    np.testing.assert_array_equal(one[2].model.coef_, two[2].model.coef_)


def _separable(seed: int, n: int = 120, dim: int = 6) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    labels = np.arange(n) % 2
    features = rng.normal(size=(n, dim)) + 0.8 * labels[:, None]
    return features, labels


def test_folds_and_figures_are_deterministic():
    features, labels = _separable(0, n=100)
    grid = C_GRID[:3]
    first = nested_cross_validation(features, labels, seed=3, grid=grid)
    again = nested_cross_validation(features, labels, seed=3, grid=grid)
    parallel = nested_cross_validation(features, labels, seed=3, grid=grid, n_jobs=2)
    assert first == again == parallel
    other_seed = nested_cross_validation(features, labels, seed=4, grid=grid)
    assert other_seed["fold_accuracies"] != first["fold_accuracies"]
    folds = [list(test) for _, test in transfer._folds(3).split(features, labels)]
    assert folds == [list(test) for _, test in transfer._folds(3).split(features, labels)]
    assert sorted(itertools.chain(*folds)) == list(range(len(labels)))
    assert all(sum(labels[f]) in (len(f) // 2, (len(f) + 1) // 2) for f in folds)  # stratified


def _task_with_test(protocol: str, test_labels: list[int]) -> tuple[TransferTask, dict[int, np.ndarray]]:
    features, labels = _separable(1, n=160)
    split = lambda rows: Split([f"s{i}" for i in rows], [int(labels[i]) for i in rows])  # noqa: E731
    train, dev, test = split(range(0, 80)), split(range(80, 120)), split(range(120, 160))
    test = Split(test.texts, test_labels)
    task = TransferTask("T", protocol, train, ("a", "b"), dev=dev if protocol == "split" else None, test=test)
    return task, {id(s): features[[int(t[1:]) for t in s.texts]] for s in (train, dev, test)}


@pytest.mark.parametrize("protocol", ["split", "train_cv"])
def test_test_split_is_never_used_for_selection(monkeypatch, protocol):
    """C and the selection figure must not move when the test labels are flipped, the test split is embedded
    last, and no selection step scores the test features."""
    _, labels = _separable(1, n=160)
    true_test = [int(x) for x in labels[120:160]]
    original = transfer._Path.accuracy
    outcomes = []
    for test_labels in (true_test, [1 - x for x in true_test]):
        task, table = _task_with_test(protocol, test_labels)
        test_features = table[id(task.test)]
        requested: list[str] = []
        scored_test: list[bool] = []

        def embed(split: Split, table=table, task=task, requested=requested) -> np.ndarray:
            requested.append(next(name for name, s in task.splits().items() if s is split))
            return table[id(split)]

        def spy(self, features, labels, scored_test=scored_test, test_features=test_features):
            scored_test.append(features is test_features)
            return original(self, features, labels)

        monkeypatch.setattr(transfer._Path, "accuracy", spy)
        result = score_task(task, embed, seed=0)
        monkeypatch.undo()
        assert requested[-1] == "test" and requested.count("test") == 1
        assert scored_test and not any(scored_test)
        outcomes.append(result)
    kept, flipped = outcomes
    assert kept.details["C"] == flipped.details["C"]
    assert kept.details["selection_accuracy"] == flipped.details["selection_accuracy"]
    assert kept.accuracy + flipped.accuracy == pytest.approx(100.0)  # the test labels are what differs


def test_split_protocol_selects_on_dev(monkeypatch):
    """SST-2's protocol: one classifier per C on train, the one best on dev is kept."""
    task, table = _task_with_test("split", [0] * 40)
    dev_scores = {c: 50.0 + i for i, c in enumerate(C_GRID)}  # the largest C is best on dev
    dev_scores[C_GRID[1]] = 99.0
    dev_size = len(task.dev)

    def accuracy(self, features, labels):
        assert len(features) == dev_size
        return dev_scores[self.model.C]

    monkeypatch.setattr(transfer._Path, "accuracy", accuracy)
    result = score_task(task, lambda split: table[id(split)])
    assert result.details["C"] == C_GRID[1] and result.details["selection_accuracy"] == 99.0
    assert result.details["selected_on"] == "dev split"


# ---------------------------------------------------------------------------------------------------
# End to end: a tiny model on a few real rows, the CLI and the report
# ---------------------------------------------------------------------------------------------------

MINI_ROWS = 24


@pytest.fixture(scope="session")
def mini_transfer_data(tmp_path_factory, shared_data) -> Path:
    """The first rows of every transfer file (TREC: the first rows of each class), in the data layout."""
    target = tmp_path_factory.mktemp("mini_transfer")
    source = shared_data / "transfer"
    for path in sorted(source.glob("*/*")):
        out = target / "transfer" / path.relative_to(source)
        out.parent.mkdir(parents=True, exist_ok=True)
        lines = path.read_bytes().split(b"\n")
        if path.parent.name == "TREC":
            by_class: dict[bytes, list[bytes]] = {}
            for line in lines:
                if line:
                    by_class.setdefault(line.split(b":", 1)[0], []).append(line)
            kept = [line for rows in by_class.values() for line in rows[: MINI_ROWS // 2]]
        elif path.parent.name == "SST2":
            ones = [line for line in lines if line.endswith(b"\t1")][:MINI_ROWS]
            zeros = [line for line in lines if line.endswith(b"\t0")][:MINI_ROWS]
            kept = ones + zeros
        else:
            kept = lines[: MINI_ROWS * 2 + 1]
        out.write_bytes(b"\n".join(kept) + b"\n")
    return target


def test_evaluate_transfer_on_real_rows_and_from_the_cache(session_tiny_model, mini_transfer_data, tmp_path):
    """One task of each protocol kind end to end; the cached second run (2 processes) gives the same figures."""
    tasks = ("CR", SST2_QUICK, "MRPC")
    first = evaluate_transfer(
        session_tiny_model, tasks, mini_transfer_data, cache_dir=tmp_path, show_progress_bar=False, n_jobs=1
    )
    assert list(first["scores"]) == [*tasks, "avg"]
    assert first["scores"]["avg"] == pytest.approx(np.mean([first["scores"][t] for t in tasks]))
    assert all(0.0 <= v <= 100.0 for v in first["scores"].values())
    assert first["details"]["MRPC"]["f1"] is not None and first["details"]["CR"]["protocol"] == "cv"
    assert first["details"][SST2_QUICK]["selected_on"].startswith("10-fold cross-validation")
    assert len(first["details"]["CR"]["C"]) == 10 and set(first["details"]["CR"]["C"]) <= set(C_GRID)
    cached = evaluate_transfer(  # the embeddings from the cache, every classifier fitted again
        session_tiny_model, tasks, mini_transfer_data, cache_dir=tmp_path, show_progress_bar=False, n_jobs=2,
        reuse_scores=False,
    )  # fmt: skip
    assert cached["scores"] == first["scores"] and cached["details"] == first["details"]
    assert len(list((tmp_path / "embeddings").glob("*.npy"))) == 3  # one encoder call per task


def test_quick_subset_replaces_only_sst2():
    assert QUICK_TRANSFER_TASKS == ("MR", "CR", "SUBJ", "MPQA", SST2_QUICK, "TREC", "MRPC")
    assert [t for t in QUICK_TRANSFER_TASKS if t != SST2_QUICK] == [t for t in TRANSFER_TASKS if t != "SST2"]


def test_cli_transfer_report(tiny_st_dir, mini_transfer_data, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("ST_DEBIAS_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "eval"
    code = main(
        ["eval", str(tiny_st_dir), "--tasks", "transfer", "--transfer-tasks", "TREC,MRPC", "--output", str(out),
         "--data-dir", str(mini_transfer_data), "--no-progress"]
    )  # fmt: skip
    assert code == 0
    entry = json.loads((out / "results.json").read_text(encoding="utf-8"))[0]
    assert list(entry["transfer"]) == ["TREC", "MRPC", "avg"]
    assert set(entry["transfer_selection"]) == {"TREC", "MRPC", "avg"}
    assert entry["sources"]["transfer"]["TREC"]["protocol"] == "train_cv"
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "Transfer avg of 2 tasks" in report and "MRPC F1" in report and "transfer_scores.png" in report
    assert (out / "transfer_scores.png").stat().st_size > 0
    printed = capsys.readouterr().out
    assert "| TREC accuracy |" in printed


@pytest.mark.parametrize("backend", ["onnx", "openvino"])
def test_transfer_figures_are_torchs_under_a_converted_backend(session_tiny_model, mini_transfer_data, tmp_path, backend):
    """The transfer tasks encode through the converted model (labelled, keyed apart), at torch's figures up to the
    classifiers' near-ties."""
    from st_debias.evaluation.backends import BackendUnavailable, check_backend
    from st_debias.evaluation.evaluate import evaluate_model

    try:
        check_backend(backend)
    except BackendUnavailable as error:
        pytest.skip(str(error))
    kwargs = {"transfer_tasks": ("TREC", "MRPC"), "show_progress_bar": False, "cache_dir": tmp_path}
    reference = evaluate_model(session_tiny_model, ("transfer",), mini_transfer_data, **kwargs)
    entry = evaluate_model(session_tiny_model, ("transfer",), mini_transfer_data, backend=backend, **kwargs)
    assert entry["backend"]["name"] == backend and entry["model"].endswith(f"[{backend}]")
    assert entry["fingerprint"] == reference["fingerprint"]
    assert len(list((tmp_path / "transfer").glob("*.json"))) == 4, "each run's figures cached under its cache_dir"
    # The embeddings are torch's within 1e-4, but a classifier's choice of C can flip on a near-tie between two
    # values (benchmarks/backends/): a score may move by a test item or two, never more.
    for task in ("TREC", "MRPC"):
        item = 100 / entry["transfer_details"][task]["examples"]["test"]
        assert abs(entry["transfer"][task] - reference["transfer"][task]) <= 2 * item + 1e-9, task


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--tasks", "transfer", "--transfer-tasks", "MR,SST5"], "Unknown transfer task"),
        (["--tasks", "sts", "--transfer-tasks", "MR"], "--transfer-tasks needs 'transfer'"),
        (["--tasks", "transfer", "--transfer-tasks", "SST2,SST2-quick"], "not both"),
    ],
)
def test_cli_bad_transfer_arguments_exit_2(tmp_path, capsys, args, message):
    out = tmp_path / "eval"
    assert main(["eval", "default", *args, "--output", str(out), "--no-progress"]) == 2
    assert message in capsys.readouterr().err
    assert not (out / "results.json").exists()


def test_cli_malformed_transfer_file_exit_2(tiny_st_dir, mini_transfer_data, tmp_path, capsys):
    broken = tmp_path / "data"
    (broken / "transfer" / "TREC").mkdir(parents=True)
    for name in ("train_5500.label", "TREC_10.label"):
        (broken / "transfer" / "TREC" / name).write_bytes(
            (mini_transfer_data / "transfer" / "TREC" / name).read_bytes()
        )
    (broken / "transfer" / "TREC" / "TREC_10.label").write_text("DESC:def What is it ?\nWhat is this ?\n")
    code = main(
        ["eval", str(tiny_st_dir), "--tasks", "transfer", "--transfer-tasks", "TREC", "--output", str(tmp_path / "o"),
         "--data-dir", str(broken), "--no-progress"]
    )  # fmt: skip
    assert code == 2
    assert "TREC_10.label:2:" in capsys.readouterr().err


def test_quick_average_is_labelled():
    from st_debias.evaluation.report import compare_table

    entries = [
        {
            "model": name,
            "transfer": {SST2_QUICK: 70.0, "MR": 60.0, "avg": 65.0},
            "transfer_selection": {"avg": 64.0},
        }
        for name in ("a", "b")
    ]
    table = compare_table(entries)
    assert "Transfer avg of 2 tasks (quick: SST-2 trained on its dev split)" in table
    full = [{"model": "a", "transfer": {"SST2": 70.0, "MR": 60.0, "avg": 65.0}}]
    assert "quick" not in compare_table(full)
    assert TRANSFER_TASKS[4] == "SST2"


def test_docs_reference_figures_are_the_committed_results():
    """docs/transfer.md's tables are read from the committed result files, not typed."""
    import re

    root = Path(__file__).resolve().parents[2]

    def run(path: str) -> dict:
        return json.loads((root / path).read_text(encoding="utf-8"))

    osscse = run("benchmarks/transfer/results/recall-100/osscse-seed42.json")
    simcse = run("benchmarks/compare/results/100-steps/simcse-seed42.json")
    st_debias = run("benchmarks/compare/results/100-steps/st-debias-seed42.json")
    second_vm = [run(f"benchmarks/compare/results/100-steps/{name}-seed42.json")["after"]
                 for name in ("focal", "dclr", "debcse", "osscse")]
    mpnet = run("benchmarks/transfer/results/mpnet.json")["runs"]["cold"]["result"]
    mpnet_entry = {"transfer": mpnet["scores"], "transfer_selection": mpnet["selection"],
                   "transfer_details": mpnet["details"]}
    entries = (osscse["before"], osscse["after"], simcse["before"], simcse["after"], st_debias["after"], *second_vm,
               mpnet_entry)
    table = (root / "docs/transfer.md").read_text(encoding="utf-8").split("## Reference figures", 1)[1]
    rows = [line for line in table.splitlines() if line.startswith("| ") and not line.startswith(("| model", "| budget"))
            and not re.match(r"\| \d+ steps \|", line)]  # the recall table has its own test
    for row, entry in zip(rows, entries, strict=True):
        numbers = [float(x) for x in re.findall(r"\d+\.\d+", row)]
        scores = entry["transfer"]
        expected = [scores[t] for t in ("MR", "CR", "SUBJ", "MPQA", "SST2", "TREC", "MRPC")]
        expected += [
            entry["transfer_details"]["MRPC"]["f1"],
            scores["avg"],
            entry["transfer_selection"]["avg"],
        ]
        assert numbers == [round(x, 2) for x in expected]


def test_a_full_and_a_quick_entry_each_average_seven_tasks():
    from st_debias.evaluation.report import compare_table

    full = {"model": "full", "transfer": {**dict.fromkeys(TRANSFER_TASKS, 80.0), "avg": 80.0}}
    quick = {"model": "quick", "transfer": {**dict.fromkeys(QUICK_TRANSFER_TASKS, 79.0), "avg": 79.0}}
    assert "Transfer avg of 7 tasks (quick: SST-2 trained on its dev split)" in compare_table([full, quick])


def test_docs_recall_table_is_the_committed_ablation():
    """docs/transfer.md's recall-loss table (``osscse`` with and without ``RecallRegularizer``) is read from the
    committed runs: both averages and both differences, with their signs."""
    import re

    root = Path(__file__).resolve().parents[2]
    page = (root / "docs/transfer.md").read_text(encoding="utf-8")
    rows = {line.split("|")[1].strip(): line for line in page.splitlines() if re.match(r"\| \d+ steps \|", line)}
    assert set(rows) == {"100 steps", "500 steps"}
    for budget, row in rows.items():
        folder = root / f"benchmarks/transfer/results/recall-{budget.split()[0]}"
        recall, without = (json.loads((folder / f"{name}-seed42.json").read_text(encoding="utf-8"))["after"]
                           for name in ("osscse", "osscse-norecall"))
        test_gap = recall["transfer"]["avg"] - without["transfer"]["avg"]
        selection_gap = recall["transfer_selection"]["avg"] - without["transfer_selection"]["avg"]
        expected = [f"{recall['transfer']['avg']:.2f}", f"{without['transfer']['avg']:.2f}",
                    f"{test_gap:+.2f}".replace("-", "−"), f"{selection_gap:+.2f}".replace("-", "−")]
        assert [cell.strip() for cell in row.split("|")[2:-1]] == expected, budget


def test_task_figures_are_read_back_for_the_same_features(
    session_tiny_model, mini_transfer_data, tmp_path, monkeypatch, caplog
):
    """A second evaluation of the same model fits no classifier and gives the same figures (one task of each
    protocol); ``reuse_scores=False`` fits them again; an unreadable or incomplete entry is scored again and
    rewritten."""
    tasks = ("CR", SST2_QUICK, "MRPC")
    kwargs = {"cache_dir": tmp_path, "show_progress_bar": False, "n_jobs": 1}
    first = evaluate_transfer(session_tiny_model, tasks, mini_transfer_data, **kwargs)
    entries = {json.loads(p.read_text(encoding="utf-8"))["task"]: p for p in (tmp_path / "transfer").glob("*.json")}
    assert sorted(entries) == sorted(tasks)
    fitted: list[str] = []
    original = transfer.score_task

    def counting(task, *args, **kw):
        fitted.append(task.name)
        return original(task, *args, **kw)

    monkeypatch.setattr(transfer, "score_task", counting)
    again = evaluate_transfer(session_tiny_model, tasks, mini_transfer_data, **kwargs)
    assert fitted == []
    assert again["scores"] == first["scores"] and again["selection"] == first["selection"]
    assert again["details"] == first["details"]
    refit = evaluate_transfer(session_tiny_model, tasks, mini_transfer_data, reuse_scores=False, **kwargs)
    assert fitted == list(tasks) and refit["scores"] == first["scores"]
    fitted.clear()
    entries["CR"].write_text('{"accuracy": ', encoding="utf-8")  # cut short
    entries["MRPC"].write_text(json.dumps({"accuracy": 50.0, "details": {"selection_accuracy": 50.0}}))  # no F1
    with caplog.at_level("WARNING", logger="st_debias.evaluation.transfer"):
        repaired = evaluate_transfer(session_tiny_model, tasks, mini_transfer_data, **kwargs)
    assert sorted(fitted) == ["CR", "MRPC"] and repaired["scores"] == first["scores"]
    assert sum("is unreadable" in record.getMessage() for record in caplog.records) == 2
    assert json.loads(entries["CR"].read_text(encoding="utf-8"))["accuracy"] == first["scores"]["CR"]


@pytest.mark.parametrize("protocol", ["cv", "split", "train_cv"])
def test_scores_key_follows_every_split_and_setting(protocol):
    """The key changes with one ulp of one feature of any split, one label of any split (the test split's too),
    the dtype, the task's name, the seed and the grid; the same arrays give the same key."""
    task, table = _task_with_test(protocol, [0] * 40)
    if protocol == "cv":
        task = TransferTask("T", "cv", task.train, task.classes)
    key = transfer.scores_key(task, lambda split: table[id(split)])
    assert transfer.scores_key(task, lambda split: table[id(split)].copy()) == key
    for changed in task.splits().values():
        nudged = table[id(changed)].copy()
        nudged[3, 1] = np.nextafter(nudged[3, 1], np.inf)
        embed = lambda split, changed=changed, nudged=nudged: nudged if split is changed else table[id(split)]  # noqa: E731
        assert transfer.scores_key(task, embed) != key
        relabelled = Split(changed.texts, [1 - changed.labels[0], *changed.labels[1:]])
        splits = {name: relabelled if split is changed else split for name, split in task.splits().items()}
        other = TransferTask("T", protocol, splits["train"], task.classes, dev=splits.get("dev"),
                             test=splits.get("test"))
        table_other = {**table, id(relabelled): table[id(changed)]}
        assert transfer.scores_key(other, lambda split, table_other=table_other: table_other[id(split)]) != key
    as_float32 = lambda split: table[id(split)].astype(np.float32)  # noqa: E731
    assert transfer.scores_key(task, as_float32) != key
    renamed = TransferTask("U", task.protocol, task.train, task.classes, dev=task.dev, test=task.test)
    assert transfer.scores_key(renamed, lambda split: table[id(split)]) != key
    assert transfer.scores_key(task, lambda split: table[id(split)], seed=transfer.SEED + 1) != key
    assert transfer.scores_key(task, lambda split: table[id(split)], grid=C_GRID[:3]) != key
