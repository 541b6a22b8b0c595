"""``st-debias train`` and ``st-debias recipes``: argument parsing only."""

from __future__ import annotations

import argparse
import sys


def register(subparsers: argparse._SubParsersAction) -> None:
    from .config import available_recipes
    from .selection import KEEP_CHOICES

    train = subparsers.add_parser(
        "train",
        help="train a model with a debiasing recipe and show before/after scores",
        description="Build the recipe's rows (cached), train with SentenceTransformerTrainer keeping the best (or, "
        "with --keep last, the last) checkpoint on STS-B dev, save the model with its model card, and print the "
        "before/after evaluation.",
    )
    train.add_argument("--recipe", required=True, help=f"one of {available_recipes()} or a YAML file")
    train.add_argument("--model", default=None, help="start model: hub id or folder (default all-MiniLM-L6-v2)")
    train.add_argument(
        "--corpus", default=None,
        help="one sentence per line, the recipe builds its rows from it (default: $ST_DEBIAS_DATA/corpus/wiki_sentences.txt)",
    )
    train.add_argument(
        "--rows", default=None, metavar="FILE|FOLDER",
        help="your own training rows instead of rows built from --corpus: CSV/TSV (with a header), JSONL, Parquet or a "
        "saved datasets folder of (anchor, positive[, negative…]) text columns; the recipe's data.mix rows join them",
    )
    train.add_argument(
        "--row-columns", default=None, metavar="A,P[,N…]",
        help="the text columns of --rows in (anchor, positive, negative…) order (default: every text column, in order)",
    )
    train.add_argument("--steps", type=int, default=None, help="training steps (default: the recipe's training.steps)")
    train.add_argument("--batch-size", type=int, default=None)
    train.add_argument("--learning-rate", type=float, default=None)
    train.add_argument("--max-seq-length", type=int, default=None)
    train.add_argument("--eval-steps", type=int, default=None, help="STS-B dev evaluation/checkpoint interval")
    train.add_argument(
        "--keep", choices=KEEP_CHOICES, default=None,
        help="which weights to save: the best STS-B dev checkpoint or the last one (default: the recipe's)",
    )
    train.add_argument("--sentences", type=int, default=None, help="corpus sentences to use (default steps x batch size)")
    train.add_argument("--seed", type=int, default=None)
    train.add_argument("--output", default="outputs/run", help="run folder (checkpoints/, model/, eval/)")
    train.add_argument(
        "--resume", nargs="?", const=True, default=None,
        help="resume the run in --output from its newest complete (or the given) checkpoint; the recipe, model, "
        "corpus and seed must match the folder's run.json",
    )
    train.add_argument("--overwrite", action="store_true", help="replace a run already in --output")
    train.add_argument("--eval-tasks", default="sts,bias", help="evaluation groups: sts,bias[,mteb][,transfer]")
    train.add_argument(
        "--quick-eval",
        action="store_true",
        help="evaluate on STS-B and SICK-R test only (plus the bias probes), labelled 'quick', instead of the "
        "full STS12-16, STS-B, SICK-R suite (the sentences to encode are counted when the evaluation starts)",
    )
    train.add_argument(
        "--sts-tasks", default=None, metavar="SET[,SET…]",
        help="score only these STS test sets, e.g. STSBenchmark for a large model on a CPU (overrides --quick-eval; "
        "labelled in the results and the report)",
    )
    train.add_argument("--no-eval", action="store_true", help="skip the before/after evaluation")
    train.add_argument("--cache-dir", default=None, help="cache for built rows and evaluations")
    train.add_argument(
        "--num-proc", type=int, default=None,
        help="workers that build the training rows (default: every usable core); the rows are the same for any",
    )
    train.add_argument(
        "--start-as-candidate", action=argparse.BooleanOptionalAction, default=True,
        help="score the start model on STS-B dev as checkpoint 0 and save it when no checkpoint beats it "
        "(default on; --no-start-as-candidate saves the best checkpoint even if the start model was better)",
    )
    train.add_argument("--log-gradient-shares", type=int, default=0, metavar="N",
                       help="every N steps, log each loss part's share of the gradient norm (0 = off)")
    train.set_defaults(func=run_train)

    recipes = subparsers.add_parser("recipes", help="list the packaged recipes")
    recipes.set_defaults(func=run_list)


def run_list(args: argparse.Namespace) -> int:
    from .config import available_recipes, recipe_summary

    for name in available_recipes():
        version, description = recipe_summary(name)
        print(f"{name:10s} v{version}  {description}")
    return 0


