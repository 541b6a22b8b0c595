"""Where on STS-B dev a training stretch gained or lost Spearman: the change between two models, pair by pair.

Spearman's ρ is Pearson's r of the ranks, so it is a sum over pairs: ρ = Σ_i (r_i − r̄)(q_i − q̄) / √(Σ(r − r̄)² Σ(q − q̄)²),
with r the rank of the model's cosine and q the rank of the gold score (ties averaged). Each pair's term is its
share of ρ; the change between two models, summed over a set of pairs, is what that set added to or took from ρ.
The split is exact but the ranks are shared: a set whose cosines did not move still changes its share when other
pairs move past it, and a pair whose gold score is near the middle adds almost nothing whatever its cosine does.
The mean cosine change of each set says which pairs moved.
The sets are OssCSE's Cont/Oppn quadrants of STS-B dev (``st_debias.evaluation.bias.cont_oppn_split``: word overlap
by the median match error rate, gold score by its median): a model that leans more on word overlap gains on the
Cont quadrants and loses on the Oppn ones, and one that leans less does the reverse.

Models are ``label=folder`` (or a hub name), encoded at ``--max-seq-length`` tokens (32: the training length, at which
the trainer scores STS-B dev at every checkpoint in ``../selection/select_dev.py``'s runs). Each model is compared with the one before it, or, with
``--shift a:b`` (repeatable), label a with label b:

    python benchmarks/teacher_dip/sts_shift.py start=sentence-transformers/all-MiniLM-L6-v2 \
        step50=CHECKPOINT step100=CHECKPOINT --out benchmarks/teacher_dip/results/sts_shift.md

Writes the Markdown table, its JSON and a bar plot of each quadrant's share of each change (``.png``) beside ``--out``.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import rankdata

from benchmarks.harness.provenance import write_table
from benchmarks.harness.trained import MODEL_HELP, labelled_models

QUADRANTS = ("high overlap, high score", "low overlap, low score", "high overlap, low score",
             "low overlap, high score", "on a median")
"""The Cont quadrants (overlap and score agree), the Oppn sides (they disagree), and the pairs on a median."""


def spearman_terms(cosines: np.ndarray, gold: np.ndarray) -> np.ndarray:
    """Each pair's term of Spearman's ρ (module docstring); they sum to ρ."""
    ranks, gold_ranks = rankdata(cosines), rankdata(gold)
    ranks, gold_ranks = ranks - ranks.mean(), gold_ranks - gold_ranks.mean()
    return ranks * gold_ranks / np.sqrt((ranks**2).sum() * (gold_ranks**2).sum())


def quadrants(sentences1: Sequence[str], sentences2: Sequence[str], scores: Sequence[float]) -> dict[str, np.ndarray]:
    """Quadrant name → the indices of its pairs (:data:`QUADRANTS`); every pair is in exactly one."""
    from st_debias.evaluation.bias import cont_oppn_split

    split = cont_oppn_split(sentences1, sentences2, scores)
    gold = np.asarray(scores, dtype=np.float64)
    out = {QUADRANTS[0]: split.cont[gold[split.cont] > split.median_score],
           QUADRANTS[1]: split.cont[gold[split.cont] < split.median_score],
           QUADRANTS[2]: split.high_overlap_low_score, QUADRANTS[3]: split.low_overlap_high_score}
    sided = np.concatenate(list(out.values()))
    out[QUADRANTS[4]] = np.setdiff1d(np.arange(gold.size), sided)
    return out


def shift(before: np.ndarray, after: np.ndarray, gold: np.ndarray, groups: dict[str, np.ndarray]) -> dict[str, Any]:
    """ρ×100 before and after, and per quadrant its pairs, its share of the change (×100) and its mean cosine change."""
    terms_before, terms_after = spearman_terms(before, gold), spearman_terms(after, gold)
    change, moved = terms_after - terms_before, after - before
    return {
        "before": 100 * float(terms_before.sum()), "after": 100 * float(terms_after.sum()),
        "quadrants": {name: {"pairs": int(index.size), "share": 100 * float(change[index].sum()),
                             "mean_cosine_change": float(moved[index].mean()) if index.size else None}
                      for name, index in groups.items()},
    }


def table(shifts: dict[str, dict[str, Any]]) -> list[str]:
    """One row per shift: ρ before → after, then each quadrant's share of the change (its mean cosine change)."""
    first = next(iter(shifts.values()))["quadrants"]
    lines = ["STS-B dev Spearman ×100 between two models, and each quadrant's share of the change (pairs in the "
             "header; in brackets its mean cosine change).", "",
             "| shift | before → after | change | " + " | ".join(f"{q} ({first[q]['pairs']})" for q in QUADRANTS) + " |",
             "|---|---|---:|" + "---:|" * len(QUADRANTS)]
    for name, result in shifts.items():
        cells = [f"{cell['share']:+.3f} (" + ("–" if cell["mean_cosine_change"] is None
                                               else f"{cell['mean_cosine_change']:+.4f}") + ")"
                 for cell in (result["quadrants"][q] for q in QUADRANTS)]
        lines.append(f"| {name} | {result['before']:.2f} → {result['after']:.2f} | "
                     f"{result['after'] - result['before']:+.3f} | " + " | ".join(cells) + " |")
    return lines


