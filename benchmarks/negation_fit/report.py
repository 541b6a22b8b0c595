"""The study's tables and plot, from ``results/rows.json`` and ``results/fit_run.json``.

    python benchmarks/negation_fit/report.py --out benchmarks/negation_fit/results/negation_fit.md \
        --plot benchmarks/negation_fit/results/fit.png
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.harness.provenance import write_table
from benchmarks.negation_fit.rows import GROUPS

RESULTS = Path(__file__).resolve().parent / "results"
LABELS = {"other_word": "other word", "prefixed": "prefixed", "minimal_pair": "minimal pairs"}


def rows_table(rows: dict[str, Any]) -> list[str]:
    lines = [
        "| rows (100 steps, seed 42) | rows | distinct | antonym pairs | per batch of 64: mean (min–max) | "
        "start gap s(a, p) − s(a, n) | below α | in [α, β] (no gradient) | above β |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for group in GROUPS:
        g, b, s = rows["groups"][group], rows["batches"][group], rows["start_gaps"][group]
        distinct = "" if g["distinct_rows"] is None else str(g["distinct_rows"])
        pairs = "" if g["pairs"] is None else str(g["pairs"])
        lines.append(
            f"| {LABELS[group]} | {g['rows']} | {distinct} | {pairs} | {b['mean']:.1f} ({b['min']}–{b['max']}) | "
            f"{s['mean_gap']:+.4f} | {s['below_alpha']:.3f} | {s['in_window']:.3f} | {s['above_beta']:.3f} |"
        )
    return lines


def words_table(rows: dict[str, Any]) -> list[str]:
    lines = [
        "| antonym kind | ordered pairs | single WordPiece each | stem token shared | token-embedding cos(A, B) | "
        "cos(A, B) | cos(not A, B) | cos(not A, A) | cos(X is A, X is B) | cos(X is A, X is not A) | (ii) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for kind in GROUPS[:2]:
        tokens = [t for t in rows["tokenisation"] if t["kind"] == kind]
        words = [w for w in rows["word_cosines"] if w["kind"] == kind]
        quads = rows["start_quadruples"][kind]
        shared = sum(bool(t["stem_token_shared"]) for t in tokens) if kind == "prefixed" else "–"

        def mean(key: str, entries: list[dict[str, Any]] = words) -> float:
            return float(np.mean([w[key] for w in entries]))

        lines.append(
            f"| {LABELS[kind]} | {len(tokens)} | {sum(t['single_tokens'] for t in tokens)} | {shared} | "
            f"{mean('token_cos'):.3f} | {mean('word_cos_a_b'):.3f} | {mean('word_cos_not_a_b'):.3f} | "
            f"{mean('word_cos_not_a_a'):.3f} | {quads['cos_a_b']:.4f} | {quads['cos_a_not_a']:.4f} | {quads['ii']:.3f} |"
        )
    return lines


def measured(fit: dict[str, Any], key: str) -> list[float]:
    return [e.get(key, 0.0) for e in fit["gradient_shares"]]


def shares_table(fit: dict[str, Any]) -> list[str]:
    parts = [f"{term}_{group}" for term in ("margin", "contrastive") for group in GROUPS] + ["recall"]
    header = " | ".join(
        f"{'λ·margin' if p.startswith('margin') else 'InfoNCE' if p != 'recall' else 'recall'}"
        f"{'' if p == 'recall' else ' ' + LABELS[p.split('_', 1)[1]]}"
        for p in parts
    )
    lines = [
        f"| measured step | {header} | cos(λ·margin other word, step) | cos(λ·margin other word, λ·margin minimal pairs) |",
        "|---" * (len(parts) + 3) + "|",
    ]
    for entry in fit["gradient_shares"]:
        cells = " | ".join(f"{entry.get(f'grad_share/{p}', 0.0):.3f}" for p in parts)
        lines.append(
            f"| {entry['measured_step']} | {cells} | {entry['grad_cos_total/margin_other_word']:+.2f} | "
            f"{entry['grad_cos/margin_other_word|margin_minimal_pair']:+.2f} |"
        )
    means = " | ".join(f"{np.mean(measured(fit, f'grad_share/{p}')):.3f}" for p in parts)
    lines.append(
        f"| mean | {means} | {np.mean(measured(fit, 'grad_cos_total/margin_other_word')):+.2f} | "
        f"{np.mean(measured(fit, 'grad_cos/margin_other_word|margin_minimal_pair')):+.2f} |"
    )
    return lines


def fit_table(fit: dict[str, Any], counterfactual: dict[str, Any] | None = None) -> list[str]:
    lines = [
        "| rows (eval mode, 32 tokens) | mean gap | in [α, β] | quadruples: (ii) | cos(not A, B) | cos(not A, not B) | "
        "cos(X is A, X is not A) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    runs = [(fit, "")] + ([(counterfactual, ", without the minimal pairs' margin")] if counterfactual else [])
    for (run, label), group in ((run, group) for run in runs for group in GROUPS):
        before, after = run["start"]["gaps"][group], run["trained"]["gaps"][group]
        quadruples = [run[model]["quadruples"].get(group) for model in ("start", "trained")]
        cells = [
            " → ".join(f"{q[key]:{form}}" for q in quadruples) if quadruples[0] else "–"
            for key, form in (("ii", ".3f"), ("cos_not_a_b", ".4f"), ("cos_not_a_not_b", ".4f"), ("cos_a_not_a", ".4f"))
        ]
        lines.append(
            f"| {LABELS[group]}{label} | {before['mean_gap']:+.4f} → {after['mean_gap']:+.4f} | "
            f"{before['in_window']:.3f} → {after['in_window']:.3f} | {' | '.join(cells)} |"
        )
    return lines


def gap_trace(fit: dict[str, Any], group: str, window: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Steps, each step's batch mean gap of ``group`` (NaN without its rows) and its ``window``-step running mean."""
    values = np.array([s[group]["mean_gap"] if s[group]["rows"] else np.nan for s in fit["steps"]])
    running = np.convolve(np.nan_to_num(values), np.ones(window) / window, mode="valid")
    return np.arange(1, len(values) + 1), values, running


