"""How much the negated sentences of training batches draw together, for the start model and trained model folders.

The dev probe's polarity cluster (iii) is measured on its own items. The lab loss ``ClusterCapMarginLoss``
(``../polarity_cluster/cluster_cap.py``) caps the same kind of figure on training batches, without polarity labels: the
mean cosine of the negation column minus that of the anchor column, e = m(n) − m(a), against the start model's on
the same rows. This script reads a recipe's cached training rows in 64-row batches (the recipe's batch size, in
the rows' order, the order the recipe's seed gave them) at 32 tokens, as training embeds them, and reports per model the mean over batches of

* e, the column figure the cap sees (eval mode);
* the polarity figure: over the batch's rows whose negative has one more negation word than its anchor
  (``negation_count``), m(their negatives) − m(their anchors);
* both for the start model with dropout on (train mode, as the trained model is embedded while the cap acts);
* how much the start model's polarity figure on one batch moves between two draws of dropout, and between dropout
  on and off: the noise and the offset between the two sides of the cap.

    python benchmarks/polarity_cluster/batch_cluster.py benchmarks/polarity_cluster/configs/v6-swap10-gamma1e3-cap02-last.yaml \
        outputs/v6/cpu-dev-100/v6-swap10-gamma1e3-deshared-last-seed43/model \
        outputs/v6/cpu-dev-100/v6-swap10-gamma1e3-cap02-last-seed43/model \
        --batches 40 --out benchmarks/polarity_cluster/results/batch_cluster.md

The rows are built (or read from the row cache) exactly as training builds them for the recipe at ``--steps``
(default 100) and ``--seed`` (default 43). Writes the table (``--out``) and the same figures, stamped, next to it as JSON.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from benchmarks.harness.provenance import write_table

BATCH = 64
LENGTH = 32


def embed(model, texts: list[str], train_mode: bool):
    """Sentence embeddings of ``texts`` without gradients, with dropout on when ``train_mode``."""
    import torch

    model.train(train_mode)
    with torch.no_grad():
        features = {k: v.to(model.device) for k, v in model.tokenize(texts).items() if isinstance(v, torch.Tensor)}
        return model(features)["sentence_embedding"]


def negated_rows(rows, chunk: range) -> list[int]:
    """The positions in ``chunk`` of the rows whose negative has more negation words than its anchor."""
    from st_debias.data.negation.negator import negation_count

    anchors, negatives = rows["anchor"], rows[rows.column_names[2]]
    return [k for k, i in enumerate(chunk) if negation_count(negatives[i]) > negation_count(anchors[i])]


def batch_excess(model, rows, chunk: range, negated: list[int], train_mode: bool) -> tuple[float, float | None]:
    """e over the whole batch and over its ``negated`` rows (None for fewer than two)."""
    from benchmarks.polarity_cluster.cluster_cap import cluster_excess

    anchors, negatives = rows["anchor"], rows[rows.column_names[2]]
    a = embed(model, [anchors[i] for i in chunk], train_mode)
    n = embed(model, [negatives[i] for i in chunk], train_mode)
    polarity = float(cluster_excess(a[negated], n[negated])) if len(negated) >= 2 else None
    return float(cluster_excess(a, n)), polarity


def batch_figures(model, rows, batches: int, train_mode: bool = False) -> dict[str, float]:
    """The mean over ``batches`` consecutive 64-row batches of e and of the polarity figure (module docstring),
    with the polarity figure's spread over batches."""
    import statistics

    import torch

    torch.manual_seed(0)  # the dropout masks, when on
    column, polarity, counts = [], [], []
    for b in range(batches):
        chunk = range(b * BATCH, (b + 1) * BATCH)
        negated = negated_rows(rows, chunk)
        counts.append(len(negated))
        whole, part = batch_excess(model, rows, chunk, negated, train_mode)
        column.append(whole)
        if part is not None:
            polarity.append(part)
    model.eval()
    return {
        "column_excess": statistics.mean(column),
        "polarity_excess": statistics.mean(polarity),
        "polarity_excess_sd": statistics.stdev(polarity) if len(polarity) > 1 else 0.0,
        "negated_rows_per_batch": statistics.mean(counts),
    }


def reference_noise(model, rows, batches: int) -> dict[str, float]:
    """How far the cap's two sides differ on the same batch with the same weights: the start model's polarity figure
    with dropout on minus the same with a second draw of dropout, and minus the same without dropout (mean and
    spread over batches)."""
    import statistics

    import torch

    torch.manual_seed(1)
    two_draws, against_eval = [], []
    for b in range(batches):
        chunk = range(b * BATCH, (b + 1) * BATCH)
        negated = negated_rows(rows, chunk)
        if len(negated) < 2:
            continue
        first, second, plain = (batch_excess(model, rows, chunk, negated, mode)[1] for mode in (True, True, False))
        two_draws.append(first - second)
        against_eval.append(first - plain)
    model.eval()
    return {
        "two_dropout_draws": {"mean": statistics.mean(two_draws), "sd": statistics.stdev(two_draws)},
        "dropout_minus_eval": {"mean": statistics.mean(against_eval), "sd": statistics.stdev(against_eval)},
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

    from benchmarks.harness.recipe_knobs import knob
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
    mix_count = knob(recipe, "mix_sentences")
    mix_sentences = read_corpus(None, mix_count) if mix_count else None
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
    print("[batch_cluster] the start model's batch-to-batch noise", flush=True)
    noise = reference_noise(start, rows, args.batches)
    lines = [
        f"Training rows of `{recipe.name}`: {args.batches} batches of {BATCH} rows at {LENGTH} tokens. Column: "
        "m(negation column) − m(anchor column), what `ClusterCapMarginLoss` caps at the start model's value. "
        "Polarity: the same over the rows whose negative adds a negation word. Means over batches.",
        "",
        "| model | column excess e | polarity excess (sd over batches) | rows adding a negation, per batch |",
        "|---|---:|---:|---:|",
        *(f"| {r['model']} | {r['column_excess']:.4f} | {r['polarity_excess']:.4f} ({r['polarity_excess_sd']:.4f}) | "
          f"{r['negated_rows_per_batch']:.1f} |" for r in results),
        "",
        "The start model's polarity figure on the same batch, dropout on, minus: a second draw of dropout "
        f"{noise['two_dropout_draws']['mean']:+.4f} (sd {noise['two_dropout_draws']['sd']:.4f}); "
        f"no dropout {noise['dropout_minus_eval']['mean']:+.4f} (sd {noise['dropout_minus_eval']['sd']:.4f}).",
    ]
    write_table(args.out, lines, {"recipe": recipe.name, "steps": args.steps, "seed": args.seed, "batches": args.batches,
                                  "rows": results, "start_noise": noise})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
