"""The quickstart notebook cannot rot: the default suite checks its cells against the code; the slow suite
runs it headless from top to bottom in a kernel (tiny model, a few steps)."""

from __future__ import annotations

import ast
import dataclasses
import importlib
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "quickstart.ipynb"


def _code_cells() -> list[str]:
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    return [cell.source for cell in notebook.cells if cell.cell_type == "code"]


def test_quickstart_cells_parse_import_and_read_what_train_recipe_returns(tmp_path: Path, monkeypatch) -> None:
    """Fast stand-in for the kernel run below: every cell parses, every name it imports exists, the cells
    before training run as written, and each ``result.<field>`` it reads is a field of ``TrainResult``.
    The training itself is covered by tests/recipes (test_recipes.py, test_every_recipe.py)."""
    from st_debias.recipes import TrainResult

    cells = _code_cells()
    trees = [ast.parse(source) for source in cells]
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                module = importlib.import_module(node.module)
                missing = [alias.name for alias in node.names if not hasattr(module, alias.name)]
                assert not missing, f"the notebook imports {missing} from {node.module}"
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    importlib.import_module(alias.name)
    read = {
        node.attr
        for tree in trees
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "result"
    }
    fields = {field.name for field in dataclasses.fields(TrainResult)}
    assert read and read <= fields, f"the notebook reads result.{sorted(read - fields)}, which TrainResult lacks"
    monkeypatch.setenv("QUICKSTART_OUTPUT", str(tmp_path / "quickstart"))
    monkeypatch.setenv("QUICKSTART_STEPS", "2")
    namespace: dict = {}
    before_training = cells[: next(i for i, source in enumerate(cells) if "result = train_recipe(" in source)]
    assert before_training, "no cell before the training cell"
    for source in before_training:
        exec(compile(source, str(NOTEBOOK), "exec"), namespace)
    assert namespace["recipe"].training.steps == 2 and namespace["recipe"].name == "st-debias"


@pytest.mark.slow  # a kernel, rows with spaCy, a start and an end evaluation: minutes on 2 shared cores
@pytest.mark.timeout(900)
def test_quickstart_notebook_executes(tiny_bert_dir: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("QUICKSTART_MODEL", str(tiny_bert_dir))
    monkeypatch.setenv("QUICKSTART_STEPS", "2")
    monkeypatch.setenv("QUICKSTART_BATCH", "8")
    monkeypatch.setenv("QUICKSTART_OUTPUT", str(tmp_path / "quickstart"))
    monkeypatch.setenv("ST_DEBIAS_CACHE", str(tmp_path / "cache"))
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    assert any(o.get("output_type") == "display_data" and "image/png" in o.get("data", {}) for o in outputs), "no plot shown"
    assert (tmp_path / "quickstart" / "eval" / "report.md").exists()
    printed = "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
    # the notebook trained on exactly steps x batch rows of the settings it was given (2 x 8)
    assert "rows used: 16 |" in printed, printed[:500]
