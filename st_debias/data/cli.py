"""``st-debias build``: turn a sentence file into training rows (saved with ``Dataset.save_to_disk``).

Examples::

    st-debias build ipw --input corpus.txt --output rows/ipw --limit 20000
    st-debias build ipw --input corpus.txt --output rows/ipw-shard0 --shard 0/4   # then merge: --merge
    st-debias build negation --input corpus.txt --output rows/neg --spacy-model en_core_web_sm
    st-debias build negation --input corpus.txt --output rows/neg-edits --generator edits

``--generator`` picks the paraphrase (negation) or positive (ipw) candidates; the defaults are the recipes'
choices: ``syntactic`` for negation rows, DebCSE's word ``edits`` for ipw rows.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import sys
from pathlib import Path

from st_debias.data.generators import GENERATOR_CHOICES

#: Options of ``build ipw`` only: flag -> (type, default, help). Parsed with default None, so that giving one
#: to another kind can be refused; :func:`_build` fills in the defaults.
IPW_OPTIONS: dict[str, tuple[type, object, str]] = {
    "--model": (str, None, "guide model (default all-MiniLM-L6-v2)"),
    "--shard": (str, None, "build only shard I/N of the anchors, e.g. 0/4"),
    "--num-negatives": (int, 2, "negatives per anchor (default 2)"),
    "--pool-size": (int, 64, "neighbours searched per anchor (default 64)"),
    "--lambda-n": (float, 0.8, "IPWBuilder lambda_n (default 0.8)"),
    "--lambda-p": (float, 0.8, "IPWBuilder lambda_p (default 0.8)"),
    "--temperature": (float, 1.0, "IPWBuilder temperature (default 1.0)"),
    "--cache-dir": (str, None, "embedding cache (default $ST_DEBIAS_CACHE)"),
}
#: Options of ``build negation`` only.
NEGATION_OPTIONS: tuple[str, ...] = ("--spacy-model",)


def _dest(flag: str) -> str:
    return flag.lstrip("-").replace("-", "_")


def _misplaced_options(args: argparse.Namespace) -> list[str]:
    """The kind-specific options given to a kind that does not read them."""
    foreign = {"ipw": NEGATION_OPTIONS, "negation": tuple(IPW_OPTIONS)}.get(
        args.kind, (*IPW_OPTIONS, *NEGATION_OPTIONS)
    )
    return [flag for flag in foreign if getattr(args, _dest(flag)) is not None]


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``build`` subcommand to the ``st-debias`` dispatcher."""
    parser = subparsers.add_parser("build", help="Build DebCSE (ipw) or OssCSE (negation) training rows.")
    parser.add_argument("kind", choices=["ipw", "negation", "merge"], help="what to build ('merge' joins shards)")
    parser.add_argument("--input", "-i", nargs="+", help="sentence file (one per line); for merge: shard folders")
    parser.add_argument("--output", "-o", required=True, help="output folder (dataset + report.json)")
    parser.add_argument("--limit", type=int, default=None, help="first N lines only")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--generator", choices=GENERATOR_CHOICES, default=None,
        help="paraphrase (negation) or positive (ipw) candidates; default: the recipes' choice, syntactic for "
        "negation, edits for ipw; dropout: the anchor itself",
    )
    ipw = parser.add_argument_group("ipw only")
    for flag, (kind, _, text) in IPW_OPTIONS.items():
        ipw.add_argument(flag, type=kind, default=None, help=text)
    negation = parser.add_argument_group("negation only")
    negation.add_argument("--spacy-model", default=None, help="spaCy model (default en_core_web_sm)")
    parser.set_defaults(func=run)
    return parser


def _save(rows, report, output: str) -> None:
    """Write the dataset under a temporary name, then rename it and the report into place (crash-safe)."""
    from st_debias.files import atomic_write_text

    folder = Path(output)
    staging = folder / ".dataset.partial"
    shutil.rmtree(staging, ignore_errors=True)
    rows.save_to_disk(str(staging))
    if (folder / "dataset").exists():
        shutil.rmtree(folder / "dataset")
    os.replace(staging, folder / "dataset")
    atomic_write_text(folder / "report.json", report.to_json())
    print(f"{len(rows)} rows -> {folder / 'dataset'}; report -> {folder / 'report.json'}")
    print(json.dumps({"skipped": dict(report.skipped), "statistics": report.statistics}, indent=2))


def run(args: argparse.Namespace) -> int:
    """Build (or merge) rows and save them; 2 on bad input or an unwritable --output, 1 when no row was built."""
    from st_debias.files import check_writable_folder

    if not args.input:
        print(f"st-debias build {args.kind}: error: --input is required", file=sys.stderr)
        return 2
    misplaced = _misplaced_options(args)
    if misplaced:
        print(f"st-debias build {args.kind}: error: {', '.join(misplaced)} not read by {args.kind}", file=sys.stderr)
        return 2
    try:
        check_writable_folder(args.output)
        rows, report = _build(args)
    except (FileNotFoundError, ValueError, OSError) as error:  # UnicodeDecodeError is a ValueError
        print(f"st-debias build: error: {' '.join(args.input)}: {error}", file=sys.stderr)
        _remove_if_empty(args.output)
        return 2
    if len(rows) == 0:
        skipped = ", ".join(f"{reason}: {count}" for reason, count in sorted(report.skipped.items())) or "none"
        print(
            f"st-debias build: error: 0 rows built from {report.inputs} input sentences of {' '.join(args.input)} "
            f"(skipped by reason: {skipped}); nothing written to {args.output}.",
            file=sys.stderr,
        )
        _remove_if_empty(args.output)
        return 1
    _save(rows, report, args.output)
    return 0


def _remove_if_empty(folder: str) -> None:
    """Remove the output folder the early write check created, when the build failed before writing to it."""
    with contextlib.suppress(OSError):
        Path(folder).rmdir()


def _build(args: argparse.Namespace):
    """The rows and the build report that ``args`` asks for."""
    if args.kind == "merge":
        from collections import Counter

        from datasets import load_from_disk

        from st_debias.data.builders import merge_builds
        from st_debias.data.io.report import BuildReport

        parts = []
        for folder in args.input:
            data = json.loads((Path(folder) / "report.json").read_text())
            report = BuildReport(**{k: v for k, v in data.items() if k not in ("skipped", "rules")},
                                 skipped=Counter(data["skipped"]), rules=Counter(data["rules"]))
            parts.append((load_from_disk(str(Path(folder) / "dataset")), report))
        return merge_builds(parts)
    from st_debias.data.io.corpus import read_sentences

    sentences = read_sentences(args.input[0], limit=args.limit)
    from st_debias.data.builders import (
        DEFAULT_PARAPHRASES,
        DEFAULT_POSITIVES,
        build_ipw_dataset,
        build_negation_dataset,
    )

    if args.kind == "ipw":
        shard = tuple(int(x) for x in args.shard.split("/")) if args.shard else None
        settings = {
            _dest(flag): default if getattr(args, _dest(flag)) is None else getattr(args, _dest(flag))
            for flag, (_, default, _) in IPW_OPTIONS.items()
            if default is not None
        }
        rows, report = build_ipw_dataset(
            sentences, args.model, generator=args.generator or DEFAULT_POSITIVES, shard=shard, return_report=True,
            seed=args.seed, cache_dir=args.cache_dir, **settings,
        )
    else:
        from st_debias.data.negation.negator import Negator

        rows, report = build_negation_dataset(
            sentences, generator=args.generator or DEFAULT_PARAPHRASES, return_report=True,
            negator=Negator(args.spacy_model), seed=args.seed, show_progress_bar=True,
        )
    return rows, report
