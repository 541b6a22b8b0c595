"""Provenance stamps, the reuse rule of the benchmark runner and the tables of the recipe studies (no training:
the runs are faked)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from benchmarks.harness import runner
from benchmarks.harness.provenance import PACKAGES, stamp, stamp_differences

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
SCRIPTS = {"compare": BENCHMARKS / "compare" / "compare.py", "select_dev": BENCHMARKS / "selection" / "select_dev.py"}


def _load(name: str):
    """A fresh copy of a script (its neighbours it imports from the installed lab package)."""
    spec = importlib.util.spec_from_file_location(f"bench_{name}", SCRIPTS[name])
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_stamp_names_commit_packages_and_builders() -> None:
    from st_debias.data.minimal_pairs import MinimalPairBuilder
    from st_debias.data.paraphrase.syntactic import SyntacticParaphraser

    current = stamp()
    assert set(current["packages"]) == set(PACKAGES) and current["packages"]["torch"]
    assert current["builders"]["syntactic"] == SyntacticParaphraser.version
    assert current["builders"]["minimal_pairs"] == MinimalPairBuilder.version
    assert current["commit"] is None or len(current["commit"]) == 40
    assert "created" in current


def test_stamp_differences() -> None:
    base = {"commit": "a" * 40, "dirty": False, "packages": {"torch": "2.13.0"}, "builders": {"syntactic": 2},
            "created": "then"}
    assert stamp_differences(dict(base, created="now"), base) == []
    assert stamp_differences(None, base) == ["no provenance stamp"]
    assert stamp_differences(dict(base, builders={"syntactic": 1}), base) == [
        "builders: {'syntactic': 1} -> {'syntactic': 2}"
    ]
    assert stamp_differences(dict(base, commit="b" * 40), base)[0].startswith("commit:")
    dirty = dict(base, dirty=True)
    assert stamp_differences(dirty, dirty) == ["uncommitted changes in the work tree"]


def test_stale_result_is_rerun_unless_asked(tmp_path: Path, monkeypatch, capsys) -> None:
    """Failure mode: a result file from older code was silently reused after a code change."""
    current = {"commit": "c" * 40, "dirty": False, "packages": {}, "builders": {"syntactic": 2}}
    monkeypatch.setattr(runner, "stamp", lambda: current)
    trained: list[str] = []

    class FakeResult:
        value = 1.0

    def fake_train(recipe, **kwargs):
        trained.append(recipe)
        return FakeResult()

    import st_debias.recipes

    monkeypatch.setattr(st_debias.recipes, "train_recipe", fake_train)
    target = tmp_path / "r-seed1.json"
    target.write_text(json.dumps({"value": 0.0}))  # an unstamped (old) result

    def run(reuse_stale: bool = False) -> dict:
        runner.train_and_record(target, "recipe", work_dir=tmp_path / "w", entry=lambda r, s: {"value": r.value},
                                reuse_stale=reuse_stale)
        return json.loads(target.read_text())

    assert run(reuse_stale=True) == {"value": 0.0} and trained == []
    written = run()
    assert trained == ["recipe"] and written["value"] == 1.0 and written["provenance"] == current
    assert "stale (no provenance stamp)" in capsys.readouterr().out
    run()  # now stamped with the current code: reused
    assert trained == ["recipe"]
    current["builders"] = {"syntactic": 3}
    run()
    assert trained == ["recipe", "recipe"]


def _checkpoint(folder: Path, step: int) -> None:
    """A complete trainer checkpoint (state with its step, whole safetensors weights)."""
    import torch
    from safetensors.torch import save_file

    folder.mkdir(parents=True)
    save_file({"w": torch.zeros(2)}, str(folder / "model.safetensors"))
    (folder / "trainer_state.json").write_text(json.dumps({"global_step": step}))


def test_resume_continues_only_a_run_started_the_same_way(tmp_path: Path, monkeypatch, capsys) -> None:
    """Failure modes: an interrupted 500-step run started again from step 0; a run resumed under other code,
    another recipe or other options (its result would then claim a run that did not train all of it); a
    second run taking over a folder a live run trains into."""
    current = {"commit": "c" * 40, "dirty": False, "packages": {}, "builders": {}}
    monkeypatch.setattr(runner, "stamp", lambda: dict(current))
    calls: list[dict] = []

    class FakeResult:
        value = 1.0

    import st_debias.recipes

    monkeypatch.setattr(st_debias.recipes, "train_recipe", lambda recipe, **kw: calls.append(kw) or FakeResult())
    work = tmp_path / "w"
    target = tmp_path / "r-seed1.json"

    def run(resume: bool, recipe: object = ("simcse", 500), **options) -> dict:
        if target.exists():
            target.unlink()
        runner.train_and_record(target, recipe, work_dir=work, entry=lambda r, s: {"value": r.value},
                                resume=resume, **options)
        return json.loads(target.read_text())

    first = run(resume=True)  # nothing to resume: a fresh run, how it started recorded in the work folder
    assert calls[-1]["overwrite"] is True and calls[-1]["resume_from_checkpoint"] is None
    started = json.loads((work / runner.STARTED).read_text())
    assert "resumed_from" not in first and started["provenance"] == current and started["recipe"] == ["simcse", 500]
    assert "nothing to resume" in capsys.readouterr().out
    _checkpoint(work / "checkpoints" / "checkpoint-50", 50)
    _checkpoint(work / "checkpoints" / "checkpoint-100", 100)
    resumed = run(resume=True)
    assert calls[-1]["overwrite"] is False and calls[-1]["resume_from_checkpoint"] is True
    assert resumed["resumed_from"] == "checkpoint-100"
    for changed, match in (({"recipe": ("simcse", 1000)}, "recipe differs"),
                           ({"gradient_share_every": 5}, "options differs")):
        with pytest.raises(SystemExit, match=match):
            run(resume=True, **changed)
    current["commit"] = "d" * 40  # the run in the folder started under commit c
    with pytest.raises(SystemExit, match="started otherwise.*commit"):
        run(resume=True)
    assert len(calls) == 2 and not target.exists()
    (work / runner.STARTED).unlink()
    with pytest.raises(SystemExit, match="no record of how it started"):
        run(resume=True)
    run(resume=False)  # without --resume a leftover run is replaced, under the current code
    assert calls[-1]["overwrite"] is True and json.loads((work / runner.STARTED).read_text())["provenance"] == current

    from st_debias.files import hold_output_folder

    with hold_output_folder(work):  # a live run trains into the folder (the lock is per open file)
        started_before = (work / runner.STARTED).read_text()
        with pytest.raises(SystemExit, match="in use by another"):
            run(resume=False)
        assert (work / runner.STARTED).read_text() == started_before
    assert len(calls) == 3


@pytest.mark.parametrize("flag", ["--reuse-stale", "--resume"])
@pytest.mark.parametrize("script", ["compare", "select_dev"])
def test_scripts_pass_their_flags_to_the_runner(script: str, flag: str, monkeypatch, tmp_path: Path) -> None:
    module = _load(script)
    calls = []
    monkeypatch.setattr(module, "train_and_record", lambda target, recipe, **kw: calls.append(kw) or target)
    monkeypatch.setattr(module, "write_table", lambda: tmp_path / "table.md")
    (tmp_path / "table.md").write_text("table")
    if script == "compare":
        monkeypatch.setattr(module, "RESULTS", tmp_path)
        argv = ["--recipes", "simcse", "--seeds", "1", "--steps", "2"]
    else:
        monkeypatch.setattr(module, "start_scores", lambda refresh=True: {})
        argv = ["simcse", "--seeds", "1", "--steps", "2"]
    assert module.main([*argv, flag]) == 0
    module.main(argv)
    option = flag.removeprefix("--").replace("-", "_")
    assert [c[option] for c in calls] == [True, False]


def _entry(recipe: str, seed: int, stsb: float, oppn: float, *, limited: bool) -> dict:
    """A compare.py result file's content, as a limited (STS-B only) or full evaluation would leave it."""

    def result(model: str, shift: float) -> dict:
        sts = {"STSBenchmark": stsb + shift, "avg": stsb + shift}
        if not limited:
            sts = {"STS12": 70.0 + shift, **sts, "avg": (70.0 + stsb) / 2 + shift}
        split = {"eligible": True, "cont": {"spearman": 86.0 + shift}, "oppn": {"spearman": oppn + shift},
                 "oppn_sides": {"high_overlap_low_score": {"mean_cosine": 0.5}, "low_overlap_high_score": {"mean_cosine": 0.7}}}
        entry = {"model": model, "sts": sts,
                 "bias": {"cont_oppn": {"STSBenchmark": split, "STS13": {**split, "eligible": False}},
                          "negation": {"mean_cosine": 0.8}, "word_order": {"mean_cosine": 0.9 - shift / 100}}}
        if limited:
            entry["evaluation"] = {"sts_tasks": ["STSBenchmark"], "full": False}
        return entry

    return {"recipe": recipe, "seed": seed, "budget": {"steps": 30, "batch_size": 64, "max_seq_length": 32},
            "before": result("outputs/models/all-mpnet-base-v2 (start)", 0.0), "after": result(recipe, 1.0)}