def plot(fit: dict[str, Any], path: Path, counterfactual: dict[str, Any] | None = None) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (gaps, shares, cosines) = plt.subplots(1, 3, figsize=(16, 4.6))
    window = 10
    for group in GROUPS:
        steps, values, running = gap_trace(fit, group, window)
        (line,) = gaps.plot(steps, values, lw=0.7, alpha=0.35)
        gaps.plot(steps[window - 1 :], running, color=line.get_color(), lw=2, label=f"{LABELS[group]} ({window}-step mean)")
        if counterfactual and group != "minimal_pair":
            steps, _, running = gap_trace(counterfactual, group, window)
            gaps.plot(steps[window - 1 :], running, color=line.get_color(), lw=1.5, ls=":",
                      label=f"{LABELS[group]}, without the minimal pairs' margin")
    for bound, name in ((fit["hinge"]["alpha"], "α"), (fit["hinge"]["beta"], "β")):
        gaps.axhline(bound, color="grey", ls="--", lw=0.8)
        gaps.text(steps[-1], bound, f" {name}", va="center", color="grey")
    gaps.axhline(0, color="black", lw=0.5)
    gaps.set(title="margin gap s(a, p) − s(a, n), batch mean (dropout on)", xlabel="step", ylabel="gap")
    gaps.legend(fontsize=8)
    at = [e["measured_step"] for e in fit["gradient_shares"]]
    for group in GROUPS:
        shares.plot(at, measured(fit, f"grad_share/margin_{group}"), marker="o", label=f"λ·margin, {LABELS[group]}")
    contrastive = np.sum([measured(fit, f"grad_share/contrastive_{g}") for g in GROUPS], axis=0)
    shares.plot(at, contrastive, marker="s", label="InfoNCE, all rows")
    shares.plot(at, measured(fit, "grad_share/recall"), marker="^", label="recall")
    shares.set(title="share of the sum of gradient norms", xlabel="step", ylabel="share", ylim=(0, 1))
    shares.legend(fontsize=8)
    cosines.plot(at, measured(fit, "grad_cos_total/margin_other_word"), marker="o", label="with the whole step")
    cosines.plot(at, measured(fit, "grad_cos/margin_other_word|margin_minimal_pair"), marker="s",
                 label="with λ·margin, minimal pairs")
    cosines.plot(at, measured(fit, "grad_cos/margin_other_word|recall"), marker="^", label="with recall")
    cosines.axhline(0, color="black", lw=0.5)
    cosines.set(title="cosine of the other-word rows' margin gradient", xlabel="step", ylabel="cosine",
                ylim=(-1, 1))
    cosines.legend(fontsize=8)
    run = fit["recipe"]
    fig.suptitle(
        f"{run['name']} v{run['version']}, {run['steps']} steps, seed {run['seed']}, all-MiniLM-L6-v2: "
        "the negation-meaning rows by antonym kind"
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=Path, default=RESULTS / "rows.json")
    parser.add_argument("--fit", type=Path, default=RESULTS / "fit_run.json")
    parser.add_argument(
        "--counterfactual", type=Path, default=RESULTS / "fit_run_zero_margin_minimal_pair.json",
        help="fit_run.py --zero margin_minimal_pair's result (left out when the file is absent)",
    )
    parser.add_argument("--out", type=Path, default=RESULTS / "negation_fit.md")
    parser.add_argument("--plot", type=Path, default=RESULTS / "fit.png")
    args = parser.parse_args(argv)
    rows, fit = (json.loads(path.read_text(encoding="utf-8")) for path in (args.rows, args.fit))
    counterfactual = (
        json.loads(args.counterfactual.read_text(encoding="utf-8")) if args.counterfactual.is_file() else None
    )
    lines = [
        "Rows of `st-debias` version 6 at 100 steps (seed 42), by group; the margin gap under the start model "
        "(eval mode, 32 tokens) against the hinge window [α, β] = "
        f"[{rows['hinge']['alpha']}, {rows['hinge']['beta']}].",
        "",
        *rows_table(rows),
        "",
        "The antonym pairs under the start model's WordPiece vocabulary and weights (means over the pairs; the "
        "words alone, then the distinct quadruples' sentences).",
        "",
        *words_table(rows),
        "",
        "Each part's share of the sum of gradient norms (trainable weights) on the batch of the measured step, and "
        "the cosine of the other-word rows' margin gradient with the whole step's (before Adam) and with the "
        "minimal pairs' margin gradient.",
        "",
        *shares_table(fit),
        "",
        "Fit on the run's own rows and on the distinct quadruples they come from, start model → trained model (last "
        "checkpoint); with `--zero margin_minimal_pair`, the same run without the minimal pairs' margin.",
        "",
        *fit_table(fit, counterfactual),
    ]
    result = {
        "sources": [
            os.path.relpath(p.resolve(), RESULTS.parents[2])
            for p in (args.rows, args.fit, *([args.counterfactual] if counterfactual else []))
        ],
        "max_sum_difference": fit["max_sum_difference"],
        "unmatched_rows": sum(s["unmatched"] for s in fit["steps"]),
        "table": lines,
    }
    write_table(args.out, lines, result)
    plot(fit, args.plot, counterfactual)
    print(f"wrote {args.out} and {args.plot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
