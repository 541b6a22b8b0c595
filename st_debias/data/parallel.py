"""Row building in blocks: on every core of one machine, as job-array shards, or under a cluster engine.

A :class:`BlockBuilder` builds each block of :data:`BLOCK_SIZE` consecutive cleaned sentences on its own, with
random draws keyed by a sentence's position or its block's index, never by the process that runs it.
:func:`build_blocks` hands the blocks to ``datasets.Dataset.map`` with ``num_proc`` processes and keeps each
finished part on disk when given a folder, so that an interrupted build resumes where it stopped.
:func:`finish_blocks` puts the blocks back in order, adds up their reports and lets the builder compute its
statistics from the rows. One process, sixteen, or ``n`` shard builds joined by :func:`finish_blocks` give the
same rows and the same report.

:func:`build_block_batch` is the per-batch function over block records (columns ``block, of, build, sentences,
positions, first``), in the shape both ``Dataset.map(batched=True)`` and Ray Data's ``map_batches`` take.

Example:
    >>> from st_debias.data.minimal_pairs import MinimalPairBuilder  # doctest: +SKIP
    >>> rows = MinimalPairBuilder(seed=0).build(sentences, num_proc=4)  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import traceback
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from st_debias.data.io.report import BuildReport, merge_reports, start_build
from st_debias.data.lexicon import close_wordnet_files
from st_debias.progress import usable_cores

if TYPE_CHECKING:
    from datasets import Dataset

__all__ = [
    "BLOCK_SIZE",
    "Block",
    "BlockBuilder",
    "BlockError",
    "BlockPlan",
    "build_block_batch",
    "build_blocks",
    "discard_parts",
    "finish_blocks",
    "plan_blocks",
    "run_blocks",
]

#: Sentences per block: the unit of work, of seeding and of sharding. Changing it changes which sentences
#: share a block (minimal pairs assign their families per block), so it is part of every build's identity.
BLOCK_SIZE = 1024
#: Blocks each process builds between two saved parts (the resume granularity). Each part forks fresh
#: workers, whose lazily filled caches (WordNet's parsed synsets, spaCy's lexemes) start cold again: a block's
#: first use of them costs about half a block, so parts are made long.
BLOCKS_PER_PROCESS = 16
#: The most blocks a part holds whatever the process count, so that a build on many cores still saves parts.
MAX_PART_BLOCKS = 256
#: The record that carries the cleaning report (inputs, empty and duplicate lines) of a build.
CLEANING_BLOCK = -1


@dataclass(frozen=True)
class Block:
    """A block of cleaned sentences.

    Attributes:
        index: the block's number (0-based) in the build.
        sentences: its cleaned sentences.
        positions: each sentence's line position in the input, before cleaning.
        first: the cleaned index of its first sentence (the sentence ``j`` of the block has index ``first + j``).
    """

    index: int
    sentences: list[str]
    positions: list[int]
    first: int


class BlockBuilder(Protocol):
    """What :func:`build_blocks` needs of a builder."""

    name: str

    def prepare(self) -> None:
        """Load what every block needs (spaCy, WordNet) once, before worker processes fork from this one."""

    def build_block(self, block: Block) -> tuple[dict[str, list[Any]], BuildReport]:
        """The block's rows (columns of equal length; columns whose name starts with ``_`` are side data for
        :meth:`finish`) and its report: counts only (skips, rules, generators, additive statistics)."""

    def finish(self, rows: dict[str, list[Any]], report: BuildReport) -> Dataset:
        """The rows of every block in order as a dataset; pops the side columns and writes the statistics."""


class BlockError(RuntimeError):
    """A block failed; the message names the build, the block and the sentence that failed."""


@contextlib.contextmanager
def _progress_bars(show: bool) -> Iterator[None]:
    from datasets.utils import are_progress_bars_disabled, disable_progress_bars, enable_progress_bars

    was_disabled = are_progress_bars_disabled()
    if show:
        enable_progress_bars()
    else:
        disable_progress_bars()
    try:
        yield
    finally:
        (disable_progress_bars if was_disabled else enable_progress_bars)()


_SHARED: dict[int, Any] = {}


class _Shared:
    """Carries a builder to ``datasets``' worker processes. Forked workers find it in the memory they inherit,
    with its pipelines already loaded; under another start method it is pickled."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def __enter__(self) -> _Shared:
        _SHARED[id(self.value)] = self.value
        return self

    def __exit__(self, *exc: object) -> None:
        _SHARED.pop(id(self.value), None)

    def __reduce__(self):
        import multiprocess

        if multiprocess.get_start_method(allow_none=True) in (None, "fork") and id(self.value) in _SHARED:
            return _from_key, (id(self.value),)
        return _Shared, (self.value,)


