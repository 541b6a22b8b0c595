"""What a recipe can say about its loss: function parameters by name, the cached losses, a batch size the loss
can learn from; whatever it cannot say is refused at validation (exit 2, no files left)."""

from __future__ import annotations

import copy
import dataclasses
import math
from pathlib import Path

import pytest
import torch
import yaml
from sentence_transformers import util

from st_debias.cli import main
from st_debias.recipes import available_recipes, load_recipe, override
from st_debias.recipes.data import build_rows, read_corpus
from st_debias.recipes.losses import LOSSES, build_loss, uncached_name

CACHED = [name for name in LOSSES.builtin() if uncached_name(name)]


def _write(recipe, path: Path, **loss_changes) -> Path:
    raw = recipe.to_dict()
    raw["loss"].update(loss_changes)
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    return path


def _packaged_with(loss: str) -> str:
    return next(name for name in available_recipes() if load_recipe(name).loss.name == loss)


@pytest.mark.parametrize("name", ["cos_sim", "dot_score", "euclidean_sim", "manhattan_sim"])
def test_similarity_fct_by_its_sentence_transformers_name(name: str, tiny_model, tmp_path: Path) -> None:
    """`similarity_fct: dot_score` passed validation as a string and crashed at the first training step
    ('str' object is not callable)."""
    from datasets import Dataset

    path = _write(load_recipe("focal"), tmp_path / "r.yaml", params={"similarity_fct": name})
    recipe = load_recipe(path)
    rows = Dataset.from_dict({"anchor": ["a b", "c d"], "positive": ["a b", "c d"]})
    loss, _ = build_loss(recipe.loss, tiny_model, rows, show_progress_bar=False)
    assert loss.similarity_fct is getattr(util, name)
    embeddings = [torch.randn(2, 8, generator=torch.Generator().manual_seed(0)) for _ in range(2)]
    assert torch.isfinite(loss.compute_loss_from_embeddings(embeddings))


def test_unknown_similarity_fct_exits_2_and_leaves_no_files(tiny_bert_dir: Path, tmp_path: Path, capsys) -> None:
    path = _write(load_recipe("focal"), tmp_path / "bad.yaml", params={"similarity_fct": "dot_product"})
    with pytest.raises(ValueError, match=r"similarity_fct must be one of \['cos_sim', 'dot_score'"):
        load_recipe(path)
    out = tmp_path / "run"
    code = main(["train", "--recipe", str(path), "--model", str(tiny_bert_dir), "--output", str(out), "--no-eval"])
    assert code == 2
    error = capsys.readouterr().err
    assert str(path) in error and "dot_product" in error
    assert not out.exists()


@pytest.mark.parametrize("cached", CACHED)
def test_a_recipe_names_a_cached_loss(cached: str, tiny_model, tmp_path: Path) -> None:
    """No recipe could name a cached loss, so large batches had no command-line route."""
    from sentence_transformers import SentenceTransformerTrainer, SentenceTransformerTrainingArguments

    base = load_recipe(_packaged_with(uncached_name(cached)))
    params = {**base.loss.params, "mini_batch_size": 2}
    recipe = load_recipe(_write(base, tmp_path / "cached.yaml", name=cached, params=params))
    recipe = override(recipe, steps=1, batch_size=4, max_seq_length=16, eval_steps=1)
    if recipe.data.kind == "ipw":  # the tiny random guide puts every pair at cosine ~0.92-0.98
        options = {**recipe.data.options, "negative_range": (0.93, 0.99), "pool_size": 8}
        recipe = dataclasses.replace(recipe, data=dataclasses.replace(recipe.data, options=options))
    tiny_model.max_seq_length = 16
    rows, _ = build_rows(recipe, read_corpus(None, 40), tiny_model, cache_dir=tmp_path / "c", show_progress_bar=False)
    guide = copy.deepcopy(tiny_model).requires_grad_(False).eval() if recipe.loss.guide else None
    loss, rows = build_loss(recipe.loss, tiny_model, rows, guide=guide, show_progress_bar=False)
    inner = loss.loss if type(loss).__name__ == "RecallRegularizer" else loss  # recall_gamma wraps it
    assert type(inner).__name__ == cached and inner.mini_batch_size == 2

    before = {key: value.detach().clone() for key, value in tiny_model.named_parameters()}
    args = SentenceTransformerTrainingArguments(
        output_dir=str(tmp_path / "run"), max_steps=1, per_device_train_batch_size=4, learning_rate=1e-3,
        save_strategy="no", report_to="none", disable_tqdm=True, use_cpu=True,
    )  # fmt: skip
    result = SentenceTransformerTrainer(model=tiny_model, args=args, train_dataset=rows, loss=loss).train()
    assert math.isfinite(result.training_loss)
    assert any(not torch.equal(value, before[key]) for key, value in tiny_model.named_parameters())


