"""Throughput of the row builders in blocks at 1, 2, … processes, and the hours projected for 1M sentences.

For each kind (``negation``, ``minimal_pairs``, and the syntactic paraphraser alone) and each process count,
the builder is made and warmed up (spaCy and WordNet loaded) in a fresh process, outside the timed part; the
timed part is one ``builder.build(sentences, num_proc=N)``, forking the workers included. With ``--sentences`` every count builds
the same sentences and the rows are checked to be identical; with ``--blocks-per-process B`` each count builds
``B`` blocks per process (for many cores, where one size for all would be too small or too long).

With ``--repeats R`` each kind runs its counts R times, interleaved (1, 2, 1, 2, …) so that a drift of the
machine's speed reaches every count alike, and each count's figure is its median run (the slower of the two
middle runs when R is even; all R are kept, in ``seconds_each`` and ``samples``); ``speed_up`` is that median
rate over the one-process median.

The projection for 1M sentences at k cores assumes the measured per-process rate of the largest count
measured, times k: a projection, not a measurement.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from benchmarks.harness.provenance import LoadWatch, command_line, wait_for_idle, write_stamped_json
from st_debias.data.io.corpus import read_sentences
from st_debias.data.kinds import block_builder
from st_debias.data.parallel import BLOCK_SIZE, build_blocks, finish_blocks

KINDS = ("negation", "minimal_pairs", "syntactic")
PROJECTED_CORES = (1, 2, 16, 64)
MILLION = 1_000_000


def _builder(kind: str, spacy_model: str | None):
    """``syntactic`` times the paraphraser alone: the ``paraphrase`` data kind."""
    return block_builder("paraphrase" if kind == "syntactic" else kind, seed=0, spacy_model=spacy_model)


def measure(kind: str, sentences: list[str], procs: int, spacy_model: str | None, allow_load: bool) -> dict:
    builder = _builder(kind, spacy_model)
    builder.prepare()
    if not allow_load:
        wait_for_idle()
    with LoadWatch() as watch:
        records = build_blocks(builder, sentences, num_proc=procs)
        rows, report = finish_blocks(builder, records)
    watch.refuse_if_loaded(allow=allow_load)
    rate = len(sentences) / watch.wall_s
    print(f"[bench] {kind:13s} {procs:2d} processes: {len(sentences):6d} sentences in {watch.wall_s:7.1f} s "
          f"= {rate:7.1f} sentences/s ({rate / procs:6.1f} per process)", flush=True)
    return {
        "kind": kind, "processes": procs, "sentences": len(sentences), "rows": len(rows),
        "seconds": round(watch.wall_s, 2), "sentences_per_second": round(rate, 1),
        "per_process": round(rate / procs, 1), "machine": watch.record(),
        "rows_digest": hashlib.sha256(json.dumps(rows.to_dict(), sort_keys=True).encode()).hexdigest(), "skipped": dict(report.skipped),
    }


def _median_run(samples: list[dict], kind: str, procs: int, repeats: int) -> dict:
    """The median of one kind and count's runs (by wall time), with every run's seconds and machine record
    when there are several, and its speed-up over the one-process median."""
    mine = sorted((run for run in samples if run["kind"] == kind and run["processes"] == procs),
                  key=lambda run: run["seconds"])
    median = dict(mine[len(mine) // 2])
    if repeats > 1:
        median["seconds_each"] = [run["seconds"] for run in mine]
        median["samples"] = [run["machine"] for run in mine]
    one = sorted((run for run in samples if run["kind"] == kind and run["processes"] == 1), key=lambda run: run["seconds"])
    if one:
        median["speed_up"] = round(median["sentences_per_second"] / one[len(one) // 2]["sentences_per_second"], 2)
    return median


def projection(runs: list[dict]) -> dict[str, dict[str, float]]:
    """Hours for 1M sentences at each of :data:`PROJECTED_CORES`, from the largest process count measured."""
    out: dict[str, dict[str, float]] = {}
    for kind in {run["kind"] for run in runs}:
        largest = max((run for run in runs if run["kind"] == kind), key=lambda run: run["processes"])
        out[kind] = {str(k): round(MILLION / (largest["per_process"] * k) / 3600, 2) for k in PROJECTED_CORES}
    return out


def plot(runs: list[dict], target: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from st_debias.files import atomic_path

    figure, axes = plt.subplots(1, 2, figsize=(10, 4))
    for kind in KINDS:
        mine = sorted((run for run in runs if run["kind"] == kind), key=lambda run: run["processes"])
        if not mine:
            continue
        procs = [run["processes"] for run in mine]
        axes[0].plot(procs, [run["sentences_per_second"] for run in mine], marker="o", label=kind)
        base = mine[0]["per_process"]
        axes[1].plot(procs, [run["sentences_per_second"] / base for run in mine], marker="o", label=kind)
    top = max(run["processes"] for run in runs)
    axes[1].plot([1, top], [1, top], color="grey", linestyle=":", label="linear")
    axes[0].set(xlabel="processes", ylabel="sentences / s", title="Throughput")
    axes[1].set(xlabel="processes", ylabel="× one process", title="Speed-up")
    counts = sorted({run["processes"] for run in runs})
    for axis in axes:
        axis.set_xticks(counts)  # whole processes only
        axis.legend()
        axis.grid(alpha=0.3)
    axes[0].set_ylim(bottom=0)
    figure.tight_layout()
    with atomic_path(target) as temporary:
        figure.savefig(temporary, dpi=110)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kinds", nargs="+", choices=KINDS, default=list(KINDS))
    parser.add_argument("--procs", nargs="+", type=int, default=[1, 2])
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--sentences", type=int, default=8 * BLOCK_SIZE, help="the same sentences for every count")
    size.add_argument("--blocks-per-process", type=int, default=None, help="B blocks per process instead")
    parser.add_argument("--corpus", default=None, help="sentence file (default: the shared Wikipedia corpus)")
    parser.add_argument("--spacy-model", default=None)
    parser.add_argument("--repeats", type=int, default=1, help="runs of each count, interleaved; the figure is the median")
    parser.add_argument("--out", default="benchmarks/builders/results/parallel_quiet.json")
    parser.add_argument("--allow-load", action="store_true", help="do not wait for a quiet machine, and write the result even if it was loaded")
    args = parser.parse_args(argv)
    if any(p < 1 for p in args.procs):
        parser.error("--procs: every count must be at least 1")
    if args.repeats < 1:
        parser.error("--repeats: must be at least 1")
    largest = max(args.procs)
    wanted = args.blocks_per_process * BLOCK_SIZE * largest if args.blocks_per_process else args.sentences
    corpus = read_sentences(args.corpus, limit=wanted)
    if len(corpus) < wanted:
        parser.error(f"--corpus has {len(corpus)} lines, {wanted} needed")
    samples = []
    started = time.perf_counter()
    for kind in args.kinds:
        for _ in range(args.repeats):
            for procs in args.procs:
                count = args.blocks_per_process * BLOCK_SIZE * procs if args.blocks_per_process else args.sentences
                # A fresh process per measurement: caches filled by an earlier one (lemmas, WordNet) must not help it.
                with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as fresh:
                    samples.append(fresh.submit(
                        measure, kind, corpus[:count], procs, args.spacy_model, args.allow_load
                    ).result())
    same_size = args.blocks_per_process is None
    identical = {
        kind: len({run["rows_digest"] for run in samples if run["kind"] == kind}) == 1 for kind in args.kinds
    } if same_size else None
    for run in samples:
        run.pop("rows_digest")
    runs = [_median_run(samples, kind, procs, args.repeats) for kind in args.kinds for procs in args.procs]
    result = {
        "command": command_line(__file__, argv),
        "block_size": BLOCK_SIZE, "runs": runs, "identical_rows": identical,
        "projected_hours_for_1M_sentences": projection(runs), "total_seconds": round(time.perf_counter() - started, 1),
    }
    out = Path(args.out)
    write_stamped_json(out, result, indent=1)
    plot(runs, out.with_suffix(".png"))
    print(json.dumps({"identical_rows": identical, "projected_hours_for_1M_sentences": result[
        "projected_hours_for_1M_sentences"]}, indent=1))


if __name__ == "__main__":
    main()
