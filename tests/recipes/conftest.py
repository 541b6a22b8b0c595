"""Fixtures of the training-run tests: a finished focal run and the arguments of a short `st-debias train`."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from st_debias.cli import main


def train_args(model_dir: Path, output: Path, cache: Path, *extra: str) -> list[str]:
    """`st-debias train` arguments: the tiny model, batch 8, length 16, no evaluation, plus ``extra``."""
    return [
        "train", "--model", str(model_dir), "--batch-size", "8", "--max-seq-length", "16",
        "--output", str(output), "--cache-dir", str(cache), "--no-eval", *extra,
    ]  # fmt: skip


@pytest.fixture(scope="session")
def focal_run(tiny_bert_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished 4-step focal run with checkpoints at steps 2 and 4 (copy it before changing it)."""
    root = tmp_path_factory.mktemp("focal-run")
    code = main(train_args(tiny_bert_dir, root / "run", root / "cache", "--recipe", "focal", "--steps", "4",
                            "--eval-steps", "2"))  # fmt: skip
    assert code == 0
    return root / "run"


def copy_run(run: Path, tmp_path: Path) -> Path:
    """A copy of ``run`` at ``tmp_path/run``, to change."""
    target = tmp_path / "run"
    shutil.copytree(run, target)
    return target
