"""Report: PNGs are real plots of the numbers in results.json; the comparison table; Markdown renders."""

from __future__ import annotations

import numpy as np
import pytest

from st_debias.evaluation.bias import HISTOGRAM_EDGES
from st_debias.evaluation.report import (
    compare_table,
    plot_cont_oppn,
    plot_negation_histograms,
    plot_scores,
    write_report,
)
from st_debias.evaluation.sts_data import STS_TASKS


def _entry(name: str, shift: float) -> dict:
    sts = {t: 70.0 + i + shift for i, t in enumerate(STS_TASKS)}
    sts["avg"] = float(np.mean(list(sts.values())))
    counts = np.zeros(len(HISTOGRAM_EDGES) - 1, dtype=int)
    counts[80 + int(shift)] = 5
    counts[95] = 7
    return {
        "model": name,
        "fingerprint": "abc",
        "sts": sts,
        "bias": {
            "cont_oppn": {
                "STSBenchmark": {
                    "eligible": True,
                    "cont": {"pairs": 868, "spearman": 86.0 + shift},
                    "oppn": {"pairs": 511, "spearman": 66.0 - shift},
                },
                "SICK-R": {
                    "eligible": False,
                    "cont": {"pairs": 1, "spearman": None},
                    "oppn": {"pairs": 2, "spearman": None},
                },
            },
            "negation": {
                "pairs": 12,
                "mean_cosine": 0.86 - shift / 100,
                "share_above": 0.75,
                "threshold": 0.8,
                "histogram": {"edges": HISTOGRAM_EDGES.tolist(), "counts": counts.tolist()},
            },
            "alignment_uniformity": {"alignment": 0.3, "uniformity": -2.0},
        },
        "sources": {
            "sts": {"STS12": {"source": "/data/sts/sts12.jsonl", "pairs": 3108, "text_field": "processed"}}
        },
    }


@pytest.fixture
def two_results():
    return [_entry("outputs/base", 0.0), _entry("outputs/trained", 2.0)]


def _bar_heights(fig):
    return [patch.get_height() for patch in fig.axes[0].patches]


def test_score_bars_are_the_json_numbers(two_results):
    fig = plot_scores(two_results, "sts")
    heights = _bar_heights(fig)
    tasks = [*STS_TASKS, "avg"]
    expected = [r["sts"][t] for r in two_results for t in tasks]
    np.testing.assert_allclose(heights, expected)


def test_cont_oppn_bars_only_for_eligible_sets(two_results):
    fig = plot_cont_oppn(two_results)
    np.testing.assert_allclose(_bar_heights(fig), [86.0, 66.0, 88.0, 64.0])
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["STSBenchmark"]


def test_negation_histogram_draws_stored_counts(two_results):
    fig = plot_negation_histograms(two_results)
    drawn = [np.asarray(p.get_data().values) for p in fig.axes[0].patches]
    assert len(drawn) == 2
    np.testing.assert_array_equal(drawn[1], two_results[1]["bias"]["negation"]["histogram"]["counts"])


def test_compare_table_side_by_side_with_delta(two_results):
    table = compare_table(two_results)
    lines = table.splitlines()
    assert lines[0] == "| metric | base | trained | Δ (last − first) |"
    avg_line = next(line for line in lines if line.startswith("| **STS-7 avg**"))
    assert avg_line.endswith("| +2.00 |")
    assert any(line.startswith("| STSBenchmark Oppn (n=511) | 66.00 | 64.00 | -2.00 |") for line in lines)
    assert any(line.startswith("| negation mean cosine ↓ | 0.860 | 0.840 | -0.020 |") for line in lines)
    assert "SICK-R Cont" not in table
    with pytest.raises(ValueError, match="at least one"):
        compare_table([])


def test_write_report_writes_markdown_and_png_files(two_results, tmp_path):
    report = write_report(two_results, tmp_path / "r")
    text = report.read_text(encoding="utf-8")
    for png in ("sts_scores.png", "cont_oppn.png", "negation_cosine_hist.png"):
        path = tmp_path / "r" / png
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert path.stat().st_size > 5000, f"{png} looks empty"
        assert f"]({png})" in text
    assert "mteb_scores.png" not in text
    assert "/data/sts/sts12.jsonl" in text


def test_negation_histogram_without_any_negation_block_does_not_crash():
    """Issue 13: no entry with a negation block raised UnboundLocalError ('threshold') instead of drawing."""
    entry = _entry("outputs/base", 0.0)
    del entry["bias"]["negation"]
    fig = plot_negation_histograms([entry])
    assert fig.axes[0].patches == []
