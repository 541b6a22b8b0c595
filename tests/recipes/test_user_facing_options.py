"""Every option of the library's training entry points is one a user can reach and read about: none serves the
benchmarks alone."""

from __future__ import annotations

import dataclasses
import inspect
from pathlib import Path

import pytest

from st_debias.recipes.config import DataConfig, LossConfig, TrainingConfig
from st_debias.recipes.train import train_recipe

DOCS = Path(__file__).resolve().parents[2] / "docs"

# train_recipe keyword -> the `st-debias train` flag that sets it
FLAGS = {
    "model": "--model",
    "corpus": "--corpus",
    "rows": "--rows",
    "row_columns": "--row-columns",
    "output_dir": "--output",
    "resume_from_checkpoint": "--resume",
    "evaluate": "--no-eval",
    "eval_tasks": "--eval-tasks",
    "quick_eval": "--quick-eval",
    "sts_tasks": "--sts-tasks",
    "cache_dir": "--cache-dir",
    "num_proc": "--num-proc",
    "overwrite": "--overwrite",
    "gradient_share_every": "--log-gradient-shares",
    "start_as_candidate": "--start-as-candidate",
}
# Python-only settings: the data folder (the CLI reads $ST_DEBIAS_DATA), progress bars and a user's trainer callbacks.
PYTHON_ONLY = {"data_dir", "show_progress_bar", "callbacks"}


def _train_help(capsys) -> str:
    from st_debias.cli import main

    with pytest.raises(SystemExit):
        main(["train", "--help"])
    return capsys.readouterr().out


def test_every_train_recipe_option_has_a_documented_flag(capsys) -> None:
    keywords = [
        name for name, p in inspect.signature(inspect.unwrap(train_recipe)).parameters.items()
        if p.kind is p.KEYWORD_ONLY
    ]  # fmt: skip
    assert set(keywords) == set(FLAGS) | PYTHON_ONLY
    help_text, cli_page = _train_help(capsys), (DOCS / "cli.md").read_text(encoding="utf-8")
    for keyword, flag in FLAGS.items():
        assert flag in help_text, (keyword, flag)
        assert f"`{flag}" in cli_page, (keyword, flag)


@pytest.mark.parametrize(("section", "config"), [("data", DataConfig), ("loss", LossConfig), ("training", TrainingConfig)])
def test_every_recipe_field_is_documented(section: str, config: type) -> None:
    """Each field has its row in the recipe format table (the training budget's fields share one row)."""
    page = (DOCS / "recipes.md").read_text(encoding="utf-8")
    table = page[page.index("## The format") :]
    table = table[: table.index("\n\n", table.index("| key |"))]
    training_row = next(line for line in table.splitlines() if line.startswith("| `training` |"))
    for field in dataclasses.fields(config):
        documented = f"`{field.name}`" in training_row if section == "training" else f"`{section}.{field.name}`" in table
        assert documented, f"{section}.{field.name}"
