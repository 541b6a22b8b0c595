"""``st-debias eval``: evaluate one or more models and write results.json plus a side-by-side report.

Example::

    export ST_DEBIAS_DATA=../shared/data
    st-debias eval default outputs/my-run/final --tasks sts,bias --output outputs/eval
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from st_debias.evaluation.backends import AUTO_CPU_ORDER, BACKEND_CHOICES, BACKEND_ENV
from st_debias.evaluation.bias_data import DEFAULT_NEGATION_PAIRS, DEFAULT_WORD_ORDER_LINES
from st_debias.evaluation.entries import TASK_GROUPS
from st_debias.evaluation.sts_data import STS_TASKS
from st_debias.evaluation.transfer_data import TRANSFER_TASKS


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``eval`` subcommand to the ``st-debias`` dispatcher."""
    parser = subparsers.add_parser(
        "eval",
        help="Evaluate models: STS-7, MTEB STS, bias probes, SentEval transfer; write results.json and a report.",
        description=(
            "Evaluate one or more models (saved folders, 'default' = all-MiniLM-L6-v2, or hub ids) and write "
            "OUTPUT/results.json and OUTPUT/report.md with PNG plots, models side by side."
        ),
        epilog=(
            "On a CPU shared with other jobs, export OMP_WAIT_POLICY=PASSIVE before running: torch's idle "
            "threads then sleep instead of spinning (2.7x faster encoding measured at load ~9 on 2 cores)."
        ),
    )
    parser.add_argument("models", nargs="+", metavar="MODEL", help="model folder, 'default', or hub id")
    parser.add_argument(
        "--tasks",
        default="sts,bias",
        help=f"comma-separated groups among {','.join(TASK_GROUPS)} (default: sts,bias)",
    )
    parser.add_argument("--output", "-o", required=True, help="output folder")
    parser.add_argument("--data-dir", default=None, help="data folder (default: $ST_DEBIAS_DATA)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument(
        "--backend",
        choices=BACKEND_CHOICES,
        default=os.environ.get(BACKEND_ENV, "auto"),
        help="what runs the transformer for every encode: auto (default, or $ST_DEBIAS_BACKEND): on a CPU the "
        f"installed fp32 backend measured fastest (tried in this order: {', '.join(AUTO_CPU_ORDER)}), torch on a GPU; "
        "torch; onnx or openvino (converted once per model into the cache, checked against torch: fp32 figures "
        "within 1e-4; pip install 'st-debias[onnx]' or 'st-debias[openvino]'); onnx-int8 (quantised, "
        "approximate, labelled [onnx-int8])",
    )
    parser.add_argument(
        "--negation-pairs",
        type=int,
        default=DEFAULT_NEGATION_PAIRS,
        help="CANNOT pairs for the negation probe (files sorted by name, first N; 0 = all)",
    )
    parser.add_argument(
        "--word-order-lines",
        type=int,
        default=DEFAULT_WORD_ORDER_LINES,
        help="last N lines of corpus/wiki_sentences.txt for the word-order probe (under 4 words: skipped)",
    )
    parser.add_argument(
        "--mteb-data",
        choices=("auto", "local", "hub"),
        default="auto",
        help="MTEB task data: local files or the hub (auto: local when a data folder is set or offline)",
    )
    parser.add_argument(
        "--mteb-tasks",
        default=None,
        help="comma-separated MTEB tasks for --tasks mteb (default: the STS-7; also e.g. STSBenchmark-Oppn, "
        "CANNOTNegationPC, WikiWordOrderPC, WikiNegationMeaningPC)",
    )
    parser.add_argument(
        "--mteb-cache-dir",
        "--mteb-cache",
        dest="mteb_cache_dir",
        default=None,
        help="MTEB result cache folder (default: none; entries are keyed by a hash of the weights)",
    )
    parser.add_argument(
        "--transfer-tasks",
        default=None,
        help="comma-separated SentEval tasks for --tasks transfer (default: all seven, "
        f"{','.join(TRANSFER_TASKS)}); 'quick' = the quick subset, SST-2 trained on its dev split "
        "instead of its 67,349 training phrases (labelled SST2-quick)",
    )
    parser.add_argument(
        "--pairs",
        default=None,
        help="training-pair file (as train --rows reads: CSV/TSV, JSONL, Parquet, a datasets folder; anchor, positive, "
        "negatives…) for overlap and cosine stats",
    )
    parser.add_argument(
        "--pair-columns",
        default=None,
        help="comma-separated column names of --pairs in (anchor, positive, negatives…) order",
    )
    parser.add_argument(
        "--cache-dir", default=None,
        help="evaluation cache (default $ST_DEBIAS_CACHE or ~/.cache/st_debias): an evaluation of the same weights, "
        "settings and data files stored there, or shipped with st_debias, is reused and the run says so",
    )
    parser.add_argument("--no-progress", action="store_true", help="hide progress bars")
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    """Evaluate every model, writing results.json after each one, then the report. Returns 0, or 2 on bad input."""
    from st_debias.evaluation.backends import resolve_backend
    from st_debias.evaluation.entries import check_tasks
    from st_debias.evaluation.transfer import QUICK_TRANSFER_TASKS, check_transfer_tasks
    from st_debias.files import hold_output_folder

    try:
        resolve_backend(args.backend)  # a missing runtime stops here, before any model loads
        tasks = check_tasks(args.tasks)
        if args.transfer_tasks == "quick":
            transfer_tasks = QUICK_TRANSFER_TASKS
        else:
            transfer_tasks = check_transfer_tasks(args.transfer_tasks or TRANSFER_TASKS)
        if args.transfer_tasks and "transfer" not in tasks:
            raise ValueError("--transfer-tasks needs 'transfer' in --tasks")
        _check_pairs(args, tasks)
        # Checks --output before the models run; a folder it created is removed again when nothing is written.
        with hold_output_folder(args.output, "eval"):
            return _evaluate_all(args, tasks, transfer_tasks)
    except (ValueError, OSError) as error:  # bad input (a missing file is an OSError), a folder in use, a full disk
        print(f"st-debias eval: {error}", file=sys.stderr)
        return 2


