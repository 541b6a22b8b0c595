"""Time IPW negatives for the full corpus against the encoding floor, in one process.

The floor is the guide model encoding the corpus, shard by shard into a fresh cache. The IPW
negative step then runs on those embeddings: exact range top-K neighbour search plus eq. 1–4 sampling.
Ratio = (encode + neighbours + sampling) / encode. Peak memory is the process's max RSS.

Each shard's encoding time goes to a progress log beside ``--out`` as it finishes. ``--resume`` continues an
interrupted run from that log (its shards' embeddings read back from the cache); without it the log is
started anew. A figure counts only from one uninterrupted run on a quiet machine: the result records
``"uninterrupted": false`` when shards were resumed, and the script exits 3 without writing when the machine
was loaded (:class:`benchmarks.harness.provenance.LoadWatch`). Run it with a fresh cache folder::

    ST_DEBIAS_CACHE=$(mktemp -d) python benchmarks/builders/bench_ipw_full.py --shards 20 \
        --out benchmarks/builders/results/ipw_full_corpus_quiet.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import torch

from benchmarks.builders.shards import encode_shard, merge_shards
from benchmarks.harness.provenance import LoadWatch, command_line, wait_for_idle, write_stamped_json
from st_debias.data.io.corpus import clean_sentences, read_sentences
from st_debias.data.ipw.builder import sample_negatives
from st_debias.paths import load_model


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--limit", type=int, default=None, help="first N corpus sentences (default all)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--pool-size", type=int, default=64)
    parser.add_argument("--block-size", type=int, default=4096)
    parser.add_argument("--shards", type=int, default=10, help="encode in this many cached shards")
    parser.add_argument("--out", default="benchmarks/builders/results/ipw_full_corpus_quiet.json")
    parser.add_argument(
        "--allow-load", action="store_true", help="write the result even if the machine was loaded"
    )
    parser.add_argument("--resume", action="store_true", help="continue from the progress log of an interrupted run")
    args = parser.parse_args(argv)
    result: dict[str, object] = {
        "command": command_line(__file__, argv),
        "args": vars(args),
        "torch_threads": torch.get_num_threads(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
    }
    wait_for_idle()
    with LoadWatch() as watch:
        sentences = clean_sentences(read_sentences(limit=args.limit)).sentences
        result["sentences"] = len(sentences)
        model = load_model()
        # Encode in shards (cached under $ST_DEBIAS_CACHE, so an interrupted run resumes); each shard's
        # encoding time is appended to a progress log the first time it is encoded.
        progress_path = Path(args.out).with_suffix(".progress.jsonl")
        logged = {}
        if not args.resume:
            progress_path.unlink(missing_ok=True)  # an earlier run's log would pass its timings off as this run's
        elif progress_path.exists():
            for line in progress_path.read_text().splitlines():
                entry = json.loads(line)
                logged[entry["shard"]] = entry
        result["uninterrupted"] = not logged
        parts = []
        for index in range(args.shards):
            if index in logged:
                parts.append(encode_shard(sentences, index, args.shards, model, batch_size=args.batch_size))
                continue
            t0 = time.perf_counter()
            parts.append(encode_shard(sentences, index, args.shards, model, batch_size=args.batch_size))
            entry = {
                "shard": index,
                "of": args.shards,
                "sentences": len(parts[-1]),
                "seconds": time.perf_counter() - t0,
            }
            logged[index] = entry
            with progress_path.open("a") as handle:
                handle.write(json.dumps(entry) + "\n")
            print(json.dumps(entry), flush=True)
        embeddings = merge_shards(parts)
        result["encode_seconds"] = sum(entry["seconds"] for entry in logged.values())
        result["encode_shards"] = [logged[i] for i in range(args.shards)]
        print(json.dumps(result), flush=True)
        t0 = time.perf_counter()
        negatives = sample_negatives(
            sentences, embeddings, pool_size=args.pool_size, block_size=args.block_size
        )
        result["negatives_seconds"] = time.perf_counter() - t0
        result["negatives_timings"] = negatives.timings
        result["ratio_total_over_encode"] = (result["encode_seconds"] + result["negatives_seconds"]) / result[
            "encode_seconds"
        ]
        result["anchors_with_2_negatives"] = int((negatives.chosen >= 0).all(axis=1).sum())
        result["mean_pool_size"] = float(negatives.pool_sizes.mean())
    result["machine"] = watch.record()
    print(json.dumps(result["machine"]), flush=True)
    watch.refuse_if_loaded(allow=args.allow_load)
    write_stamped_json(args.out, result)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
