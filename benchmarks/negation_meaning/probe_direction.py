"""The negation-meaning probe with and without the negated sentences' common direction, for the start model and
saved model folders (``average_checkpoints.py`` does the same for a run's kept checkpoints).

    python benchmarks/negation_meaning/probe_direction.py \
        outputs/v6/cpu-dev-100/v6-swap10-gamma1e3-last-seed42/model \
        outputs/v6/cpu-dev-500-trace/v6-swap10-gamma1e3-last-seed42/model \
        outputs/v6/cpu-dev-1000-trace/v6-swap10-gamma1e3-last-seed42/model \
        outputs/models/all-mpnet-base-v2 \
        --out benchmarks/negation_meaning/results/probe_direction.md

Each folder is loaded as saved (its own length); the start model is scored first. Writes the table (``--out``)
and the same rows, stamped, next to it as JSON.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from benchmarks.harness.provenance import write_table
from benchmarks.negation_meaning.average_checkpoints import direction_table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("models", nargs="*", type=Path, help="saved sentence-transformers model folders")
    parser.add_argument("--out", type=Path, required=True, help="the Markdown table (its JSON goes beside it)")
    args = parser.parse_args(argv)
    for folder in args.models:
        if not (folder / "modules.json").is_file():
            parser.error(f"{folder}: not a saved sentence-transformers model (no modules.json)")
    if not args.out.parent.is_dir():
        parser.error(f"--out {args.out}: no folder {args.out.parent}")

    from sentence_transformers import SentenceTransformer

    from benchmarks.selection.dev_probes import negation_meaning_scores
    from st_debias.evaluation import EmbeddingCache, load_negation_meaning_items
    from st_debias.recipes.train import load_start_model

    items = load_negation_meaning_items()  # the probe's own (cached): here for its item count
    rows = []
    for label, load in [("start", lambda: load_start_model(None))] + [
        (str(folder), lambda folder=folder: SentenceTransformer(str(folder), device="cpu")) for folder in args.models
    ]:
        print(f"[probe_direction] scoring {label}", flush=True)
        cache = EmbeddingCache(load())
        rows.append({"model": label, **negation_meaning_scores(cache)})  # as scored and without the direction
    lines = [
        f"The negation-meaning probe ({len(items)} items) as scored and with the negated sentences' common direction "
        "removed (w/o dir.; `average_checkpoints.py`).",
        "",
        *direction_table(rows, "model", lambda row: f"`{row['model']}`"),
    ]
    write_table(args.out, lines, {"items": len(items), "rows": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
