"""Every packaged recipe, end to end on a tiny budget: rows from real sentences, its loss, one training step.

Parametrised over :func:`st_debias.recipes.available_recipes`, so a new recipe is covered as soon as it ships.
"""

from __future__ import annotations

import copy
import dataclasses
import math
from pathlib import Path

import pytest
import torch

from st_debias.recipes import available_recipes, load_recipe, override
from st_debias.recipes.data import build_rows, read_corpus
from st_debias.recipes.losses import build_loss

SENTENCES = 40

# The tiny random guide puts every pair of sentences at cosine ~0.92-0.98, so DebCSE's [0.25, 0.75] negative
# range would hold no candidate; this window keeps the rows' shape with the tiny guide.
TINY_GUIDE_NEGATIVE_RANGE = (0.93, 0.99)


def _tiny_data(recipe):
    """The recipe's data section adapted to the tiny guide model (only IPW's cosine window changes)."""
    if recipe.data.kind != "ipw":
        return recipe
    options = {**recipe.data.options, "negative_range": TINY_GUIDE_NEGATIVE_RANGE, "pool_size": 8}
    return dataclasses.replace(recipe, data=dataclasses.replace(recipe.data, options=options))


@pytest.mark.parametrize("name", available_recipes())
def test_recipe_builds_rows_and_takes_one_training_step(name: str, tiny_model, tmp_path: Path) -> None:
    """Failure mode: a recipe whose rows and loss disagree (missing column, wrong label kind, a guide that
    cannot be precomputed) loaded fine but was only found out by a user's training run."""
    from sentence_transformers import SentenceTransformerTrainer, SentenceTransformerTrainingArguments
    from sentence_transformers.base.sampler import BatchSamplers

    recipe = _tiny_data(override(load_recipe(name), steps=2, batch_size=4, max_seq_length=16, eval_steps=1))
    tiny_model.max_seq_length = recipe.training.max_seq_length
    rows, report = build_rows(
        recipe,
        read_corpus(None, SENTENCES),
        tiny_model,
        cache_dir=tmp_path / "cache",
        show_progress_bar=False,
    )
    assert len(rows) >= recipe.training.batch_size, report
    guide = None
    if recipe.loss.guide is not None:
        guide = copy.deepcopy(tiny_model).requires_grad_(False).eval()
    loss, rows = build_loss(recipe.loss, tiny_model, rows, guide=guide, show_progress_bar=False)

    before = {key: value.detach().clone() for key, value in tiny_model.named_parameters()}
    args = SentenceTransformerTrainingArguments(
        output_dir=str(tmp_path / "run"),
        max_steps=1,
        per_device_train_batch_size=recipe.training.batch_size,
        learning_rate=1e-3,
        batch_sampler=BatchSamplers.NO_DUPLICATES,
        seed=recipe.training.seed,
        save_strategy="no",
        report_to="none",
        disable_tqdm=True,
        use_cpu=True,
    )
    trainer = SentenceTransformerTrainer(model=tiny_model, args=args, train_dataset=rows, loss=loss)
    result = trainer.train()

    assert result.global_step == 1
    assert math.isfinite(result.training_loss), f"recipe {name}: loss {result.training_loss}"
    changed = [key for key, value in tiny_model.named_parameters() if not torch.equal(value, before[key])]
    assert changed, f"recipe {name}: one optimizer step changed no parameter"
