"""``benchmarks/gpu/run_gpu.py`` at toy sizes on the CPU (``--device cpu --tiny``): stages step_time and memory write
stamped results that name the device and hold a row for every st_debias loss, and an uncached loss that runs out of
memory is recorded as such and not tried at larger batches. No timing or memory figure is judged."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.gpu import run_gpu


def test_the_dry_run_of_step_time_and_memory_writes_stamped_results(tiny_st_dir: Path, shared_data: Path,
                                                                     tmp_path: Path) -> None:
    assert run_gpu.main([
        "--device", "cpu", "--tiny", "--stages", "step_time", "memory", "--model", str(tiny_st_dir),
        "--step-batches", "4", "--memory-batches", "4", "8", "16", "--simulate-oom-above", "4",
        "--results-dir", str(tmp_path),
    ]) == 0
    uncached, cached = run_gpu.builtin_losses()
    assert run_gpu.BASELINE in uncached and cached

    steps = json.loads((tmp_path / "step_time.json").read_text())
    assert steps["stage"] == "step_time" and steps["tiny"] and steps["device_name"].startswith("cpu")
    assert {"commit", "dirty", "packages", "builders"} <= set(steps["provenance"])
    assert steps["uptime_before"]["cpus"] >= 1 and steps["tokens"] == 32
    losses = {row["loss"] for row in steps["rows"]}
    assert losses == set(uncached)
    for row in steps["rows"]:
        assert row["precision"] in {"bf16", "fp32"} and row["batch_size"] == 4
        assert len(row["step_times_s"]) == run_gpu.TINY["steps"] and row["median_step_s"] > 0
        assert row["baseline"].startswith(run_gpu.BASELINE) and row["ratio"] > 0
    assert len(steps["rows"]) == len({row["case"] for row in steps["rows"]}) * 2  # bf16 and fp32

    memory = json.loads((tmp_path / "memory.json").read_text())
    assert memory["stage"] == "memory" and "provenance" in memory and memory["device_name"]
    names = {row["loss"] for row in memory["rows"]}
    assert set(cached) <= names and all(name.removeprefix("Cached") in names for name in cached)
    for row in memory["rows"]:
        if row["cached"] or row["batch_size"] <= 4:
            assert row["peak_mib"] is None and row["mean_step_s"] > 0  # CUDA counters only
        else:
            assert row["peak_mib"] == "oom"
    assert {row["batch_size"] for row in memory["rows"] if "not tried" in row.get("note", "")} == {16}


def test_epoch_results_name_checkpoints_relative_to_the_work_folder(tmp_path) -> None:
    from benchmarks.gpu.run_gpu import within_work_dir

    checkpoint = str(tmp_path / "simcse-seed42" / "checkpoints" / "checkpoint-625")
    entry = {"selection": {"kept": checkpoint, "metric": "eval_sts-dev_spearman_cosine"}, "rows": [checkpoint, 3]}
    assert within_work_dir(entry, tmp_path) == {
        "selection": {"kept": "simcse-seed42/checkpoints/checkpoint-625", "metric": "eval_sts-dev_spearman_cosine"},
        "rows": ["simcse-seed42/checkpoints/checkpoint-625", 3]}
