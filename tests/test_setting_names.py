"""One setting, one name: the paraphrase/positive generator is ``generator`` on the command line, in the build
functions and in a recipe (``paraphrases``, the recipes' older spelling, still loads as the same recipe)."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
import yaml

from st_debias.cli import build_parser
from st_debias.data.builders import build_ipw_dataset, build_negation_dataset
from st_debias.recipes import load_recipe


def test_the_generator_has_one_name(tmp_path: Path) -> None:
    """It was --generator on the command line, paraphrases= and positives= in Python, paraphrases: in a recipe."""
    args = build_parser("build").parse_args(["build", "negation", "--output", str(tmp_path), "--generator", "edits"])
    assert args.generator == "edits"
    for function in (build_negation_dataset, build_ipw_dataset):
        parameters = inspect.signature(function).parameters
        assert "generator" in parameters and not {"paraphrases", "positives"} & set(parameters)
    assert load_recipe("osscse").data.options == {"generator": "syntactic"}


def test_the_older_recipe_spelling_loads_as_the_same_recipe(tmp_path: Path) -> None:
    raw = load_recipe("osscse").to_dict()
    raw["data"]["options"] = {"paraphrases": "edits"}
    older = tmp_path / "older.yaml"
    older.write_text(yaml.safe_dump(raw), encoding="utf-8")
    raw["data"]["options"] = {"generator": "edits"}
    newer = tmp_path / "newer.yaml"
    newer.write_text(yaml.safe_dump(raw), encoding="utf-8")
    assert load_recipe(older).data == load_recipe(newer).data
    raw["data"]["options"] = {"generator": "edits", "paraphrases": "edits"}
    both = tmp_path / "both.yaml"
    both.write_text(yaml.safe_dump(raw), encoding="utf-8")
    with pytest.raises(ValueError, match="generator and paraphrases"):
        load_recipe(both)
    raw["data"]["options"] = {"generator": "magic"}
    newer.write_text(yaml.safe_dump(raw), encoding="utf-8")
    with pytest.raises(ValueError, match="data.options.generator .older name: paraphrases. must be one of"):
        load_recipe(newer)
