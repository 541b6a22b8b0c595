"""The default model's reference figures have one home, the packaged evaluation: tests read them from there and
the docs show them as stored."""

from __future__ import annotations

import json
import re
from pathlib import Path

from st_debias.evaluation.reuse import packaged_dir

ROOT = Path(__file__).resolve().parents[2]


def _packaged_result() -> dict:
    return json.loads((packaged_dir() / "all-MiniLM-L6-v2.json").read_text(encoding="utf-8"))["result"]


def _sts_literals() -> set[str]:
    """The STS-7 figures as the tests and docs round them (two decimals)."""
    return {f"{value:.2f}" for value in _packaged_result()["sts"].values()}


def test_no_test_copies_the_packaged_figures() -> None:
    """Failure guarded: tests/evaluation/test_reproduction_slow.py held its own copy of the STS-7 figures,
    which drifts when the packaged evaluation is regenerated. A file with three or more of them is a copy."""
    literals = _sts_literals()
    assert len(literals) == 8, "the packaged entry lost STS figures"
    copies = {}
    for path in sorted((ROOT / "tests").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        found = {literal for literal in literals if re.search(rf"(?<![\d.]){re.escape(literal)}(?!\d)", text)}
        if len(found) >= 3:
            copies[str(path.relative_to(ROOT))] = sorted(found)
    assert not copies, f"read them from packaged_dir() instead: {copies}"


def test_docs_reference_table_shows_the_packaged_figures() -> None:
    """Failure guarded: docs/evaluation.md's "Reference figures" table and the packaged evaluation (what
    `st-debias train` prints as the start model) disagree."""
    result = _packaged_result()
    page = (ROOT / "docs" / "evaluation.md").read_text(encoding="utf-8")
    section = page.split("## Reference figures for the default model", 1)[1].split("\n## ", 1)[0]
    rows = dict(re.findall(r"^\| (.+?) \| (.+?) \|$", section, flags=re.M))
    sts = {task: f"{value:.2f}" for task, value in result["sts"].items()}
    assert rows["STS12 / 13 / 14 / 15 / 16"] == " / ".join(sts[f"STS1{i}"] for i in range(2, 7))
    assert rows["STS-B test / SICK-R (4,927 pairs)"] == f"{sts['STSBenchmark']} / {sts['SICK-R']}"
    assert rows["STS-7 average"] == sts["avg"]
    block = result["bias"]["cont_oppn"]["STSBenchmark"]
    assert rows["STS-B test Cont / Oppn"] == (
        f"{block['cont']['pairs']} pairs, {block['cont']['spearman']:.2f} / "
        f"{block['oppn']['pairs']} pairs, {block['oppn']['spearman']:.2f}"
    )
    negation = result["bias"]["negation"]
    assert rows[f"CANNOT, first {negation['pairs']:,} pairs"] == (
        f"mean cosine {negation['mean_cosine']:.3f}, {100 * negation['share_above']:.1f} % above {negation['threshold']}"
    )
    spread = result["bias"]["alignment_uniformity"]
    shown = f"{spread['alignment']:.3f} / {spread['uniformity']:.3f}".replace("-", "\N{MINUS SIGN}")
    assert rows[f"alignment / uniformity ({spread['dataset'].replace('STSBenchmark', 'STS-B')} test)"] == shown
    meaning = result["bias"]["negation_meaning"]
    removed = meaning["without_negation_direction"]
    figures = ("paraphrase_over_affirmative", "paraphrase_over_negated_antonym", "polarity_cluster")
    assert rows[f"negation meaning (i) / (ii) / (iii), {meaning['items']} items"] == " / ".join(
        f"{meaning[key]:.3f}" for key in figures
    )
    assert rows["the same without the negations' common direction; its length"] == (
        " / ".join(f"{removed[key]:.3f}" for key in figures) + f"; {removed['direction_length']:.3f}"
    )
