"""Peak memory and step time of the cached st_debias losses vs CachedMultipleNegativesRankingLoss (CPU).

Usage (from the repository root; writes benchmarks/cached/results/cached.{json,md}):

    python benchmarks/cached/bench_cached.py --batch-sizes 64 256 1024 --mini-batch-size 32

    python benchmarks/cached/bench_cached.py --tiny --output outputs/cached_tiny.json   # smoke test, seconds

``--tiny`` keeps 2 of the packaged model's 6 layers and small batches: a smoke test of the script, not a
measurement.

Every (loss, batch size) setting runs in its own fresh Python process, one after the other, so that no
allocation of one setting is counted in another's peak. Inside that process: load the model, build one
batch of (anchor, positive) rows of exactly ``--max-seq-length`` tokens each (consecutive Wikipedia
sentences joined, then truncated), run ``--warmup`` training steps (forward, backward, AdamW update), reset
the kernel's peak-RSS counter, then time ``--steps`` steps.

Memory: torch's CPU tensors live in malloc'd memory that Python's ``tracemalloc`` does not see, but the
kernel does: it counts them in the process's resident set size (RSS). Linux keeps the high-water mark
``VmHWM`` in ``/proc/self/status`` and resets it to the current RSS when ``5`` is written to
``/proc/self/clear_refs``. So the figure reported, ``peak_step_mib``, is ``VmHWM`` after the timed steps minus
``VmRSS`` just after the reset: the memory a training step needs on top of the model, optimizer state,
tokenized batch and libraries that are already resident — activations, cached embeddings, score matrices,
gradients' temporaries. Warm-up runs before the reset, so one-off allocations (AdamW's state, lazy
initialisation) are not counted. So that RSS follows the live allocations, glibc must hand freed memory
back to the kernel instead of keeping it for reuse (which would hide a step's needs inside the baseline):
each worker runs with fixed ``MALLOC_MMAP_THRESHOLD_``/``MALLOC_TRIM_THRESHOLD_`` of 128 KiB (every larger
block, i.e. every tensor that matters, is its own mapping, unmapped on free). Small blocks stay on the
heap, which warm-up has already grown to what a step reuses. Without ``clear_refs`` (not Linux), the script falls back to
``ru_maxrss`` minus the RSS before warm-up and records ``memory_method`` accordingly.

Step time: the median of the timed steps. The settings run sequentially, not interleaved, so run this on an
otherwise idle machine; the load average is recorded before and after the whole run, and the result file is
stamped with the commit and package versions (:func:`benchmarks.harness.provenance.stamp`).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.harness.provenance import command_line, stamp, uptime, write_stamped_json
from st_debias.files import atomic_write_text

RESULTS = Path(__file__).resolve().parent / "results"
BASELINE = "CachedMultipleNegativesRankingLoss"
TINY_LAYERS = 2
CASES = (BASELINE, "CachedFocalInfoNCE", "CachedDebiasInfoNCE", "CachedInstanceWeightedMNRL", "FocalInfoNCE")
# glibc: serve every block >= 128 KiB by its own mapping, returned to the kernel on free (see the docstring).
WORKER_ENV = {**os.environ, "MALLOC_MMAP_THRESHOLD_": "131072", "MALLOC_TRIM_THRESHOLD_": "131072"}
NOTES = {
    "CachedInstanceWeightedMNRL": "guide embeddings precomputed in the label column, noise negatives k=1",
    "FocalInfoNCE": "uncached, for reference (memory grows with the batch)",
}


# -- one setting, in its own process -----------------------------------------------------------------
def _rss_kib(field: str) -> int | None:
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def _reset_peak() -> bool:
    """Reset the kernel's peak-RSS counter (VmHWM := VmRSS)."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as handle:
            handle.write("5")
        return True
    except OSError:
        return False


def _texts(count: int, tokenizer, max_seq_length: int) -> list[str]:
    """``count`` distinct texts of at least ``max_seq_length`` tokens: consecutive corpus sentences joined."""
    from st_debias.data.io.corpus import read_sentences

    sentences = read_sentences(limit=4 * count + 64)
    texts, start = [], 0
    while len(texts) < count:
        end = start + 1
        while len(tokenizer.tokenize(" ".join(sentences[start:end]))) < max_seq_length:
            end += 1
        texts.append(" ".join(sentences[start:end]))
        start = end
    return texts


