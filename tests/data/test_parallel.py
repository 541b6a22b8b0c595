"""Building in blocks: any number of processes, shards joined by merge, and a resumed build give one build's rows."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from datasets import Dataset, load_from_disk

from st_debias.data import lexicon, parallel
from st_debias.data.io.report import BuildReport
from st_debias.data.kinds import DATA_KINDS, block_builder
from st_debias.data.parallel import Block, BlockError, build_blocks, finish_blocks

SMALL_BLOCKS = 48  # several blocks from a few hundred real sentences


def _without_timings(report: BuildReport) -> dict[str, object]:
    data = report.as_dict()
    data.pop("timings")
    return data


@pytest.fixture
def small_blocks(monkeypatch):
    monkeypatch.setattr(parallel, "BLOCK_SIZE", SMALL_BLOCKS)


@pytest.fixture(scope="module")
def corpus(wiki) -> list[str]:
    """Real sentences with an empty line and a duplicate, so cleaning counts travel with the blocks too."""
    return wiki[:200] + ["", wiki[3]]


@pytest.mark.parametrize("kind", ["negation", "minimal_pairs", "simcse", "paraphrase"])
def test_two_processes_build_exactly_the_rows_of_one(kind, corpus, negator, small_blocks, tmp_path):
    one, one_report = DATA_KINDS[kind].build(corpus, seed=3, negator=negator, cache_dir=tmp_path, num_proc=1)
    two, two_report = DATA_KINDS[kind].build(corpus, seed=3, negator=negator, cache_dir=tmp_path, num_proc=2)
    assert len(corpus) // SMALL_BLOCKS >= 4 and len(one) > 50
    assert one.to_dict() == two.to_dict()
    assert _without_timings(one_report) == _without_timings(two_report)
    assert one_report.skipped["empty"] == 1 and one_report.skipped["duplicate"] == 1
    assert not (tmp_path / "blocks").exists() or not any((tmp_path / "blocks").iterdir())  # parts forgotten


def test_rows_do_not_depend_on_the_process_string_hashing(corpus, tmp_path, negator):
    """Another process, with other string hashes (job-array tasks, Ray workers), builds the same rows: no set
    order reaches them (WordNet's related synsets come in set order)."""
    script = (
        "import json, sys\n"
        "from st_debias.data.kinds import DATA_KINDS\n"
        "from st_debias.data.negation.negator import Negator\n"
        "sentences = json.load(open(sys.argv[1]))\n"
        "rows, _ = DATA_KINDS['minimal_pairs'].build(sentences, seed=1, negator=Negator(sys.argv[3]), resume=False)\n"
        "json.dump(rows.to_dict(), open(sys.argv[2], 'w'))\n"
    )
    (tmp_path / "sentences.json").write_text(json.dumps(corpus[:50]))
    outputs = []
    for hash_seed in ("1", "2"):
        out = tmp_path / f"rows-{hash_seed}.json"
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        subprocess.run([sys.executable, "-c", script, str(tmp_path / "sentences.json"), str(out), negator.model],
                       check=True, env=env)
        outputs.append(json.loads(out.read_text()))
    assert outputs[0] == outputs[1] and len(outputs[0]["anchor"]) > 30


def test_shards_merge_to_the_whole_build(corpus, negator, small_blocks, tmp_path):
    kind = DATA_KINDS["minimal_pairs"]
    corpus = corpus[:150]
    whole, whole_report = kind.build(corpus, seed=0, negator=negator, resume=False)
    parts = [kind.build_part(corpus, (i, 3), seed=0, negator=negator, cache_dir=tmp_path) for i in range(3)]
    saved = tmp_path / "blocks" / parts[0]["build"][0]
    kind.discard_parts(parts[0], tmp_path)  # shard 0 is saved elsewhere: its resume parts go, the others stay
    left = {b for part in saved.glob("part-*") for b in load_from_disk(str(part))["block"]}
    assert left == {b for part in parts[1:] for b in part["block"]}
    rows, report = kind.finish_parts(parts[::-1], seed=0, negator=negator)  # any order
    assert rows.to_dict() == whole.to_dict()
    assert _without_timings(report) == _without_timings(whole_report)
    with pytest.raises(ValueError, match=r"missing blocks \[-1, 0, 1\]"):
        kind.finish_parts(parts[1:], seed=0, negator=negator)
    with pytest.raises(ValueError, match=r"repeated blocks"):
        kind.finish_parts([*parts, parts[2]], seed=0, negator=negator)
    other_seed = kind.build_part(corpus, (0, 3), seed=1, negator=negator, cache_dir=tmp_path)
    with pytest.raises(ValueError, match="different builds"):
        kind.finish_parts([other_seed, *parts[1:]], seed=0, negator=negator)


class _Counting:
    """A block builder that counts the blocks it builds and can fail on one sentence."""

    name = "counting"

    def __init__(self, fail_on: str | None = None) -> None:
        self.fail_on = fail_on
        self.built: list[int] = []

    def prepare(self) -> None:
        pass

    def build_block(self, block: Block) -> tuple[dict[str, list], BuildReport]:
        if self.fail_on in block.sentences:
            raise RuntimeError("cannot parse")
        self.built.append(block.index)
        report = BuildReport(builder=self.name, rows=len(block.sentences), anchors=len(block.sentences))
        return {"anchor": block.sentences, "position": block.positions}, report

    def finish(self, rows: dict[str, list], report: BuildReport) -> Dataset:
        return Dataset.from_dict(rows)


@pytest.mark.parametrize(("per_process", "most"), [(2, 256), (4, 2)])  # parts of two blocks either way
def test_an_interrupted_build_resumes_from_its_saved_parts(wiki, tmp_path, monkeypatch, per_process, most):
    monkeypatch.setattr(parallel, "BLOCKS_PER_PROCESS", per_process)
    monkeypatch.setattr(parallel, "MAX_PART_BLOCKS", most)
    sentences = wiki[:100]
    with pytest.raises(BlockError):
        build_blocks(_Counting(fail_on=sentences[75].strip()), sentences, block_size=10, resume_folder=tmp_path)
    resumed = _Counting()
    records = build_blocks(resumed, sentences, block_size=10, resume_folder=tmp_path)
    assert resumed.built == [6, 7, 8, 9]  # blocks 0-5 were kept as parts of two blocks each
    rows, report = finish_blocks(resumed, records)
    assert rows["anchor"] == [s.strip() for s in sentences] and rows["position"] == list(range(100))
    assert report.inputs == report.rows == 100


def test_a_part_another_shard_removes_meanwhile_is_skipped(wiki, tmp_path, monkeypatch):
    """Shards sharing a cache: a part that vanishes while it is read is neither reused nor an error."""
    import datasets

    monkeypatch.setattr(parallel, "BLOCKS_PER_PROCESS", 2)
    sentences = wiki[:100]
    with pytest.raises(BlockError):
        build_blocks(_Counting(fail_on=sentences[75].strip()), sentences, block_size=10, resume_folder=tmp_path)
    original = datasets.load_from_disk

    def vanishing(path, *args, **kwargs):
        if path.endswith("part-0000000"):
            raise FileNotFoundError(path)
        return original(path, *args, **kwargs)

    monkeypatch.setattr(datasets, "load_from_disk", vanishing)
    resumed = _Counting()
    records = build_blocks(resumed, sentences, block_size=10, resume_folder=tmp_path, shard=(0, 2))
    assert resumed.built == [0, 1]  # the vanished part's blocks are built again, the other kept parts reused
    parallel.discard_parts(tmp_path, records)


def test_a_failing_worker_names_the_sentence_and_the_block(wiki, tmp_path):
    sentences = wiki[:40]
    with pytest.raises(BlockError) as caught:
        build_blocks(_Counting(fail_on=sentences[27].strip()), sentences, block_size=8, num_proc=2)
    message = str(caught.value)
    assert "block 3 of 5" in message and "input line 28" in message and sentences[27].strip()[:40] in message
    assert "RuntimeError: cannot parse" in message


def test_cli_builds_in_parallel_and_merges_shards(corpus, negator, small_blocks, tmp_path, monkeypatch):
    from st_debias.cli import main

    monkeypatch.setenv("ST_DEBIAS_SPACY_MODEL", negator.model)
    text = tmp_path / "corpus.txt"
    text.write_text("\n".join(corpus) + "\n", encoding="utf-8")
    common = ["--input", str(text), "--cache-dir", str(tmp_path / "cache"), "--seed", "2"]
    assert main(["build", "negation", *common, "--output", str(tmp_path / "whole"), "--num-proc", "2"]) == 0
    for i in range(2):
        assert main(["build", "negation", *common, "--output", str(tmp_path / f"part{i}"), "--shard", f"{i}/2"]) == 0
    assert list((tmp_path / "cache" / "blocks").iterdir()) == []  # each shard's resume parts left with it
    merged = ["build", "merge", "--input", str(tmp_path / "part1"), str(tmp_path / "part0")]
    assert main([*merged, "--output", str(tmp_path / "merged")]) == 0
    whole = load_from_disk(str(tmp_path / "whole" / "dataset"))
    assert load_from_disk(str(tmp_path / "merged" / "dataset")).to_dict() == whole.to_dict()
    reports = [json.loads((tmp_path / name / "report.json").read_text()) for name in ("whole", "merged")]
    for report in reports:
        report.pop("timings")
    assert reports[0] == reports[1]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--shard", "2/2"], "--shard '2/2': expected I/N"),
        (["--shard", "one"], "expected I/N"),
        (["--num-proc", "0"], "--num-proc must be at least 1"),
    ],
)
def test_cli_refuses_bad_parallel_arguments(arguments, message, tmp_path, capsys):
    from st_debias.cli import main

    text = tmp_path / "corpus.txt"
    text.write_text("A man plays a guitar.\n", encoding="utf-8")
    assert main(["build", "simcse", "--input", str(text), "--output", str(tmp_path / "out"), *arguments]) == 2
    assert message in capsys.readouterr().err and not (tmp_path / "out").exists()


