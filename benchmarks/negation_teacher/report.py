"""The study's tables, from its result files: the development figures of every variant (``select_dev.py``'s files
in ``results/dev-100/``), each teacher variant's gradient shares by loss part, and the negation-meaning probe by subset (``results/probe_split.json``), written into the
README (``--check``: exit 1 when it is out of date).

    python benchmarks/negation_teacher/report.py
"""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.harness import tables as generated

HERE = Path(__file__).resolve().parent
RUNS = HERE / "results" / "dev-100"
SPLIT = HERE / "results" / "probe_split.json"
README = HERE / "README.md"

#: (column, score key, better direction: 1 higher, -1 lower)
DEV = (
    ("STS-B dev", "dev", 1), ("dev Oppn", "dev_oppn", 1),
    ("Oppn high overlap/low score ↓", "dev_oppn_side/high_overlap_low_score", -1),
    ("Oppn low overlap/high score ↑", "dev_oppn_side/low_overlap_high_score", 1),
    ("CANNOT ↓", "neg_cos_heldout", -1), ("word order ↓", "word_order_cos", -1), ("minimal pairs", "mp_accuracy", 1),
    ("(i)", "nm_over_affirmative", 1), ("(ii)", "nm_over_negated_antonym", 1), ("(iii) ↓", "nm_polarity_cluster", -1),
    ("(i) other word", "nm_over_affirmative_other_word", 1), ("(ii) other word", "nm_over_negated_antonym_other_word", 1),
)
ORDER = ("start", "v6-halfpairs", "v6-halfpairs-marginmse", "v6-halfpairs-marginmse-meaning", "v6-halfpairs-kldiv",
         "v6-halfpairs-marginfloor", "v6-halfpairs-marginfloor-w003", "v6-halfpairs-marginfloor-meaning",
         "v6-halfpairs-marginfloor-meaning-w002", "v6-halfpairs-marginfloorpush", "v6-halfpairs-marginfloorpush-meaning-w002",
         "v6-halfpairs-marginfloor-pres03", "v6-halfpairs-marginfloor-pres1",
         "v6-wordnet-half", "v6-wordnet-half-marginmse", "v6-wordnet-half-marginfloor",
         "plain-distill-mse", "plain-distill-mse-fitted")
LABELS = {
    "start": "start (all-MiniLM-L6-v2)",
    "v6-halfpairs": "version 6, curated pairs (training half)",
    "v6-halfpairs-marginmse": "+ teacher MarginMSE, every row",
    "v6-halfpairs-marginmse-meaning": "+ teacher MarginMSE, negation-meaning rows only",
    "v6-halfpairs-kldiv": "+ teacher DistillKLDiv, every row",
    "v6-wordnet-half": "version 6, curated + WordNet pairs (training half)",
    "v6-halfpairs-marginfloor": "+ teacher margin as a floor, every row",
    "v6-halfpairs-marginfloor-w003": "+ teacher margin as a floor, every row, weight 0.03",
    "v6-halfpairs-marginfloor-meaning": "+ teacher margin as a floor, negation-meaning rows only",
    "v6-halfpairs-marginfloor-meaning-w002": "+ teacher margin as a floor, negation-meaning rows only, weight 0.02",
    "v6-halfpairs-marginfloorpush": "+ the floor pushing negatives only, every row",
    "v6-halfpairs-marginfloor-pres03": "+ the floor, every row, with SimilarityPreservation 0.3",
    "v6-halfpairs-marginfloor-pres1": "+ the floor, every row, with SimilarityPreservation 1",
    "v6-halfpairs-marginfloorpush-meaning-w002": "+ the floor pushing negatives only, negation-meaning rows only, weight 0.02",
    "v6-wordnet-half-marginmse": "WordNet pairs + teacher MarginMSE, every row",
    "v6-wordnet-half-marginfloor": "WordNet pairs + teacher margin as a floor, every row",
    "plain-distill-mse": "plain distillation: teacher MSELoss on corpus sentences, no st_debias rows",
    "plain-distill-mse-fitted": "plain distillation, its projection fitted by least squares first",
}


def dev_table() -> list[str]:
    runs, start_kept = {}, {}
    for file in sorted(RUNS.glob("*.json")):
        entry = json.loads(file.read_text(encoding="utf-8"))
        name = "start" if file.stem == "start" else entry["variant"]
        runs[name] = entry["scores"]
        if entry.get("best_checkpoint") == "start":  # no checkpoint beat the start model: its figures are the start's
            start_kept[name] = entry["selection"]["last_checkpoint_score"]
    start = runs["start"]
    lines = ["| variant | " + " | ".join(c for c, _, _ in DEV) + " |", "|---|" + "---:|" * len(DEV)]
    for name in [n for n in ORDER if n in runs]:
        if name in start_kept:
            lines.append(f"| {LABELS[name]} | start model kept: STS-B dev {100 * start_kept[name]:.3f} at step 100 |"
                         + " |" * (len(DEV) - 1))
            continue
        cells = []
        for _, key, direction in DEV:
            value = runs[name].get(key)
            worse = name != "start" and value is not None and (value - start[key]) * direction < 0
            cells.append("–" if value is None else f"{'**' if worse else ''}{value:.3f}{'**' if worse else ''}")
        lines.append(f"| {LABELS[name]} | " + " | ".join(cells) + " |")
    return lines


def gradient_share_table() -> list[str]:
    """Each loss part's mean share of the summed gradient norms over the run's measured steps (the trainer's
    ``grad_share/<part>`` logs), for the variants with a teacher term."""
    rows = {}
    for file in sorted(RUNS.glob("*-seed*.json")):
        entry = json.loads(file.read_text(encoding="utf-8"))
        logged = [h for h in entry.get("log_history", []) if "grad_share/teacher" in h]
        if logged:
            parts = [k.split("/", 1)[1] for k in logged[0] if k.startswith("grad_share/")]
            rows[entry["variant"]] = (len(logged), {p: sum(h[f"grad_share/{p}"] for h in logged) / len(logged) for p in parts})
    if not rows:
        return []
    parts = list(dict.fromkeys(part for _, shares in rows.values() for part in shares))
    lines = ["| variant | measured steps | " + " | ".join(parts) + " |", "|---|---:|" + "---:|" * len(parts)]
    for name in [n for n in ORDER if n in rows]:
        steps, shares = rows[name]
        lines.append(f"| {LABELS[name]} | {steps} | " + " | ".join(f"{shares[p]:.2f}" if p in shares else "–" for p in parts) + " |")
    return lines


def split_table() -> list[str]:
    if not SPLIT.is_file():
        return []
    data = json.loads(SPLIT.read_text(encoding="utf-8"))
    models, scores = list(data["models"]), data["scores"]
    subsets = [s for s in next(iter(scores.values())) if all(s in scores[m] for m in models)]
    lines = ["| subset | items | " + " | ".join(f"{m} (i) / (ii) / (iii)" for m in models) + " |",
             "|---|---:|" + "---|" * len(models)]
    for subset in subsets:
        cells = [" / ".join(f"{scores[m][subset][k]:.3f}" for k in ("paraphrase_over_affirmative",
                 "paraphrase_over_negated_antonym", "polarity_cluster")) for m in models]
        lines.append(f"| {subset} | {scores[models[0]][subset]['items']} | " + " | ".join(cells) + " |")
    return lines


def tables() -> dict[str, list[str]]:
    return {"dev": dev_table(), "gradient": gradient_share_table(), "split": split_table()}


def main(argv: list[str] | None = None) -> int:
    return generated.run(README, tables, argv, __doc__)


if __name__ == "__main__":
    raise SystemExit(main())
