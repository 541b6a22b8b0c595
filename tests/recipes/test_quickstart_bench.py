"""benchmarks/quickstart/bench_main_job.py: stage timing from the ``[st-debias]`` lines, cold environment, --dry."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _bench():
    path = REPO / "benchmarks" / "quickstart" / "bench_main_job.py"
    spec = importlib.util.spec_from_file_location("bench_main_job", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_stages_are_timed_between_announcements() -> None:
    bench = _bench()
    Line = bench.Line
    lines = [
        Line(4.0, "Loading weights: 100%"),
        Line(
            5.0,
            "[st-debias] Reusing the evaluation of all-MiniLM-L6-v2 (start) shipped with st_debias: x.json",
        ),
        Line(
            6.0, "[st-debias] Building rows: (anchor, paraphrase, negation) rows from 5,760 corpus sentences…"
        ),
        Line(
            26.0,
            "[st-debias] Scoring the start model on STS-B dev (1,500 pairs, up to 32 tokens) as checkpoint 0…",
        ),
        Line(30.0, "[st-debias] Training: 30 steps of 64 rows…"),
        Line(
            200.0,
            "[st-debias] Evaluating st-debias (trained) on STS12–16, STS-B, SICK-R: 31,835 unique sentences",
        ),
        Line(290.0, "Full report (plots, data sources): outputs/quickstart/eval/report.md"),
    ]
    found = bench.stages(lines, end=295.0)
    assert [s["stage"] for s in found] == [
        "startup (imports, model load)",
        "evaluation before (start model)",
        "rows",
        "start model on STS-B dev (selection)",
        "training",
        "evaluation after (trained model) + report",
    ]
    assert [s["wall_s"] for s in found] == [5.0, 1.0, 20.0, 4.0, 170.0, 95.0]
    assert sum(s["wall_s"] for s in found) == 295.0


def test_a_rejected_reuse_and_the_evaluation_it_causes_are_one_stage() -> None:
    bench = _bench()
    lines = [
        bench.Line(
            2.0,
            "[st-debias] Not reusing the packaged evaluation x.json: data checksums differ (sts/sts12.jsonl)",
        ),
        bench.Line(2.1, "[st-debias] Evaluating all-MiniLM-L6-v2 (start) on STS12–16…"),
        bench.Line(90.0, "[st-debias] Building rows: …"),
    ]
    found = bench.stages(lines, end=100.0)
    assert [s["stage"] for s in found][1:] == ["evaluation before (start model)", "rows"]
    assert found[1]["wall_s"] == 88.0 and len(found[1]["lines"]) == 2


def test_cold_environment_points_every_cache_at_empty_folders(tmp_path: Path, monkeypatch) -> None:
    bench = _bench()
    monkeypatch.setenv("ST_DEBIAS_CACHE", str(tmp_path / "warm"))
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "warm-datasets"))
    monkeypatch.setenv("ST_DEBIAS_DATA", "relative/data")
    env = bench.cold_environment(tmp_path / "cold")
    for variable in ("ST_DEBIAS_CACHE", "HF_HOME", "MPLCONFIGDIR"):
        folder = Path(env[variable])
        assert folder.is_dir() and not any(folder.iterdir()) and folder.is_relative_to(tmp_path / "cold")
    assert "HF_DATASETS_CACHE" not in env
    assert Path(env["ST_DEBIAS_DATA"]).is_absolute()


def test_dry_run_prints_the_readme_command_and_runs_nothing(tmp_path: Path, capsys) -> None:
    bench = _bench()
    assert bench.main(["--dry", "--results-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert bench.README_ARGS in out
    # The benchmark times the README's own command: the two must not drift apart.
    assert f"st-debias {bench.README_ARGS}" in (REPO / "README.md").read_text(encoding="utf-8")
    assert not any(tmp_path.iterdir())


def test_result_files_name_paths_in_this_checkout_relative_to_it() -> None:
    bench = _bench()
    shipped = f"{bench.REPO}/st_debias/evaluation/packaged/all-MiniLM-L6-v2.json"
    record = {
        "output_tail": [f"Reusing …: {shipped} (same weights)"],
        "summary": [{"reused_from": {"path": shipped}}],
        "wall_s": 1.5,
    }
    portable = bench.repo_relative(record)
    assert portable["output_tail"] == [
        "Reusing …: st_debias/evaluation/packaged/all-MiniLM-L6-v2.json (same weights)"
    ]
    assert (
        portable["summary"][0]["reused_from"]["path"] == "st_debias/evaluation/packaged/all-MiniLM-L6-v2.json"
    )
    assert portable["wall_s"] == 1.5 and str(bench.REPO) not in str(portable)
