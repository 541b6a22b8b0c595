"""The ``label=model`` arguments of the scripts that score several models (benchmarks/harness/trained.py)."""

from __future__ import annotations

import argparse

import pytest

from benchmarks.harness.trained import labelled_models


def parser() -> argparse.ArgumentParser:
    return argparse.ArgumentParser(prog="score")


def test_folders_the_default_model_and_hub_names_are_kept_in_order(tmp_path) -> None:
    folder = tmp_path / "run" / "model"
    folder.mkdir(parents=True)
    models = labelled_models(parser(), [f"b={folder}", "a=default", "c=sentence-transformers/all-mpnet-base-v2"])
    assert list(models) == ["b", "a", "c"]
    assert models == {"b": str(folder), "a": "default", "c": "sentence-transformers/all-mpnet-base-v2"}


@pytest.mark.parametrize(("specs", "message"), [
    (["nolabel"], "must be label=folder, got nolabel"),
    (["=somewhere"], "must be label=folder"),
    (["a="], "must be label=folder"),
    (["a=default", "a=default"], "repeated: a"),
    (["a=outputs/no/such/model"], "no model folder at outputs/no/such/model"),
    (["a=BAAI/bge-small-en-v1.5"], "no model folder at BAAI/bge-small-en-v1.5"),
])
def test_bad_arguments_exit_2_naming_them(specs, message, capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        labelled_models(parser(), specs)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err
