"""How much the negated sentences of training batches draw together, for the start model and trained model folders.

The dev probe's polarity cluster (iii) is measured on its own items. The lab loss ``ClusterCapMarginLoss``
(``../selection/cluster_cap.py``) caps the same kind of figure on training batches, without polarity labels: the
mean cosine of the negation column minus that of the anchor column, e = m(n) − m(a), against the start model's on
the same rows. This script reads a recipe's cached training rows in 64-row batches (the recipe's batch size, in
the rows' order, the order the recipe's seed gave them) at 32 tokens, as training embeds them, and reports per model the mean over batches of

* e, the column figure the cap sees (eval mode);
* the polarity figure: over the batch's rows whose negative has one more negation word than its anchor
  (``negation_count``), m(their negatives) − m(their anchors);
* e for the start model with dropout on (train mode, as the trained model is embedded while the cap acts).

    python benchmarks/recipe_v6/batch_cluster.py benchmarks/recipe_v6/configs/v6-swap10-gamma1e3-cap02-last.yaml \
        outputs/recipe_v6/cpu-dev-100/v6-swap10-gamma1e3-deshared-last-seed43/model \
        outputs/recipe_v6/cpu-dev-100/v6-swap10-gamma1e3-cap02-last-seed43/model \
        --batches 40 --out benchmarks/recipe_v6/results/batch_cluster.md

The rows are built (or read from the row cache) exactly as training builds them for the recipe at ``--steps``
(default 100) and ``--seed`` (default 43). Writes the table (``--out``) and the same figures, stamped, next to it as JSON.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.harness
sys.path.append(str(Path(__file__).resolve().parents[1] / "selection"))  # the lab losses and mix sources
from benchmarks.harness.provenance import write_table  # noqa: E402

BATCH = 64
LENGTH = 32


def embed(model, texts: list[str], train_mode: bool):
    """Sentence embeddings of ``texts`` without gradients, with dropout on when ``train_mode``."""
    import torch

    model.train(train_mode)
    with torch.no_grad():
        features = {k: v.to(model.device) for k, v in model.tokenize(texts).items() if isinstance(v, torch.Tensor)}
        return model(features)["sentence_embedding"]


def batch_figures(model, rows, batches: int, train_mode: bool = False) -> dict[str, float]:
    """The mean over ``batches`` consecutive 64-row batches of e and of the polarity figure (module docstring)."""
    import torch
    from cluster_cap import cluster_excess

    from st_debias.data.negation.negator import negation_count

    torch.manual_seed(0)  # the dropout masks, when on
    anchors, negatives = rows["anchor"], rows[rows.column_names[2]]
    column, polarity, counts = [], [], []
    for b in range(batches):
        chunk = range(b * BATCH, (b + 1) * BATCH)
        a = embed(model, [anchors[i] for i in chunk], train_mode)
        n = embed(model, [negatives[i] for i in chunk], train_mode)
        column.append(float(cluster_excess(a, n)))
        negated = [k for k, i in enumerate(chunk) if negation_count(negatives[i]) > negation_count(anchors[i])]
        counts.append(len(negated))
        if len(negated) >= 2:
            polarity.append(float(cluster_excess(a[negated], n[negated])))
    model.eval()
    return {
        "column_excess": sum(column) / len(column),
        "polarity_excess": sum(polarity) / len(polarity),
        "negated_rows_per_batch": sum(counts) / len(counts),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("recipe", type=Path, help="the recipe YAML whose training rows to read")
    parser.add_argument("folders", nargs="+", type=Path, help="trained model folders (a run's model/ or a checkpoint)")
    parser.add_argument("--batches", type=int, default=40, help="64-row batches to read (default 40)")
    parser.add_argument("--steps", type=int, default=100, help="the training budget the rows were built for (default 100)")
    parser.add_argument("--seed", type=int, default=43, help="the training seed, which orders the rows (default 43)")
    parser.add_argument("--out", type=Path, required=True, help="the Markdown table to write (.md)")
    args = parser.parse_args(argv)
    if not args.recipe.is_file():
        parser.error(f"{args.recipe}: no such recipe file")
    for folder in args.folders:
        if not (folder / "config.json").is_file() and not (folder / "modules.json").is_file():
            parser.error(f"{folder}: not a model folder (no modules.json or config.json)")
    if args.out.suffix != ".md":
        parser.error(f"--out must name a .md file, got {args.out}")
    if args.batches < 1:
        parser.error(f"--batches must be at least 1, got {args.batches}")

    import affirmative_negatives
    import cluster_cap
    import column_views
    import deshared_margin

    for module in (column_views, deshared_margin, cluster_cap, affirmative_negatives):
        module.register()  # a lab recipe may name a lab loss or mix source

    from benchmarks.harness.trained import load_trained
    from st_debias.data.kinds import DATA_KINDS
    from st_debias.paths import load_model
    from st_debias.recipes import load_recipe, override
    from st_debias.recipes.data import build_rows, read_corpus

    recipe = override(load_recipe(args.recipe), steps=args.steps, batch_size=BATCH, seed=args.seed)
    start = load_model(None)
    wanted = recipe.training.steps * recipe.training.batch_size
    if args.batches * BATCH > wanted:
        parser.error(f"--batches {args.batches} asks for {args.batches * BATCH} rows; the recipe trains on {wanted}")
    print(f"[batch_cluster] reading the training rows of {recipe.name}", flush=True)
    sentences = read_corpus(None, DATA_KINDS[recipe.data.kind].oversample * wanted)
    mix_sentences = read_corpus(None, recipe.data.mix_sentences) if recipe.data.mix_sentences else None
    rows, _ = build_rows(recipe, sentences, start, show_progress_bar=False, mix_sentences=mix_sentences)

    models = [("start", start, False), ("start, dropout on", start, True)]
    models += [(f.parent.name if f.name == "model" else f"{f.parents[1].name}/{f.name}", f, False) for f in args.folders]
    results = []
    for label, model, train_mode in models:
        print(f"[batch_cluster] {label}", flush=True)
        if isinstance(model, Path):
            model = load_trained(model)[0]
        model.max_seq_length = LENGTH
        results.append({"model": label, **batch_figures(model, rows, args.batches, train_mode)})
    lines = [
        f"Training rows of `{recipe.name}`: {args.batches} batches of {BATCH} rows at {LENGTH} tokens. Column: "
        "m(negation column) − m(anchor column), what `ClusterCapMarginLoss` caps at the start model's value. "
        "Polarity: the same over the rows whose negative adds a negation word. Means over batches.",
        "",
        "| model | column excess e | polarity excess | rows adding a negation, per batch |",
        "|---|---:|---:|---:|",
        *(f"| {r['model']} | {r['column_excess']:.4f} | {r['polarity_excess']:.4f} | {r['negated_rows_per_batch']:.1f} |"
          for r in results),
    ]
    write_table(args.out, lines, {"recipe": recipe.name, "steps": args.steps, "seed": args.seed, "batches": args.batches,
                                  "rows": results})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
