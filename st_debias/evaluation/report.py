"""Readable evaluation report: a Markdown page and PNG plots drawn from the ``results.json`` entries.

Every plot is computed from the entries passed in (nothing is re-measured), so the pictures and the
JSON cannot disagree. Several models are drawn side by side (e.g. before and after training).
"""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path
from typing import Any

import numpy as np

from st_debias.evaluation.sts_data import STS_TASKS
from st_debias.evaluation.transfer_data import SST2_QUICK
from st_debias.files import atomic_path, atomic_write_text

PLOT_FILES = {
    "sts": "sts_scores.png",
    "sts_subsets": "sts_subsets.png",
    "mteb": "mteb_scores.png",
    "transfer": "transfer_scores.png",
    "cont_oppn": "cont_oppn.png",
    "negation": "negation_cosine_hist.png",
    "word_order": "word_order_cosine_hist.png",
}

#: Display names of the Cont/Oppn parts, in bar order.
CONT_OPPN_PARTS = {
    "cont": "Cont",
    "oppn": "Oppn",
    "high_overlap_low_score": "Oppn: high overlap, low score",
    "low_overlap_high_score": "Oppn: low overlap, high score",
}


def _fmt(value: Any, digits: int = 2) -> str:
    if value is None:
        return "–"
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f"{value:.{digits}f}"
    return str(value)


def _labels(results: list[dict[str, Any]]) -> list[str]:
    labels = [str(r.get("model", f"model {i}")) for i, r in enumerate(results)]
    short = [Path(label).name or label for label in labels]
    return short if len(set(short)) == len(short) else labels