def test_compare_table_labels_a_limited_evaluation_and_splits_bias_per_dataset(monkeypatch, tmp_path: Path) -> None:
    module = _load("compare")
    monkeypatch.setattr(module, "RESULTS", tmp_path)
    for seed, stsb in ((42, 83.0), (43, 85.0)):
        (tmp_path / f"simcse-seed{seed}.json").write_text(json.dumps(_entry("simcse", seed, stsb, 70.0, limited=True)))
    text = module.write_table().read_text()
    assert "Start model all-mpnet-base-v2;" in text and "| start (all-mpnet-base-v2) |" in text
    assert "**Limited evaluation:** STS sets STSBenchmark only (not the STS-7)" in text
    assert "STS-7" not in text.replace("(not the STS-7)", "")
    assert "| simcse | 2 | 85.00 ± 1.00 |" in text  # STS-B test: mean ± population std of 84 and 86
    bias_header = next(line for line in text.splitlines() if "STS-B Oppn cosine" in line)
    assert "STS-B Oppn" in bias_header and "STS13" not in bias_header  # an ineligible set gets no column
    assert "word-order cosine" in bias_header
    assert (tmp_path / "compare.png").stat().st_size > 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["recipes"]["simcse"]["word-order cosine"]["mean"] == pytest.approx(0.89)


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        ([], {"sts_tasks": None, "start_as_candidate": True}),  # the defaults, as in `st-debias train`
        (["--sts-tasks", "STSBenchmark"], {"sts_tasks": ["STSBenchmark"], "start_as_candidate": True}),
        (["--no-start-as-candidate"], {"sts_tasks": None, "start_as_candidate": False}),
    ],
)
def test_compare_passes_its_options_to_training(monkeypatch, tmp_path: Path, flags, expected) -> None:
    module = _load("compare")
    calls = []
    monkeypatch.setattr(module, "train_and_record", lambda target, recipe, **kw: calls.append(kw) or target)
    monkeypatch.setattr(module, "write_table", lambda: tmp_path / "table.md")
    (tmp_path / "table.md").write_text("table")
    module.main(["--recipes", "simcse", "--seeds", "1", "--steps", "2", *flags, "--results-dir", str(tmp_path)])
    assert {key: calls[0][key] for key in expected} == expected