def _from_key(key: int) -> _Shared:
    return _Shared(_SHARED[key])


@contextlib.contextmanager
def frozen_heap(forking: bool) -> Iterator[None]:
    """While worker processes are forked (``forking``): the parent's objects moved out of the garbage
    collector's reach (``gc.freeze``), so that a collection in a worker does not write to, and so copy, every
    page of the loaded pipelines and arrays it inherited."""
    import gc

    if not forking or gc.get_freeze_count():  # a caller that froze its heap unfreezes it
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def _failure(builder: BlockBuilder, block: Block, build: str, of: int, error: BaseException) -> str:
    """Name the sentence a block failed on: retry its sentences one at a time (only after a failure)."""
    detail = "".join(traceback.format_exception_only(type(error), error)).strip()
    where = f"{builder.name} build {build}, block {block.index} of {of} (input lines {block.positions[0] + 1}–"
    where += f"{block.positions[-1] + 1})"
    for j, (sentence, position) in enumerate(zip(block.sentences, block.positions)):
        try:
            builder.build_block(Block(block.index, [sentence], [position], block.first + j))
        except Exception:  # noqa: BLE001 - the first sentence that fails on its own is the one to name
            return f"{where} failed on input line {position + 1} ({sentence!r:.120}): {detail}"
    return f"{where} failed, though each of its sentences builds on its own: {detail}"


def build_block_batch(batch: dict[str, list[Any]], builder: BlockBuilder | _Shared) -> dict[str, list[Any]]:
    """Build a batch of block records into ``block, of, build, rows, report`` records (rows and report as JSON).

    Raises:
        BlockError: a block failed; the message names the block and the first sentence that fails alone.
    """
    if isinstance(builder, _Shared):
        builder = builder.value
    out: dict[str, list[Any]] = {"block": [], "of": [], "build": [], "rows": [], "report": []}
    for index, of, build, sentences, positions, first in zip(
        batch["block"], batch["of"], batch["build"], batch["sentences"], batch["positions"], batch["first"]
    ):
        # Plain Python values: Ray Data hands numpy arrays and numpy scalars.
        index, of, build, first = int(index), int(of), str(build), int(first)
        block = Block(index, [str(s) for s in sentences], [int(p) for p in positions], first)
        try:
            rows, report = builder.build_block(block)
        except Exception as error:  # noqa: BLE001 - re-raised with the failing sentence named
            raise BlockError(_failure(builder, block, build, of, error)) from None
        for column, record in (("block", index), ("of", of), ("build", build), ("rows", json.dumps(rows)),
                               ("report", report.to_json())):
            out[column].append(record)
    return out


def _build_id(name: str, identity: str | None, sentences: Sequence[str], block_size: int) -> str:
    digest = hashlib.sha256(f"{name}\n{identity}\n{block_size}\n".encode())
    for sentence in sentences:
        digest.update(sentence.encode())
        digest.update(b"\n")
    return digest.hexdigest()[:16]


def _records(blocks: list[Block], of: int, build: str) -> dict[str, list[Any]]:
    return {
        "block": [b.index for b in blocks], "of": [of] * len(blocks), "build": [build] * len(blocks),
        "sentences": [b.sentences for b in blocks], "positions": [b.positions for b in blocks],
        "first": [b.first for b in blocks],
    }


def _saved_parts(folder: Path) -> list[tuple[Path, Dataset]]:
    """The complete parts under ``folder``; a part that another shard removes meanwhile is skipped."""
    from datasets import load_from_disk

    parts = []
    for part in sorted(folder.glob("part-*")):
        try:
            if (part / "dataset_info.json").exists():
                parts.append((part, load_from_disk(str(part))))
        except (OSError, ValueError):  # FileNotFoundError, or arrow's error for a half-removed folder
            continue
    return parts


@dataclass
class BlockPlan:
    """The blocks of one build, before any is built.

    Attributes:
        inputs: one record per block to build (columns ``block, of, build, sentences, positions, first``), for
            ``Dataset.map`` or Ray Data's ``map_batches`` with :func:`build_block_batch`.
        cleaning: the finished record of the cleaning report (block ``-1``): inputs, empty and duplicate lines.
        build: the build id (sentences, block size, builder name and ``identity``).
    """

    inputs: Dataset
    cleaning: Dataset
    build: str


