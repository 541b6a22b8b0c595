"""GradientShareCallback: each loss part's share of the gradient norm reaches the trainer's logs. DecayToStart
(``training.decay_to_start``): the pull toward the start weights after each step, resumed runs included."""

from __future__ import annotations

import math

import pytest
from datasets import Dataset

from st_debias.losses import MarginNegationLoss, RecallRegularizer
from st_debias.recipes.callbacks import DecayToStart, GradientShareCallback
from tests.conftest import train_tiny


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


def test_train_recipe_passes_a_users_callbacks_to_the_trainer(tiny_bert_dir, tmp_path, monkeypatch):
    """``train_recipe(callbacks=...)``: a user's TrainerCallback sees every step of the run, beside the recipe's own
    (here ``training.decay_to_start``)."""
    from transformers import TrainerCallback

    from st_debias.recipes import load_recipe, override, train_recipe

    class CountSteps(TrainerCallback):
        def __init__(self) -> None:
            self.steps: list[int] = []

        def on_step_end(self, args, state, control, **kwargs):
            self.steps.append(state.global_step)

    counter = CountSteps()
    pulls: list[float] = []
    monkeypatch.setattr(DecayToStart, "on_step_end", lambda self, *a, **k: pulls.append(self.strength))
    recipe = override(load_recipe("simcse"), steps=3, batch_size=8, eval_steps=3, max_seq_length=16, decay_to_start=5.0)
    train_recipe(recipe, model=tiny_bert_dir, output_dir=tmp_path / "run", evaluate=False, cache_dir=tmp_path / "cache",
                 show_progress_bar=False, start_as_candidate=False, callbacks=[counter])
    assert counter.steps == [1, 2, 3]
    assert pulls == [5.0, 5.0, 5.0], "training.decay_to_start adds the pull to the run"


def _distance(model, start: dict) -> float:
    return sum((p.detach() - start[n]).abs().sum().item() for n, p in model.named_parameters())


def test_decay_to_start_at_rate_one_returns_the_weights_to_the_start(tiny_model, tmp_path) -> None:
    """After each step the weights move back by learning rate × strength of their distance: 1e-2 × 100 = 1."""
    start = {n: p.detach().clone() for n, p in tiny_model.named_parameters()}
    train_tiny(tiny_model, tmp_path, [DecayToStart(strength=100.0)])
    largest = max((p.detach() - start[n]).abs().max().item() for n, p in tiny_model.named_parameters())
    assert largest < 1e-6, "float32 rounding only"


def test_decay_to_start_at_a_partial_rate_keeps_the_weights_nearer_the_start(tiny_model_other, tiny_model, tmp_path) -> None:
    start = {n: p.detach().clone() for n, p in tiny_model.named_parameters()}
    free = tiny_model_other
    free.load_state_dict(tiny_model.state_dict())
    train_tiny(free, tmp_path / "free", [])
    train_tiny(tiny_model, tmp_path / "decayed", [DecayToStart(strength=50.0)])
    assert 0 < _distance(tiny_model, start) < _distance(free, start)


def test_decay_to_start_pulls_a_resumed_run_toward_the_weights_it_began_with(tiny_model, tmp_path) -> None:
    """Failure mode: start weights copied when training begins are, on resume, the checkpoint's weights."""
    import copy

    start = {n: p.detach().clone() for n, p in tiny_model.named_parameters()}
    fresh = copy.deepcopy(tiny_model)
    train_tiny(tiny_model, tmp_path, [], steps=2, save_strategy="steps", save_steps=2)  # no pull: drifted
    assert _distance(tiny_model, start) > 0
    train_tiny(fresh, tmp_path, [DecayToStart(strength=100.0)], steps=3, resume=str(tmp_path / "checkpoint-2"))
    largest = max((p.detach() - start[n]).abs().max().item() for n, p in fresh.named_parameters())
    assert largest < 1e-6, "step 3 returned the weights to the start model's, not to the checkpoint's"


def test_decay_to_start_is_a_recipe_setting(tmp_path) -> None:
    from st_debias.recipes import load_recipe

    recipe = tmp_path / "r.yaml"
    body = "name: r\nversion: 1\ndescription: d\ndata: {kind: simcse}\nloss: {name: MultipleNegativesRankingLoss}\n"
    recipe.write_text(body + "training: {decay_to_start: 300}\n")
    assert load_recipe(str(recipe)).training.decay_to_start == 300
    recipe.write_text(body + "training: {decay_to_start: -1}\n")
    with pytest.raises(ValueError, match="decay_to_start must be >= 0"):
        load_recipe(str(recipe))
    with pytest.raises(ValueError, match="must be > 0"):
        DecayToStart(0.0)
    assert repr(DecayToStart(200)) == "DecayToStart(strength=200)"
