"""Recipes: configs validate, a recipe trains end to end, the CLI reports bad input clearly."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from st_debias.cli import main
from st_debias.recipes import available_recipes, load_recipe, override, train_recipe
from st_debias.recipes.data import build_rows, read_corpus


def test_every_packaged_recipe_loads() -> None:
    """A typo in a shipped YAML (unknown key, bad loss name) must fail here, not in a user's run."""
    names = available_recipes()
    assert {"simcse", "focal", "dclr", "debcse", "osscse", "st-debias"} <= set(names)
    for name in names:
        recipe = load_recipe(name)
        assert recipe.name == name and recipe.version >= 1 and recipe.description


def test_bad_recipes_are_named(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="Unknown recipe 'nope'.*simcse"):
        load_recipe("nope")
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\nversion: 1\nloss: {name: FocalInfoNCE, temperature: 3}\n")
    with pytest.raises(ValueError, match="unknown keys \\['temperature'\\]"):
        load_recipe(bad)
    bad.write_text("name: bad\nversion: 1\nloss: {name: NotALoss}\n")
    with pytest.raises(ValueError, match="loss.name must be one of"):
        load_recipe(bad)
    with pytest.raises(ValueError, match="Unknown training settings"):
        override(load_recipe("focal"), epochs=3)


def test_rows_are_cached(tmp_path: Path, tiny_model, monkeypatch) -> None:
    """A rerun with the same recipe, sentences and model reads the rows from disk instead of rebuilding."""
    from st_debias.recipes import data

    recipe = load_recipe("simcse")
    sentences = read_corpus(None, 40)
    first, report = build_rows(recipe, sentences, tiny_model, cache_dir=tmp_path)
    assert report["rows"] == len(first) == 40

    def fail(*args, **kwargs):
        raise AssertionError("rebuilt instead of reading the cache")

    monkeypatch.setitem(data.DATA_KINDS, "simcse", dataclasses.replace(data.DATA_KINDS["simcse"], make=fail))
    second, _ = build_rows(recipe, sentences, tiny_model, cache_dir=tmp_path)
    assert second["anchor"] == first["anchor"]


def test_row_cache_key_follows_the_paraphraser_version(tiny_model, monkeypatch) -> None:
    """Rows built by older paraphrase rules are not reused once the rules change (their version is bumped)."""
    from st_debias.data.paraphrase.syntactic import SyntacticParaphraser
    from st_debias.recipes import data

    sentences = ["The committee approved the budget."]
    negation, simcse = load_recipe("osscse"), load_recipe("simcse")
    before = data._key(negation, sentences, tiny_model), data._key(simcse, sentences, tiny_model)
    monkeypatch.setattr(SyntacticParaphraser, "version", SyntacticParaphraser.version + 1)
    assert data._key(negation, sentences, tiny_model) != before[0]
    assert data._key(simcse, sentences, tiny_model) == before[1]


def test_train_recipe_end_to_end_and_resume(tiny_bert_dir: Path, tmp_path: Path) -> None:
    """Train a recipe on the tiny model: the saved model card names the recipe and cites the loss; resuming works."""
    recipe = override(load_recipe("focal"), steps=4, batch_size=8, eval_steps=4, max_seq_length=16)
    result = train_recipe(recipe, model=tiny_bert_dir, output_dir=tmp_path / "run", evaluate=False,
                          cache_dir=tmp_path / "cache", show_progress_bar=False)
    card = (result.model_dir / "README.md").read_text()
    assert "st-debias-recipe-focal" in card and "hou2023focalinfonce" in card
    assert (result.model_dir / "st_debias_recipe.yaml").exists()
    assert result.best_checkpoint is not None
    assert any("eval_sts-dev_spearman_cosine" in entry for entry in result.log_history)

    from sentence_transformers import SentenceTransformer

    reloaded = SentenceTransformer(str(result.model_dir))
    assert reloaded.max_seq_length == 128, "the saved model must keep its own inference length, not the training one"

    longer = override(recipe, steps=6)
    resumed = train_recipe(longer, model=tiny_bert_dir, output_dir=tmp_path / "run", evaluate=False,
                           cache_dir=tmp_path / "cache", resume_from_checkpoint=True, show_progress_bar=False)
    # Restored history keeps the first run's learning rates (schedule over 4 steps); a restart from scratch
    # would have re-logged steps 1-4 with the 6-step schedule.
    first = [(e["step"], e["learning_rate"]) for e in result.log_history if "loss" in e and e["step"] <= 4]
    again = [(e["step"], e["learning_rate"]) for e in resumed.log_history if "loss" in e and e["step"] <= 4]
    assert first == again, "resume restarted from scratch"
    assert max(e["step"] for e in resumed.log_history) == 6


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--recipe", "nope"], "Unknown recipe"),
        (["--recipe", "focal", "--corpus", "/nonexistent/corpus.txt"], "Corpus file"),
        (["--recipe", "focal", "--model", "/nonexistent/model-dir"], "nonexistent"),
    ],
)
def test_cli_train_reports_bad_input(arguments: list[str], message: str, capsys, monkeypatch) -> None:
    monkeypatch.setenv("ST_DEBIAS_OFFLINE", "1")
    assert main(["train", *arguments, "--no-eval"]) == 2
    assert message in capsys.readouterr().err