def plan_blocks(
    builder: BlockBuilder,
    sentences: object,
    column: str | None = None,
    *,
    identity: str | None = None,
    block_size: int | None = None,
) -> BlockPlan:
    """Clean ``sentences`` and cut them into blocks of ``block_size`` (default :data:`BLOCK_SIZE`).

    Example (Ray Data on a cluster; the rows equal :func:`build_blocks`' on one machine; ``block_builder`` and
    ``BlockWorker`` come from :mod:`st_debias.data.kinds`)::

        builder = block_builder("minimal_pairs", seed=0)
        plan = plan_blocks(builder, sentences)
        built = ray.data.from_items(plan.inputs.to_list()).map_batches(
            BlockWorker, fn_constructor_kwargs={"kind": "minimal_pairs", "seed": 0}, batch_size=1, concurrency=16
        )
        rows, report = finish_blocks(builder, [plan.cleaning, Dataset.from_pandas(built.to_pandas())])
    """
    from datasets import Dataset

    block_size = block_size or BLOCK_SIZE
    cleaned, report = start_build(builder.name, sentences, column)
    starts = range(0, len(cleaned.sentences), block_size)
    build = _build_id(builder.name, identity, cleaned.sentences, block_size)
    blocks = [
        Block(b, cleaned.sentences[start:start + block_size], cleaned.positions[start:start + block_size], start)
        for b, start in enumerate(starts)
    ]
    inputs = Dataset.from_dict(_records(blocks, len(blocks), build), features=_input_features())
    cleaning = Dataset.from_dict({"block": [CLEANING_BLOCK], "of": [len(blocks)], "build": [build], "rows": ["{}"],
                                  "report": [report.to_json()]})
    return BlockPlan(inputs, cleaning, build)


def _input_features():
    from datasets import Features, Sequence, Value

    return Features({
        "block": Value("int64"), "of": Value("int64"), "build": Value("string"),
        "sentences": Sequence(Value("string")), "positions": Sequence(Value("int64")), "first": Value("int64"),
    })


def build_blocks(
    builder: BlockBuilder,
    sentences: object,
    column: str | None = None,
    *,
    num_proc: int | None = 1,
    shard: tuple[int, int] | None = None,
    resume_folder: str | os.PathLike[str] | None = None,
    identity: str | None = None,
    block_size: int | None = None,
    show_progress_bar: bool = False,
) -> Dataset:
    """The block records of ``sentences`` (all, or shard ``(index, count)`` of the blocks), for
    :func:`finish_blocks`.

    Args:
        builder: the builder.
        sentences: any iterable of strings, a ``datasets`` column, or a ``Dataset`` with ``column``.
        column: the text column of a ``Dataset``.
        num_proc: processes (None: :func:`usable_cores`).
        shard: build only the ``index``-th of ``count`` contiguous slices of the blocks; the slice with the first
            block also carries the cleaning report, so the records of all ``count`` shards finish to the
            unsharded build.
        resume_folder: keep each finished part under ``resume_folder/<build id>`` and reuse the parts found there
            (an interrupted build resumes); None keeps nothing.
        identity: what else decides the rows (options, seed, generator versions): part of the build id, so that
            parts of another build are never reused or merged.
        block_size: sentences per block (default :data:`BLOCK_SIZE`).
        show_progress_bar: show ``datasets``' progress bar per part.
    """
    from datasets import concatenate_datasets

    from st_debias.data.io.embeddings import shard_bounds
    from st_debias.files import staged_folder

    num_proc = usable_cores() if num_proc is None else num_proc
    if num_proc < 1:
        raise ValueError(f"num_proc must be at least 1, got {num_proc}.")
    plan = plan_blocks(builder, sentences, column, identity=identity, block_size=block_size)
    count = len(plan.inputs)
    start, stop = shard_bounds(count, *shard) if shard else (0, count)
    parts: list[Dataset] = [plan.cleaning] if start == 0 else []
    folder = Path(resume_folder) / plan.build if resume_folder is not None else None
    done: set[int] = set()
    if folder is not None and folder.is_dir():
        for _, part in _saved_parts(folder):  # saved by this build, or by other shards of it sharing the folder
            mine = [i for i, b in enumerate(part["block"]) if start <= b < stop and b not in done]
            if mine:
                parts.append(part.select(mine))
                done.update(part.select(mine)["block"])
    todo = [b for b in range(start, stop) if b not in done]
    if not todo:
        # A shard past the last block (a job array larger than the input) holds no record: an empty part.
        return concatenate_datasets(parts) if parts else plan.cleaning.select([])
    builder.prepare()
    per_part = min(BLOCKS_PER_PROCESS * num_proc, MAX_PART_BLOCKS)
    with _Shared(builder) as carried, _progress_bars(show_progress_bar):
        for first in range(0, len(todo), per_part):
            chunk = todo[first:first + per_part]
            records = plan.inputs.select(chunk)
            processes = min(num_proc, len(chunk))
            if processes > 1:
                close_wordnet_files()
            with frozen_heap(processes > 1):
                built = records.map(
                    build_block_batch, batched=True, batch_size=1, fn_kwargs={"builder": carried},
                    num_proc=processes if processes > 1 else None, remove_columns=records.column_names,
                    keep_in_memory=True, new_fingerprint=f"{plan.build}-{chunk[0]}-{chunk[-1]}",
                    desc=f"{builder.name}: blocks {chunk[0] + 1}–{chunk[-1] + 1} of {count}",
                )
            if folder is not None:
                with staged_folder(folder / f"part-{chunk[0]:07d}") as staging:
                    built.save_to_disk(str(staging))
            parts.append(built)
    return concatenate_datasets(parts)


