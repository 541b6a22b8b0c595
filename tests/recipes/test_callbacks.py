"""GradientShareCallback: each loss part's share of the gradient norm reaches the trainer's logs; a user's callbacks
reach the trainer of a recipe run."""

from __future__ import annotations

import math

import pytest
from datasets import Dataset

from st_debias.losses import MarginNegationLoss, RecallRegularizer
from st_debias.recipes.callbacks import GradientShareCallback


def test_shares_are_logged_and_sum_to_one(tiny_model, tmp_path):
    from sentence_transformers import SentenceTransformerTrainer, SentenceTransformerTrainingArguments

    rows = Dataset.from_dict({
        "anchor": ["the cat sat on the mat", "stocks fell sharply today", "a man plays a guitar", "rain is expected"],
        "positive": ["the mat had a cat on it", "shares dropped steeply", "a guitar is played by a man", "rain is due"],
        "negative": ["the cat did not sit", "stocks rose sharply today", "a guitar plays a man", "rain is not expected"],
    })
    inner = MarginNegationLoss(tiny_model, alpha=0.5, beta=0.6, margin_weight=1.0, return_parts=True)
    loss = RecallRegularizer(tiny_model, inner, gamma=0.0, return_parts=True)
    callback = GradientShareCallback(loss, every=1)
    args = SentenceTransformerTrainingArguments(
        output_dir=str(tmp_path), max_steps=2, per_device_train_batch_size=4, report_to="none",
        logging_steps=1, save_strategy="no", disable_tqdm=True,
    )
    trainer = SentenceTransformerTrainer(model=tiny_model, args=args, train_dataset=rows, loss=loss, callbacks=[callback])
    trainer.train()
    logged = [e for e in trainer.state.log_history if "grad_share/margin" in e]
    assert len(logged) == 2
    for entry in logged:
        shares = [v for k, v in entry.items() if k.startswith("grad_share/")]
        assert math.isclose(sum(shares), 1.0, rel_tol=1e-9)
        assert entry["grad_norm/margin"] > 0 and entry["grad_norm/contrastive"] > 0
        assert entry["grad_share/recall"] == 0.0  # gamma 0 and parameters at their start: no gradient
    callback.remove()


def test_every_must_be_positive(tiny_model):
    with pytest.raises(ValueError, match="every"):
        GradientShareCallback(MarginNegationLoss(tiny_model), every=0)


def test_train_recipe_passes_a_users_callbacks_to_the_trainer(tiny_bert_dir, tmp_path):
    """``train_recipe(callbacks=...)``: a user's TrainerCallback sees every step of the run, beside the recipe's own."""
    from transformers import TrainerCallback

    from st_debias.recipes import load_recipe, override, train_recipe

    class CountSteps(TrainerCallback):
        def __init__(self) -> None:
            self.steps: list[int] = []

        def on_step_end(self, args, state, control, **kwargs):
            self.steps.append(state.global_step)

    counter = CountSteps()
    recipe = override(load_recipe("simcse"), steps=3, batch_size=8, eval_steps=3, max_seq_length=16)
    train_recipe(recipe, model=tiny_bert_dir, output_dir=tmp_path / "run", evaluate=False, cache_dir=tmp_path / "cache",
                 show_progress_bar=False, start_as_candidate=False, callbacks=[counter])
    assert counter.steps == [1, 2, 3]