def run_train(args: argparse.Namespace) -> int:
    from st_debias.data.io.rows import check_row_sources

    from .config import load_recipe, override

    # The recipe and the arguments are checked before torch and transformers are imported: a bad value is
    # refused in well under a second.
    try:
        sts_tasks = _sts_tasks(args.sts_tasks)
        if args.num_proc is not None and args.num_proc < 1:
            raise ValueError(f"--num-proc must be at least 1, got {args.num_proc}")
        training = {
            "steps": args.steps, "batch_size": args.batch_size, "learning_rate": args.learning_rate,
            "max_seq_length": args.max_seq_length, "eval_steps": args.eval_steps, "sentences": args.sentences,
            "keep": args.keep, "seed": args.seed,
        }
        check_row_sources(args.corpus, args.rows, args.row_columns, args.sentences)
        recipe = load_recipe(args.recipe, training=training)
        if recipe.training.eval_steps > recipe.training.steps:
            recipe = override(recipe, eval_steps=recipe.training.steps)
    except (ValueError, OSError) as error:
        print(f"st-debias train: error: {error}", file=sys.stderr)
        return 2
    from .stopping import TrainingDiverged, TrainingInterrupted
    from .train import is_main_process, train_recipe

    try:
        result = train_recipe(
            recipe,
            model=args.model,
            corpus=args.corpus,
            rows=args.rows,
            row_columns=args.row_columns.split(",") if args.row_columns else None,
            output_dir=args.output,
            resume_from_checkpoint=args.resume,
            evaluate=not args.no_eval,
            eval_tasks=tuple(t.strip() for t in args.eval_tasks.split(",") if t.strip()),
            quick_eval=args.quick_eval,
            sts_tasks=sts_tasks,
            cache_dir=args.cache_dir,
            num_proc=args.num_proc,
            gradient_share_every=args.log_gradient_shares,
            overwrite=args.overwrite,
            start_as_candidate=args.start_as_candidate,
        )
    except TrainingDiverged as diverged:
        if is_main_process():
            print(f"st-debias train: error: {diverged}", file=sys.stderr)
        return diverged.exit_code
    except TrainingInterrupted as stopped:
        if is_main_process():
            resume = " Continue with the same command plus --resume." if stopped.checkpoint else ""
            print(f"st-debias train: {stopped}{resume}", file=sys.stderr)
        return stopped.exit_code
    except (ValueError, FileNotFoundError, OSError) as error:
        print(f"st-debias train: error: {error}", file=sys.stderr)
        return 2
    if not is_main_process():
        return 0
    if result.best_checkpoint == "start":
        selection = result.selection
        keep = selection["keep"]
        verdict = "no checkpoint beat" if keep == "best" else "the last checkpoint did not beat"
        print(
            f"\nSaved model: {result.model_dir}  (the start model's weights: {verdict} its STS-B dev score "
            f"{selection['start_score']:.4f}; the {keep} reached {_score(selection[f'{keep}_checkpoint_score'])})"
        )
    else:
        print(f"\nSaved model: {result.model_dir}  ({result.selection['keep']} checkpoint: {result.best_checkpoint})")
    if result.table:
        from st_debias.evaluation.report import reuse_note

        report = result.output_dir / "eval"
        print("\nBefore / after (Spearman × 100 of cosine, SentEval 'all' setting; ↓ = lower is better):\n")
        print(result.table)
        for entry in (result.before, result.after):
            note = reuse_note(entry or {})
            if note:
                print(f"{entry['model']}: {note}.")
        if args.quick_eval:
            print(
                "Quick evaluation: STS-B and SICK-R test and the bias probes, not the STS-7 average. Full suite: "
                f"run without --quick-eval, or st-debias eval default {result.model_dir} --tasks sts,bias "
                f"--output {result.output_dir / 'eval-full'}"
            )
        print(f"Full report (plots, data sources): {report / 'report.md'}; every number: {report / 'results.json'}")
    return 0


def _sts_tasks(value: str | None) -> tuple[str, ...] | None:
    """The STS sets of ``--sts-tasks`` (None: the recipe's default suite); an unknown name is refused."""
    if value is None:
        return None
    from st_debias.evaluation.sts_data import STS_TASKS

    names = tuple(name.strip() for name in value.split(",") if name.strip())
    unknown = [name for name in names if name not in STS_TASKS]
    if unknown or not names:
        raise ValueError(f"--sts-tasks {value!r}: choose from {', '.join(STS_TASKS)}")
    return names


def _score(value: float | None) -> str:
    """A dev score for a message: four decimals, or "no finite score"."""
    return "no finite score" if value is None else f"{value:.4f}"
