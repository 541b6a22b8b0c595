"""The lab's recipe extensions (``benchmarks.harness.recipe_knobs``, registered through the
``st_debias.recipe_extensions`` entry points of ``benchmarks/pyproject.toml``): ``training.frozen_layers`` /
``freeze_embeddings``, ``training.decay_to_start``, ``loss.preservation_weight`` / ``preservation_without_dropout``
and ``data.mix_sentences`` reach a run through the seam, and a value they cannot take is refused by name."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import torch
from datasets import Dataset
from sentence_transformers import SentenceTransformer

from benchmarks.harness.decay_to_start import DecayToStart
from benchmarks.harness.recipe_knobs import freeze_lower_layers
from st_debias.losses import MarginNegationLoss, SimilarityPreservation
from st_debias.recipes import load_recipe, override, train_recipe
from st_debias.recipes.extensions import RECIPE_EXTENSIONS
from tests.conftest import train_tiny


def test_the_lab_registers_its_settings_through_entry_points() -> None:
    assert {"frozen_layers", "decay_to_start", "preservation", "mix_sentences"} <= set(RECIPE_EXTENSIONS)
    assert "frozen_layers" not in RECIPE_EXTENSIONS.builtin(), "st_debias registers no extension of its own"


# training.frozen_layers and training.freeze_embeddings

def _weights(model: SentenceTransformer) -> dict[str, torch.Tensor]:
    return {name: tensor.detach().clone() for name, tensor in model.state_dict().items()}


def _train_and_compare(tiny_bert_dir: Path, tmp_path: Path, frozen: tuple[str, ...], free: tuple[str, ...], **settings):
    start = _weights(SentenceTransformer(str(tiny_bert_dir)))
    recipe = override(load_recipe("simcse"), steps=4, batch_size=8, eval_steps=4, max_seq_length=16,
                      learning_rate=1e-2, keep="last", **settings)
    result = train_recipe(recipe, model=tiny_bert_dir, output_dir=tmp_path / "run", evaluate=False,
                          cache_dir=tmp_path / "cache", show_progress_bar=False, start_as_candidate=False)
    trained = _weights(SentenceTransformer(str(result.model_dir)))
    kept = [name for name in start if any(part in name for part in frozen)]
    moved = [name for name in start if any(part in name for part in free)]
    assert kept and moved, "the tiny model has embeddings and two layers"
    assert all(torch.equal(start[name], trained[name]) for name in kept)
    for part in free:
        assert any(not torch.equal(start[name], trained[name]) for name in moved if part in name), f"{part} trains"


def test_frozen_layers_keep_their_start_weights_and_the_rest_trains(tiny_bert_dir: Path, tmp_path: Path) -> None:
    _train_and_compare(tiny_bert_dir, tmp_path, (".embeddings.", ".encoder.layer.0."), (".encoder.layer.1.",),
                       frozen_layers=1)


def test_freeze_embeddings_keeps_the_embedding_layer_alone(tiny_bert_dir: Path, tmp_path: Path) -> None:
    _train_and_compare(tiny_bert_dir, tmp_path, (".embeddings.",), (".encoder.layer.0.", ".encoder.layer.1."),
                       freeze_embeddings=True)


def test_zero_frozen_layers_leaves_every_weight_trainable(tiny_model) -> None:
    freeze_lower_layers(tiny_model, 0)
    assert all(parameter.requires_grad for parameter in tiny_model.parameters())


def test_a_count_that_leaves_no_layer_to_train_is_refused(tiny_model) -> None:
    with pytest.raises(ValueError, match="frozen_layers is 2, but the model has 2 layers"):
        freeze_lower_layers(tiny_model, 2)
    assert all(parameter.requires_grad for parameter in tiny_model.parameters()), "nothing frozen on refusal"


def test_a_count_the_model_cannot_take_stops_training_before_the_run_folder_exists(tiny_bert_dir: Path, tmp_path: Path) -> None:
    recipe = override(load_recipe("simcse"), steps=2, batch_size=8, eval_steps=2, frozen_layers=9)
    with pytest.raises(ValueError, match="frozen_layers is 9, but the model has 2 layers"):
        train_recipe(recipe, model=tiny_bert_dir, output_dir=tmp_path / "run", evaluate=False,
                     cache_dir=tmp_path / "cache", show_progress_bar=False)
    assert not (tmp_path / "run").exists()


def test_a_negative_count_or_a_non_boolean_is_refused_when_the_recipe_is_read() -> None:
    with pytest.raises(ValueError, match="training.frozen_layers must be an integer >= 0"):
        override(load_recipe("simcse"), frozen_layers=-1)
    with pytest.raises(ValueError, match="training.freeze_embeddings must be true or false"):
        override(load_recipe("simcse"), freeze_embeddings="yes")


def test_a_model_without_bert_style_layers_is_refused_by_name() -> None:
    class Plain(torch.nn.Module):
        auto_model = torch.nn.Linear(2, 2)

    with pytest.raises(ValueError, match="Linear has no embeddings and encoder.layer"):
        freeze_lower_layers([Plain()], 1)
    with pytest.raises(ValueError, match="Linear has no embeddings and encoder.layer"):
        freeze_lower_layers([Plain()], 0, embeddings_alone=True)


# training.decay_to_start


def test_decay_to_start_adds_its_pull_beside_a_users_callbacks(tiny_bert_dir, tmp_path, monkeypatch):
    """``training.decay_to_start`` (the lab's extension) adds the pull to a run, beside a user's own callbacks."""
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
    assert load_recipe(str(recipe)).extensions == {"decay_to_start": {"decay_to_start": 300}}
    recipe.write_text(body + "training: {decay_to_start: -1}\n")
    with pytest.raises(ValueError, match="decay_to_start must be >= 0"):
        load_recipe(str(recipe))
    with pytest.raises(ValueError, match="must be > 0"):
        DecayToStart(0.0)
    assert repr(DecayToStart(200)) == "DecayToStart(strength=200)"


# data.mix_sentences


@pytest.mark.parametrize(
    ("setting", "mix", "message"),
    [("0", "{negation_meaning: 0.2}", "whole number ≥ 1"), ("2.5", "{negation_meaning: 0.2}", "whole number ≥ 1"),
     ("true", "{negation_meaning: 0.2}", "whole number ≥ 1"), ("5000", "{nli: 0.2}", r"\(negation_meaning[^)]*\), but data.mix has no share of one")],
)
def test_recipe_refuses_bad_mix_sentences(tmp_path, setting, mix, message):
    path = tmp_path / "r.yaml"
    path.write_text(
        f"name: r\nversion: 1\ndata:\n  kind: minimal_pairs\n  mix: {mix}\n  mix_sentences: {setting}\n"
        "loss:\n  name: MultipleNegativesRankingLoss\n",
        encoding="utf-8",
    )
    with pytest.raises(ValueError, match=f"data.mix_sentences.*{message}"):
        load_recipe(path)


def test_mix_sentences_builds_the_negation_meaning_rows_from_more_of_the_corpus(tiny_bert_dir, tmp_path):
    """A run of 16 rows reads 32 corpus lines for its own rows; with ``data.mix_sentences: 3000`` its
    negation-meaning rows come from the first 3,000 lines, and without it from the same 32."""
    base = override(load_recipe("st-debias"), steps=2, batch_size=8, eval_steps=2, max_seq_length=16, keep="last")
    reports = {}
    for setting in (3000, None):
        extensions = {"mix_sentences": {"mix_sentences": setting}} if setting else {}
        recipe = dataclasses.replace(base, extensions=extensions)
        result = train_recipe(recipe, model=tiny_bert_dir, output_dir=tmp_path / f"run-{setting}", evaluate=False,
                              cache_dir=tmp_path / "cache", show_progress_bar=False, start_as_candidate=False)
        reports[setting] = result.data_report["mix"]["negation_meaning"]
    assert reports[3000]["sentences"] == 3000 and reports[3000]["quadruples"] >= 10 and reports[3000]["rows"] == 3
    assert reports[None]["sentences"] == 32 and reports[None]["quadruples"] < reports[3000]["quadruples"]


# loss.preservation_weight and loss.preservation_without_dropout


def test_recipe_keys_wrap_the_loss_in_similarity_preservation(tiny_model, tmp_path):
    from st_debias.recipes.extensions import recipe_extensions
    from st_debias.recipes.losses import build_loss

    path = tmp_path / "preserve.yaml"
    path.write_text(
        "name: preserve\nversion: 1\ndata: {kind: simcse}\n"
        "loss: {name: MarginNegationLoss, preservation_weight: 5, preservation_without_dropout: true}\n"
    )
    recipe = load_recipe(path)
    rows = Dataset.from_dict({"anchor": ["a"], "positive": ["a"], "negative": ["not a"]})
    loss, _ = build_loss(recipe.loss, tiny_model, rows, show_progress_bar=False, extensions=recipe_extensions(recipe))
    assert isinstance(loss, SimilarityPreservation) and loss.without_dropout and loss.weight == 5.0
    assert isinstance(loss.loss, MarginNegationLoss)
    assert recipe.to_dict()["loss"]["preservation_weight"] == 5, "the saved recipe keeps the key in its section"


@pytest.mark.parametrize(
    ("loss_section", "message"),
    [("{name: FocalInfoNCE, preservation_without_dropout: true}",
      "loss.preservation_without_dropout needs loss.preservation_weight"),
     ("{name: FocalInfoNCE, preservation_weight: 1, preservation_without_dropout: 'yes'}",
      "loss.preservation_without_dropout must be true or false"),
     ("{name: FocalInfoNCE, preservation_weight: -1}", "loss.preservation_weight must be a finite number >= 0"),
     ("{name: CachedFocalInfoNCE, preservation_weight: 1}", "cannot wrap the cached CachedFocalInfoNCE.*use FocalInfoNCE")],
)
def test_bad_preservation_settings_are_refused_by_name(tmp_path, loss_section, message):
    path = tmp_path / "bad.yaml"
    path.write_text(f"name: r\nversion: 1\ndata: {{kind: simcse}}\nloss: {loss_section}\n")
    with pytest.raises(ValueError, match=message):
        load_recipe(path)
