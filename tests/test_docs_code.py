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