def run_blocks(
    builder: BlockBuilder, sentences: object, column: str | None = None, **options: Any
) -> tuple[Dataset, BuildReport]:
    """:func:`build_blocks` (``options``) then :func:`finish_blocks`: the rows and report of a whole build, with
    its wall time as ``timings["total"]``. The parts kept under ``resume_folder`` are removed once it finished."""
    import shutil
    import time

    start = time.perf_counter()
    records = build_blocks(builder, sentences, column, **options)
    rows, report = finish_blocks(builder, records)
    report.timings["total"] = time.perf_counter() - start
    if options.get("resume_folder") is not None:
        shutil.rmtree(Path(options["resume_folder"]) / records["build"][0], ignore_errors=True)
    return rows, report


def discard_parts(resume_folder: str | os.PathLike[str], records: Dataset) -> None:
    """Remove the parts that :func:`build_blocks` kept under ``resume_folder`` for ``records``' blocks, once those
    records are saved elsewhere (a shard's output); parts holding other blocks stay for the other shards."""
    import shutil

    if len(records) == 0:  # an empty shard kept nothing
        return
    folder = Path(resume_folder) / records["build"][0]
    mine = set(records["block"])
    for path, part in _saved_parts(folder):
        if set(part["block"]) <= mine:
            shutil.rmtree(path, ignore_errors=True)
    with contextlib.suppress(OSError):
        folder.rmdir()  # empty once every shard's parts are gone


def finish_blocks(builder: BlockBuilder, records: Dataset | Sequence[Dataset]) -> tuple[Dataset, BuildReport]:
    """The rows and report of a complete set of block records (one build, or all shards of one).

    Raises:
        ValueError: records of different builds, a block missing or repeated.
    """
    from datasets import concatenate_datasets

    if not isinstance(records, Sequence):
        records = [records]
    records = concatenate_datasets(list(records)) if len(records) != 1 else records[0]
    builds = set(records["build"])
    if len(builds) != 1:
        raise ValueError(f"Block records of {len(builds)} different builds ({sorted(builds)}) cannot be joined.")
    blocks = records["block"]
    of = records["of"][0]
    expected = {CLEANING_BLOCK, *range(of)}
    missing = sorted(expected - set(blocks))
    repeated = sorted({b for b in blocks if blocks.count(b) > 1}) if len(blocks) != len(set(blocks)) else []
    if missing or repeated:
        described = ", ".join(
            text for text in (f"missing blocks {missing[:10]}" if missing else "",
                              f"repeated blocks {repeated[:10]}" if repeated else "") if text
        )
        raise ValueError(f"{builder.name} build {builds.pop()}: {described} (of {of}; -1 is the cleaning report).")
    order = sorted(range(len(blocks)), key=blocks.__getitem__)
    texts, reports = records["rows"], records["report"]
    rows: dict[str, list[Any]] = {}
    for i in order:
        for name, values in json.loads(texts[i]).items():
            rows.setdefault(name, []).extend(values)
    report = merge_reports([BuildReport.from_json(reports[i]) for i in order])
    report.timings = {step: round(seconds, 3) for step, seconds in report.timings.items()}
    dataset = builder.finish(rows, report)
    report.rows = report.anchors = len(dataset)
    report.check_accounting()
    return dataset, report