def eligible_cont_oppn(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The Cont/Oppn splits of one results entry, only for datasets large enough to be split."""
    return {k: v for k, v in result.get("bias", {}).get("cont_oppn", {}).items() if v.get("eligible")}


def _is_average(key: str) -> bool:
    """``avg``, or the mean of one metric kind (``avg cosine_ap``) in an MTEB block."""
    return key == "avg" or key.startswith("avg ")


def _main_scores(results: list[dict[str, Any]]) -> dict[str, str]:
    """Task → main score name of the MTEB tasks, as recorded by ``run_mteb``."""
    return {
        task: metric
        for r in results
        for task, metric in r.get("sources", {}).get("mteb", {}).get("main_scores", {}).items()
    }


def _average_label(results: list[dict[str, Any]], block: str, prefix: str, key: str = "avg") -> str:
    """'STS-7 avg' only over the seven sets; otherwise say how many tasks (of which metric) the mean covers."""
    tasks = {t for r in results for t in r.get(block, {}) if not _is_average(t)}
    if block == "sts" and tasks == set(STS_TASKS):
        return f"{prefix}-7 avg"
    if key != "avg":
        metric = key.removeprefix("avg ")
        tasks = {t for t in tasks if _main_scores(results).get(t) == metric}
        return f"{prefix} avg {metric} of {len(tasks)} task{'s' if len(tasks) != 1 else ''}"
    if block == "transfer":  # each entry's mean covers its own tasks (a full and a quick one have 7 each)
        count = max(sum(not _is_average(t) for t in r.get(block, {})) for r in results)
        label = f"{prefix} avg of {count} task{'s' if count != 1 else ''}"
    else:
        label = f"{prefix} avg of {len(tasks)} task{'s' if len(tasks) != 1 else ''}"
    if block == "transfer":
        # SST-2 trained on its dev split is not SentEval's SST-2: the average must say so.
        return label + (" (quick: SST-2 trained on its dev split)" if SST2_QUICK in tasks else "")
    # A quick evaluation's mean covers fewer sets and must not be read as the STS-7 average.
    return label + (" (quick evaluation, not STS-7)" if block == "sts" and len(tasks) > 1 else "")


def cont_oppn_part(result: dict[str, Any], dataset: str, part: str) -> dict[str, Any]:
    """The ``cont``/``oppn`` block, or one side of Oppn, of ``dataset`` in one entry ({} when absent)."""
    block = result.get("bias", {}).get("cont_oppn", {}).get(dataset, {})
    if part in ("cont", "oppn"):
        return block.get(part, {})
    return block.get("oppn_sides", {}).get(part, {})


def compare_table(results: list[dict[str, Any]]) -> str:
    """Markdown table, one column per model (and Δ last − first): STS-7 avg and tasks, Cont/Oppn, negation.

    Args:
        results: ``results.json`` entries (from :func:`~st_debias.evaluation.evaluate_model`).

    Raises:
        ValueError: ``results`` is empty.
    """
    if not results:
        raise ValueError("compare_table needs at least one result entry")
    labels = _labels(results)
    delta = len(results) > 1
    header = "| metric | " + " | ".join(labels) + (" | Δ (last − first) |" if delta else " |")
    rule = "|---|" + "---:|" * (len(labels) + int(delta))
    lines = [header, rule]

    def row(name: str, values: list[float | None], digits: int = 2) -> None:
        cells = [_fmt(v, digits) for v in values]
        if delta:
            first, last = values[0], values[-1]
            cells.append(f"{last - first:+.{digits}f}" if first is not None and last is not None else "–")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")

    sts = [r.get("sts", {}) for r in results]
    if any(sts):
        row(f"**{_average_label(results, 'sts', 'STS')}**", [s.get("avg") for s in sts])
        for task in _task_order(results, "sts"):
            row(task, [s.get(task) for s in sts])
    mteb = [r.get("mteb", {}) for r in results]
    if any(mteb):
        for key in _average_keys(results, "mteb"):
            row(_average_label(results, "mteb", "MTEB", key), [m.get(key) for m in mteb])
        chance = {
            task: value
            for r in results
            for task, value in r.get("sources", {}).get("mteb", {}).get("chance", {}).items()
        }
        for task in _task_order(results, "mteb"):
            note = f" (chance {chance[task]:.1f})" if task in chance else ""
            row(f"MTEB {task}{note}", [m.get(task) for m in mteb])
    transfer = [r.get("transfer", {}) for r in results]
    if any(transfer):
        row(f"**{_average_label(results, 'transfer', 'Transfer')}** (accuracy)", [t.get("avg") for t in transfer])
        selection = [r.get("transfer_selection", {}) for r in results]
        row("Transfer selection avg (dev / cross-validation, no test data)", [s.get("avg") for s in selection])
        for task in _task_order(results, "transfer"):
            row(f"{task} accuracy", [t.get(task) for t in transfer])
        f1 = [r.get("transfer_details", {}).get("MRPC", {}).get("f1") for r in results]
        if any(v is not None for v in f1):
            row("MRPC F1", f1)
    datasets = list(dict.fromkeys(name for r in results for name in eligible_cont_oppn(r)))
    for name in datasets:
        for part, title in CONT_OPPN_PARTS.items():
            blocks = [cont_oppn_part(r, name, part) for r in results]
            if not any(blocks):
                continue
            sizes = sorted({b["pairs"] for b in blocks if b.get("pairs") is not None})
            size = f" (n={'/'.join(str(s) for s in sizes)})" if sizes else ""
            row(f"{name} {title}{size}", [b.get("spearman") for b in blocks])
            if part not in ("cont", "oppn"):
                row(f"{name} {title}, mean cosine", [b.get("mean_cosine") for b in blocks], 3)
    for key, name in (("negation", "negation"), ("word_order", "word order")):
        probe = [r.get("bias", {}).get(key) for r in results]
        if any(probe):
            threshold = next(p.get("threshold") for p in probe if p)
            row(f"{name} mean cosine ↓", [p.get("mean_cosine") if p else None for p in probe], 3)
            row(f"{name} share > {threshold:g} ↓", [p.get("share_above") if p else None for p in probe], 3)
    meaning = [r.get("bias", {}).get("negation_meaning") for r in results]
    if any(meaning):
        for key, title, digits in (
            ("paraphrase_over_affirmative", "negation meaning (i): not A closer to B than to A ↑", 3),
            ("paraphrase_over_negated_antonym", "negation meaning (ii): not A closer to B than to not B ↑", 3),
            ("polarity_cluster", "negation meaning (iii): polarity cluster ↓", 3),
        ):
            row(title, [m.get(key) if m else None for m in meaning], digits)
    au = [r.get("bias", {}).get("alignment_uniformity") for r in results]
    if any(au):
        row("alignment ↓", [a.get("alignment") if a else None for a in au], 3)
        row("uniformity ↓", [a.get("uniformity") if a else None for a in au], 3)
    pairs = [r.get("bias", {}).get("training_pairs") for r in results]
    if any(pairs):
        for kind in ("positive", "negative"):
            row(
                f"pair lexical overlap, {kind}", [p["lexical_overlap"][kind] if p else None for p in pairs], 3
            )
        for kind in ("positive", "negative"):
            row(
                f"pair cosine (this model as guide), {kind}",
                [p["guide_cosine"][kind] if p and p.get("guide_cosine") else None for p in pairs],
                3,
            )
    return "\n".join(lines) + "\n"


def _subset_entries(results: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """(label, entry) of the entries that have ``sts_subsets``, labelled as in the rest of the report."""
    return [(label, r) for label, r in zip(_labels(results), results, strict=True) if r.get("sts_subsets")]


def _subset_rows(results: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(task, subset) of every entry's ``sts_subsets``, tasks in the STS-7 order, subsets in file order."""
    present = [(task, subset) for r in results for task, block in r.get("sts_subsets", {}).items() for subset in block]
    order = {task: i for i, task in enumerate(STS_TASKS)}
    unique = list(dict.fromkeys(present))
    return sorted(unique, key=lambda row: (order.get(row[0], len(order)), unique.index(row)))


def _subset_value(result: dict[str, Any], task: str, subset: str, key: str) -> float | None:
    """One figure of one subset; None where it is absent or not finite (a NaN read back from a hand-made entry)."""
    value = result.get("sts_subsets", {}).get(task, {}).get(subset, {}).get(key)
    return value if value is not None and np.isfinite(value) else None


def subset_table(results: list[dict[str, Any]]) -> str:
    """Markdown table of the STS subsets: Spearman and mean cosine per model, and Δ (last − first).

    Args:
        results: ``results.json`` entries; those without ``sts_subsets`` are left out, and the Δ columns appear
            when two or more have them.

    Returns:
        The table, or an empty string when no entry has subsets.
    """
    entries = _subset_entries(results)
    rows = _subset_rows([r for _, r in entries])
    if not rows:
        return ""
    delta = len(entries) > 1
    spearman_cells = [f"Spearman {label}" for label, _ in entries] + (["Δ Spearman (last − first)"] if delta else [])
    cosine_cells = [f"mean cos {label}" for label, _ in entries] + (["Δ mean cos (last − first)"] if delta else [])
    lines = [
        "| set | subset | pairs | " + " | ".join(spearman_cells + cosine_cells) + " |",
        "|---|---|---:|" + "---:|" * (len(spearman_cells) + len(cosine_cells)),
    ]
    for task, subset in rows:
        cells = []
        for key, digits in (("spearman", 2), ("mean_cosine", 3)):
            values = [_subset_value(r, task, subset, key) for _, r in entries]
            cells += [_fmt(v, digits) for v in values]
            if delta:
                first, last = values[0], values[-1]
                cells.append(f"{last - first:+.{digits}f}" if first is not None and last is not None else "–")
        pairs = next(p for _, r in entries if (p := _subset_value(r, task, subset, "pairs")) is not None)
        lines.append(f"| {task} | {subset} | {pairs} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------------
# Plots: each returns the Figure (tests read the drawn numbers back) and is saved by write_report.
# ---------------------------------------------------------------------------------------------------


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _task_order(results: list[dict[str, Any]], block: str) -> list[str]:
    """Tasks of ``block`` across entries: the STS-7 order first, then any other task, averages left out."""
    present = [t for r in results for t in r.get(block, {}) if not _is_average(t)]
    return [t for t in STS_TASKS if t in present] + [t for t in dict.fromkeys(present) if t not in STS_TASKS]


def _average_keys(results: list[dict[str, Any]], block: str) -> list[str]:
    """The average keys of ``block`` across entries (``avg``, or one per metric kind), in first-seen order."""
    return list(dict.fromkeys(t for r in results for t in r.get(block, {}) if _is_average(t)))


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


def _sources_section(results: list[dict[str, Any]], labels: list[str]) -> list[str]:
    lines = ["## Data each number came from", ""]
    for label, r in zip(labels, results, strict=True):
        lines.append(f"### {label}")
        lines.append("")
        sources = r.get("sources", {})
        for name, info in sources.get("sts", {}).items():
            lines.append(
                f"- {name}: `{info.get('source')}` — {info.get('pairs')} pairs, {info.get('text_field')} text"
            )
        if "negation" in sources:
            neg = sources["negation"]
            files = ", ".join(f"{k} {v}" for k, v in neg.get("files", {}).items())
            lines.append(
                f"- negation probe: `{neg.get('source')}` — {neg.get('pairs')} pairs ({files}); {neg.get('order')}"
            )
        if "word_order" in sources:
            wo = sources["word_order"]
            lines.append(
                f"- word-order probe: `{wo.get('source')}` lines {wo.get('lines')} — {wo.get('pairs')} pairs, "
                f"{wo.get('skipped_short')} skipped (< {wo.get('min_words')} words), seed {wo.get('seed')}"
            )
        if "negation_meaning" in sources:
            nm = sources["negation_meaning"]
            lines.append(
                f"- negation-meaning probe: `{nm.get('source')}` lines {nm.get('lines')} — {nm.get('items')} items "
                "(A, not A, B = antonym of A, not B)"
            )
        if "mteb" in sources:
            m = sources["mteb"]
            lines.append(
                f"- MTEB: {m.get('data')} data, model name `{m.get('model_name')}`, revision `{m.get('revision')}`"
            )
            sick = m.get("sources", {}).get("SICK-R")
            if sick:
                lines.append(f"  - MTEB SICK-R: {sick.get('note')}")
        for task, info in sources.get("transfer", {}).items():
            files = ", ".join(f"`{path}`" for path in info.get("files", {}))
            sizes = ", ".join(f"{split} {count}" for split, count in info.get("sizes", {}).items())
            lines.append(f"- transfer {task} ({info.get('protocol')}; {sizes}): {files}")
        if r.get("fingerprint"):
            lines.append(f"- weights fingerprint: `{r['fingerprint']}`")
        if r.get("reused_from"):
            lines.append(f"- {reuse_note(r)}")
        lines.append("")
    return lines


def reuse_note(result: dict[str, Any]) -> str | None:
    """One sentence saying where a reused entry came from (None when the entry was computed in this run)."""
    reused = result.get("reused_from")
    if not reused:
        return None
    kind = "shipped with st_debias" if reused.get("kind") == "packaged" else "cached by an earlier run"
    return (
        f"scores reused from the evaluation {kind} (`{reused.get('path')}`): same weights fingerprint, "
        "inference settings, evaluation data checksums and settings, so the same numbers"
    )


def write_report(results: list[dict[str, Any]], output_dir: str | os.PathLike[str]) -> Path:
    """Write ``report.md`` and its PNG plots for one or more models (side by side); return the .md path.

    Args:
        results: ``results.json`` entries (from :func:`~st_debias.evaluation.evaluate_model`).
        output_dir: folder to write into (created if missing).

    Raises:
        ValueError: ``results`` is empty.
    """
    if not results:
        raise ValueError("write_report needs at least one result entry")
    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    plt = _pyplot()
    labels = _labels(results)
    drawn: dict[str, str] = {}
    plots = {
        "sts": (
            any(r.get("sts") for r in results),
            lambda: plot_scores(results, "sts", "STS, SentEval 'all' setting (cosine Spearman × 100)"),
        ),
        "sts_subsets": (any(r.get("sts_subsets") for r in results), lambda: plot_sts_subsets(results)),
        "mteb": (
            any(r.get("mteb") for r in results),
            lambda: plot_scores(results, "mteb", "MTEB tasks (main score × 100)"),
        ),
        "transfer": (
            any(r.get("transfer") for r in results),
            lambda: plot_scores(results, "transfer", "SentEval transfer tasks (logistic regression, accuracy × 100)"),
        ),
        "cont_oppn": (any(eligible_cont_oppn(r) for r in results), lambda: plot_cont_oppn(results)),
        "negation": (
            any(r.get("bias", {}).get("negation") for r in results),
            lambda: plot_negation_histograms(results),
        ),
        "word_order": (
            any(r.get("bias", {}).get("word_order") for r in results),
            lambda: plot_word_order_histograms(results),
        ),
    }
    for key, (wanted, draw) in plots.items():
        if wanted:
            fig = draw()
            with atomic_path(out / PLOT_FILES[key]) as temporary:
                fig.savefig(temporary, dpi=120, format="png")
            plt.close(fig)
            drawn[key] = PLOT_FILES[key]

    lines = [
        "# st_debias evaluation report",
        "",
        "Models: " + ", ".join(f"`{label}`" for label in labels),
        "",
    ]
    lines += [
        "STS: Spearman × 100 of cosine vs gold over all pairs of each set (SimCSE/SentEval 'all' setting); "
        "SICK-R = SentEval test, 4,927 pairs. Cont/Oppn: OssCSE §3.3 splits on datasets whose median score "
        "is in [2, 3.5]; Oppn is also shown per side (high overlap with a low score, low overlap with a high "
        "score). Negation: CANNOT pairs (files sorted by name, first N). Word order: a sentence against its "
        "own words in a seeded random order (last lines of the Wikipedia corpus). ↓ = lower is better.",
        "",
        "## Summary",
        "",
        compare_table(results),
    ]
    captions = {
        "sts": "STS per task",
        "sts_subsets": "STS per subset",
        "mteb": "MTEB STS tasks",
        "transfer": "SentEval transfer tasks",
        "cont_oppn": "Cont vs Oppn",
        "negation": "Negation-pair cosines",
        "word_order": "Word-order cosines",
    }
    explanations = {
        "sts": "Higher is better. The average is the plain mean of the sets shown.",
        "sts_subsets": (
            "STS12–16 and STS-B each pool several sources (SemEval subsets; STS-B's captions, forums and news). "
            "A set's score moves when a subset's ranking changes, and also when one subset's cosines shift against "
            "another's while each keeps its ranking; the mean cosine per subset tells the two apart. The table "
            "below has every figure."
        ),
        "mteb": "MTEB's own evaluation code; the data source (local files or hub) is listed below.",
        "transfer": (
            "A logistic regression on the frozen embeddings, per task: MR, CR, SUBJ and MPQA by 10-fold "
            "cross-validation, SST-2 trained on train with the regularisation chosen on dev, TREC and MRPC trained "
            "on train (regularisation by cross-validation) and scored on test. Higher is better. The selection "
            "average is what recipes are compared on: it never reads a test split."
        ),
        "cont_oppn": (
            "Cont: pairs whose word overlap agrees with their gold similarity; Oppn: pairs where it disagrees "
            "(similar meaning, different words, or the reverse). A large Cont − Oppn gap means the model leans on "
            "surface overlap; debiasing should raise Oppn without losing Cont. The two Oppn sides show where a "
            "change comes from: 'high overlap, low score' pairs punish trusting shared words, 'low overlap, high "
            "score' pairs reward seeing a paraphrase in other words."
        ),
        "negation": (
            "Cosine between a sentence and its human-written negation. Mass near 1 means negation is embedded "
            "like a paraphrase; the dashed line is the 0.8 threshold of the 'share above' figure."
        ),
        "word_order": (
            "Cosine between a sentence and the same words shuffled (sentences under 4 words skipped). Mass near 1 "
            "means the model reads a bag of words; the dashed line is the 0.9 threshold of the 'share above' "
            "figure."
        ),
    }
    for key, filename in drawn.items():
        lines += [f"## {captions[key]}", "", explanations[key], "", f"![{captions[key]}]({filename})", ""]
        if key == "sts_subsets":
            lines += [subset_table(results), ""]
    mteb_sources = [r.get("sources", {}).get("mteb") for r in results]
    if any(mteb_sources):
        lines += [
            "MTEB SICK-R: the hub task has 9,927 pairs, SentEval's test 4,927; see the sources below.",
            "",
        ]
    lines += _sources_section(results, labels)
    report = out / "report.md"
    atomic_write_text(report, "\n".join(lines))
    return report


def write_results(results: list[dict[str, Any]], output_dir: str | os.PathLike[str]) -> Path:
    """Write ``results.json`` (a list of entries) into ``output_dir``; return its path.

    The file is strict JSON: a NaN or infinite score (e.g. the Spearman correlation of a model whose cosines are
    all equal) is written as ``null``, and the entry's ``"non_finite"`` maps each such field's path (``sts.STS12``)
    to the value it replaced, so a reader knows why it is missing.
    """
    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "results.json"
    strict = []
    for entry in results:
        replaced: dict[str, str] = {}
        entry = _finite_or_null(entry, "", replaced)
        if replaced:
            entry["non_finite"] = {**entry.get("non_finite", {}), **replaced}
        strict.append(entry)
    atomic_write_text(path, json.dumps(strict, indent=2, ensure_ascii=False, allow_nan=False) + "\n")
    return path


def _finite_or_null(value: Any, where: str, replaced: dict[str, str]) -> Any:
    """``value`` with every non-finite float replaced by None, recording its path and value in ``replaced``."""
    if isinstance(value, dict):
        return {
            key: _finite_or_null(item, f"{where}.{key}" if where else str(key), replaced) for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [_finite_or_null(item, f"{where}[{index}]", replaced) for index, item in enumerate(value)]
    if isinstance(value, float | np.floating) and not np.isfinite(value):
        replaced[where] = str(float(value))
        return None
    return value