def test_merge_refuses_parts_of_different_kinds(tmp_path, capsys):
    from st_debias.cli import main

    text = tmp_path / "corpus.txt"
    text.write_text("A man plays a guitar.\nA dog runs.\n", encoding="utf-8")
    assert main(["build", "simcse", "--input", str(text), "--output", str(tmp_path / "a"), "--shard", "0/2"]) == 0
    (tmp_path / "b").mkdir()
    assert main(["build", "merge", "--input", str(tmp_path / "a"), str(tmp_path / "b"), "--output",
                 str(tmp_path / "out")]) == 2
    assert "not a part of a --shard build" in capsys.readouterr().err


def test_usable_cores_follows_the_affinity_mask():
    assert parallel.usable_cores() == len(os.sched_getaffinity(0)) >= 1


def test_block_records_are_the_map_batches_shape(wiki):
    """The per-batch function takes and returns the column batches Ray Data's map_batches and datasets' map use."""
    builder = DATA_KINDS["simcse"].make(seed=0, options={})
    batch = {"block": [0, 1], "of": [2, 2], "build": ["b", "b"], "sentences": [wiki[:2], wiki[2:3]],
             "positions": [[0, 1], [2]], "first": [0, 2]}
    out = parallel.build_block_batch(batch, builder)
    assert out["block"] == [0, 1] and json.loads(out["rows"][1]) == {"anchor": wiki[2:3], "positive": wiki[2:3]}


