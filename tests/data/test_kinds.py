"""The data-kind registry: every kind builds on real sentences, and every consumer reads the one registry."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest
from datasets import Dataset, load_from_disk

from st_debias.cli import main
from st_debias.data.ipw.builder import IPWBuilder
from st_debias.data.kinds import DATA_KINDS, DataKind, generator_versions
from st_debias.data.minimal_pairs import MinimalPairBuilder
from st_debias.data.paraphrase.syntactic import SyntacticParaphraser


def test_generator_versions_come_from_the_generator_classes() -> None:
    assert generator_versions() == {
        "ipw": IPWBuilder.version, "syntactic": SyntacticParaphraser.version, "minimal_pairs": MinimalPairBuilder.version,
    }
    assert generator_versions("minimal_pairs") == {
        "syntactic": SyntacticParaphraser.version, "minimal_pairs": MinimalPairBuilder.version,
    }
    assert generator_versions("negation") == {"syntactic": SyntacticParaphraser.version}
    assert generator_versions("ipw") == {"ipw": IPWBuilder.version, "syntactic": SyntacticParaphraser.version}
    assert generator_versions("simcse") == {}


@pytest.mark.parametrize("name", ["simcse", "negation", "minimal_pairs"])
def test_each_kind_builds_real_sentences_deterministically(name: str, wiki: list[str], negator) -> None:
    kind = DATA_KINDS[name]
    machinery = {"negator": negator} if name != "simcse" else {}
    first, report = kind.build(wiki[:60], seed=3, **machinery)
    again, _ = kind.build(wiki[:60], seed=3, **machinery)
    assert first.column_names[: len(kind.columns)] == list(kind.columns)
    assert len(first) > 0 and first.to_dict() == again.to_dict()
    report.check_accounting()


def test_ipw_kind_builds_with_a_guide(wiki: list[str], tiny_model, tmp_path) -> None:
    rows, report = DATA_KINDS["ipw"].build(
        wiki[:40], seed=0, model=tiny_model, cache_dir=tmp_path, options={"pool_size": 16, "negative_range": [0.93, 0.97]}
    )
    assert rows.column_names[:3] == list(DATA_KINDS["ipw"].columns) and report.rows == len(rows) > 0


def test_options_are_checked_against_the_builder() -> None:
    DATA_KINDS["minimal_pairs"].check_options({"on_missing_positive": "skip"})
    with pytest.raises(ValueError, match=r"data.options \['nope'\] are not options of the minimal_pairs builder"):
        DATA_KINDS["minimal_pairs"].check_options({"nope": 1})
    with pytest.raises(ValueError, match="generator"):
        DATA_KINDS["negation"].check_options({"generator": "backtranslation"})
    assert DATA_KINDS["negation"].option_names()[0] == "generator"
    assert "generator" not in DATA_KINDS["minimal_pairs"].option_names()


def test_a_registered_kind_reaches_every_consumer(monkeypatch, tmp_path, wiki, tiny_model) -> None:
    """Recipes, the row cache and `st-debias build` all read DATA_KINDS: one entry makes a kind usable everywhere."""
    from st_debias.recipes import config
    from st_debias.recipes.data import build_rows

    def make(sentences, *, seed, options, **_):
        from st_debias.data.io.report import start_build

        cleaned, report = start_build("reversed", sentences)
        report.rows = report.anchors = len(cleaned.sentences)
        return Dataset.from_dict({"anchor": cleaned.sentences, "positive": [s[::-1] for s in cleaned.sentences]}), report

    kind = DataKind("reversed", "(anchor, reversed anchor) pairs", ("anchor", "positive"), None, make, oversample=5)
    monkeypatch.setitem(DATA_KINDS, "reversed", kind)
    recipe_file = tmp_path / "reversed.yaml"
    recipe_file.write_text("name: reversed\nversion: 1\ndata: {kind: reversed}\ntraining: {steps: 1, batch_size: 2}\n")
    recipe = config.load_recipe(recipe_file)
    rows, report = build_rows(recipe, wiki[:4], tiny_model, cache_dir=tmp_path, show_progress_bar=False)
    assert rows["positive"][0] == wiki[0].strip()[::-1] and report["rows_used"] == 2

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(wiki[:3]) + "\n", encoding="utf-8")
    assert main(["build", "reversed", "--input", str(corpus), "--output", str(tmp_path / "out")]) == 0
    assert load_from_disk(str(tmp_path / "out" / "dataset"))["positive"][1] == wiki[1].strip()[::-1]


def test_unknown_kind_names_the_registry(tmp_path) -> None:
    from st_debias.recipes.config import load_recipe

    path = tmp_path / "bad.yaml"
    path.write_text("name: bad\nversion: 1\ndata: {kind: nope}\n")
    with pytest.raises(ValueError, match=re.escape(f"data.kind must be one of {tuple(DATA_KINDS)}")):
        load_recipe(path)


def test_build_command_makes_the_flagship_recipes_rows(tmp_path, wiki, negator) -> None:
    """`st-debias build minimal_pairs` with the st-debias recipe's options gives the rows the recipe trains on."""
    from st_debias.recipes.config import load_recipe

    recipe = load_recipe("st-debias")
    sentences = wiki[:40]
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(sentences) + "\n", encoding="utf-8")
    options = [f"--option={key}={json.dumps(value)}" for key, value in recipe.data.options.items()]
    code = main(
        ["build", "minimal_pairs", "--input", str(corpus), "--output", str(tmp_path / "out"),
         "--seed", str(recipe.training.seed), *options]
    )  # fmt: skip
    assert code == 0
    built = load_from_disk(str(tmp_path / "out" / "dataset"))
    expected, _ = DATA_KINDS["minimal_pairs"].build(
        sentences, seed=recipe.training.seed, options=recipe.data.options, negator=negator
    )
    assert built.to_dict() == expected.to_dict()


def test_kinds_are_frozen_records() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        DATA_KINDS["simcse"].oversample = 2  # type: ignore[misc]
