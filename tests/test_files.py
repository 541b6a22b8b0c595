"""Crash-safe writes: what a killed writer leaves behind is removed by the next run."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import time
from pathlib import Path

from st_debias.files import STALE_AFTER_S, remove_stale_staging
from st_debias.recipes.run_folder import prepare_output


def _dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def _age(path: Path, seconds: float) -> Path:
    then = time.time() - seconds
    os.utime(path, (then, then))
    return path


def test_a_killed_writers_cache_staging_is_removed_on_the_next_run(tmp_path: Path, caplog) -> None:
    """Failure: staging folders and arrays of a killed run stayed in the cache forever."""
    dead = _dead_pid()
    (tmp_path / f".rows-key.{dead}.tmp").mkdir()
    (tmp_path / f".rows-key.{dead}.tmp" / "dataset").mkdir()
    stale = [_age(tmp_path / f".rows-key.{dead}.tmp", 2 * STALE_AFTER_S)]
    stale.append(tmp_path / f"emb-key.{dead}.tmp.npy")
    stale[-1].write_bytes(b"\x93NUMPY")
    _age(stale[-1], 2 * STALE_AFTER_S)
    recent = tmp_path / f".other-key.{dead}.tmp"  # maybe another host's writer: kept until it is old
    recent.mkdir()
    running = tmp_path / f".mine.{os.getpid()}.tmp"
    running.mkdir()
    _age(running, 2 * STALE_AFTER_S)
    entry = tmp_path / "rows-key"
    entry.mkdir()
    with caplog.at_level(logging.WARNING):
        removed = remove_stale_staging(tmp_path)
    assert sorted(removed) == sorted(stale)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([recent.name, running.name, entry.name])
    assert f"Removed {stale[0]}, left by a killed writer (pid {dead})" in caplog.text


def test_a_killed_runs_staging_in_its_folder_is_removed_on_the_next_run(tmp_path: Path, caplog) -> None:
    """Failure: a run killed while saving left `.model.partial` and temporary files in --output."""
    run = tmp_path / "run"
    (run / ".model.partial").mkdir(parents=True)
    (run / ".model.partial" / "model.safetensors").write_bytes(b"\0" * 8)
    (run / ".selection.json.x1y2.tmp").write_text("{")
    with caplog.at_level(logging.WARNING):
        prepare_output(run, {"recipe": "simcse"}, resume=False, overwrite=False)
    assert sorted(p.name for p in run.iterdir()) == ["run.json"]
    assert f"Removed {run / '.model.partial'}, left half-written" in caplog.text
