"""Time the IPW negative step (exact range top-K search + eq. 1–4 sampling) at full corpus size.

Used when the full encoding cannot finish on a shared machine: the embeddings of the shards that the
full-corpus run (bench_ipw_full.py) already encoded (listed in its ``--progress`` file) are loaded from
that run's cache (the same ``ST_DEBIAS_CACHE``) and tiled, with small Gaussian noise, up to the corpus
size N (copies of a sentence land above the 0.75 cap, so pools are filled by neighbour copies, as dense
as a real corpus pool). Edit distances use the real N sentences.
The encoding floor for N is the measured per-sentence encoding time of those shards times N.
"""

from __future__ import annotations

import argparse
import json
import resource
import time
from pathlib import Path

import numpy as np

from benchmarks.harness.provenance import uptime, write_stamped_json
from st_debias.data.io.corpus import clean_sentences, read_sentences
from st_debias.data.io.embeddings import corpus_key, shard_bounds
from st_debias.data.ipw.builder import sample_negatives
from st_debias.fingerprint import model_fingerprint
from st_debias.paths import cache_root, load_model


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--shards", type=int, default=20, help="shard count used by bench_ipw_full.py")
    parser.add_argument(
        "--progress", default="benchmarks/builders/results/ipw_full_corpus_quiet.progress.jsonl"
    )
    parser.add_argument("--pool-size", type=int, default=64)
    parser.add_argument("--block-size", type=int, default=4096)
    parser.add_argument("--noise", type=float, default=0.01)
    parser.add_argument("--out", default="benchmarks/builders/results/ipw_search_full_size.json")
    args = parser.parse_args(argv)
    sentences = clean_sentences(read_sentences()).sentences
    n = len(sentences)
    model = load_model()
    model_id = model_fingerprint(model)
    logged = [json.loads(line) for line in Path(args.progress).read_text().splitlines()]
    parts = []
    for entry in logged:
        start, stop = shard_bounds(n, entry["shard"], args.shards)
        key = corpus_key(sentences[start:stop], model_id, max_seq_length=model.max_seq_length, normalize=True)
        parts.append(np.load(cache_root() / "embeddings" / f"{key}.npy"))
    real = np.concatenate(parts)
    seconds_per_sentence = sum(e["seconds"] for e in logged) / sum(e["sentences"] for e in logged)
    rng = np.random.default_rng(0)
    reps = -(-n // len(real))
    tiled = np.concatenate(
        [real + (args.noise * rng.standard_normal(real.shape) if r else 0.0) for r in range(reps)]
    )[:n].astype(np.float32)
    tiled /= np.linalg.norm(tiled, axis=1, keepdims=True)
    del parts
    result: dict[str, object] = {
        "args": vars(args),
        "sentences": n,
        "real_encoded_sentences": len(real),
        "encode_shards": logged,
        "uptime_before": uptime(),
    }
    t0 = time.perf_counter()
    negatives = sample_negatives(sentences, tiled, pool_size=args.pool_size, block_size=args.block_size)
    seconds = time.perf_counter() - t0
    floor = seconds_per_sentence * n
    result.update(
        {
            "negatives_seconds": seconds,
            "negatives_timings": negatives.timings,
            "encode_seconds_per_sentence_measured": seconds_per_sentence,
            "encode_floor_seconds_estimated": floor,
            "ratio_estimated": (floor + seconds) / floor,
            "mean_pool_size": float(negatives.pool_sizes.mean()),
            "anchors_with_2_negatives": int((negatives.chosen >= 0).all(axis=1).sum()),
            "peak_rss_gib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
            "uptime_after": uptime(),
        }
    )
    write_stamped_json(args.out, result)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
