"""The quickstart notebook runs headless from top to bottom (tiny model, a few steps), so it cannot rot."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "quickstart.ipynb"


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
