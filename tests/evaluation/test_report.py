"""Report and its plots: PNGs are real plots of the numbers in results.json; the comparison table; Markdown renders."""

from __future__ import annotations

import numpy as np
import pytest

from st_debias.evaluation.bias import HISTOGRAM_EDGES
from st_debias.evaluation.plots import (
    plot_cont_oppn,
    plot_negation_histograms,
    plot_negation_meaning,
    plot_scores,
    plot_sts_subsets,
    plot_word_order_histograms,
)
from st_debias.evaluation.report import compare_table, subset_table, write_report
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
                    "oppn_sides": {
                        "high_overlap_low_score": {
                            "pairs": 225,
                            "spearman": 40.0 + shift,
                            "mean_cosine": 0.7,
                        },
                        "low_overlap_high_score": {"pairs": 217, "spearman": 30.0, "mean_cosine": 0.6},
                        "on_median": 69,
                    },
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
            "word_order": {
                "pairs": 40,
                "mean_cosine": 0.93 - shift / 100,
                "share_above": 0.6,
                "threshold": 0.9,
                "skipped_short": 0,
                "histogram": {"edges": HISTOGRAM_EDGES.tolist(), "counts": counts.tolist()},
            },
            "alignment_uniformity": {"alignment": 0.3, "uniformity": -2.0},
        },
        "sources": {
            "sts": {"STS12": {"source": "/data/sts/sts12.jsonl", "pairs": 3108, "text_field": "processed"}}
        },
    }


@pytest.fixture(autouse=True)
def _close_figures():
    """Every test draws figures; close them so that the session does not keep dozens open."""
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


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
    np.testing.assert_allclose(_bar_heights(fig), [86.0, 66.0, 40.0, 30.0, 88.0, 64.0, 42.0, 30.0])
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
    for png in ("sts_scores.png", "cont_oppn.png", "negation_cosine_hist.png", "word_order_cosine_hist.png"):
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
    assert len(fig.axes[0].patches) == 0


def test_bars_start_at_zero(two_results):
    """Issue 12: the y axis started near min − 10 (~25 here), magnifying small differences."""
    for fig in (plot_scores(two_results, "sts"), plot_cont_oppn(two_results)):
        assert fig.axes[0].get_ylim()[0] == 0.0
    negative = _entry("m", 0.0)
    negative["bias"]["cont_oppn"]["STSBenchmark"]["oppn"]["spearman"] = -12.0
    assert plot_cont_oppn([negative]).axes[0].get_ylim()[0] < -12.0


def test_average_label_says_how_many_tasks(two_results):
    """Issue 12: a one-task mean was labelled 'STS-7 avg'."""
    one = [{"model": "m", "sts": {"STSBenchmark": 80.0, "avg": 80.0}}]
    assert "| **STS avg of 1 task** | 80.00 |" in compare_table(one)
    ticks = [t.get_text() for t in plot_scores(one, "sts").axes[0].get_xticklabels()]
    assert ticks == ["STSBenchmark", "STS avg of 1 task"]
    assert "| **STS-7 avg** |" in compare_table(two_results)
    mteb = [{"model": "m", "mteb": {"STS12": 70.0, "STS12-Oppn": 60.0, "avg": 65.0}}]
    table = compare_table(mteb)
    assert "| MTEB avg of 2 tasks | 65.00 |" in table
    assert "| MTEB STS12 | 70.00 |" in table and "| MTEB STS12-Oppn | 60.00 |" in table, "one row per task"


def test_cont_oppn_title_fits_with_one_dataset(two_results):
    """Issue 12: with one eligible dataset the figure was narrower than its title, which was cut off."""
    fig = plot_cont_oppn(two_results)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    title = fig.axes[0].title.get_window_extent(renderer)
    assert title.x0 >= 0 and title.x1 <= fig.bbox.width