def test_compare_table_of_full_evaluations_keeps_the_sts7_label_and_reads_old_files(monkeypatch, tmp_path: Path) -> None:
    module = _load("compare")
    monkeypatch.setattr(module, "RESULTS", tmp_path)
    current = _entry("st-debias", 42, 83.0, 70.0, limited=False)
    old = _entry("simcse", 42, 82.0, 69.0, limited=False)
    for part in ("before", "after"):  # a file from before the word-order probe and the Oppn sides
        del old[part]["bias"]["word_order"]
        del old[part]["bias"]["cont_oppn"]["STSBenchmark"]["oppn_sides"]
    (tmp_path / "st-debias-seed42.json").write_text(json.dumps(current))
    (tmp_path / "simcse-seed42.json").write_text(json.dumps(old))
    text = module.write_table().read_text()
    assert "| recipe | seeds | STS-7 avg |" in text and "Limited evaluation" not in text
    simcse_bias = [line for line in text.splitlines() if line.startswith("| simcse |")][-1]
    assert simcse_bias.endswith("| – | – | – |")  # sides and word order not measured by the old file
    assert "| start (all-mpnet-base-v2) |" in text  # the start row comes from the file that has every probe


def test_compare_refuses_to_mix_evaluation_scopes(monkeypatch, tmp_path: Path) -> None:
    module = _load("compare")
    monkeypatch.setattr(module, "RESULTS", tmp_path)
    (tmp_path / "simcse-seed42.json").write_text(json.dumps(_entry("simcse", 42, 83.0, 70.0, limited=True)))
    (tmp_path / "focal-seed42.json").write_text(json.dumps(_entry("focal", 42, 83.0, 70.0, limited=False)))
    with pytest.raises(SystemExit, match="mixes evaluations of different STS sets"):
        module.write_table()
    limited = {**_entry("simcse", 42, 83.0, 70.0, limited=True), "sts_tasks": ["STSBenchmark"]}
    (tmp_path / "simcse-seed42.json").write_text(json.dumps(limited))
    monkeypatch.setattr(module, "train_and_record", lambda *a, **k: pytest.fail("a full run must not reuse it"))
    with pytest.raises(SystemExit, match="evaluated on STS sets"):
        module.main(["--recipes", "simcse", "--seeds", "42", "--steps", "2", "--results-dir", str(tmp_path)])