def plot(shifts: dict[str, dict[str, Any]], path: Path) -> None:
    """Grouped bars: each quadrant's share of each shift's change in ρ×100."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(shifts)
    fig, ax = plt.subplots(figsize=(max(6.0, 1.9 * len(names) + 2.5), 4.2))
    width = 0.8 / len(QUADRANTS)
    for k, quadrant in enumerate(QUADRANTS):
        values = [shifts[n]["quadrants"][quadrant]["share"] for n in names]
        ax.bar(np.arange(len(names)) + (k - (len(QUADRANTS) - 1) / 2) * width, values, width, label=quadrant)
    ax.scatter(np.arange(len(names)), [shifts[n]["after"] - shifts[n]["before"] for n in names], color="black",
               marker="D", zorder=3, label="total change")
    ax.axhline(0, color="grey", linewidth=0.8)
    ax.set_xticks(np.arange(len(names)), names)
    ax.set_ylabel("share of the change in Spearman ×100")
    ax.set_title("STS-B dev: which overlap/score quadrant moved Spearman")
    ax.legend(fontsize=8, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.1))
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("models", nargs="+", help=f"{MODEL_HELP} (at least two)")
    parser.add_argument("--shift", action="append", default=[], metavar="A:B",
                        help="compare label A with label B (repeatable; default: each model with the one before it)")
    parser.add_argument("--max-seq-length", type=int, default=32, help="tokens per sentence (default 32)")
    parser.add_argument("--out", type=Path, required=True, help="the Markdown table (its JSON and plot go beside it)")
    args = parser.parse_args(argv)
    models = labelled_models(parser, args.models)
    if len(models) < 2:
        parser.error("give at least two models")
    pairs = [tuple(s.split(":", 1)) for s in args.shift] or list(zip(list(models)[:-1], list(models)[1:], strict=True))
    bad = [":".join(p) for p in pairs if len(p) != 2 or not set(p) <= set(models)]
    if bad:
        parser.error(f"--shift {', '.join(bad)}: not two labels among {', '.join(models)}")
    if args.max_seq_length < 1:
        parser.error(f"--max-seq-length must be positive, got {args.max_seq_length}")
    if not args.out.parent.is_dir():
        parser.error(f"--out {args.out}: no folder {args.out.parent}")

    from st_debias.evaluation import EmbeddingCache
    from st_debias.evaluation.sts_data import load_sts
    from st_debias.paths import load_model, portable_path

    data = load_sts("STSBenchmark-dev")
    gold = np.asarray(data.scores, dtype=np.float64)
    groups = quadrants(data.sentences1, data.sentences2, data.scores)
    cosines = {}
    for label in dict.fromkeys(label for pair in pairs for label in pair):
        print(f"encoding STS-B dev with {label} ({models[label]})", flush=True)
        model = load_model(models[label])
        model.max_seq_length = args.max_seq_length
        cache = EmbeddingCache(model)
        cosines[label] = cache.cosine(data.sentences1, data.sentences2)
    shifts = {f"{a} → {b}": shift(cosines[a], cosines[b], gold, groups) for a, b in pairs}
    portable = {label: portable_path(path) if Path(path).exists() else path for label, path in models.items()}
    write_table(args.out, table(shifts), {"models": portable, "max_seq_length": args.max_seq_length, "shifts": shifts})
    plot(shifts, args.out.with_suffix(".png"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
