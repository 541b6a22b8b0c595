"""benchmarks/minimal_pairs_margin/interpolate_dev.py: the weight interpolation it scores."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import torch

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "minimal_pairs_margin" / "interpolate_dev.py"


def _module(monkeypatch):
    spec = importlib.util.spec_from_file_location("bench_interpolate_dev", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "bench_interpolate_dev", module)
    spec.loader.exec_module(module)
    return module


def test_interpolated_state_mixes_floats_and_keeps_integer_buffers(monkeypatch) -> None:
    """Failure mode: the endpoints swapped (w = 1 giving the start model), or integer buffers such as BERT's
    position_ids averaged into floats that the model would then refuse or misread."""
    interpolated_state = _module(monkeypatch).interpolated_state
    start = {"weight": torch.tensor([0.0, 2.0]), "position_ids": torch.tensor([0, 1])}
    trained = {"weight": torch.tensor([4.0, -2.0]), "position_ids": torch.tensor([0, 1])}
    assert torch.equal(interpolated_state(start, trained, 1.0)["weight"], trained["weight"])
    assert torch.equal(interpolated_state(start, trained, 0.0)["weight"], start["weight"])
    mixed = interpolated_state(start, trained, 0.25)
    assert torch.allclose(mixed["weight"], torch.tensor([1.0, 1.0]))
    assert mixed["position_ids"].dtype == torch.int64 and torch.equal(mixed["position_ids"], trained["position_ids"])


def test_checkpoint_step_reads_the_folder_number(monkeypatch) -> None:
    module = _module(monkeypatch)
    folders = [Path("checkpoints/checkpoint-200"), Path("checkpoints/checkpoint-25")]
    assert [module.checkpoint_step(f) for f in sorted(folders, key=module.checkpoint_step)] == [25, 200]
