"""The study's tables, from its result files: the development figures of every variant (``select_dev.py``'s files
in ``results/dev-100/``), each teacher variant's gradient shares by loss part (from the same files' training logs),
the negation-meaning probe on the held-out subsets (``results/probe_split.json`` and ``results/probe_split_floor.json``), and the
500-step runs' development figures (``results/dev-500/``) beside version 6's (``../budget/results/v6/cpu-dev-500/``),
written into the README (``--check``: exit 1 when it is out of date).

    python benchmarks/negation_teacher/report.py
"""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.harness import tables as generated
from benchmarks.harness.tables import BENCHMARKS

HERE = Path(__file__).resolve().parent
RUNS = HERE / "results" / "dev-100"
RUNS_500 = HERE / "results" / "dev-500"
#: Version 6 at 500 steps (all curated pairs): the last checkpoint of seed 42 (its run kept its best, so the last
#: was scored apart) and of seed 44, which was scored with the other-word subsets.
V6_500 = "budget/results/v6/cpu-dev-500"
V6_500_RUNS = (("version 6, all curated pairs, seed 42", f"{V6_500}/last-checkpoint/v6-swap10-gamma1e3-seed42.json"),
               ("version 6, all curated pairs, seed 44", f"{V6_500}/v6-swap10-gamma1e3-last-seed44.json"))
SPLITS = {"split": HERE / "results" / "probe_split.json", "split_floor": HERE / "results" / "probe_split_floor.json"}
README = HERE / "README.md"

#: (column, score key, better direction: 1 higher, -1 lower, decimals)
DEV = tuple((*column, 3) for column in (
    ("STS-B dev", "dev", 1), ("dev Oppn", "dev_oppn", 1),
    ("Oppn high overlap/low score ↓", "dev_oppn_side/high_overlap_low_score", -1),
    ("Oppn low overlap/high score ↑", "dev_oppn_side/low_overlap_high_score", 1),
    ("CANNOT ↓", "neg_cos_heldout", -1), ("word order ↓", "word_order_cos", -1), ("minimal pairs", "mp_accuracy", 1),
    ("(i)", "nm_over_affirmative", 1), ("(ii)", "nm_over_negated_antonym", 1), ("(iii) ↓", "nm_polarity_cluster", -1),
    ("(i) other word", "nm_over_affirmative_other_word", 1), ("(ii) other word", "nm_over_negated_antonym_other_word", 1),
))
ORDER = ("v6-halfpairs", "v6-halfpairs-marginmse", "v6-halfpairs-marginmse-meaning", "v6-halfpairs-kldiv",
         "v6-halfpairs-marginfloor", "v6-halfpairs-marginfloor-w003", "v6-halfpairs-marginfloor-meaning",
         "v6-halfpairs-marginfloor-meaning-w002", "v6-halfpairs-marginfloorpush", "v6-halfpairs-marginfloorpush-meaning-w002",
         "v6-halfpairs-marginfloor-pres03", "v6-halfpairs-marginfloor-pres1",
         "v6-halfpairs-marginfloor-embed-anchor", "v6-halfpairs-marginfloor-embed-all",
         "v6-halfpairs-marginfloor-negation", "v6-halfpairs-marginfloor-nonegation", "v6-halfpairs-marginfloor-nonegedit",
         "v6-halfpairs-marginfloor-negedit03", "v6-halfpairs-marginfloor-negedit03-other2",
         "v6-halfpairs-marginfloor-negedit03-other2-negviews05", "v6-halfpairs-marginfloor-negedit03-other2-negviews05-ramp",
         "v6-halfpairs-marginfloor-negedit03-other2-negviews05-w003",
         "v6-halfpairs-marginfloor-negedit03-other2-negviews05-lr15e6",
         "v6-halfpairs-marginfloor-negedit03-other2-negviews05-meaning05",
         "v6-halfpairs-marginfloor-negedit03-other2-negviews05-cap01",
         "v6-halfpairs-marginfloor-negedit03-other2-negviews05-pull",
         "v6-halfpairs-phrases-marginfloor-negedit03-other2",
         "v6-halfpairs-affirmative-marginfloor-nonegedit",
         "v6-wordnet-half", "v6-wordnet-half-marginmse", "v6-wordnet-half-marginfloor",
         "plain-distill-mse", "plain-distill-mse-fitted")
