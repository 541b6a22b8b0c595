"""The lab's bounds on drift in ``select_dev.py``. ``--decay-to-start``: after each optimiser step the weights move back
toward their start values by learning rate × strength of the distance, so a rate of 1 returns them exactly to the start.
``--lora-rank``: only low-rank updates to the attention's query and value train, merged into a plain model at the end."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch
from datasets import Dataset

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "selection"))
from decay_to_start import DecayToStart  # noqa: E402
from low_rank import LowRankAdapters  # noqa: E402

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


def test_low_rank_adapters_change_query_and_value_by_rank_r_and_leave_a_plain_model(tiny_model, tmp_path: Path) -> None:
    start = {n: p.detach().clone() for n, p in tiny_model.state_dict().items()}
    _train(tiny_model, tmp_path, [LowRankAdapters(rank=2)])
    trained = tiny_model.state_dict()
    assert type(tiny_model[0].auto_model).__name__ == "BertModel", "adapters merged and removed"
    assert trained.keys() == start.keys()
    changed = {n for n in start if not torch.equal(trained[n], start[n])}
    adapted = {n for n in start if n.endswith(("query.weight", "value.weight"))}
    assert changed == adapted and len(adapted) == 4  # two layers, query and value
    for name in adapted:
        assert torch.linalg.matrix_rank((trained[name] - start[name]).double(), rtol=1e-5).item() <= 2


def test_low_rank_adapters_refuse_a_best_checkpoint_and_a_rank_below_one(tiny_model, tmp_path: Path) -> None:
    from sentence_transformers import SentenceTransformerTrainingArguments

    args = SentenceTransformerTrainingArguments(
        output_dir=str(tmp_path), load_best_model_at_end=True, eval_strategy="steps", save_strategy="steps",
        report_to="none",
    )
    with pytest.raises(ValueError, match="training.keep: last"):
        LowRankAdapters(rank=2).on_init_end(args, None, None, model=tiny_model)
    assert type(tiny_model[0].auto_model).__name__ == "BertModel", "refused before any adapter was added"
    with pytest.raises(ValueError, match="must be >= 1"):
        LowRankAdapters(0)
    assert repr(LowRankAdapters(8)) == "LowRankAdapters(rank=8, alpha=16, targets=['query', 'value'])"
