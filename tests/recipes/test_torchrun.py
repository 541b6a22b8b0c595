"""``st-debias train`` under ``torchrun``: two CPU (gloo) processes train one model on the tiny BERT."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow  # ~80 s on a shared 2-core CPU (two processes start torch and train)
@pytest.mark.timeout(300)
def test_train_under_torchrun_with_two_gloo_processes(tiny_bert_dir: Path, tmp_path: Path) -> None:
    """Failure: under torchrun on CPU each process trained its own model alone (no DDP), both saved and printed.

    Rank 0 builds the rows (rank 1 reads the shared cache), saves and prints once; both processes train
    in one gloo group, so every checkpoint holds one RNG state per process.
    """
    torchrun = shutil.which("torchrun") or str(Path(sys.executable).with_name("torchrun"))
    run, cache = tmp_path / "run", tmp_path / "cache"
    command = [
        torchrun, "--standalone", "--nproc_per_node", "2", "-m", "st_debias.cli", "train", "--recipe", "focal",
        "--model", str(tiny_bert_dir), "--steps", "2", "--eval-steps", "2", "--batch-size", "8",
        "--max-seq-length", "16", "--output", str(run), "--cache-dir", str(cache), "--no-eval",
    ]  # fmt: skip
    env = dict(os.environ, PYTHONPATH=str(REPO), OMP_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false")
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=REPO, timeout=280)
    assert done.returncode == 0, done.stderr[-4000:]
    assert done.stdout.count("Saved model:") == 1, "only rank 0 prints and saves"
    assert (run / "model" / "model.safetensors").exists()
    checkpoint = run / "checkpoints" / "checkpoint-2"
    assert sorted(p.name for p in checkpoint.glob("rng_state_*.pth")) == [
        "rng_state_0.pth",
        "rng_state_1.pth",
    ]
    assert len(list((cache / "rows").iterdir())) == 1, "the ranks must share one row cache entry"
    report = json.loads((run / "data_report.json").read_text())
    assert report["rows_used"] == 2 * 8 * 2, "rows budget = steps x batch size x processes"