def _build_loss(case: str, model, mini_batch_size: int):
    from sentence_transformers.sentence_transformer.losses import CachedMultipleNegativesRankingLoss

    from st_debias.losses import (
        CachedDebiasInfoNCE,
        CachedFocalInfoNCE,
        CachedInstanceWeightedMNRL,
        FocalInfoNCE,
    )

    builders = {
        BASELINE: lambda: CachedMultipleNegativesRankingLoss(model, mini_batch_size=mini_batch_size),
        "CachedFocalInfoNCE": lambda: CachedFocalInfoNCE(model, mini_batch_size),
        "CachedDebiasInfoNCE": lambda: CachedDebiasInfoNCE(model, mini_batch_size),
        "CachedInstanceWeightedMNRL": lambda: CachedInstanceWeightedMNRL(
            model, mini_batch_size, labels="guide_embeddings", noise_ratio=1.0
        ),
        "FocalInfoNCE": lambda: FocalInfoNCE(model),
    }
    return builders[case]()


def _load_model(args: argparse.Namespace):
    from st_debias.paths import load_model

    model = load_model(args.model, device="cpu")  # None: the packaged all-MiniLM-L6-v2
    model.max_seq_length = args.max_seq_length
    if args.tiny:  # a smoke test: the first TINY_LAYERS transformer layers only
        transformer = model[0].auto_model
        transformer.encoder.layer = transformer.encoder.layer[:TINY_LAYERS]
        transformer.config.num_hidden_layers = TINY_LAYERS
    return model


def run_setting(args: argparse.Namespace) -> dict:
    import torch

    torch.manual_seed(0)
    rss_at_start = _rss_kib("VmRSS")
    model = _load_model(args)
    batch = args.batch_size
    texts = _texts(2 * batch, model.tokenizer, args.max_seq_length)
    features = [model.preprocess(texts[:batch]), model.preprocess(texts[batch:])]
    tokens = {int(f["attention_mask"].sum(dim=1).min()) for f in features} | {
        f["input_ids"].shape[1] for f in features
    }
    if tokens != {args.max_seq_length}:
        raise RuntimeError(f"rows are not all {args.max_seq_length} tokens long: {sorted(tokens)}")
    labels = None
    if args.case == "CachedInstanceWeightedMNRL":
        with torch.no_grad():  # a frozen guide = the start model, precomputed as the data builder does
            labels = torch.cat(
                [
                    model.encode(t, convert_to_tensor=True, batch_size=32)
                    for t in (texts[:batch], texts[batch:])
                ],
                1,
            )
    loss = _build_loss(args.case, model, args.mini_batch_size)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-9)  # a real update, negligible drift
    model.train()

    def step() -> float:
        start = time.perf_counter()
        output = loss([dict(f) for f in features], labels)
        total = sum(output.values()) if isinstance(output, dict) else output
        total.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return time.perf_counter() - start

    for _ in range(args.warmup):
        step()
    if _reset_peak():
        method = "VmHWM after the timed steps - VmRSS after clear_refs (post warm-up)"
        baseline_kib = _rss_kib("VmRSS")
    else:
        method = "ru_maxrss - VmRSS at process start (includes warm-up and model loading)"
        baseline_kib = rss_at_start or 0
    times = [step() for _ in range(args.steps)]
    if method.startswith("VmHWM"):
        peak_kib = _rss_kib("VmHWM")
    else:
        peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "case": args.case,
        "batch_size": batch,
        "mini_batch_size": args.mini_batch_size,
        "median_step_s": statistics.median(times),
        "step_times_s": times,
        "peak_step_mib": (peak_kib - baseline_kib) / 1024,
        "resident_before_steps_mib": baseline_kib / 1024,
        "memory_method": method,
        "threads": torch.get_num_threads(),
        "malloc_env": {
            key: os.environ.get(key) for key in ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")
        },
    }