@pytest.mark.parametrize("cached", CACHED)
def test_cached_loss_parameters_are_checked(cached: str, tmp_path: Path) -> None:
    base = load_recipe(_packaged_with(uncached_name(cached)))
    for params, message in (
        ({"mini_batch_size": 0}, "mini_batch_size must be a positive int"),
        ({"mini_batch_sise": 4}, r"\['mini_batch_sise'\] are not parameters"),
        ({"scale": "x"}, "loss.params for"),
    ):
        path = _write(base, tmp_path / "bad.yaml", name=cached, params=params)
        with pytest.raises(ValueError, match=message):
            load_recipe(path)


def test_batch_size_one_exits_2_before_training(tiny_bert_dir: Path, tmp_path: Path, capsys) -> None:
    """--batch-size 1 trained at loss 0 and gradient norm 0 (an in-batch loss has no negative in a batch of
    one pair), exited 0, and advised a lower learning rate."""
    out = tmp_path / "run"
    code = main(
        ["train", "--recipe", "simcse", "--model", str(tiny_bert_dir), "--output", str(out), "--batch-size", "1",
         "--steps", "2", "--no-eval"]
    )  # fmt: skip
    assert code == 2
    assert "--batch-size" in capsys.readouterr().err
    assert not out.exists()
    assert override(load_recipe("simcse"), batch_size=2).training.batch_size == 2


def test_the_recipes_page_lists_every_loss_and_function_name() -> None:
    from st_debias.recipes.config import MIN_BATCH_SIZE
    from st_debias.recipes.losses import CALLABLE_PARAMS

    page = (Path(__file__).resolve().parents[2] / "docs" / "recipes.md").read_text(encoding="utf-8")
    row = next(line for line in page.splitlines() if line.startswith("| `loss.name`"))
    for name in [*LOSSES.builtin(), *(n for names in CALLABLE_PARAMS.values() for n in names)]:
        assert f"`{name}`" in row, name
    assert f"at least {MIN_BATCH_SIZE}" in page


def test_a_cpu_run_prints_no_pin_memory_warning(tiny_bert_dir: Path, tmp_path: Path) -> None:
    """Every CPU run of `st-debias train` printed torch's "'pin_memory' ... no accelerator" UserWarning."""
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        code = main(
            ["train", "--recipe", "simcse", "--model", str(tiny_bert_dir), "--output", str(tmp_path / "run"),
             "--batch-size", "4", "--steps", "2", "--eval-steps", "2", "--max-seq-length", "16", "--no-eval",
             "--cache-dir", str(tmp_path / "cache")]
        )  # fmt: skip
    assert code == 0
    messages = [str(w.message) for w in caught]
    assert not [m for m in messages if "pin_memory" in m], messages


def test_build_loss_names_what_it_takes(tiny_model) -> None:
    """``build_loss`` takes the recipe's loss section; handing it the whole recipe is a clear error."""
    from datasets import Dataset

    recipe = load_recipe("simcse")
    with pytest.raises(TypeError, match=r"recipe's loss section \(recipe.loss\), got Recipe"):
        build_loss(recipe, tiny_model, Dataset.from_dict({"anchor": ["a"], "positive": ["a"]}))
