"""``st-debias build``: turn a sentence file into training rows (saved with ``Dataset.save_to_disk``).

Every data kind of :data:`st_debias.data.kinds.DATA_KINDS` can be built, with the options a recipe's
``data.options`` takes (``--option KEY=VALUE``, the value read as YAML). Examples::

    st-debias build ipw --input corpus.txt --output rows/ipw --limit 20000
    st-debias build ipw --input corpus.txt --output rows/ipw-shard0 --shard 0/4   # then: build merge
    st-debias build negation --input corpus.txt --output rows/neg --spacy-model en_core_web_sm
    st-debias build negation --input corpus.txt --output rows/neg-edits --generator edits
    st-debias build minimal_pairs --input corpus.txt --output rows/mp --option on_missing_positive=skip

``--generator`` picks the paraphrase (negation) or positive (ipw) candidates; the defaults are the recipes'
choices: ``syntactic`` for negation rows, DebCSE's word ``edits`` for ipw rows.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path

import yaml

from st_debias.data.generators import GENERATOR_CHOICES
from st_debias.data.kinds import DATA_KINDS

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
#: Options of the kinds that parse with spaCy (``negation``, ``minimal_pairs``).
NEGATION_OPTIONS: tuple[str, ...] = ("--spacy-model",)
_PARSING_KINDS = ("negation", "minimal_pairs")


def _dest(flag: str) -> str:
    return flag.lstrip("-").replace("-", "_")


def _misplaced_options(args: argparse.Namespace) -> list[str]:
    """The kind-specific options given to a kind that does not read them."""
    foreign = [] if args.kind == "ipw" else list(IPW_OPTIONS)
    if args.kind not in _PARSING_KINDS:
        foreign += NEGATION_OPTIONS
    kind = DATA_KINDS.get(args.kind)
    if kind is None or not kind.generator_choice:
        foreign.append("--generator")
    if args.kind == "merge":
        foreign.append("--option")
    return [flag for flag in foreign if getattr(args, _dest(flag)) is not None]


def _options(args: argparse.Namespace) -> dict[str, object]:
    """The builder options of ``--option KEY=VALUE`` (values read as YAML), checked against the kind.

    Raises:
        ValueError: a malformed ``--option``, an option the kind does not take, or a value its builder refuses.
    """
    options: dict[str, object] = {}
    for item in args.option or []:
        key, separator, value = item.partition("=")
        if not separator or not key:
            raise ValueError(f"--option {item!r}: expected KEY=VALUE")
        options[key] = yaml.safe_load(value)
    if args.generator is not None:
        options["generator"] = args.generator
    if args.kind == "ipw":  # IPWBuilder settings with a flag of their own (not --model, --shard, --cache-dir)
        for flag, (_, default, _) in IPW_OPTIONS.items():
            value = getattr(args, _dest(flag))
            if default is not None:
                options.setdefault(_dest(flag), default if value is None else value)
    DATA_KINDS[args.kind].check_options(options, label="--option")
    return options


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``build`` subcommand to the ``st-debias`` dispatcher."""
    kinds = "; ".join(f"{name}: {kind.description}" for name, kind in DATA_KINDS.items())
    parser = subparsers.add_parser(
        "build", help="Build training rows of any data kind (simcse, ipw, negation, minimal_pairs).",
        description=f"Build training rows from a sentence file. Kinds: {kinds}; merge joins ipw shards.",
    )
    parser.add_argument("kind", choices=[*DATA_KINDS, "merge"], help="what to build ('merge' joins shards)")
    parser.add_argument("--input", "-i", nargs="+", help="sentence file (one per line); for merge: shard folders")
    parser.add_argument("--output", "-o", required=True, help="output folder (dataset + report.json)")
    parser.add_argument("--limit", type=int, default=None, help="first N lines only")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--generator", choices=GENERATOR_CHOICES, default=None,
        help="paraphrase (negation) or positive (ipw) candidates; default: the recipes' choice, syntactic for "
        "negation, edits for ipw; dropout: the anchor itself",
    )
    parser.add_argument(
        "--option", action="append", metavar="KEY=VALUE",
        help="a builder option, as a recipe's data.options takes it (value read as YAML); repeatable, e.g. "
        "--option on_missing_positive=skip",
    )
    ipw = parser.add_argument_group("ipw only")
    for flag, (kind, _, text) in IPW_OPTIONS.items():
        ipw.add_argument(flag, type=kind, default=None, help=text)
    negation = parser.add_argument_group("negation and minimal_pairs only")
    negation.add_argument("--spacy-model", default=None, help="spaCy model (default en_core_web_sm)")
    parser.set_defaults(func=run)
    return parser


def _save(rows, report, output: str) -> None:
    """Publish the dataset whole (:func:`~st_debias.files.staged_folder`), then the report."""
    from st_debias.files import atomic_write_text, staged_folder

    folder = Path(output)
    with staged_folder(folder / "dataset") as staging:
        rows.save_to_disk(str(staging))
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
        options = _options(args) if args.kind != "merge" else {}
        check_writable_folder(args.output)
        rows, report = _build(args, options)
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


def _build(args: argparse.Namespace, options: dict[str, object]):
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
    machinery: dict[str, object] = {}
    if args.kind == "ipw":
        machinery["shard"] = tuple(int(x) for x in args.shard.split("/")) if args.shard else None
    if args.spacy_model is not None:
        from st_debias.data.negation.negator import Negator

        machinery["negator"] = Negator(args.spacy_model)
    return DATA_KINDS[args.kind].build(
        sentences, seed=args.seed, options=options, model=args.model, cache_dir=args.cache_dir,
        show_progress_bar=True, **machinery,
    )
