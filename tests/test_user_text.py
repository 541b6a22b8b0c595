"""Text a user reads that must follow the code and the data: sentence counts, the data kinds a recipe may
name, the defaults in ``--help``, the quickstart notebook's prose and the keys its last cell reads."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import nbformat

from st_debias.data.kinds import DATA_KINDS
from st_debias.recipes.config import load_recipe

ROOT = Path(__file__).resolve().parents[1]
PACKAGED = ROOT / "st_debias" / "evaluation" / "packaged" / "all-MiniLM-L6-v2.json"


def test_full_evaluation_sentence_count_in_the_docs_is_the_datas() -> None:
    """The README and docs/evaluation.md said 33,835 sentences; the evaluation encodes 35,319 since the
    negation-meaning probe joined it. The packaged evaluation records the count its run encoded (its key holds
    the checksum of every data file), and each page's figure must equal it."""
    encoded = json.loads(PACKAGED.read_text(encoding="utf-8"))["result"]["encoded_sentences"]
    pages = {
        "README.md": r"full STS12–16, STS-B, SICK-R suite \(([\d,]+) sentences with the bias probes",
        "docs/evaluation.md": r"STS-7 \+ bias evaluation encodes ([\d,]+) sentences",
    }
    for page, pattern in pages.items():
        found = re.search(pattern, (ROOT / page).read_text(encoding="utf-8"))
        assert found, f"{page}: the sentence count was not found"
        assert int(found.group(1).replace(",", "")) == encoded, page


def test_help_texts_state_no_stale_counts_or_defaults() -> None:
    """``train --help`` said "recipe default 200" (st-debias trains 500) and "13,310 instead of 31,835
    sentences"; defaults and counts now come from the recipe and the run, never from a copied number."""
    from st_debias.cli import build_parser

    parser = build_parser("train")
    sub = next(a for a in parser._actions if a.dest == "command").choices["train"]
    text = sub.format_help()
    assert "default 200" not in text and "31,835" not in text and "13,310" not in text
    assert load_recipe("st-debias").training.steps != 200  # the case the old text got wrong


def test_recipes_page_lists_every_data_kind() -> None:
    """docs/recipes.md listed four data.kind values; paraphrase also trains."""
    page = (ROOT / "docs" / "recipes.md").read_text(encoding="utf-8")
    row = next(line for line in page.splitlines() if line.startswith("| `data.kind` |"))
    assert set(re.findall(r"`(\w+)`", row)) - {"data"} == set(DATA_KINDS.builtin())


def _notebook() -> list:
    return nbformat.read(ROOT / "notebooks" / "quickstart.ipynb", as_version=4).cells


def test_quickstart_prose_describes_the_recipe_it_trains() -> None:
    """The notebook said it builds (anchor, syntactic paraphrase, negation) rows and keeps the best checkpoint:
    version 3's recipe. Its Train section now names the current recipe's kind, mix sources and kept weights."""
    recipe = load_recipe("st-debias")
    train = next(cell.source for cell in _notebook() if cell.cell_type == "markdown" and cell.source.startswith("## Train"))
    assert DATA_KINDS[recipe.data.kind].description in train
    for source in recipe.data.mix:
        assert f"data.mix: {source}" in train
    assert f"training.keep: {recipe.training.keep}" in train


def test_quickstart_last_cell_reads_keys_the_row_report_has() -> None:
    """The last cell asked for a ``negation_rules`` key the row report never had (it printed nothing)."""
    from st_debias.data.io.report import BuildReport

    source = next(cell.source for cell in reversed(_notebook()) if cell.cell_type == "code")
    keys = {
        node.value
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }
    read = keys & {"rows_used", "skipped", "generators", "mix", "statistics", "rules", "negation_rules"}
    written = set(BuildReport(builder="any").as_dict()) | {"rows_used"} | ({"mix"} if load_recipe("st-debias").data.mix else set())
    assert read and read <= written, sorted(read - written)


