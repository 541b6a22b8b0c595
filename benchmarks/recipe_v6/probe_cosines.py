"""Where the negation-meaning probe's (i) moves: its mean cosines, for the start model and trained model folders.

(i) is the share of items where cos(not A, B) > cos(not A, A). A fall can come from "not A" moving away from its
paraphrase "B" or toward "A"; the mean of each cosine (and of cos(not A, not B), which (ii) compares) says which.

    python benchmarks/recipe_v6/probe_cosines.py \
        outputs/recipe_v6/cpu-dev-500/v6-swap10-gamma1e3-margin-last-seed42/model \
        outputs/recipe_v6/cpu-dev-500/v6-swap10-gamma1e3-negviews-last-seed42/model \
        outputs/recipe_v6/cpu-dev-500/v6-swap10-gamma1e3-negviews05-last-seed42/model \
        --out benchmarks/recipe_v6/results/probe_cosines.md

The start model is scored first. Each folder is loaded as ``select_dev.py`` scores it (a trainer checkpoint at its
run's length). Writes the table (``--out``) and the same rows, stamped, next to it as JSON.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.harness
sys.path.append(str(Path(__file__).resolve().parents[1] / "selection"))  # column_views, for lab recipes
from benchmarks.harness.provenance import write_table  # noqa: E402


def probe_row(label: str, model) -> dict:
    from st_debias.evaluation import EmbeddingCache, load_negation_meaning_items, negation_meaning_probe

    probe = negation_meaning_probe(EmbeddingCache(model), load_negation_meaning_items())
    cosines = probe["mean_cosine"]
    return {
        "model": label,
        "items": probe["items"],
        "i": probe["paraphrase_over_affirmative"],
        "ii": probe["paraphrase_over_negated_antonym"],
        "iii": probe["polarity_cluster"],
        "cos_not_a_b": cosines["negated_to_paraphrase"],
        "cos_not_a_a": cosines["negated_to_affirmative"],
        "cos_not_a_not_b": cosines["negated_to_negated_antonym"],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folders", nargs="+", type=Path, help="trained model folders (a run's model/ or a checkpoint)")
    parser.add_argument("--out", type=Path, required=True, help="the Markdown table to write (.md)")
    args = parser.parse_args(argv)
    for folder in args.folders:
        if not (folder / "config.json").is_file() and not (folder / "modules.json").is_file():
            parser.error(f"{folder}: not a model folder (no modules.json or config.json)")
    if args.out.suffix != ".md":
        parser.error(f"--out must name a .md file, got {args.out}")

    from column_views import register

    from benchmarks.harness.trained import load_trained
    from st_debias.paths import load_model

    register()  # a lab recipe in a model folder may name the lab loss
    print("[probe_cosines] scoring the start model", flush=True)
    rows = [probe_row("start", load_model(None))]
    for folder in args.folders:
        label = folder.parent.name if folder.name == "model" else f"{folder.parents[1].name}/{folder.name}"
        print(f"[probe_cosines] scoring {label}", flush=True)
        rows.append(probe_row(label, load_trained(folder)[0]))
    lines = [
        f"Negation-meaning probe, {rows[0]['items']} items: (i), (ii), (iii) and the mean cosine of \"not A\" to each candidate.",
        "",
        "| model | (i) ↑ | (ii) ↑ | (iii) ↓ | cos(not A, B) | cos(not A, A) | cos(not A, not B) |",
        "|---|---:|---:|---:|---:|---:|---:|",
        *(
            f"| {row['model']} | {row['i']:.3f} | {row['ii']:.3f} | {row['iii']:.4f} | {row['cos_not_a_b']:.4f} | "
            f"{row['cos_not_a_a']:.4f} | {row['cos_not_a_not_b']:.4f} |"
            for row in rows
        ),
    ]
    write_table(args.out, lines, {"rows": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
