"""Choose between recipe variants on development data only (never on the STS test sets).

Each variant (a recipe YAML) is trained from the same start model, budget and sentences as in
``benchmarks/compare/compare.py``, without the full evaluation; the best STS-B dev checkpoint is then scored on:

* ``dev``: STS-B dev Spearman ×100 (the trainer's selection metric);
* ``dev_cont`` / ``dev_oppn``: OssCSE's Cont/Oppn split applied to STS-B *dev* (the test split is a target,
  so the dev split stands in for it);
* ``neg_cos_heldout``: mean cosine of CANNOT pairs 3,001–6,000 (the reported probe uses the first 3,000);
* ``transfer_dev``: the SentEval transfer tasks' selection average (dev and cross-validation accuracies only,
  never a test split; ``--transfer quick`` by default, SST-2 trained on its dev split; ``none`` skips it).

Usage (what produced ``results/``):

    python benchmarks/selection/select_dev.py benchmarks/selection/configs/*.yaml --steps 100 --seeds 42

A finished (variant, seed) file is reused only when its provenance stamp (commit, package and builder
versions) matches the current code, else trained again (``--reuse-stale`` keeps it); ``--table`` only rebuilds
``select.md`` (from the result files and, for variants without one, the unstamped files in ``results/archive/``).
Models already trained by ``compare.py`` are scored the same way without training again:

    python benchmarks/selection/select_dev.py --score-models outputs/compare/osscse-seed42/model ...

A trainer checkpoint of a run (``<run>/checkpoints/checkpoint-N``) is scored at the length of the run's
``model/`` (the checkpoint itself holds the training length, 32 tokens), its recipe read from ``model/``.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from benchmarks.harness.provenance import stamp, write_stamped_json
from benchmarks.harness.runner import result_files, reusable, train_and_record
from benchmarks.harness.trained import load_trained, recipe_file_of
from st_debias.files import atomic_write_text

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
HELDOUT = (3000, 6000)
REUSE_STALE = False
TRANSFER = "quick"


def dev_scores(model) -> dict[str, float | None]:
    """STS-B dev Spearman (pooled and per genre), its Cont/Oppn split, and the held-out CANNOT negation cosine
    for ``model``."""
    from st_debias.evaluation import EmbeddingCache, STSSuite, cont_oppn_scores, load_negation_pairs
    from st_debias.evaluation.sts import spearman_x100

    cache = EmbeddingCache(model)
    suite = STSSuite(["STSBenchmark-dev"])
    dev = suite.data["STSBenchmark-dev"]
    cos = cache.cosine(dev.sentences1, dev.sentences2)
    genres = suite.subset_scores(cache).get("STSBenchmark-dev", {})
    split = cont_oppn_scores(dev, cos)
    pairs = load_negation_pairs(limit=HELDOUT[1])
    sentences, negations = pairs.sentences[HELDOUT[0] :], pairs.negations[HELDOUT[0] :]
    from benchmarks.selection.dev_probes import dev_probe_scores

    transfer = {}
    if TRANSFER != "none":
        from st_debias.evaluation.transfer import QUICK_TRANSFER_TASKS, evaluate_transfer
        from st_debias.evaluation.transfer_data import TRANSFER_TASKS

        tasks = QUICK_TRANSFER_TASKS if TRANSFER == "quick" else TRANSFER_TASKS
        transfer = {"transfer_dev": evaluate_transfer(model, tasks)["selection"]["avg"], "transfer_tasks": TRANSFER}
    return {
        **dev_probe_scores(cache),
        **transfer,
        "dev": spearman_x100(cos, dev.scores),
        "dev_cont": split["cont"]["spearman"],
        "dev_oppn": split["oppn"]["spearman"],
        **{
            f"dev_oppn_side/{side}": values["mean_cosine"]
            for side, values in split.get("oppn_sides", {}).items()
            if isinstance(values, dict)  # "on_median" is a count
        },
        **{f"dev_genre/{genre}": values["spearman"] for genre, values in genres.items()},
        **{f"dev_genre_cos/{genre}": values["mean_cosine"] for genre, values in genres.items()},
        "neg_cos_heldout": float(cache.cosine(sentences, negations).mean()),
        "heldout_pairs": len(sentences),
    }


def run_one(path: str, seed: int, args: argparse.Namespace) -> Path:
    from benchmarks.selection.checkpoint_probe import ConstantRate, KeepWeights, ProbeAtEval
    from benchmarks.selection.low_rank import LowRankAdapters
    from st_debias.recipes import load_recipe, override
    from st_debias.recipes.train import load_start_model

    label = Path(path).stem + (f"-decay{args.decay_to_start:g}" if args.decay_to_start else "")
    label += f"-lora{args.lora_rank}" if args.lora_rank else ""
    label += "-constlr" if args.constant_lr else ""
    callbacks = [LowRankAdapters(args.lora_rank)] if args.lora_rank else []
    callbacks += [ConstantRate()] if args.constant_lr else []
    callbacks += [ProbeAtEval(load_start_model(None).max_seq_length)] if args.probe_every_eval else []
    callbacks += [KeepWeights()] if args.keep_weights else []
    recipe = override(
        load_recipe(path), steps=args.steps, batch_size=64, max_seq_length=32, eval_steps=args.eval_steps, seed=seed,
        decay_to_start=args.decay_to_start or None,
    )

    def entry(result, wall_s: float) -> dict:
        from sentence_transformers import SentenceTransformer

        scores = dev_scores(SentenceTransformer(str(result.model_dir)))
        print(f"[select] {label} seed {seed}: {scores}", flush=True)
        return {
            "variant": label,
            "seed": seed,
            "decay_to_start": args.decay_to_start,
            **({"lora": repr(callbacks[0])} if args.lora_rank else {}),
            **({"callbacks": [repr(callback) for callback in callbacks]} if callbacks else {}),
            "recipe": recipe.to_dict(),
            "wall_s": wall_s,
            "best_checkpoint": result.best_checkpoint,
            "selection": result.selection,
            "scores": scores,
            "data_report": result.data_report,
            "log_history": result.log_history,
        }

    return train_and_record(
        RESULTS / f"{label}-seed{seed}.json",
        recipe,
        work_dir=Path(args.work_dir) / f"{label}-seed{seed}",
        entry=entry,
        evaluate=False,
        quiet=args.quiet,
        reuse_stale=args.reuse_stale,
        resume=args.resume,
        tag="select",
        gradient_share_every=args.gradient_shares,
        **({"callbacks": callbacks} if callbacks else {}),
    )


def score_model(folder: str) -> Path:
    """Dev scores of a model saved by ``train_recipe`` (its ``st_debias_recipe.yaml`` names recipe and seed), or of
    one of the run's trainer checkpoints, scored at the length of the run's ``model/`` (:func:`load_trained`)."""
    model, recipe, loaded = load_trained(Path(folder))
    seed = recipe["training"]["seed"]
    target = RESULTS / f"{recipe['name']}-seed{seed}.json"
    entry = {"variant": recipe["name"], "seed": seed, "recipe": recipe, "model": folder, **loaded}
    entry["scores"] = dev_scores(model)
    write_stamped_json(target, entry, stamp(), indent=1)
    print(f"[select] {target.name}: {entry['scores']}", flush=True)
    return target


def start_scores(refresh: bool = True) -> dict[str, float]:
    """Dev scores of the start model, computed again when ``start.json`` is stale (unless not ``refresh``)."""
    path = RESULTS / "start.json"
    current = stamp()
    if refresh and not reusable(path, current, REUSE_STALE, "select"):
        from st_debias.recipes.train import load_start_model

        write_stamped_json(path, {"scores": dev_scores(load_start_model(None))}, current, indent=1)
    entry = json.loads(path.read_text())
    return entry.get("scores", entry)


def write_table() -> Path:
    keys = (
        "dev", "dev_cont", "dev_oppn", "neg_cos_heldout", "word_order_cos", "mp_accuracy",
        "nm_over_affirmative", "nm_over_negated_antonym", "nm_polarity_cluster", "transfer_dev",
    )
    runs: dict[str, list[dict]] = {}
    current, archived = result_files(RESULTS)
    for file in current + archived:
        entry = json.loads(file.read_text())
        runs.setdefault(entry["variant"], []).append(entry)
    lines = [
        "# Recipe variants on development data",
        "",
        "STS-B dev Spearman ×100, OssCSE Cont/Oppn split of STS-B dev, mean cosine of held-out CANNOT pairs "
        f"{HELDOUT[0] + 1:,}–{HELDOUT[1]:,} (lower = negations separated); transfer dev/CV = the SentEval "
        "transfer tasks' selection average (dev and cross-validation accuracies, no test split; '–' = not measured); "
        "negation meaning: share of items where 'not A' is closer to its paraphrase 'B' than to 'A' (i) and than to "
        "'not B' (ii), and the polarity cluster (iii). "
        "Mean over seeds. Command: see `benchmarks/selection/select_dev.py`.",
        "",
        "| variant | seeds | STS-B dev | dev Cont | dev Oppn | CANNOT held-out cos | word-order cos | minimal pairs acc "
        "| neg. meaning (i) ↑ | (ii) ↑ | (iii) ↓ | transfer dev/CV | loss / data |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    start = start_scores(refresh=False)
    lines.append("| start | – | " + " | ".join(_fmt(start.get(k, float("nan")), k) for k in keys) + " | – |")
    for variant, entries in runs.items():
        means = {k: statistics.fmean(e["scores"].get(k, float("nan")) for e in entries) for k in keys}
        recipe = entries[0]["recipe"]
        loss = recipe["loss"]
        what = f"{loss['name']} {loss.get('params', {})} recall {loss.get('recall_gamma')}"
        if loss.get("preservation_weight") is not None:
            dropout = ", anchors without dropout" if loss.get("preservation_without_dropout") else ""
            what += f" preservation {loss['preservation_weight']}{dropout}"
        what += f"; {recipe['data']['options']}"
        if recipe["data"].get("mix"):
            what += f" mix {recipe['data']['mix']}"
        kept_start = sum((e.get("selection") or {}).get("kept") == "start" for e in entries)
        if kept_start:
            what += f" (no checkpoint beat the start model on STS-B dev in {kept_start} of {len(entries)} seeds: start kept)"
        lines.append(f"| {variant} | {len(entries)} | " + " | ".join(_fmt(means[k], k) for k in keys) + f" | {what} |")
    out = RESULTS / "select.md"
    atomic_write_text(out, "\n".join(lines) + "\n")
    return out


def _fmt(value: float, key: str) -> str:
    if value != value:
        return "–"
    return f"{value:.3f}" if key.startswith(("neg", "word", "mp", "nm")) else f"{value:.2f}"


def check_lora_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """``--lora-rank``: peft installed, and neither ``--resume`` nor ``--decay-to-start`` beside it."""
    import importlib.util

    if args.resume:
        parser.error("--lora-rank cannot --resume: a LoRA run's checkpoints hold the adapters alone")
    if args.decay_to_start:
        parser.error("--lora-rank and --decay-to-start: the pull would draw the adapters toward their random start")
    if importlib.util.find_spec("peft") is None:
        parser.error("--lora-rank needs peft (pip install -e '.[dev]')")


def check_inputs(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse a recipe that does not load or a model folder that does not exist, before any scoring (exit 2)."""
    from benchmarks.harness.recipe_knobs import knob
    from st_debias.recipes import load_recipe

    for path in args.variants:
        try:
            load_recipe(path)
        except (OSError, ValueError) as error:
            parser.error(str(error))
        recipe = load_recipe(path)
        if args.lora_rank and recipe.training.keep != "last":
            parser.error(f"--lora-rank: {path} keeps its best checkpoint; adapters need training.keep: last")
        if args.lora_rank and (knob(recipe, "frozen_layers") or knob(recipe, "freeze_embeddings")):
            parser.error(f"--lora-rank: {path} freezes layers; the adapters would train on them all the same")
        if args.lora_rank and knob(recipe, "decay_to_start"):
            parser.error(f"--lora-rank: {path} sets training.decay_to_start; the pull would draw the adapters toward their random start")
    if args.lora_rank:
        check_lora_arguments(parser, args)
    missing = [folder for folder in args.score_models if not Path(folder).is_dir()]
    if missing:
        parser.error(f"--score-models: no such folder: {', '.join(missing)}")
    for folder in map(Path, args.score_models):
        recipe_file = recipe_file_of(folder)
        if not recipe_file.is_file():
            parser.error(f"--score-models {folder}: no {recipe_file} to name the recipe and seed")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("variants", nargs="*", help="recipe YAML files (or packaged recipe names)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[42])
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--eval-steps", type=int, default=25)
    parser.add_argument("--work-dir", default="outputs/select")
    parser.add_argument(
        "--results-dir", default=None, help="where the JSON files and select.md go (default benchmarks/selection/results)"
    )
    parser.add_argument("--score-models", nargs="+", default=[], metavar="FOLDER", help="score trained model folders")
    parser.add_argument("--table", action="store_true", help="only rebuild select.md")
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("--gradient-shares", type=int, default=10, metavar="N", help="log gradient shares every N steps")
    parser.add_argument(
        "--decay-to-start", type=float, default=0.0, metavar="STRENGTH",
        help="pull the weights toward the start model after each step, as the lab's recipe setting training.decay_to_start "
        "(labelled <variant>-decay<STRENGTH>; 0 = the recipe's own)",
    )
    parser.add_argument(
        "--lora-rank", type=int, default=0, metavar="R",
        help="experimental: train rank-R adapters on the attention's query and value instead of every weight, merged "
        "at the end (low_rank.py; needs training.keep: last and cannot --resume; 0 = off)",
    )
    parser.add_argument(
        "--constant-lr", action="store_true",
        help="experimental: a constant learning rate after the warmup instead of the linear decay to zero (labelled "
        "<variant>-constlr; checkpoint_probe.py)",
    )
    parser.add_argument(
        "--probe-every-eval", action="store_true",
        help="score the negation-meaning probe and word order at every STS-B dev evaluation, into the result's "
        "log_history as probe/<figure> (checkpoint_probe.py)",
    )
    parser.add_argument(
        "--keep-weights", action="store_true",
        help="hard-link every checkpoint's model files into <work-dir>/<run>/weights/, out of the trainer's rotation "
        "(checkpoint_probe.py; for average_checkpoints.py)",
    )
    parser.add_argument("--reuse-stale", action="store_true", help="reuse result files whose provenance stamp differs")
    parser.add_argument(
        "--resume", action="store_true",
        help="continue a run cut short in --work-dir from its newest complete checkpoint (same code only)",
    )
    parser.add_argument(
        "--transfer", choices=("quick", "full", "none"), default="quick",
        help="SentEval transfer selection average in the scores (default: the quick subset)",
    )
    args = parser.parse_args(argv)
    global REUSE_STALE, TRANSFER, RESULTS
    REUSE_STALE = args.reuse_stale
    TRANSFER = args.transfer
    if args.results_dir:
        RESULTS = Path(args.results_dir).resolve()
    if args.decay_to_start < 0:
        parser.error(f"--decay-to-start must be >= 0 (0 = off), got {args.decay_to_start}")
    if args.lora_rank < 0:
        parser.error(f"--lora-rank must be >= 0 (0 = off), got {args.lora_rank}")
    if args.lora_rank and args.keep_weights:
        parser.error("--keep-weights with --lora-rank: the checkpoints hold the adapters only, not a model to score")
    check_inputs(parser, args)
    if not args.table:
        start_scores()
        for folder in args.score_models:
            score_model(folder)
        for path in args.variants:
            for seed in args.seeds:
                run_one(path, seed, args)
    print(write_table().read_text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