def test_cli_train_runs_a_recipe(tiny_bert_dir: Path, tmp_path: Path, capsys) -> None:
    """The README's main job path: ``st-debias train`` parses, trains, saves and reports where the model went."""
    code = main([
        "train", "--recipe", "focal", "--model", str(tiny_bert_dir), "--steps", "2", "--batch-size", "8",
        "--max-seq-length", "16", "--output", str(tmp_path / "run"), "--cache-dir", str(tmp_path / "cache"), "--no-eval",
    ])
    assert code == 0
    assert (tmp_path / "run" / "model" / "model.safetensors").exists()
    captured = capsys.readouterr()
    assert "Saved model:" in captured.out
    # Each long stage says what it does, with counts, before its progress bar.
    assert "[st-debias] Building rows: (anchor, anchor) SimCSE pairs from 16 corpus sentences" in captured.err
    assert "[st-debias] Training: 2 steps of 8 rows (anchor, positive; up to 16 tokens)" in captured.err


BAD_RECIPE_FIELDS = [
    ("loss: {name: FocalInfoNCE, params: {temperature: 0.05}}",
     r"loss.params \['temperature'\] are not parameters of FocalInfoNCE; it takes \['scale', 'margin'"),
    ("loss: {name: MarginNegationLoss, params: {contrastive: views}}",
     "loss.params for MarginNegationLoss: .*contrastive must be"),
    ("loss: {name: InstanceWeightedMNRL, params: {guide: start}}", r"loss.params \['guide'\] are set by the recipe"),
    ("loss: {name: FocalInfoNCE, guide: start}", "loss.guide is read by InstanceWeightedMNRL, CachedInstanceWeightedMNRL only"),
    ("loss: {name: FocalInfoNCE, recall_gamma: -1}", "loss.recall_gamma must be a finite number >= 0"),
    ("data: {kind: ipw, options: {lambda: 0.8}}", r"data.options \['lambda'\] are not options of the ipw builder"),
    ("data: {kind: ipw, options: {weight: .nan}}", "data.options: weight must be a finite number >= 0"),
    ("data: {kind: negation, options: {paraphrases: backtranslation}}", "data.options.generator .older name: paraphrases. must be one of"),
    ("data: {kind: negation, options: {mer_range: [0.7, 0.2]}}", "data.options: mer_range must satisfy"),
    ("data: {kind: simcse, options: {num_negatives: 2}}", "data kind 'simcse' takes no options"),
    ("training: {steps: many}", "training.steps must be an integer, got 'many'"),
    ("training: {learning_rate: 0}", "training.learning_rate must be > 0"),
    ("training: {keep: final}", r"training.keep must be one of \['best', 'last'\], got 'final'"),
]


@pytest.mark.parametrize(("section", "message"), BAD_RECIPE_FIELDS)
def test_whole_recipe_is_validated_on_load(tmp_path: Path, section: str, message: str) -> None:
    """Failure mode: an unknown loss parameter (``temperature: 0.05``) or builder option failed only after the
    start-model evaluation and the row build, minutes later; now ``load_recipe`` names the file and field."""
    path = tmp_path / "bad.yaml"
    path.write_text(f"name: bad\nversion: 1\n{section}\n")
    with pytest.raises(ValueError, match=rf"Recipe {path}: {message}"):
        load_recipe(path)


def test_one_loss_registry() -> None:
    """Failure mode: the names a recipe check accepted and ``build_loss``'s class table were parallel lists that
    drifted apart. Both now read ``LOSSES``: every name in it builds, and a name outside it is refused."""
    from st_debias.recipes.losses import LOSSES, LossConfig, check_loss_config, loss_class

    for name in LOSSES.builtin():
        assert loss_class(name).__name__ == name
    with pytest.raises(ValueError, match=r"Recipe x: loss.name must be one of \('MultipleNegativesRankingLoss'"):
        check_loss_config(LossConfig(name="InfoNCE"), "x")


def test_exponent_numbers_without_a_dot_are_numbers(tmp_path: Path) -> None:
    """Failure mode: PyYAML (YAML 1.1) reads ``1e-5`` as the string '1e-5', so a recipe written like the defaults
    (``learning_rate: 3e-5``, ``margin_weight: 3e-3``) was refused as "not a number"."""
    import yaml

    path = tmp_path / "exp.yaml"
    path.write_text(
        "name: exp\nversion: 1\nloss: {name: MarginNegationLoss, params: {margin_weight: 3e-3, alpha: 1E-1}}\n"
        "training: {learning_rate: 1e-5}\ndescription: e5\n"
    )
    recipe = load_recipe(path)
    assert recipe.training.learning_rate == 1e-5
    assert recipe.loss.params == {"margin_weight": 3e-3, "alpha": 0.1}
    assert recipe.description == "e5"  # a word that only looks like an exponent stays text
    assert yaml.safe_load("x: 1e-5") == {"x": "1e-5"}  # PyYAML's own loader is left as it was