LABELS = {
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
    "v6-halfpairs-marginfloor-embed-anchor": "+ the floor, every row, with the teacher's embeddings of the anchors (fitted projection, 30)",
    "v6-halfpairs-marginfloor-embed-all": "+ the floor, every row, with the teacher's embeddings of all three columns (fitted projection, 30)",
    "v6-halfpairs-marginfloor-negation": "+ the floor on the negation rows only (meaning rows and negation edits), weight 0.047",
    "v6-halfpairs-marginfloor-nonegation": "+ the floor on the other edits only, weight 0.053",
    "v6-halfpairs-marginfloor-negedit03": "+ the floor, 0.1 per row, 0.03 on the negation edits",
    "v6-halfpairs-marginfloor-nonegedit": "+ the floor on the meaning rows and the other edits, none on the negation edits (0.1 per row)",
    "v6-halfpairs-marginfloor-negedit03-other2": "+ the floor, 0.1 per row, 0.03 on the negation edits, 0.2 on the other edits",
    "v6-halfpairs-marginfloor-negedit03-other2-negviews05": ("+ the floor, 0.1 per row, 0.03 on the negation edits, 0.2 on the "
                                                             "other edits, the negation column's dropout view at half weight"),
    "v6-halfpairs-marginfloor-negedit03-other2-negviews05-ramp": ("the same, its teacher term zero to 10 % of the steps, rising "
                                                                  "to full weight at 50 %"),
    "v6-halfpairs-marginfloor-negedit03-other2-negviews05-w003": ("the negation view's floor, no ramp, at teacher weight 0.03 (0.3 of its push on "
                                                                  "every row)"),
    "v6-halfpairs-marginfloor-negedit03-other2-negviews05-lr15e6": "the negation view's floor, no ramp, at half the peak learning rate",
    "v6-halfpairs-marginfloor-negedit03-other2-negviews05-meaning05": ("the negation view's floor, no ramp, at half its push on "
                                                                       "the negation-meaning rows"),
    "v6-halfpairs-marginfloor-negedit03-other2-negviews05-cap01": ("the negation view's floor, no ramp, each row's floor "
                                                                   "linear past a gap of 0.1"),
    "v6-halfpairs-marginfloor-negedit03-other2-negviews05-pull": ("the negation view's floor, no ramp, pulling positives in "
                                                                  "only (no push on negatives)"),
    "v6-halfpairs-phrases-marginfloor-negedit03-other2": ("+ 5 % rows (\"not A\", \"B\", \"not B\") for minimal pairs, the floor, 0.1 per row, 0.03 on the "
                                                           "negation edits, 0.2 on the other edits"),
    "v6-halfpairs-affirmative-marginfloor-nonegedit": ("+ 10 % rows (\"X is not A\", \"X is B\", \"X is A\") for minimal pairs, the floor on every "
                                                       "row but the negation edits (0.1 per row)"),
    "v6-halfpairs-marginfloorpush-meaning-w002": "+ the floor pushing negatives only, negation-meaning rows only, weight 0.02",
    "v6-wordnet-half-marginmse": "WordNet pairs + teacher MarginMSE, every row",
    "v6-wordnet-half-marginfloor": "WordNet pairs + teacher margin as a floor, every row",
    "plain-distill-mse": "plain distillation: teacher MSELoss on corpus sentences, no st_debias rows",
    "plain-distill-mse-fitted": "plain distillation, its projection fitted by least squares first",
}


SEEDS = (42, 43)


def run_entries(folder: Path = RUNS) -> dict[str, dict]:
    """Each result file of ``folder`` by its name (``start``, or ``<variant>-seed<seed>``)."""
    return {file.stem: generated.result(file.relative_to(BENCHMARKS).as_posix()) for file in sorted(folder.glob("*.json"))
            if file.stem != "budget"}


