"""Step time of each st_debias loss relative to MultipleNegativesRankingLoss, interleaved in one run.

Usage (writes benchmarks/overhead/results/overhead.json and overhead.md):

    python benchmarks/overhead/overhead.py --steps 20 --batch-size 64 --max-seq-length 32

Every case trains the same model (all-MiniLM-L6-v2 by default) on the same batch of real Wikipedia
sentences; one step = forward, backward and an AdamW update. The cases run round-robin (one step of
each, repeated), so machine load drifts hit all of them alike; the figure is the median step time over
``--steps`` steps after ``--warmup`` discarded rounds. The baseline for a case is MNRL on the *same
columns* the case embeds, so the ratio isolates the loss's own cost — except where a loss embeds an
extra column by design (MarginNegationLoss's second dropout view, the live guide's forward), which
the table states.
"""

from __future__ import annotations

import argparse
import copy
import platform
import statistics
import sys
import time
from pathlib import Path

import torch

from benchmarks.harness.provenance import command_line, stamp, uptime, write_stamped_json
from st_debias.files import atomic_write_text

RESULTS = Path(__file__).resolve().parent / "results"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--max-seq-length", type=int, default=32)
    parser.add_argument("--model", default=None)
    parser.add_argument("--output", default=str(RESULTS / "overhead.json"))
    args = parser.parse_args(argv)

    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss

    from st_debias.data.io.corpus import read_sentences
    from st_debias.losses import (
        DebiasInfoNCE,
        FocalInfoNCE,
        InstanceWeightedMNRL,
        MarginNegationLoss,
        RecallRegularizer,
    )
    from st_debias.paths import load_model

    torch.manual_seed(0)
    model = load_model(args.model)
    model.max_seq_length = args.max_seq_length
    guide = copy.deepcopy(model).eval().requires_grad_(False)
    sentences = read_sentences(limit=5 * args.batch_size)
    b = args.batch_size
    columns = {
        "pair": [sentences[:b], sentences[:b]],
        "triplet": [sentences[:b], sentences[b : 2 * b], sentences[2 * b : 3 * b]],
        "ipw": [sentences[:b], sentences[b : 2 * b], sentences[2 * b : 3 * b], sentences[3 * b : 4 * b]],
        "negation+view": [sentences[:b], sentences[b : 2 * b], sentences[2 * b : 3 * b], sentences[:b]],
    }
    features = {name: [model.preprocess(c) for c in cols] for name, cols in columns.items()}
    with torch.no_grad():
        guide_labels = torch.cat([guide.encode(c, convert_to_tensor=True) for c in columns["pair"]], dim=1)

    mnrl = MultipleNegativesRankingLoss(model)
    # name -> (loss, feature set, labels, baseline feature set, note)
    cases = {
        "MNRL (pairs)": (mnrl, "pair", None, "pair", "baseline"),
        "MNRL (triplets)": (mnrl, "triplet", None, "triplet", "baseline"),
        "MNRL (4 columns)": (mnrl, "ipw", None, "ipw", "baseline"),
        "FocalInfoNCE": (FocalInfoNCE(model), "pair", None, "pair", ""),
        "DebiasInfoNCE (a, p, n1, n2)": (DebiasInfoNCE(model), "ipw", None, "ipw", ""),
        "MarginNegationLoss (contrastive=paraphrase)": (
            MarginNegationLoss(model, contrastive="paraphrase"),
            "triplet",
            None,
            "triplet",
            "",
        ),
        "MarginNegationLoss (contrastive=dropout)": (
            MarginNegationLoss(model, contrastive="dropout"),
            "negation+view",
            None,
            "ipw",
            "embeds the anchor twice (SimCSE view): 4 columns vs MNRL on the same 4 columns",
        ),
        "RecallRegularizer(FocalInfoNCE)": (
            RecallRegularizer(model, FocalInfoNCE(model)),
            "pair",
            None,
            "pair",
            "",
        ),
        "InstanceWeightedMNRL (precomputed guide)": (
            InstanceWeightedMNRL(model, labels="guide_embeddings"),
            "pair",
            guide_labels,
            "pair",
            "",
        ),
        "InstanceWeightedMNRL (precomputed guide + noise k=1)": (
            InstanceWeightedMNRL(model, labels="guide_embeddings", noise_ratio=1.0),
            "pair",
            guide_labels,
            "pair",
            "",
        ),
        "InstanceWeightedMNRL (live guide)": (
            InstanceWeightedMNRL(model, guide=guide),
            "pair",
            None,
            "pair",
            "runs the guide's forward every step",
        ),
    }
    baselines = {"pair": "MNRL (pairs)", "triplet": "MNRL (triplets)", "ipw": "MNRL (4 columns)"}
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-9)  # a real update, negligible drift
    model.train()
    times: dict[str, list[float]] = {name: [] for name in cases}
    uptime_before = uptime()
    for round_index in range(args.warmup + args.steps):
        for name, (loss, feature_set, labels, _, _) in cases.items():
            batch = [dict(f) for f in features[feature_set]]
            start = time.perf_counter()
            output = loss(batch, labels)
            total = sum(output.values()) if isinstance(output, dict) else output
            total.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            elapsed = time.perf_counter() - start
            if round_index >= args.warmup:
                times[name].append(elapsed)
        print(f"round {round_index + 1}/{args.warmup + args.steps}", file=sys.stderr, flush=True)

    uptime_after = uptime()
    medians = {name: statistics.median(values) for name, values in times.items()}
    rows = []
    for name, (_, _, _, baseline_set, note) in cases.items():
        baseline = baselines[baseline_set]
        rows.append(
            {
                "case": name,
                "median_step_s": round(medians[name], 4),
                "baseline": baseline,
                "ratio": round(medians[name] / medians[baseline], 3),
                "note": note,
            }
        )
    result = {
        "command": command_line(__file__, argv),
        "steps": args.steps,
        "batch_size": b,
        "max_seq_length": args.max_seq_length,
        "machine": {"platform": platform.platform(), "threads": torch.get_num_threads()},
        "uptime_before": uptime_before,
        "uptime_after": uptime_after,
        "rows": rows,
    }
    provenance = stamp()
    output_path = write_stamped_json(args.output, result, provenance, indent=1)
    lines = [
        "| case | median step (s) | baseline | ratio | note |",
        "|---|---:|---|---:|---|",
        *[
            f"| {r['case']} | {r['median_step_s']:.3f} | {r['baseline']} | {r['ratio']:.3f} | {r['note']} |"
            for r in rows
        ],
    ]
    atomic_write_text(
        output_path.with_suffix(".md"),
        f"# Loss overhead vs MultipleNegativesRankingLoss\n\n`{result['command']}` — median of {args.steps} "
        f"interleaved steps, batch {b}, {args.max_seq_length} tokens, load average before "
        f"{uptime_before['loadavg']} and after {uptime_after['loadavg']}; commit {provenance['commit']}"
        f"{' (uncommitted changes)' if provenance['dirty'] else ''}.\n\n" + "\n".join(lines) + "\n",
    )
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