# -- the driver ----------------------------------------------------------------------------------------
def _markdown(result: dict, provenance: dict) -> str:
    lines = [
        "| loss | batch | peak step memory (MiB) | × CachedMNRL | median step (s) | × CachedMNRL | note |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for row in result["rows"]:
        memory_ratio = "–" if row["memory_ratio"] is None else f"{row['memory_ratio']:.2f}"
        time_ratio = "–" if row["time_ratio"] is None else f"{row['time_ratio']:.2f}"
        lines.append(
            f"| {row['case']} | {row['batch_size']} | {row['peak_step_mib']:.0f} | {memory_ratio} | "
            f"{row['median_step_s']:.2f} | {time_ratio} | {NOTES.get(row['case'], '')} |"
        )
    label = " (TINY MODEL: smoke test, not a measurement)" if result["tiny"] else ""
    return (
        f"# Cached losses: peak memory and step time{label}\n\n"
        f"`{result['command']}` at commit `{provenance['commit']}`"
        f"{' (uncommitted changes)' if provenance['dirty'] else ''}, "
        f"mini_batch_size {result['mini_batch_size']}, "
        f"{result['max_seq_length']} tokens per row, (anchor, positive) pairs, median of {result['steps']} steps "
        f"after {result['warmup']} warm-up, model `{result['model']}`.\n\n"
        f"Peak step memory = peak RSS during the timed steps minus RSS before them (see the script docstring).\n\n"
        + "\n".join(lines)
        + f"\n\nVersions: {provenance['packages']}. Load average before: {result['uptime_before']['loadavg']}; "
        f"after: {result['uptime_after']['loadavg']}.\n"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--batch-sizes", type=int, nargs="+", default=None, help="default 64 256 1024 (8 16 with --tiny)"
    )
    parser.add_argument("--mini-batch-size", type=int, default=None, help="default 32 (4 with --tiny)")
    parser.add_argument("--max-seq-length", type=int, default=32)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=CASES)
    parser.add_argument(
        "--uncached-max-batch", type=int, default=256, help="skip uncached cases above this batch size"
    )
    parser.add_argument("--model", default=None, help="default: the packaged all-MiniLM-L6-v2")
    parser.add_argument(
        "--tiny", action="store_true", help=f"the packaged model cut to {TINY_LAYERS} layers: a smoke test"
    )
    parser.add_argument("--output", default=str(RESULTS / "cached.json"))
    # Internal: run one setting and print its JSON.
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--case", help=argparse.SUPPRESS)
    parser.add_argument("--batch-size", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.batch_sizes = args.batch_sizes or ([8, 16] if args.tiny else [64, 256, 1024])
    args.mini_batch_size = args.mini_batch_size or (4 if args.tiny else 32)
    if args.worker:
        print(json.dumps(run_setting(args)))
        return 0

    uptime_before = uptime()
    rows = []
    for batch in args.batch_sizes:
        for case in args.cases:
            if not case.startswith("Cached") and batch > args.uncached_max_batch:
                continue
            command = [
                sys.executable,
                __file__,
                "--worker",
                "--case",
                case,
                "--batch-size",
                str(batch),
                "--mini-batch-size",
                str(args.mini_batch_size),
                "--max-seq-length",
                str(args.max_seq_length),
                "--steps",
                str(args.steps),
                "--warmup",
                str(args.warmup),
            ]
            command += ["--tiny"] if args.tiny else []
            command += ["--model", args.model] if args.model else []
            print(f"{case} batch {batch} ...", file=sys.stderr, flush=True)
            finished = subprocess.run(command, capture_output=True, text=True, check=False, env=WORKER_ENV)
            if finished.returncode != 0:
                print(finished.stderr[-4000:], file=sys.stderr)
                raise SystemExit(
                    f"bench_cached: setting {case} batch {batch} failed (exit {finished.returncode})"
                )
            rows.append(json.loads(finished.stdout.strip().splitlines()[-1]))
    uptime_after = uptime()
    provenance = stamp()

    baselines = {row["batch_size"]: row for row in rows if row["case"] == BASELINE}
    for row in rows:
        base = baselines.get(row["batch_size"])
        row["memory_ratio"] = (
            row["peak_step_mib"] / base["peak_step_mib"] if base and base["peak_step_mib"] > 0 else None
        )
        row["time_ratio"] = row["median_step_s"] / base["median_step_s"] if base else None
    result = {
        "command": command_line(__file__, argv),
        "tiny": args.tiny,
        "model": (args.model or "packaged all-MiniLM-L6-v2")
        + (f", first {TINY_LAYERS} layers" if args.tiny else ""),
        "mini_batch_size": args.mini_batch_size,
        "max_seq_length": args.max_seq_length,
        "steps": args.steps,
        "warmup": args.warmup,
        "machine": {"platform": platform.platform(), "cpu_count": os.cpu_count()},
        "uptime_before": uptime_before,
        "uptime_after": uptime_after,
        "rows": rows,
    }
    output = write_stamped_json(args.output, result, provenance, indent=1)
    markdown = _markdown(result, provenance)
    atomic_write_text(output.with_suffix(".md"), markdown)
    print(markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