def long_run_table() -> list[str]:
    """The 500-step runs' development figures, version 6's first."""
    folder, entries = RUNS_500.relative_to(BENCHMARKS).as_posix(), run_entries(RUNS_500)
    runs = [(LABELS[name] + f", seed {seed}", f"{folder}/{name}-seed{seed}.json")
            for name in ORDER for seed in SEEDS if f"{name}-seed{seed}" in entries]
    return generated.dev_table([*V6_500_RUNS, *runs], DEV, start=f"{folder}/start.json",
                               head="run (dev; all-MiniLM-L6-v2, 500 steps, last checkpoint)") if runs else []


def gradient_share_table(entries: dict[str, dict]) -> list[str]:
    """Each loss part's mean share of the summed gradient norms over the run's measured steps (the trainer's
    ``grad_share/<part>`` logs), for the variants with a teacher term."""
    rows = {}
    for name in ORDER:
        entry = entries.get(f"{name}-seed42", {})
        logged = [h for h in entry.get("log_history", []) if "grad_share/teacher" in h]
        if logged:
            parts = [k.split("/", 1)[1] for k in logged[0] if k.startswith("grad_share/")]
            rows[name] = (len(logged), {p: sum(h[f"grad_share/{p}"] for h in logged) / len(logged) for p in parts})
    if not rows:
        return []
    parts = list(dict.fromkeys(part for _, shares in rows.values() for part in shares))
    lines = ["| variant | measured steps | " + " | ".join(parts) + " |", "|---|---:|" + "---:|" * len(parts)]
    for name in [n for n in ORDER if n in rows]:
        steps, shares = rows[name]
        lines.append(f"| {LABELS[name]} | {steps} | " + " | ".join(f"{shares[p]:.2f}" if p in shares else "–" for p in parts) + " |")
    return lines


def split_table(path: Path) -> list[str]:
    """The probe on the held-out subsets of one ``probe_split.py`` file (pairs no training row used): (i) / (ii) /
    (iii) per model. The file's own table (``.md`` beside it) has every subset."""
    if not path.is_file():
        return []
    data = json.loads(path.read_text(encoding="utf-8"))
    models, scores = list(data["models"]), data["scores"]
    subsets = [s for s in next(iter(scores.values())) if "held-out" in s and all(s in scores[m] for m in models)]
    lines = ["| subset | items | " + " | ".join(f"{m} (i) / (ii) / (iii)" for m in models) + " |",
             "|---|---:|" + "---|" * len(models)]
    for subset in subsets:
        cells = [" / ".join(f"{scores[m][subset][k]:.3f}" for k in ("paraphrase_over_affirmative",
                 "paraphrase_over_negated_antonym", "polarity_cluster")) for m in models]
        lines.append(f"| {subset} | {scores[models[0]][subset]['items']} | " + " | ".join(cells) + " |")
    return lines


def tables() -> dict[str, list[str]]:
    entries = run_entries()
    # A ``-last-checkpoint`` file scores the last checkpoint of a run whose recipe kept the start model instead.
    runs = [(LABELS[name] + ("" if seed == 42 else f", seed {seed}") + (", its last checkpoint (not kept)" if tail else ""),
             f"{RUNS.relative_to(BENCHMARKS).as_posix()}/{name}-seed{seed}{tail}.json")
            for name in ORDER for seed in SEEDS for tail in ("", "-last-checkpoint") if f"{name}-seed{seed}{tail}" in entries]
    dev = generated.dev_table(runs, DEV, start=f"{RUNS.relative_to(BENCHMARKS).as_posix()}/start.json",
                              head="variant (dev; all-MiniLM-L6-v2, 100 steps, seed 42)")
    return {"dev": dev, "gradient": gradient_share_table(entries), **{name: split_table(path) for name, path in SPLITS.items()},
            "dev500": long_run_table()}


def main(argv: list[str] | None = None) -> int:
    return generated.run(README, tables, argv, __doc__)


if __name__ == "__main__":
    raise SystemExit(main())
