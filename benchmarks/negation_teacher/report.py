"""The study's tables, from its result files: the development figures of every variant (``select_dev.py``'s files
in ``results/dev-100/``) and the negation-meaning probe by subset (``results/probe_split.json``). Written to
``results/negation_teacher.md`` and into the README between its table markers.

    python benchmarks/negation_teacher/report.py
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from benchmarks.harness.provenance import write_table
from st_debias.files import atomic_write_text

HERE = Path(__file__).resolve().parent
RUNS = HERE / "results" / "dev-100"
SPLIT = HERE / "results" / "probe_split.json"
OUT = HERE / "results" / "negation_teacher.md"
README = HERE / "README.md"
BEGIN, END = "<!-- tables: begin (report.py) -->", "<!-- tables: end -->"

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
         "v6-wordnet-half", "v6-wordnet-half-marginmse")
LABELS = {
    "start": "start (all-MiniLM-L6-v2)",
    "v6-halfpairs": "version 6, curated pairs (training half)",
    "v6-halfpairs-marginmse": "+ teacher MarginMSE, every row",
    "v6-halfpairs-marginmse-meaning": "+ teacher MarginMSE, negation-meaning rows only",
    "v6-halfpairs-kldiv": "+ teacher DistillKLDiv, every row",
    "v6-wordnet-half": "version 6, curated + WordNet pairs (training half)",
    "v6-wordnet-half-marginmse": "WordNet pairs + teacher MarginMSE, every row",
}


def dev_table() -> list[str]:
    runs = {}
    for file in sorted(RUNS.glob("*.json")):
        entry = json.loads(file.read_text(encoding="utf-8"))
        name = "start" if file.stem == "start" else entry["variant"]
        runs[name] = entry["scores"]
    start = runs["start"]
    lines = ["| variant | " + " | ".join(c for c, _, _ in DEV) + " |", "|---|" + "---:|" * len(DEV)]
    for name in [n for n in ORDER if n in runs]:
        cells = []
        for _, key, direction in DEV:
            value = runs[name].get(key)
            worse = name != "start" and value is not None and (value - start[key]) * direction < 0
            cells.append("–" if value is None else f"{'**' if worse else ''}{value:.3f}{'**' if worse else ''}")
        lines.append(f"| {LABELS[name]} | " + " | ".join(cells) + " |")
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


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args(argv)
    blocks = ["Development figures at 100 steps (seed 42); bold: on the wrong side of the start model.", "",
              *dev_table()]
    split = split_table()
    if split:
        blocks += ["", "The negation-meaning dev probe by subset: (i) / (ii) / (iii) per model.", "", *split]
    text = "\n".join(blocks) + "\n"
    write_table(OUT, blocks, {"sources": sorted(str(f.relative_to(HERE)) for f in [*RUNS.glob("*.json"), SPLIT] if f.is_file())})
    readme = README.read_text(encoding="utf-8")
    if BEGIN in readme:
        readme = re.sub(re.escape(BEGIN) + r".*?" + re.escape(END), f"{BEGIN}\n{text}{END}", readme, flags=re.S)
        atomic_write_text(README, readme)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
