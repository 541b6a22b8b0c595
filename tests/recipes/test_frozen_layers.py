"""``training.frozen_layers`` and ``training.freeze_embeddings``: the embedding layer (and the first N transformer
layers) keep their start weights through training, the layers above them train, and a setting the model cannot
take is refused by name."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from sentence_transformers import SentenceTransformer

from st_debias.recipes import load_recipe, override, train_recipe
from st_debias.recipes.train import freeze_lower_layers


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
    with pytest.raises(ValueError, match="training.frozen_layers must be >= 0"):
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