@pytest.mark.slow
def test_ray_data_builds_the_single_process_rows(wiki, negator, small_blocks):
    """The documented Ray Data example, on a local Ray instance: the rows and report of one process."""
    ray = pytest.importorskip("ray")
    from st_debias.data.kinds import BlockWorker, block_builder
    from st_debias.data.parallel import plan_blocks

    sentences = wiki[:150]
    single = block_builder("minimal_pairs", seed=0, spacy_model=negator.model)
    expected = single.build(sentences)
    builder = block_builder("minimal_pairs", seed=0, spacy_model=negator.model)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        plan = plan_blocks(builder, sentences)
        built = ray.data.from_items(plan.inputs.to_list()).map_batches(
            BlockWorker, fn_constructor_kwargs={"kind": "minimal_pairs", "seed": 0, "spacy_model": negator.model},
            batch_size=1, concurrency=2,
        )
        rows, report = finish_blocks(builder, [plan.cleaning, Dataset.from_pandas(built.to_pandas())])
    finally:
        ray.shutdown()
    assert len(plan.inputs) == 4
    assert rows.to_dict() == expected.to_dict()
    assert _without_timings(report) == _without_timings(single.report)


def test_train_refuses_a_bad_process_count_before_any_work(capsys):
    from st_debias.cli import main

    assert main(["train", "--recipe", "simcse", "--num-proc", "0", "--output", "never-created"]) == 2
    assert "--num-proc must be at least 1" in capsys.readouterr().err and not Path("never-created").exists()