def _with_transfer(entry: dict, before: float, after: float, mode: str = "full") -> dict:
    entry["before"]["transfer"], entry["after"]["transfer"] = {"avg": before}, {"avg": after}
    entry["before"]["transfer_selection"], entry["after"]["transfer_selection"] = {"avg": before}, {"avg": after}
    return {**entry, "transfer": mode}


def test_compare_table_has_a_transfer_column_that_flags_a_recipe_below_the_start(monkeypatch, tmp_path: Path) -> None:
    module = _load("compare")
    monkeypatch.setattr(module, "RESULTS", tmp_path)
    below = _with_transfer(_entry("simcse", 42, 83.0, 70.0, limited=False), 83.0, 82.5)
    above = _with_transfer(_entry("osscse", 42, 83.0, 70.0, limited=False), 83.0, 83.4)
    (tmp_path / "simcse-seed42.json").write_text(json.dumps(below))
    (tmp_path / "osscse-seed42.json").write_text(json.dumps(above))
    lines = module.write_table().read_text().splitlines()
    header = next(line for line in lines if line.startswith("| recipe |"))
    assert header.endswith("| transfer avg | transfer dev/CV avg |")
    simcse = next(line for line in lines if line.startswith("| simcse |"))
    osscse = next(line for line in lines if line.startswith("| osscse |"))
    assert simcse.endswith("| 82.50 (below start) | 82.50 (below start) |")
    assert osscse.endswith("| 83.40 | 83.40 |")
    assert next(line for line in lines if line.startswith("| start")).endswith("| 83.00 | 83.00 |")
    import matplotlib.pyplot as plt

    drawn = []
    monkeypatch.setattr(plt.Figure, "savefig", lambda self, *a, **k: drawn.append([ax.get_title() for ax in self.axes]))
    module.write_table()
    assert drawn[-1][-1] == "SentEval transfer avg (↑)"


def test_compare_flags_a_run_below_the_start_model_of_its_own_machine(monkeypatch, tmp_path: Path) -> None:
    """Two runs scored the start model 0.04 apart (two CPUs): a recipe is flagged against its own runs' start
    figures, not against the one start row of the table."""
    module = _load("compare")
    monkeypatch.setattr(module, "RESULTS", tmp_path)
    first_vm = _with_transfer(_entry("simcse", 42, 83.0, 70.0, limited=False), 83.24, 83.23)
    second_vm = _with_transfer(_entry("osscse", 42, 83.0, 70.0, limited=False), 83.20, 83.21)
    seeds = [_with_transfer(_entry("focal", seed, 83.0, 70.0, limited=False), 83.20, after)
             for seed, after in ((42, 83.10), (43, 83.40))]  # −0.10 and +0.20: above on average
    tie = [_with_transfer(_entry("dclr", seed, 83.0, 70.0, limited=False), 83.20, after)
           for seed, after in ((42, 83.30), (43, 83.10))]  # +0.1 and −0.1: a tie, −7e-15 in floats
    for name, entry in (("simcse-seed42", first_vm), ("osscse-seed42", second_vm),
                        ("focal-seed42", seeds[0]), ("focal-seed43", seeds[1]),
                        ("dclr-seed42", tie[0]), ("dclr-seed43", tie[1])):
        (tmp_path / f"{name}.json").write_text(json.dumps(entry))
    lines = module.write_table().read_text().splitlines()
    rows = {line.split(" | ")[0][2:]: line for line in lines if line.startswith("| ") and "| – |" not in line}
    assert rows["simcse"].endswith("| 83.23 (below start) | 83.23 (below start) |")  # 83.23 < its own 83.24
    assert rows["osscse"].endswith("| 83.21 | 83.21 |")  # above its own 83.20 (and under the other VM's 83.24)
    assert rows["focal"].endswith("| 83.25 ± 0.15 | 83.25 ± 0.15 |")
    assert rows["dclr"].endswith("| 83.20 ± 0.10 | 83.20 ± 0.10 |")