def test_report_shows_oppn_sides_and_word_order(two_results, tmp_path):
    table = compare_table(two_results)
    assert "| STSBenchmark Oppn: high overlap, low score (n=225) | 40.00 | 42.00 | +2.00 |" in table
    assert "| STSBenchmark Oppn: low overlap, high score, mean cosine | 0.600 | 0.600 | +0.000 |" in table
    assert "| word order mean cosine ↓ | 0.930 | 0.910 | -0.020 |" in table
    assert "| word order share > 0.9 ↓ | 0.600 | 0.600 | +0.000 |" in table
    fig = plot_word_order_histograms(two_results)
    assert len(fig.axes[0].patches) == 2


def _with_subsets(entry: dict, captions_cosine: float, captions_spearman: float) -> dict:
    entry["sts_subsets"] = {
        "STSBenchmark": {
            "main-captions": {"spearman": captions_spearman, "pairs": 625, "mean_cosine": captions_cosine},
            "main-news": {"spearman": 70.0, "pairs": 500, "mean_cosine": 0.7},
        },
        "STS12": {"MSRpar": {"spearman": None, "pairs": 1, "mean_cosine": 0.5}},
    }
    return entry


def test_subset_table_and_plot_show_the_change_from_the_first_model(two_results, tmp_path):
    """A subset whose cosines all rose (calibration) but whose ranking held: Δ mean cos without Δ Spearman."""
    results = [_with_subsets(two_results[0], 0.55, 92.0), _with_subsets(two_results[1], 0.60, 92.0)]
    lines = subset_table(results).splitlines()
    assert lines[0] == (
        "| set | subset | pairs | Spearman base | Spearman trained | Δ Spearman (last − first) | mean cos base "
        "| mean cos trained | Δ mean cos (last − first) |"
    )
    # STS12 comes before STSBenchmark (the STS-7 order); a subset without a Spearman shows '–'
    assert lines[2] == "| STS12 | MSRpar | 1 | – | – | – | 0.500 | 0.500 | +0.000 |"
    assert lines[3] == "| STSBenchmark | main-captions | 625 | 92.00 | 92.00 | +0.00 | 0.550 | 0.600 | +0.050 |"
    fig = plot_sts_subsets(results)
    spearman_bars = [patch.get_width() for patch in fig.axes[0].patches]
    cosine_bars = [patch.get_width() for patch in fig.axes[1].patches]
    np.testing.assert_allclose(spearman_bars, [np.nan, 0.0, 0.0], equal_nan=True)
    np.testing.assert_allclose(cosine_bars, [0.0, 0.05, 0.0], atol=1e-12)
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == [
        "STS12 · MSRpar", "STSBenchmark · main-captions", "STSBenchmark · main-news"
    ]
    report = write_report(results, tmp_path / "r").read_text(encoding="utf-8")
    assert "](sts_subsets.png)" in report and lines[3] in report
    assert (tmp_path / "r" / "sts_subsets.png").stat().st_size > 5000


def test_one_model_plots_its_subset_values_and_no_subsets_draws_nothing(two_results, tmp_path):
    entry = _with_subsets(_entry("outputs/base", 0.0), 0.55, 91.0)
    fig = plot_sts_subsets([entry])
    np.testing.assert_allclose([p.get_width() for p in fig.axes[0].patches], [np.nan, 91.0, 70.0], equal_nan=True)
    assert "Δ" not in subset_table([entry])
    assert subset_table(two_results) == ""
    report = write_report(two_results, tmp_path / "r").read_text(encoding="utf-8")
    assert "sts_subsets.png" not in report and not (tmp_path / "r" / "sts_subsets.png").exists()


def test_entries_without_subsets_are_left_out_and_the_first_with_them_is_the_baseline(two_results):
    """An older or hub-data entry (no ``sts_subsets``) first must not blank every bar; a NaN figure shows as '–'."""
    middle = _with_subsets(_entry("outputs/middle", 1.0), 0.50, 90.0)
    last = _with_subsets(_entry("outputs/last", 2.0), 0.60, float("nan"))
    results = [two_results[0], middle, last]
    fig = plot_sts_subsets(results)
    np.testing.assert_allclose([p.get_width() for p in fig.axes[1].patches], [0.0, 0.1, 0.0], atol=1e-12)
    assert [text.get_text() for text in fig.axes[1].get_legend().get_texts()] == ["last − middle"]
    lines = subset_table(results).splitlines()
    assert "Spearman base" not in lines[0] and "Spearman middle" in lines[0]
    assert lines[3] == "| STSBenchmark | main-captions | 625 | 90.00 | – | – | 0.500 | 0.600 | +0.100 |"