def test_frozen_heap_unfreezes_only_what_it_froze(monkeypatch: pytest.MonkeyPatch) -> None:
    """The heap is frozen while workers fork, then unfrozen; a caller's own freeze is left as it was."""
    import gc

    from st_debias.data.parallel import frozen_heap

    assert gc.get_freeze_count() == 0
    with frozen_heap(True):
        assert gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0
    with frozen_heap(False):
        assert gc.get_freeze_count() == 0
    # A frozen object freed by its reference count leaves the permanent generation, so the count
    # itself can drift while this runs: watch the calls instead.
    calls: list[str] = []
    monkeypatch.setattr(gc, "freeze", lambda real=gc.freeze: (calls.append("freeze"), real())[1])
    monkeypatch.setattr(gc, "unfreeze", lambda real=gc.unfreeze: (calls.append("unfreeze"), real())[1])
    gc.freeze()
    try:
        with frozen_heap(True):
            pass
        assert calls == ["freeze"] and gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


@pytest.mark.parametrize("kind", ["negation", "minimal_pairs", "paraphrase"])
def test_prepare_reads_the_word_lists_before_the_workers_fork(kind: str, negator, data_root) -> None:
    """Failure mode: the ``paraphrase`` kind's ``prepare`` loaded spaCy only, so every worker read WordNet
    (seconds) inside its first block instead of inheriting it from the parent."""
    if not lexicon.wordnet_available():
        pytest.skip("WordNet is not under NLTK_DATA")
    for cached in (lexicon.wordnet, lexicon.wordnet_available, lexicon._sense_counts):
        cached.cache_clear()
    block_builder(kind, seed=0, spacy_model=negator.model).prepare()
    assert lexicon.wordnet_available.cache_info().currsize == 1
    assert lexicon._sense_counts.cache_info().currsize == 1


def test_open_wordnet_files_are_closed_before_a_fork_and_reopen(data_root) -> None:
    """Failure mode: forked workers shared the parent's open WordNet data files and their read positions."""
    if not lexicon.wordnet_available():
        pytest.skip("WordNet is not under NLTK_DATA")
    reader = lexicon.wordnet()
    opened = reader._data_file("n")  # what a synset lookup opens (and NLTK keeps open)
    lexicon.close_wordnet_files()
    assert opened.closed and not reader._data_file_map
    reopened = reader._data_file("n")
    assert reopened is not opened and reopened.readline()  # the next lookup opens it again
