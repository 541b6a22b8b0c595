"""``st-debias-torchrun``: one line and a meaningful exit code where torchrun gives exit 1 and a traceback."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from torch.distributed.elastic.multiprocessing.api import SignalException
from torch.distributed.elastic.multiprocessing.errors import ChildFailedError, ProcessFailure

from st_debias import launch

REPO = Path(__file__).resolve().parents[2]


def _failing(error: Exception):
    def run(argv):
        raise error

    return run


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_to_the_launcher_exits_128_plus_its_number(monkeypatch, capsys, number):
    monkeypatch.setattr("torch.distributed.run.main", _failing(SignalException("stop", number)))
    assert launch.main(["-m", "st_debias.cli"]) == 128 + number
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and number.name in err[0] and "--resume" in err[0]


@pytest.mark.parametrize(("exitcode", "expected", "shown"), [(2, 2, "exit code 2"), (-9, 1, "SIGKILL")])
def test_a_failed_worker_passes_its_exit_code_on(monkeypatch, capsys, tmp_path, exitcode, expected, shown):
    failure = ProcessFailure(local_rank=1, pid=123, exitcode=exitcode, error_file=str(tmp_path / "none.json"))
    monkeypatch.setattr("torch.distributed.run.main", _failing(ChildFailedError("train", {1: failure})))
    assert launch.main([]) == expected
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "rank 1" in err[0] and shown in err[0]


@pytest.mark.slow  # two processes start torch and train on a CPU
@pytest.mark.timeout(400)
def test_sigterm_to_the_launcher_stops_the_workers_with_a_checkpoint(tiny_bert_dir: Path, tmp_path: Path) -> None:
    """Failure guarded: under torchrun a SIGTERM ended with exit 1 and the launcher's traceback."""
    run, cache = tmp_path / "run", tmp_path / "cache"
    command = [
        sys.executable, "-m", "st_debias.launch", "--standalone", "--nproc_per_node", "2", "-m", "st_debias.cli",
        "train", "--recipe", "focal", "--model", str(tiny_bert_dir), "--steps", "400", "--eval-steps", "400",
        "--batch-size", "8", "--max-seq-length", "16", "--output", str(run), "--cache-dir", str(cache), "--no-eval",
    ]  # fmt: skip
    env = dict(os.environ, PYTHONPATH=str(REPO), OMP_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false")
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and not (run / "run.json").exists():
        time.sleep(1)
    time.sleep(20)  # into the training loop
    process.send_signal(signal.SIGTERM)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 128 + signal.SIGTERM, err[-3000:]
    assert "st-debias-torchrun: stopped by SIGTERM" in err
    assert "Traceback" not in err, err[-3000:]
