"""Readable evaluation report: a Markdown page and PNG plots drawn from the ``results.json`` entries.

Every plot is computed from the entries passed in (nothing is re-measured), so the pictures and the
JSON cannot disagree. Several models are drawn side by side (e.g. before and after training).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from st_debias.evaluation.sts_data import STS_TASKS

PLOT_FILES = {
    "sts": "sts_scores.png",
    "mteb": "mteb_scores.png",
    "cont_oppn": "cont_oppn.png",
    "negation": "negation_cosine_hist.png",
}


def _fmt(value: Any, digits: int = 2) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _labels(results: list[dict[str, Any]]) -> list[str]:
    labels = [str(r.get("model", f"model {i}")) for i, r in enumerate(results)]
    short = [Path(label).name or label for label in labels]
    return short if len(set(short)) == len(short) else labels


def _cont_oppn_rows(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {k: v for k, v in result.get("bias", {}).get("cont_oppn", {}).items() if v.get("eligible")}


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
        present = [task for task in STS_TASKS if any(task in s for s in sts)]
        full = present == list(STS_TASKS) and all(set(STS_TASKS) <= set(s) for s in sts if s)
        if full:
            row("**STS-7 avg**", [s.get("avg") for s in sts])
        else:
            # A quick evaluation: its average is over fewer sets and must not be read as the STS-7 average.
            row(f"**STS avg of {', '.join(present)} (quick evaluation, not STS-7)**", [s.get("avg") for s in sts])
        for task in present:
            row(task, [s.get(task) for s in sts])
    mteb = [r.get("mteb", {}) for r in results]
    if any(mteb):
        row("MTEB STS avg", [m.get("avg") for m in mteb])
    datasets = list(dict.fromkeys(name for r in results for name in _cont_oppn_rows(r)))
    for name in datasets:
        for part in ("cont", "oppn"):
            values, sizes = [], set()
            for r in results:
                block = r.get("bias", {}).get("cont_oppn", {}).get(name, {}).get(part, {})
                values.append(block.get("spearman"))
                if block.get("pairs") is not None:
                    sizes.add(block["pairs"])
            size = f" (n={'/'.join(str(s) for s in sorted(sizes))})" if sizes else ""
            row(f"{name} {part.capitalize()}{size}", values)
    negation = [r.get("bias", {}).get("negation") for r in results]
    if any(negation):
        row("negation mean cosine ↓", [n.get("mean_cosine") if n else None for n in negation], 3)
        row("negation share > 0.8 ↓", [n.get("share_above") if n else None for n in negation], 3)
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


# ---------------------------------------------------------------------------------------------------
# Plots: each returns the Figure (tests read the drawn numbers back) and is saved by write_report.
# ---------------------------------------------------------------------------------------------------


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def plot_scores(results: list[dict[str, Any]], block: str = "sts", title: str | None = None):
    """Grouped bars: one group per task (and avg), one bar per model, heights = ``results[i][block]``."""
    plt = _pyplot()
    labels = _labels(results)
    tasks = [t for t in [*STS_TASKS, "avg"] if any(t in r.get(block, {}) for r in results)]
    extra = [t for r in results for t in r.get(block, {}) if t not in tasks]
    tasks += list(dict.fromkeys(extra))
    fig, ax = plt.subplots(figsize=(max(6.0, 1.1 * len(tasks) + 2), 4.2))
    width = 0.8 / len(results)
    x = np.arange(len(tasks))
    for i, (label, r) in enumerate(zip(labels, results, strict=True)):
        heights = [r.get(block, {}).get(t, np.nan) for t in tasks]
        bars = ax.bar(x + (i - (len(results) - 1) / 2) * width, heights, width, label=label)
        ax.bar_label(bars, fmt="%.1f", fontsize=7, padding=1)
    ax.set_xticks(x, tasks, rotation=20)
    ax.set_ylabel("Spearman × 100")
    values = [v for r in results for v in r.get(block, {}).values() if isinstance(v, int | float)]
    if values:
        ax.set_ylim(max(0.0, min(values) - 10), min(100.0, max(values) + 6))
    ax.set_title(title or f"{block.upper()} (cosine Spearman × 100)")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    return fig


def plot_cont_oppn(results: list[dict[str, Any]]):
    """Cont vs Oppn Spearman per eligible dataset, one pair of bars per model."""
    plt = _pyplot()
    labels = _labels(results)
    datasets = list(dict.fromkeys(name for r in results for name in _cont_oppn_rows(r)))
    fig, ax = plt.subplots(figsize=(max(6.0, 1.6 * len(datasets) + 2), 4.2))
    x = np.arange(len(datasets))
    n_bars = 2 * len(results)
    width = 0.8 / max(n_bars, 1)
    for i, (label, r) in enumerate(zip(labels, results, strict=True)):
        for j, part in enumerate(("cont", "oppn")):
            heights = [
                r.get("bias", {}).get("cont_oppn", {}).get(d, {}).get(part, {}).get("spearman")
                for d in datasets
            ]
            heights = [np.nan if h is None else h for h in heights]
            k = 2 * i + j
            bars = ax.bar(
                x + (k - (n_bars - 1) / 2) * width,
                heights,
                width,
                label=f"{label} {part.capitalize()}",
                hatch="//" if part == "oppn" else None,
                color=f"C{i}",
                alpha=1.0 if part == "cont" else 0.55,
            )
            ax.bar_label(bars, fmt="%.1f", fontsize=6, padding=1)
    ax.set_xticks(x, datasets)
    ax.set_ylabel("Spearman × 100")
    ax.set_title("OssCSE Cont vs Oppn splits (Oppn: surface form disagrees with meaning)")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    return fig


def plot_negation_histograms(results: list[dict[str, Any]]):
    """Histogram of cos(sentence, negation) per model, from the stored bin counts (step outlines)."""
    plt = _pyplot()
    labels = _labels(results)
    fig, ax = plt.subplots(figsize=(7.0, 4.2))
    lowest = 1.0
    for i, (label, r) in enumerate(zip(labels, results, strict=True)):
        negation = r.get("bias", {}).get("negation")
        if not negation:
            continue
        edges = np.asarray(negation["histogram"]["edges"])
        counts = np.asarray(negation["histogram"]["counts"])
        ax.stairs(
            counts, edges, label=f"{label} (mean {negation['mean_cosine']:.3f})", color=f"C{i}", linewidth=1.5
        )
        nonzero = np.flatnonzero(counts)
        if nonzero.size:
            lowest = min(lowest, edges[nonzero[0]])
        threshold = negation.get("threshold", 0.8)
    ax.axvline(threshold, color="grey", linestyle="--", linewidth=1)
    ax.set_xlim(max(-1.0, lowest - 0.04), 1.0)
    ax.set_xlabel("cosine(sentence, its negation)")
    ax.set_ylabel("pairs")
    ax.set_title("CANNOT negation probe (right = negation treated as paraphrase)")
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    return fig


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
        if "mteb" in sources:
            m = sources["mteb"]
            lines.append(
                f"- MTEB: {m.get('data')} data, model name `{m.get('model_name')}`, revision `{m.get('revision')}`"
            )
            sick = m.get("sources", {}).get("SICK-R")
            if sick:
                lines.append(f"  - MTEB SICK-R: {sick.get('note')}")
        lines.append(f"- weights fingerprint: `{r.get('fingerprint')}`")
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
    if any(r.get("sts") for r in results):
        drawn["sts"] = PLOT_FILES["sts"]
        fig = plot_scores(results, "sts", "STS-7, SentEval 'all' setting (cosine Spearman × 100)")
        fig.savefig(out / PLOT_FILES["sts"], dpi=120)
        plt.close(fig)
    if any(r.get("mteb") for r in results):
        drawn["mteb"] = PLOT_FILES["mteb"]
        fig = plot_scores(results, "mteb", "MTEB STS tasks (main score cosine Spearman × 100)")
        fig.savefig(out / PLOT_FILES["mteb"], dpi=120)
        plt.close(fig)
    if any(_cont_oppn_rows(r) for r in results):
        drawn["cont_oppn"] = PLOT_FILES["cont_oppn"]
        fig = plot_cont_oppn(results)
        fig.savefig(out / PLOT_FILES["cont_oppn"], dpi=120)
        plt.close(fig)
    if any(r.get("bias", {}).get("negation") for r in results):
        drawn["negation"] = PLOT_FILES["negation"]
        fig = plot_negation_histograms(results)
        fig.savefig(out / PLOT_FILES["negation"], dpi=120)
        plt.close(fig)

    lines = [
        "# st_debias evaluation report",
        "",
        "Models: " + ", ".join(f"`{label}`" for label in labels),
        "",
    ]
    lines += [
        "STS: Spearman × 100 of cosine vs gold over all pairs of each set (SimCSE/SentEval 'all' setting); "
        "SICK-R = SentEval test, 4,927 pairs. Cont/Oppn: OssCSE §3.3 splits on datasets whose median score "
        "is in [2, 3.5]. Negation: CANNOT pairs (files sorted by name, first N). ↓ = lower is better.",
        "",
        "## Summary",
        "",
        compare_table(results),
    ]
    captions = {
        "sts": "STS-7 per task",
        "mteb": "MTEB STS tasks",
        "cont_oppn": "Cont vs Oppn",
        "negation": "Negation-pair cosines",
    }
    explanations = {
        "sts": "Higher is better. The average is the plain mean of the seven sets.",
        "mteb": "MTEB's own evaluation code; the data source (local files or hub) is listed below.",
        "cont_oppn": (
            "Cont: pairs whose word overlap agrees with their gold similarity; Oppn: pairs where it disagrees "
            "(similar meaning, different words, or the reverse). A large Cont − Oppn gap means the model leans on "
            "surface overlap; debiasing should raise Oppn without losing Cont."
        ),
        "negation": (
            "Cosine between a sentence and its human-written negation. Mass near 1 means negation is embedded "
            "like a paraphrase; the dashed line is the 0.8 threshold of the 'share above' figure."
        ),
    }
    for key, filename in drawn.items():
        lines += [f"## {captions[key]}", "", explanations[key], "", f"![{captions[key]}]({filename})", ""]
    mteb_sources = [r.get("sources", {}).get("mteb") for r in results]
    if any(mteb_sources):
        lines += [
            "MTEB SICK-R: the hub task has 9,927 pairs, SentEval's test 4,927; see the sources below.",
            "",
        ]
    lines += _sources_section(results, labels)
    report = out / "report.md"
    report.write_text("\n".join(lines), encoding="utf-8")
    return report


def write_results(results: list[dict[str, Any]], output_dir: str | os.PathLike[str]) -> Path:
    """Write ``results.json`` (a list of entries) into ``output_dir``; return its path."""
    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "results.json"
    path.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path
