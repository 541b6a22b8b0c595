"""Readable evaluation report: a Markdown page and PNG plots (:mod:`st_debias.evaluation.plots`) drawn from the
``results.json`` entries.

Every plot is computed from the entries passed in (nothing is re-measured), so the pictures and the
JSON cannot disagree. Several models are drawn side by side (e.g. before and after training).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from st_debias.evaluation import entries, plots
from st_debias.evaluation.entries import (
    _average_keys,
    _average_label,
    _labels,
    _subset_entries,
    _subset_rows,
    _subset_value,
    _task_order,
)
from st_debias.files import atomic_path, atomic_write_text

PLOT_FILES = {
    "sts": "sts_scores.png",
    "sts_subsets": "sts_subsets.png",
    "mteb": "mteb_scores.png",
    "transfer": "transfer_scores.png",
    "cont_oppn": "cont_oppn.png",
    "negation": "negation_cosine_hist.png",
    "negation_meaning": "negation_meaning.png",
    "word_order": "word_order_cosine_hist.png",
}

#: What an evaluation writes into its folder: removed by :func:`remove_report` before a new one.
REPORT_FILES = ("results.json", "report.md", *PLOT_FILES.values())


def remove_report(output_dir: str | os.PathLike[str]) -> list[Path]:
    """Remove what an earlier evaluation wrote into ``output_dir`` (:data:`REPORT_FILES`); return what was removed.

    A new evaluation starts from an empty report, so that ``results.json``, ``report.md`` and the plots never
    describe different evaluations (an interrupted new one, or one with fewer tasks)."""
    removed = [Path(output_dir) / name for name in REPORT_FILES if (Path(output_dir) / name).is_file()]
    for path in removed:
        path.unlink()
    return removed

def _fmt(value: Any, digits: int = 2) -> str:
    if value is None:
        return "–"
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f"{value:.{digits}f}"
    return str(value)


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
    datasets = list(dict.fromkeys(name for r in results for name in entries.eligible_cont_oppn(r)))
    for name in datasets:
        for part, title in entries.CONT_OPPN_PARTS.items():
            blocks = [entries.cont_oppn_part(r, name, part) for r in results]
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
        # The same without the direction every negation adds: what the model reads a negation to mean.
        removed = [(m or {}).get("without_negation_direction") for m in meaning]
        if any(removed):
            for key, title in (
                ("paraphrase_over_affirmative", "(i)"),
                ("paraphrase_over_negated_antonym", "(ii)"),
                ("polarity_cluster", "(iii)"),
            ):
                arrow = "↓" if key == "polarity_cluster" else "↑"
                values = [r.get(key) if r else None for r in removed]
                row(f"negation meaning {title} without the negations' common direction {arrow}", values, 3)
            row("negation direction length", [r.get("direction_length") if r else None for r in removed], 3)
        # (i) and (ii) by antonym kind: a gain on prefixed antonyms alone can be "not A" matched to "unA" by its stem.
        for kind, example in (("prefixed", "able/unable"), ("other_word", "large/small")):
            kinds = [(m or {}).get("by_antonym_kind", {}).get(kind) for m in meaning]
            if any(kinds):
                for key, figure in (("paraphrase_over_affirmative", "i"), ("paraphrase_over_negated_antonym", "ii")):
                    values = [k.get(key) if k else None for k in kinds]
                    row(f"negation meaning ({figure}), antonyms like {example} ↑", values, 3)
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


#: The one-line protocol of each kind of figure, said at the top of a report that shows that kind.
_PROTOCOL: dict[str, str] = {
    "sts": "STS: Spearman × 100 of cosine vs gold over all pairs of each set (SimCSE/SentEval 'all' setting); "
    "SICK-R = SentEval test, 4,927 pairs.",
    "cont_oppn": "Cont/Oppn: OssCSE §3.3 splits on datasets whose median score is in [2, 3.5]; Oppn is also shown "
    "per side (high overlap with a low score, low overlap with a high score).",
    "negation": "Negation: CANNOT pairs (files sorted by name, first N).",
    "word_order": "Word order: a sentence against its own words in a seeded random order (last lines of the "
    "Wikipedia corpus).",
    "transfer": "Transfer: SentEval's tasks, a logistic regression on the frozen embeddings (accuracy × 100).",
}
#: Whether any of the results holds a kind of figure (a report shows its plot and protocol only then).
_SHOWN: dict[str, Callable[[list[dict[str, Any]]], bool]] = {
    "sts": lambda results: any(r.get("sts") for r in results),
    "sts_subsets": lambda results: any(r.get("sts_subsets") for r in results),
    "mteb": lambda results: any(r.get("mteb") for r in results),
    "transfer": lambda results: any(r.get("transfer") for r in results),
    "cont_oppn": lambda results: any(entries.eligible_cont_oppn(r) for r in results),
    "negation": lambda results: any(r.get("bias", {}).get("negation") for r in results),
    "negation_meaning": lambda results: any(r.get("bias", {}).get("negation_meaning") for r in results),
    "word_order": lambda results: any(r.get("bias", {}).get("word_order") for r in results),
}


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
    plt = plots._pyplot()
    labels = _labels(results)
    drawn: dict[str, str] = {}
    figures = {
        "sts": lambda: plots.plot_scores(results, "sts", "STS, SentEval 'all' setting (cosine Spearman × 100)"),
        "sts_subsets": lambda: plots.plot_sts_subsets(results),
        "mteb": lambda: plots.plot_scores(results, "mteb", "MTEB tasks (main score × 100)"),
        "transfer": lambda: plots.plot_scores(
            results, "transfer", "SentEval transfer tasks (logistic regression, accuracy × 100)"
        ),
        "cont_oppn": lambda: plots.plot_cont_oppn(results),
        "negation": lambda: plots.plot_negation_histograms(results),
        "negation_meaning": lambda: plots.plot_negation_meaning(results),
        "word_order": lambda: plots.plot_word_order_histograms(results),
    }
    for key, draw in figures.items():
        if _SHOWN[key](results):
            fig = draw()
            with atomic_path(out / PLOT_FILES[key]) as temporary:
                fig.savefig(temporary, dpi=120, format="png")
            plt.close(fig)
            drawn[key] = PLOT_FILES[key]
        else:  # a plot of an earlier report of other tasks would sit beside this one
            (out / PLOT_FILES[key]).unlink(missing_ok=True)

    lines = [
        "# st_debias evaluation report",
        "",
        "Models: " + ", ".join(f"`{label}`" for label in labels),
        "",
    ]
    protocol = [text for key, text in _PROTOCOL.items() if _SHOWN[key](results)]
    lines += [" ".join([*protocol, "↓ = lower is better."]), "", "## Summary"] if protocol else ["## Summary"]
    lines += [
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
        "negation_meaning": "Negation meaning",
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
        "negation_meaning": (
            "Each item is a Wikipedia sentence \"X is A\" with \"X is not A\", \"X is B\" (B the antonym of A) and "
            "\"X is not B\". (i) and (ii): the share of items where \"not A\" is nearer its paraphrase \"B\" than "
            "\"A\", and than \"not B\". (iii): how much closer negated sentences are to each other than their "
            "affirmative forms, whatever they say. Hatched: the same after removing the direction every negation "
            "adds (the mean of not A − A and not B − B, fitted on the other half of the items); what is left is "
            "what the model reads a negation to mean, apart from the fact that it says \"negated\". A gain of "
            "(i) that vanishes without the direction came from the direction, not from the meaning."
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
