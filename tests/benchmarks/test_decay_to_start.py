"""``select_dev.py --decay-to-start``: after each optimiser step the weights move back toward their start values by
learning rate × strength of the distance, so a rate of 1 returns them exactly to the start."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch
from datasets import Dataset

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "selection"))
from decay_to_start import DecayToStart  # noqa: E402

from st_debias.losses import MarginNegationLoss  # noqa: E402


def _train(model, tmp_path: Path, callbacks: list) -> None:
    from sentence_transformers import SentenceTransformerTrainer, SentenceTransformerTrainingArguments

    rows = Dataset.from_dict({
        "anchor": ["the cat sat on the mat", "stocks fell sharply today", "a man plays a guitar", "rain is expected"],
        "positive": ["the mat had a cat on it", "shares dropped steeply", "a guitar is played by a man", "rain is due"],
        "negative": ["the cat did not sit", "stocks rose sharply today", "a guitar plays a man", "rain is not expected"],
    })
    args = SentenceTransformerTrainingArguments(
        output_dir=str(tmp_path), max_steps=3, per_device_train_batch_size=4, learning_rate=1e-2,
        lr_scheduler_type="constant", report_to="none", save_strategy="no", disable_tqdm=True,
    )
    loss = MarginNegationLoss(model, alpha=0.5, beta=0.6, margin_weight=1.0)
    SentenceTransformerTrainer(model=model, args=args, train_dataset=rows, loss=loss, callbacks=callbacks).train()


def _distance(model, start: dict[str, torch.Tensor]) -> float:
    return sum((p.detach() - start[n]).abs().sum().item() for n, p in model.named_parameters())


def test_a_rate_of_one_returns_the_weights_to_the_start(tiny_model, tmp_path: Path) -> None:
    start = {n: p.detach().clone() for n, p in tiny_model.named_parameters()}
    _train(tiny_model, tmp_path, [DecayToStart(strength=100.0)])  # 1e-2 × 100 = 1
    largest = max((p.detach() - start[n]).abs().max().item() for n, p in tiny_model.named_parameters())
    assert largest < 1e-6, "float32 rounding only"


def test_a_partial_rate_keeps_the_weights_nearer_the_start(tiny_model_other, tiny_model, tmp_path: Path) -> None:
    start = {n: p.detach().clone() for n, p in tiny_model.named_parameters()}
    free = tiny_model_other
    free.load_state_dict(tiny_model.state_dict())
    _train(free, tmp_path / "free", [])
    _train(tiny_model, tmp_path / "decayed", [DecayToStart(strength=50.0)])
    assert 0 < _distance(tiny_model, start) < _distance(free, start)


def test_a_non_positive_strength_is_refused() -> None:
    with pytest.raises(ValueError, match="must be > 0"):
        DecayToStart(0.0)
    assert repr(DecayToStart(200)) == "DecayToStart(strength=200)"