def test_backend_timing_table_in_the_docs_is_the_benchmarks() -> None:
    """docs/evaluation.md's table of evaluation times by backend states, per row, the wall seconds of the committed
    timing runs (``benchmarks/backends/results/``), rounded to the digits the page gives."""
    results = ROOT / "benchmarks" / "backends" / "results"
    models = {"all-MiniLM-L6-v2": "minilm", "all-mpnet-base-v2": "mpnet"}
    tasks = {"STS-7 + bias": "backends", "seven transfer tasks": "backends_transfer"}
    columns = ("torch", "openvino", "onnx")
    row = re.compile(r"^\| (\S+), ([^|]+?) \| ([\d,.]+) s \| ([\d,.]+) s \| ([\d,.]+) s \|", re.MULTILINE)
    found = row.findall((ROOT / "docs" / "evaluation.md").read_text(encoding="utf-8"))
    assert len(found) == 4, found
    for model, task, *seconds in found:
        runs = json.loads((results / f"{models[model]}_{tasks[task]}.json").read_text(encoding="utf-8"))["runs"]
        for backend, stated in zip(columns, seconds, strict=True):
            digits = len(stated.partition(".")[2])
            assert float(stated.replace(",", "")) == round(runs[backend]["wall_s"], digits), (model, task, backend)


def test_gpu_speed_and_memory_table_in_the_loss_docs_is_the_benchmarks() -> None:
    """docs/losses/index.md's GPU table states, per loss, the committed GPU benchmark's step-time ratios at batch 512
    and its Cached form's peak memory (``benchmarks/gpu/results/``), rounded as the page gives them."""
    results = ROOT / "benchmarks" / "gpu" / "results"
    steps = json.loads((results / "step_time.json").read_text(encoding="utf-8"))["rows"]
    memory = json.loads((results / "memory.json").read_text(encoding="utf-8"))["rows"]
    row = re.compile(r"^\| `(\w+)`[^|]* \| ([\d.]+) \| ([\d.]+) \| ([\d,]+) \| ([\d,]+) \| ([\d,]+) \|$", re.MULTILINE)
    found = row.findall((ROOT / "docs" / "losses" / "index.md").read_text(encoding="utf-8"))
    assert len(found) == 5, found
    for loss, bf16, fp32, *peaks in found:
        for precision, stated in (("bf16", bf16), ("fp32", fp32)):
            ratio = next(r["ratio"] for r in steps if r["loss"] == loss and r["precision"] == precision
                         and r["batch_size"] == 512 and (loss != "MultipleNegativesRankingLoss" or r["columns"] == 2))
            assert float(stated) == round(ratio, 2), (loss, precision)
        for batch, stated in zip((512, 4096, 8192), peaks, strict=True):
            peak = next(r["peak_mib"] for r in memory if r["loss"] == f"Cached{loss}" and r["batch_size"] == batch)
            assert int(stated.replace(",", "")) == round(peak), (loss, batch)


def test_one_epoch_figures_in_the_decisions_page_are_the_gpu_results() -> None:
    """The decisions page's one-epoch paragraph gives each figure for the run and axis the GPU study's result
    files give it (through ``benchmarks/gpu/report.py``'s own table, rounded as the table rounds)."""
    from benchmarks.gpu.report import epoch_table

    rows = {line.split(" | ")[0].removeprefix("| ").split(" ")[0]: [cell.strip("* |") for cell in line.split(" | ")]
            for line in epoch_table()[2:]}
    header = [cell.strip("| ") for cell in epoch_table()[0].split(" | ")]
    start, simcse, st_debias = (dict(zip(header, rows[name], strict=True)) for name in ("start", "simcse-seed42", "st-debias-seed42"))
    page = (ROOT / "docs" / "decisions.md").read_text(encoding="utf-8")
    paragraph = " ".join(page[page.index("At the papers' budget of one epoch"):].split("\n\n")[0].split())
    expected = [
        f"scores {st_debias['STS-7']} on the STS-7 (start {start['STS-7']};",
        f"step {simcse['kept (STS-B dev)'].split()[1]}, {simcse['STS-7']})",
        f"{st_debias['STS-B Oppn']} on the STS-B Oppn split ({start['STS-B Oppn']}; `simcse` {simcse['STS-B Oppn']})",
        f"CANNOT {st_debias['CANNOT ↓']} ({start['CANNOT ↓']})",
        f"word order {st_debias['word order ↓']} ({start['word order ↓']})",
        f"negation meaning (ii) {st_debias['(ii) ↑']} ({start['(ii) ↑']})",
        f"polarity cluster of {st_debias['(iii) ↓']} ({start['(iii) ↓']})",
        f"STS13 ({st_debias['Oppn STS13']} against {start['Oppn STS13']})",
        f"(i) ({st_debias['(i) ↑']} against {start['(i) ↑']}",
    ]
    missing = [phrase for phrase in expected if phrase not in paragraph]
    assert not missing, f"docs/decisions.md's one-epoch paragraph lacks: {missing}"
