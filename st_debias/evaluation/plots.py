"""The report's plots, each drawn from ``results.json`` entries alone (nothing is re-measured).

Each function returns the matplotlib Figure (tests read the drawn numbers back);
:func:`~st_debias.evaluation.report.write_report` saves them next to ``report.md``.
"""

from __future__ import annotations

import textwrap
from typing import Any

import numpy as np

from st_debias.evaluation.entries import (
    CONT_OPPN_PARTS,
    _average_keys,
    _average_label,
    _labels,
    _subset_entries,
    _subset_rows,
    _subset_value,
    _task_order,
    cont_oppn_part,
    eligible_cont_oppn,
)


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _bar_limits(ax, values: list[float]) -> None:
    """Bars start at 0 (or below, for negative scores): a cut axis would magnify small differences."""
    finite = [v for v in values if v is not None and np.isfinite(v)]
    low = min([0.0, *finite])
    high = max([0.0, *finite])
    ax.set_ylim(low - 5.0 if low < 0 else 0.0, min(100.0, high + 8.0) if high > 0 else 5.0)


def plot_scores(results: list[dict[str, Any]], block: str = "sts", title: str | None = None):
    """Grouped bars: one group per task (and the average), one bar per model, heights = ``results[i][block]``.

    The y axis starts at 0; the average's tick says how many tasks it covers.
    """
    plt = _pyplot()
    labels = _labels(results)
    tasks = _task_order(results, block)
    averages = _average_keys(results, block)
    prefix = {"sts": "STS", "transfer": "Transfer"}.get(block, block.upper())
    ticks = tasks + [_average_label(results, block, prefix, key) for key in averages]
    tasks = tasks + averages
    fig, ax = plt.subplots(figsize=(max(6.0, 1.1 * len(tasks) + 3), 4.4))
    width = 0.8 / len(results)
    x = np.arange(len(tasks))
    for i, (label, r) in enumerate(zip(labels, results, strict=True)):
        heights = [r.get(block, {}).get(t, np.nan) for t in tasks]
        bars = ax.bar(x + (i - (len(results) - 1) / 2) * width, heights, width, label=label)
        ax.bar_label(bars, fmt="%.1f", fontsize=7, padding=1)
    ax.set_xticks(x, [textwrap.fill(tick, 22) for tick in ticks], rotation=20, ha="right")  # long average labels
    ax.set_ylabel({"sts": "Spearman × 100", "transfer": "accuracy × 100"}.get(block, "main score × 100"))
    _bar_limits(ax, [r.get(block, {}).get(t) for r in results for t in tasks])
    ax.set_title(title or f"{block.upper()} (cosine Spearman × 100)", fontsize=10)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    return fig


def plot_cont_oppn(results: list[dict[str, Any]]):
    """Cont, Oppn and the two sides of Oppn (where stored): Spearman per eligible dataset, bars per model.

    Colour = model; shade and hatch = part. The y axis starts at 0 (or below, for a negative Spearman).
    """
    plt = _pyplot()
    labels = _labels(results)
    datasets = list(dict.fromkeys(name for r in results for name in eligible_cont_oppn(r)))
    parts = [p for p in CONT_OPPN_PARTS if any(cont_oppn_part(r, d, p) for r in results for d in datasets)]
    styles = {
        "cont": (1.0, None),
        "oppn": (0.7, "//"),
        "high_overlap_low_score": (0.45, ".."),
        "low_overlap_high_score": (0.3, "xx"),
    }
    n_bars = len(parts) * len(results)
    fig, ax = plt.subplots(figsize=(min(16.0, max(7.5, 0.2 * n_bars * len(datasets) + 4.5)), 4.6))
    x = np.arange(len(datasets))
    width = 0.85 / max(n_bars, 1)
    values = []
    for i, (label, r) in enumerate(zip(labels, results, strict=True)):
        for j, part in enumerate(parts):
            heights = [cont_oppn_part(r, d, part).get("spearman") for d in datasets]
            values += heights
            alpha, hatch = styles[part]
            k = len(parts) * i + j
            bars = ax.bar(
                x + (k - (n_bars - 1) / 2) * width,
                [np.nan if h is None else h for h in heights],
                width,
                label=f"{label}: {CONT_OPPN_PARTS[part]}",
                hatch=hatch,
                color=f"C{i}",
                alpha=alpha,
                edgecolor="black",
                linewidth=0.4,
            )
            ax.bar_label(bars, fmt="%.1f", fontsize=6, padding=1)
    ax.set_xticks(x, datasets)
    ax.set_ylabel("Spearman × 100")
    _bar_limits(ax, values)
    ax.set_title("OssCSE Cont / Oppn splits\n(Oppn: word overlap disagrees with the gold score)", fontsize=10)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    return fig


