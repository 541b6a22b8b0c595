"""Where the dev Oppn split is lost: the mean cosine of each of its two sides, for dev result files.

The Oppn split of STS-B dev holds the pairs where word overlap and the gold score disagree: high overlap with a
low score, and low overlap with a high score. A model that leans more on word overlap pulls the first side's
cosines up and pushes the second's down; the gap (low-overlap side minus high-overlap side) shrinks.

    python benchmarks/teachers_preservation/oppn_sides.py benchmarks/budget/results/v6/cpu-dev-500/start.json \
        benchmarks/recipe_v6/results/cpu-dev-500/*-seed42.json --out benchmarks/teachers_preservation/results/oppn_sides.md

Writes the table (``--out``) and the same rows, stamped, next to it as JSON.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from benchmarks.harness.provenance import write_table

HERE = Path(__file__).resolve().parent
HIGH, LOW = "dev_oppn_side/high_overlap_low_score", "dev_oppn_side/low_overlap_high_score"


def side_row(path: Path) -> dict:
    """The Oppn figures of one result file (``scores`` of a select_dev.py entry)."""
    entry = json.loads(path.read_text(encoding="utf-8"))
    scores = entry.get("scores", entry)
    missing = [key for key in ("dev_oppn", HIGH, LOW) if key not in scores]
    if missing:
        raise ValueError(f"{path}: no {', '.join(missing)} in its scores (not a select_dev.py result file?)")
    return {
        "file": path.relative_to(HERE).as_posix() if path.is_relative_to(HERE) else path.name,
        "dev_oppn": scores["dev_oppn"],
        "high_overlap_low_score": scores[HIGH],
        "low_overlap_high_score": scores[LOW],
        "gap": scores[LOW] - scores[HIGH],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+", type=Path, help="select_dev.py result files (start.json first)")
    parser.add_argument("--out", type=Path, required=True, help="the Markdown table to write (.md)")
    args = parser.parse_args(argv)
    paths = [path.resolve() for path in args.files]
    for path in paths:
        if not path.is_file():
            parser.error(f"no result file {path}")
    if args.out.suffix != ".md":
        parser.error(f"--out must name a .md file, got {args.out}")
    try:
        rows = [side_row(path) for path in paths]
    except ValueError as error:
        parser.error(str(error))
    lines = [
        "| result file | dev Oppn | mean cos, high overlap / low score | mean cos, low overlap / high score | gap |",
        "|---|---:|---:|---:|---:|",
        *(
            f"| `{row['file']}` | {row['dev_oppn']:.2f} | {row['high_overlap_low_score']:.4f} | "
            f"{row['low_overlap_high_score']:.4f} | {row['gap']:.4f} |"
            for row in rows
        ),
    ]
    write_table(args.out, lines, {"rows": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