def test_compare_table_has_a_transfer_table_per_task(monkeypatch, tmp_path: Path) -> None:
    module = _load("compare")
    monkeypatch.setattr(module, "RESULTS", tmp_path)
    for seed, shift in ((42, 0.0), (43, 2.0)):
        entry = _with_transfer(_entry("simcse", seed, 83.0, 70.0, limited=False), 83.0, 84.0 + shift)
        for part, mr in (("before", 75.0), ("after", 76.0 + shift)):
            entry[part]["transfer"].update(MR=mr, MRPC=72.0)
            entry[part]["transfer_details"] = {"MRPC": {"f1": 80.0 + (shift if part == "after" else 0.0)}}
        (tmp_path / f"simcse-seed{seed}.json").write_text(json.dumps(entry))
    text = module.write_table().read_text()
    table = text[text.index("## Transfer tasks"):].splitlines()
    assert "| recipe | seeds | MR | MRPC | MRPC F1 | transfer avg | transfer dev/CV avg |" in table
    assert "| start (all-mpnet-base-v2) | – | 75.00 | 72.00 | 80.00 | 83.00 | 83.00 |" in table
    assert "| simcse | 2 | 77.00 ± 1.00 | 72.00 ± 0.00 | 81.00 ± 1.00 | 85.00 ± 1.00 | 85.00 ± 1.00 |" in table
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["recipes"]["simcse"]["MRPC F1"]["mean"] == pytest.approx(81.0)
    assert summary["start"]["MR"] == 75.0
    (tmp_path / "simcse-seed43.json").unlink()
    (tmp_path / "simcse-seed42.json").write_text(json.dumps(_entry("simcse", 42, 83.0, 70.0, limited=False)))
    assert "## Transfer tasks" not in module.write_table().read_text()  # no transfer run, no empty table


def test_compare_refuses_to_mix_full_and_quick_transfer(monkeypatch, tmp_path: Path) -> None:
    module = _load("compare")
    monkeypatch.setattr(module, "RESULTS", tmp_path)
    full = _with_transfer(_entry("simcse", 42, 83.0, 70.0, limited=False), 83.0, 82.5, "full")
    quick = _with_transfer(_entry("osscse", 42, 83.0, 70.0, limited=False), 83.0, 83.4, "quick")
    (tmp_path / "simcse-seed42.json").write_text(json.dumps(full))
    (tmp_path / "osscse-seed42.json").write_text(json.dumps(quick))
    with pytest.raises(SystemExit, match="mixes full and quick transfer"):
        module.write_table()


def test_compare_entry_adds_transfer_of_both_models(monkeypatch, tmp_path: Path) -> None:
    """The result file holds the transfer figures of the trained model and of the start model."""
    module = _load("compare")
    seen = []
    monkeypatch.setattr(module, "add_transfer", lambda block, model, tasks, quiet: seen.append((str(model), tasks)))

    def train_and_record(target, recipe, *, entry, **kw):
        from types import SimpleNamespace

        result = SimpleNamespace(table="", after={}, before={}, model_dir=tmp_path / "model", best_checkpoint=None,
                                 selection={}, data_report={}, log_history=[])
        recorded.append(entry(result, 1.0))
        return target

    recorded: list[dict] = []
    monkeypatch.setattr(module, "train_and_record", train_and_record)
    monkeypatch.setattr(module, "write_table", lambda: tmp_path / "table.md")
    (tmp_path / "table.md").write_text("table")
    module.main(["--recipes", "simcse", "--seeds", "1", "--steps", "2", "--transfer", "quick", "--results-dir", str(tmp_path)])
    assert seen == [(str(tmp_path / "model"), "quick"), ("default", "quick")]
    assert recorded[0]["transfer"] == "quick"
    seen.clear()
    module.main(["--recipes", "simcse", "--seeds", "1", "--steps", "2", "--transfer", "none", "--results-dir", str(tmp_path)])
    assert seen == []