def plot_sts_subsets(results: list[dict[str, Any]]):
    """Per STS subset, Spearman (left) and mean cosine (right); one bar per model.

    With one model the bars are its values; with several, each later model's change from the first, so a
    pooled score that moved through calibration (every cosine of one subset shifted) and not through
    ranking shows as a mean-cosine bar with no Spearman bar beside it.

    Args:
        results: ``results.json`` entries; those without ``sts_subsets`` are left out (the first one that has
            them is the baseline).
    """
    plt = _pyplot()
    entries = _subset_entries(results)
    rows = _subset_rows([r for _, r in entries])
    delta = len(entries) > 1
    base_label, base = entries[0] if entries else ("", {})
    shown = entries[1:] if delta else entries
    height_in = max(3.0, 0.28 * len(rows) * max(1, len(shown)) ** 0.5 + 1.6)
    fig, axes = plt.subplots(1, 2, figsize=(10.0, height_in), sharey=True)
    y = np.arange(len(rows))
    height = 0.8 / max(1, len(shown))
    for ax, key, unit in ((axes[0], "spearman", "Spearman × 100"), (axes[1], "mean_cosine", "mean cosine")):
        for i, (label, r) in enumerate(shown):
            values = []
            for task, subset in rows:
                value = _subset_value(r, task, subset, key)
                first = _subset_value(base, task, subset, key)
                if delta:
                    value = None if value is None or first is None else value - first
                values.append(np.nan if value is None else value)
            offsets = y + (i - (len(shown) - 1) / 2) * height
            name = f"{label} − {base_label}" if delta else label
            ax.barh(offsets, values, height, color=f"C{i + 1}" if delta else "C0", label=name)
        if delta:
            ax.axvline(0.0, color="black", linewidth=0.8)
        ax.set_xlabel(f"Δ {unit}" if delta else unit)
        ax.grid(axis="x", alpha=0.3)
    axes[0].set_yticks(y, [f"{task} · {subset}" for task, subset in rows], fontsize=7)
    axes[0].invert_yaxis()
    if shown:
        axes[1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    title = "STS per subset: change from the first model" if delta else "STS per subset"
    fig.suptitle(title + " (the protocol's score pools a set's subsets)", fontsize=10)
    fig.tight_layout()
    return fig


def plot_probe_histograms(results: list[dict[str, Any]], probe: str, xlabel: str, title: str):
    """Histogram of one probe's cosines per model (``bias.<probe>``), from the stored bin counts.

    Entries without the probe are left out; with none at all the axes are empty (no error).
    """
    plt = _pyplot()
    labels = _labels(results)
    fig, ax = plt.subplots(figsize=(7.5, 4.4))
    lowest = 1.0
    thresholds = set()
    for i, (label, r) in enumerate(zip(labels, results, strict=True)):
        block = r.get("bias", {}).get(probe)
        if not block:
            continue
        edges = np.asarray(block["histogram"]["edges"])
        counts = np.asarray(block["histogram"]["counts"])
        ax.stairs(
            counts, edges, label=f"{label} (mean {block['mean_cosine']:.3f})", color=f"C{i}", linewidth=1.5
        )
        nonzero = np.flatnonzero(counts)
        if nonzero.size:
            lowest = min(lowest, edges[nonzero[0]])
        thresholds.add(block.get("threshold"))
    for threshold in sorted(t for t in thresholds if t is not None):
        ax.axvline(threshold, color="grey", linestyle="--", linewidth=1)
    ax.set_xlim(max(-1.0, lowest - 0.04), 1.0)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("pairs")
    ax.set_title(title, fontsize=10)
    if thresholds:
        ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    return fig


def plot_negation_histograms(results: list[dict[str, Any]]):
    """Histogram of cos(sentence, negation) per model, from the stored bin counts (step outlines)."""
    return plot_probe_histograms(
        results,
        "negation",
        "cosine(sentence, its negation)",
        "CANNOT negation probe (right = negation treated as a paraphrase)",
    )


def plot_word_order_histograms(results: list[dict[str, Any]]):
    """Histogram of cos(sentence, same words shuffled) per model, from the stored bin counts."""
    return plot_probe_histograms(
        results,
        "word_order",
        "cosine(sentence, its words shuffled)",
        "Word-order probe (right = word order ignored)",
    )


def plot_negation_meaning(results: list[dict[str, Any]]):
    """The negation-meaning probe per model: (i) and (ii) as shares, then (iii) and the negation direction's
    length, each as scored (solid) and without the negated sentences' common direction (hatched), where stored.

    Entries without the probe are left out of the bars.
    """
    plt = _pyplot()
    labels = _labels(results)
    blocks = [r.get("bias", {}).get("negation_meaning") or {} for r in results]
    panels = (
        ("share of items ↑", (("paraphrase_over_affirmative", "(i) not A nearer B than A"),
                              ("paraphrase_over_negated_antonym", "(ii) not A nearer B than not B"))),
        ("cosine or length", (("polarity_cluster", "(iii) polarity cluster ↓"),
                              ("direction_length", "negation direction length"))),
    )
    fig, axes = plt.subplots(1, 2, figsize=(11.0, 4.4))
    width = 0.8 / max(2 * len(results), 1)
    for ax, (ylabel, figures) in zip(axes, panels, strict=True):
        x = np.arange(len(figures))
        for i, (label, block) in enumerate(zip(labels, blocks, strict=True)):
            removed = block.get("without_negation_direction") or {}
            for j, (source, hatch, suffix) in enumerate(((block, None, ""), (removed, "//", ", without the direction"))):
                heights = [np.nan if source.get(key) is None else source[key] for key, _ in figures]
                if np.isnan(heights).all():
                    continue
                bars = ax.bar(x + (2 * i + j - (2 * len(results) - 1) / 2) * width, heights, width, color=f"C{i}",
                              hatch=hatch, alpha=0.55 if hatch else 1.0, edgecolor="black", linewidth=0.4,
                              label=f"{label}{suffix}")
                ax.bar_label(bars, fmt="%.3f", fontsize=6, padding=1, rotation=90)
        ax.axhline(0.0, color="grey", linewidth=0.8)
        ax.set_xticks(x, [textwrap.fill(title, 18) for _, title in figures])
        ax.set_ylabel(ylabel)
        ax.margins(y=0.2)
    axes[0].set_ylim(0.0, 1.1)
    axes[1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.suptitle("Negation meaning: \"X is not A\" against \"X is B\" (B the antonym of A); hatched: without the "
                 "negated sentences' common direction", fontsize=10)
    fig.tight_layout()
    return fig