def _evaluate_all(args: argparse.Namespace, tasks: tuple[str, ...], transfer_tasks: Sequence[str]) -> int:
    """Evaluate every model into ``args.output`` (held by this command), replacing an earlier evaluation's files;
    ``results.json`` is written after each model.

    Raises:
        ValueError, OSError: bad input (a model, a data file), or a write the disk refused.
    """
    from st_debias.evaluation.embeddings import load_any_model
    from st_debias.evaluation.report import compare_table, remove_report, write_report, write_results
    from st_debias.evaluation.reuse import evaluate_or_reuse

    removed = remove_report(args.output)
    if removed:
        print(f"[st-debias eval] replacing the earlier evaluation in {args.output}", file=sys.stderr)
    results = []
    for model in args.models:
        print(f"[st-debias eval] {model}: {','.join(tasks)}", file=sys.stderr)
        # A stored evaluation of the same weights, settings and data files (the one shipped for the default
        # model, or one cached by an earlier run) is reused, and the run says so, as `train` does.
        st_model, label = load_any_model(model)
        entry = evaluate_or_reuse(
            st_model,
            tasks,
            args.data_dir,
            label=label,
            cache_dir=args.cache_dir,
            batch_size=args.batch_size,
            show_progress_bar=not args.no_progress,
            negation_pairs=args.negation_pairs or None,
            word_order_lines=args.word_order_lines,
            mteb_data=args.mteb_data,
            mteb_tasks=args.mteb_tasks.split(",") if args.mteb_tasks else STS_TASKS,
            mteb_cache_dir=args.mteb_cache_dir,
            pair_dataset=args.pairs,
            pair_columns=args.pair_columns.split(",") if args.pair_columns else None,
            transfer_tasks=transfer_tasks,
            backend=args.backend,
        )
        results.append(entry)
        write_results(results, args.output)
    report = write_report(results, args.output)
    print(compare_table(results))
    print(f"wrote {report} and {report.parent / 'results.json'}", file=sys.stderr)
    return 0


def _check_pairs(args: argparse.Namespace, tasks: tuple[str, ...]) -> None:
    """``--pairs`` is read by the bias group, and must exist; ``--pair-columns`` needs ``--pairs``.

    Raises:
        ValueError: naming the option or the missing file.
    """
    from pathlib import Path

    if args.pair_columns and not args.pairs:
        raise ValueError("--pair-columns names the columns of --pairs, which is not given")
    if args.pairs is None:
        return
    if "bias" not in tasks:
        raise ValueError(f"--pairs is read by the bias probes: add 'bias' to --tasks (got {','.join(tasks)})")
    if not Path(args.pairs).exists():
        raise ValueError(f"--pairs {args.pairs}: no such file or folder")