def test_report_shows_negation_meaning_by_antonym_kind_and_reads_results_without_it(two_results):
    first, second = two_results
    first["bias"]["negation_meaning"] = {"paraphrase_over_affirmative": 0.55, "paraphrase_over_negated_antonym": 0.1,
                                         "polarity_cluster": 0.05}  # written before the split existed
    second["bias"]["negation_meaning"] = {
        "paraphrase_over_affirmative": 0.6, "paraphrase_over_negated_antonym": 0.2, "polarity_cluster": 0.02,
        "by_antonym_kind": {
            "prefixed": {"items": 6, "paraphrase_over_affirmative": 0.75, "paraphrase_over_negated_antonym": 0.25},
            "other_word": {"items": 4, "paraphrase_over_affirmative": 0.5, "paraphrase_over_negated_antonym": 0.0},
        },
    }
    table = compare_table(two_results)
    assert "| negation meaning (i): not A closer to B than to A ↑ | 0.550 | 0.600 | +0.050 |" in table
    assert "| negation meaning (i), antonyms like able/unable ↑ | – | 0.750 |" in table
    assert "| negation meaning (ii), antonyms like large/small ↑ | – | 0.000 |" in table


def test_report_and_plot_show_negation_meaning_without_the_common_direction(two_results, tmp_path):
    """The table gains the direction-free rows where an entry has them; the plot draws each figure as scored and
    without the direction, and leaves out what an entry lacks."""
    first, second = two_results
    first["bias"]["negation_meaning"] = {"paraphrase_over_affirmative": 0.55, "paraphrase_over_negated_antonym": 0.1,
                                         "polarity_cluster": 0.05}  # written before the block existed
    second["bias"]["negation_meaning"] = {
        "paraphrase_over_affirmative": 0.6, "paraphrase_over_negated_antonym": 0.2, "polarity_cluster": 0.02,
        "without_negation_direction": {"paraphrase_over_affirmative": 0.3, "paraphrase_over_negated_antonym": 0.25,
                                       "polarity_cluster": 0.004, "direction_length": 0.2},
    }
    table = compare_table(two_results)
    assert "| negation meaning (i) without the negations' common direction ↑ | – | 0.300 |" in table
    assert "| negation meaning (iii) without the negations' common direction ↓ | – | 0.004 |" in table
    assert "| negation direction length | – | 0.200 |" in table
    fig = plot_negation_meaning(two_results)
    shares = [patch.get_height() for patch in fig.axes[0].patches]
    np.testing.assert_allclose(shares, [0.55, 0.1, 0.6, 0.2, 0.3, 0.25])  # first as scored; second as scored, then without
    others = [patch.get_height() for patch in fig.axes[1].patches]
    np.testing.assert_allclose(others, [0.05, np.nan, 0.02, np.nan, 0.004, 0.2])
    write_report(two_results, tmp_path)
    assert "![Negation meaning](negation_meaning.png)" in (tmp_path / "report.md").read_text(encoding="utf-8")


def test_report_preamble_describes_only_what_the_report_shows(two_results, tmp_path):
    """A transfer-only report.md opened with the STS, Cont/Oppn, negation and word-order protocol; the preamble
    now names only the kinds of figure the results hold."""
    transfer_only = [
        {"model": entry["model"], "transfer": {"MR": 75.0, "CR": 80.0, "avg": 77.5}} for entry in two_results
    ]
    text = write_report(transfer_only, tmp_path / "transfer").read_text(encoding="utf-8")
    preamble = text.split("## Summary")[0]
    assert "Transfer: SentEval" in preamble
    for other in ("STS: Spearman", "Cont/Oppn:", "Negation: CANNOT", "Word order:"):
        assert other not in preamble, other
    full = write_report(two_results, tmp_path / "full").read_text(encoding="utf-8").split("## Summary")[0]
    for shown in ("STS: Spearman", "Cont/Oppn:", "Negation: CANNOT", "Word order:"):
        assert shown in full, shown
