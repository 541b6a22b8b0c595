"""Docs that cannot disagree with the code: the README's Python example runs as written, and docs/cli.md
lists exactly the options of the argparse parsers."""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_readme_python_example_runs_offline(tmp_path: Path) -> None:
    """The README's example named a hub id, so it failed under the README's own HF_HUB_OFFLINE=1 setup."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", readme, flags=re.S)
    assert blocks, "the README has no Python example"
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "HF_HOME": str(tmp_path / "hf"),  # a fresh machine: nothing downloaded from the hub before
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    for block in blocks:
        done = subprocess.run(
            [sys.executable, "-c", block], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
        )
        assert done.returncode == 0, done.stderr[-3000:]


def _parser_options(command: str) -> set[str]:
    """Every long option of ``st-debias <command>``, as argparse defines it (``--help`` aside)."""
    from st_debias.cli import build_parser

    parser = build_parser(command)
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[command]
    return {o for action in sub._actions for o in action.option_strings if o.startswith("--")} - {"--help"}


def _doc_section(command: str) -> str:
    page = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    match = re.search(rf"^## st-debias {command}\n(.*?)(?=^## |\Z)", page, flags=re.S | re.M)
    assert match, f"docs/cli.md has no section for st-debias {command}"
    return match.group(1)


@pytest.mark.parametrize("command", ["train", "eval", "build"])
def test_cli_page_lists_exactly_the_parsers_options(command: str) -> None:
    """docs/cli.md omitted --mteb-tasks, --quick-eval, --overwrite, --word-order-lines, --start-as-candidate
    and --generator, which the parsers have."""
    section = _doc_section(command)
    documented = set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", section))
    options = _parser_options(command)
    assert sorted(options - documented) == [], f"st-debias {command}: options missing from docs/cli.md"
    assert sorted(documented - options) == [], f"st-debias {command}: docs/cli.md names options the parser lacks"


def _api_entries(page: str) -> set[str]:
    return set(re.findall(r"^::: ([\w.]+)$", (ROOT / "docs" / "api" / page).read_text(encoding="utf-8"), flags=re.M))


def test_api_reference_is_generated_for_every_public_name() -> None:
    """The reference is mkdocstrings' rendering of the docstrings (built strict in CI), never a copied table;
    a public name missing from it fails here."""
    import yaml

    import st_debias.data
    import st_debias.evaluation
    import st_debias.losses
    import st_debias.recipes

    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    assert any("mkdocstrings" in (p if isinstance(p, str) else next(iter(p))) for p in config["plugins"])
    assert {f"st_debias.losses.{n}" for n in st_debias.losses.__all__} <= _api_entries("losses.md")
    assert {f"{m}.{n}" for n, m in st_debias.data._EXPORTS.items()} <= _api_entries("data.md")
    assert {f"{m}.{n}" for n, m in st_debias.recipes._EXPORTS.items()} <= _api_entries("recipes.md")
    functions = [n for n in st_debias.evaluation.__all__ if callable(getattr(st_debias.evaluation, n))]
    documented = {entry.rsplit(".", 1)[1] for entry in _api_entries("evaluation.md")}
    assert set(functions) - documented == set()


def test_loss_pages_carry_no_hand_written_parameter_tables() -> None:
    """docs/losses/margin_negation.md's copied table lacked return_parts and similarity_fct."""
    for page in sorted((ROOT / "docs" / "losses").glob("*.md")):
        text = page.read_text(encoding="utf-8")
        assert not re.search(r"^\| argument \|", text, flags=re.M), page.name
        if "## Parameters" in text:
            assert "../api/losses.md#st_debias.losses." in text.split("## Parameters", 1)[1], page.name


def test_losses_overview_lists_every_loss_and_keeps_its_temperature_promise() -> None:
    """The overview promised `loss.temperature` of every loss (7 classes lacked it) and its table omitted
    SimilarityPreservation and the cached losses."""
    import inspect

    import st_debias.losses

    page = (ROOT / "docs" / "losses" / "index.md").read_text(encoding="utf-8")
    table = page.split("## Conventions", 1)[0]
    for name in st_debias.losses.__all__:
        assert f"[`{name}`]" in table, name
        cls = getattr(st_debias.losses, name)
        if "scale" in inspect.signature(cls).parameters or name.startswith("Cached"):
            inner = st_debias.losses.FocalInfoNCE(None, scale=10.0)
            loss = cls(None, inner) if name == "CachedLoss" else cls(None, scale=10.0)
            assert loss.temperature == pytest.approx(0.1), name
        else:
            assert "have none" in page and f"`{name}`" in page.split("**Temperature.**", 1)[1].split("\n- ", 1)[0]


def test_margin_negation_page_says_what_the_loss_returns() -> None:
    """The page said the loss returns a dict; it returns one tensor unless return_parts=True."""
    import torch

    from st_debias.losses import MarginNegationLoss

    embeddings = [torch.randn(3, 4, generator=torch.Generator().manual_seed(i)) for i in range(4)]
    assert isinstance(MarginNegationLoss(None).compute_loss_from_embeddings(embeddings), torch.Tensor)
    page = (ROOT / "docs" / "losses" / "margin_negation.md").read_text(encoding="utf-8")
    assert "The loss returns a dict" not in page
    assert "returns one tensor" in page and "With `return_parts=True` it returns the\ndict" in page


def test_builder_pages_name_the_default_paraphraser() -> None:
    """docs/builders/osscse.md and paraphrase.md gave chained word edits as OssCSEBuilder's default."""
    from st_debias.data import OssCSEBuilder

    default = type(OssCSEBuilder().paraphrase_generators[0]).__name__
    osscse = (ROOT / "docs" / "builders" / "osscse.md").read_text(encoding="utf-8")
    row = next(line for line in osscse.splitlines() if line.startswith("| `paraphrase_generators`"))
    assert f"`[{default}]`" in row
    paraphrase = (ROOT / "docs" / "builders" / "paraphrase.md").read_text(encoding="utf-8")
    assert "is the default of `OssCSEBuilder`" not in paraphrase and f"its default is `{default}`" in paraphrase
