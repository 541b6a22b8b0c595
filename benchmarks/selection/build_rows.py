"""Build (and cache) a recipe's training rows for a budget without training, so that a GPU machine without
spaCy can reuse them: ``python benchmarks/selection/build_rows.py st-debias --steps 1000``.

The rows land in the row cache (``$ST_DEBIAS_CACHE`` or ~/.cache/st_debias) under the same key
``train_recipe`` computes, so a later run with the same recipe, budget, seed and corpus reuses them.
"""

from __future__ import annotations

import argparse
import dataclasses

from st_debias.data.kinds import DATA_KINDS
from st_debias.recipes.config import load_recipe
from st_debias.recipes.data import build_rows, read_corpus
from st_debias.recipes.train import load_start_model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("recipes", nargs="+")
    parser.add_argument("--steps", type=int, nargs="+", default=[1000])
    parser.add_argument("--seeds", type=int, nargs="+", default=[42])
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--max-seq-length", type=int, default=32)
    args = parser.parse_args()
    model = load_start_model(None)
    for name in args.recipes:
        base = load_recipe(name)
        for steps in args.steps:
            for seed in args.seeds:
                training = dataclasses.replace(
                    base.training, steps=steps, seed=seed, batch_size=args.batch_size,
                    max_seq_length=args.max_seq_length,
                )
                recipe = dataclasses.replace(base, training=training)
                wanted = steps * args.batch_size
                sentences = read_corpus(None, DATA_KINDS[recipe.data.kind].oversample * wanted)
                model.max_seq_length = args.max_seq_length
                rows, report = build_rows(recipe, sentences, model, max_rows=wanted)
                print(f"{name} steps={steps} seed={seed}: {len(rows)} rows", flush=True)


if __name__ == "__main__":
    main()
