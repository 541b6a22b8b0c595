"""IPW's negative draws (eq. 1–4 and the draws after the neighbour search) at 1, 2, … threads.

The first ``--sentences`` Wikipedia lines are encoded with the default guide (cached, outside the timed part), or
their embeddings are read from ``--embeddings`` (a ``.npy`` made elsewhere, e.g. for a machine the model cannot be
copied to; its rows must be the sentences, in order).
Each thread count then runs ``sample_negatives(..., num_proc=N)`` ``--repeats`` times, the counts interleaved
(1, 2, 1, 2, …) so that a drift of the machine's speed reaches every count alike: the neighbour search
(PyTorch's threads, the same for every count) and the draws, which ``num_proc`` shares out over threads. The
figure is the median of the draws' wall time (``negative_draws_wall``: the word codes, the edit distances,
eq. 1–4 and the draws); every run must give the same arrays (checked, ``identical_arrays``). A run's
``processes`` field is its ``num_proc``: the thread count (the key kept from the forked version's files).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
from pathlib import Path

import numpy as np

from benchmarks.harness.provenance import LoadWatch, command_line, wait_for_idle, write_stamped_json
from st_debias.data.io.corpus import clean_sentences, read_sentences
from st_debias.data.io.embeddings import encode_corpus
from st_debias.data.ipw.builder import sample_negatives
from st_debias.paths import load_model

FIELDS = ("anchor_ids", "chosen", "cosine", "probability", "pool_sizes")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sentences", type=int, default=50_000)
    parser.add_argument("--procs", nargs="+", type=int, default=[1, 2], help="thread counts (num_proc)")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each count; the figure is their median")
    parser.add_argument("--embeddings", default=None, help="a .npy of the sentences' guide embeddings, instead of encoding")
    parser.add_argument("--out", default="benchmarks/builders/results/ipw_draws_threads.json")
    parser.add_argument("--allow-load", action="store_true", help="do not wait for a quiet machine, and write the result even if it was loaded")
    args = parser.parse_args(argv)
    if any(p < 1 for p in args.procs):
        parser.error("--procs: every count must be at least 1")
    if args.repeats < 1:
        parser.error("--repeats: must be at least 1")
    corpus = clean_sentences(read_sentences(limit=args.sentences)).sentences
    if args.embeddings:
        embeddings = np.load(args.embeddings).astype(np.float32)
        if embeddings.shape[0] != len(corpus):
            parser.error(f"--embeddings: {args.embeddings} has {embeddings.shape[0]} rows, {len(corpus)} sentences")
    else:
        print(f"[bench] encoding {len(corpus):,} sentences (cached after the first run)…", flush=True)
        embeddings = encode_corpus(corpus, load_model("default"), show_progress_bar=True)
    samples, digests = [], set()
    for _ in range(args.repeats):
        for procs in args.procs:
            if not args.allow_load:
                wait_for_idle()
            with LoadWatch() as watch:
                sample = sample_negatives(corpus, embeddings, num_proc=procs, show_progress_bar=False)
            watch.refuse_if_loaded(allow=args.allow_load)
            timings = sample.timings
            digests.add(hashlib.sha256(b"".join(getattr(sample, name).tobytes() for name in FIELDS)).hexdigest())
            print(
                f"[bench] {procs} threads: search {timings['neighbour_search']:.1f} s, "
                f"draws {timings['negative_draws_wall']:.2f} s",
                flush=True,
            )
            samples.append({
                "processes": procs, "draws_seconds": round(timings["negative_draws_wall"], 3),
                "timings": {key: round(value, 3) for key, value in timings.items()}, "machine": watch.record(),
            })
    runs = []
    for procs in args.procs:
        mine = [sample for sample in samples if sample["processes"] == procs]
        runs.append({
            "processes": procs, "sentences": len(corpus),
            "draws_seconds": round(statistics.median(sample["draws_seconds"] for sample in mine), 2),
            "draws_seconds_each": [sample["draws_seconds"] for sample in mine],
            "search_seconds": round(statistics.median(sample["timings"]["neighbour_search"] for sample in mine), 2),
            "samples": mine,
        })
    for run in runs:
        run["draws_speed_up"] = round(runs[0]["draws_seconds"] / run["draws_seconds"], 2)
    result = {"command": command_line(__file__, argv), "runs": runs, "identical_arrays": len(digests) == 1,
              "embeddings": args.embeddings or "encoded here (default guide)"}
    write_stamped_json(Path(args.out), result, indent=1)
    print(json.dumps({run["processes"]: run["draws_speed_up"] for run in runs}), "identical:", len(digests) == 1)


if __name__ == "__main__":
    main()