def test_select_table_has_the_transfer_selection_average(monkeypatch, tmp_path: Path) -> None:
    module = _load("select_dev")
    monkeypatch.setattr(module, "RESULTS", tmp_path)
    monkeypatch.setattr(module, "start_scores", lambda refresh=True: {"dev": 86.0, "transfer_dev": 82.68})
    recipe = {"loss": {"name": "MarginNegationLoss", "params": {}, "recall_gamma": 0.0}, "data": {"options": {}}}
    scores = {"dev": 86.5, "transfer_dev": 82.9}
    (tmp_path / "v-seed42.json").write_text(json.dumps({"variant": "v", "recipe": recipe, "scores": scores}))
    lines = module.write_table().read_text().splitlines()
    assert "| transfer dev/CV |" in lines[4]
    assert next(line for line in lines if line.startswith("| start |")).endswith("| 82.68 | – |")
    assert "| 82.90 |" in next(line for line in lines if line.startswith("| v |"))


def test_compare_table_fills_in_unstamped_results_from_the_archive(monkeypatch, tmp_path: Path) -> None:
    """Failure mode: moving unstamped result files to ``archive/`` drops their rows from the study's table, or
    an archived file is counted beside the stamped rerun of the same (recipe, seed)."""
    module = _load("compare")
    monkeypatch.setattr(module, "RESULTS", tmp_path)
    (tmp_path / "archive").mkdir()
    for recipe, stsb in (("simcse", 79.0), ("focal", 81.0)):
        entry = _entry(recipe, 42, stsb, 70.0, limited=True)
        (tmp_path / "archive" / f"{recipe}-seed42.json").write_text(json.dumps(entry))
    (tmp_path / "simcse-seed42.json").write_text(json.dumps(_entry("simcse", 42, 83.0, 70.0, limited=True)))
    text = module.write_table().read_text()
    assert "| simcse | 1 | 84.00 |" in text  # the stamped rerun, not the archived file
    assert "| focal | 1 | 82.00 |" in text
    assert f"without a provenance stamp: `{tmp_path}/archive/*.json`" in text


def test_select_table_fills_in_unstamped_results_from_the_archive(monkeypatch, tmp_path: Path) -> None:
    module = _load("select_dev")
    monkeypatch.setattr(module, "RESULTS", tmp_path)
    monkeypatch.setattr(module, "start_scores", lambda refresh=True: {"dev": 86.0})
    recipe = {"loss": {"name": "MarginNegationLoss", "params": {}, "recall_gamma": 0.0}, "data": {"options": {}}}
    (tmp_path / "archive").mkdir()
    for folder, variant, dev in ((tmp_path / "archive", "old", 85.5), (tmp_path, "new", 86.5)):
        entry = {"variant": variant, "recipe": recipe, "scores": {"dev": dev}}
        (folder / f"{variant}-seed42.json").write_text(json.dumps(entry))
    lines = module.write_table().read_text().splitlines()
    assert next(line for line in lines if line.startswith("| old |")).startswith("| old | 1 | 85.50 |")
    assert next(line for line in lines if line.startswith("| new |")).startswith("| new | 1 | 86.50 |")


def test_result_files_take_seed_runs_only_not_files_scored_from_them(tmp_path: Path) -> None:
    for name in ("simcse-seed42.json", "v6-seed43.json", "v6-seed43-test.json", "start.json", "select.md"):
        (tmp_path / name).write_text("{}")
    (tmp_path / runner.ARCHIVE).mkdir()
    for name in ("simcse-seed42.json", "old-seed1.json", "old-seed1-test.json"):
        (tmp_path / runner.ARCHIVE / name).write_text("{}")
    current, archived = runner.result_files(tmp_path)
    assert [path.name for path in current] == ["simcse-seed42.json", "v6-seed43.json"]
    assert [path.name for path in archived] == ["old-seed1.json"]
