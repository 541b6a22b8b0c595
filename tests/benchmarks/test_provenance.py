"""benchmarks/harness/provenance.py: LoadWatch refuses a timed figure when the machine was loaded; result files
in the checkout do not make the tree dirty."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from benchmarks.harness import provenance
from benchmarks.harness.provenance import LoadWatch


def _fake_uptime(load: float):
    return lambda: {"loadavg": [load, load, load], "running": "1/1", "cpus": 2, "at": "t"}


def test_a_quiet_run_is_kept(monkeypatch) -> None:
    monkeypatch.setattr(provenance, "uptime", _fake_uptime(0.2))
    monkeypatch.setattr(provenance, "_busy_cpu_seconds", iter([100.0, 100.01]).__next__)
    with LoadWatch() as watch:
        time.sleep(0.05)
    record = watch.record()
    assert record["quiet"] and record["loaded_because"] == []
    assert record["peak_rss_gib"] > 0
    watch.refuse_if_loaded()  # does not exit


def test_load_before_the_run_discards_it(monkeypatch) -> None:
    monkeypatch.setattr(provenance, "uptime", _fake_uptime(2.4))
    monkeypatch.setattr(provenance, "_busy_cpu_seconds", iter([100.0, 100.0]).__next__)
    with LoadWatch() as watch:
        pass
    assert watch.reasons_loaded() == ["1-minute load 2.40 > 1.5 before the run"]
    with pytest.raises(SystemExit, match="discarded, machine loaded: 1-minute load 2.40"):
        watch.refuse_if_loaded()
    watch.refuse_if_loaded(allow=True)


def test_other_processes_cpu_during_the_run_discards_it(monkeypatch) -> None:
    """Busy time of the machine that is not this process's counts against the run: here ~2 cores for 0.2 s
    while this process slept."""
    monkeypatch.setattr(provenance, "uptime", _fake_uptime(0.1))
    monkeypatch.setattr(provenance, "_busy_cpu_seconds", iter([50.0, 50.4]).__next__)
    with LoadWatch() as watch:
        time.sleep(0.2)
    assert watch.foreign_cores == pytest.approx(2.0, rel=0.2)
    assert "other processes used" in watch.reasons_loaded()[0]
    assert watch.record()["quiet"] is False


def test_real_counters_see_this_process_busy() -> None:
    """Without fakes: a busy loop in this process is counted as its own CPU, however busy the machine is."""
    cpu_before = time.process_time()
    with LoadWatch() as watch:
        end = time.perf_counter() + 0.3
        while time.perf_counter() < end:
            pass
    own_cpu_s = time.process_time() - cpu_before
    assert own_cpu_s > 0
    assert watch.own_cores * watch.wall_s == pytest.approx(own_cpu_s, abs=0.05)
    assert watch.foreign_cores is None or watch.foreign_cores <= (os.cpu_count() or 1) + 0.5


def test_wait_for_idle_returns_when_quiet(monkeypatch) -> None:
    loads = iter([3.0, 1.8, 0.7])
    monkeypatch.setattr(provenance, "uptime", lambda: {"loadavg": [next(loads), 0, 0]})
    assert provenance.wait_for_idle(max_load=1.0, poll_s=0.0)["loadavg"][0] == 0.7


def test_result_files_written_by_a_run_do_not_make_the_tree_dirty(tmp_path: Path) -> None:
    """A benchmark writes its results inside the checkout; only a change to other tracked files is 'dirty'."""

    from benchmarks.harness.provenance import uncommitted_changes

    def git(*args: str) -> None:
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=tmp_path, check=True,
                       capture_output=True)

    (tmp_path / "benchmarks" / "results").mkdir(parents=True)
    (tmp_path / "code.py").write_text("x = 1\n")
    (tmp_path / "benchmarks" / "results" / "run.json").write_text("{}\n")
    git("init", "-q")
    git("add", ".")
    git("commit", "-qm", "start")
    assert uncommitted_changes(tmp_path / "benchmarks") is False
    (tmp_path / "benchmarks" / "results" / "run.json").write_text('{"score": 1}\n')
    assert uncommitted_changes(tmp_path / "benchmarks") is False
    (tmp_path / "code.py").write_text("x = 2\n")
    assert uncommitted_changes(tmp_path / "benchmarks") is True


def test_command_line_names_the_script_relative_to_the_repository() -> None:
    """Failure guarded: a result file records the command with the absolute path of the machine's checkout."""
    script = Path(provenance.__file__).resolve().parents[1] / "overhead" / "overhead.py"
    assert provenance.command_line(script, ["--steps", "2"]) == "python benchmarks/overhead/overhead.py --steps 2"
    assert provenance.command_line("/elsewhere/run.py", ["a b"]) == "python run.py 'a b'"
