"""DebCSE Table 1/4 pair statistics of IPW rows built with the default guide on real Wikipedia sentences.

Builds rows for the anchors of one shard (default 1/20) of the first ``--limit`` corpus sentences,
with negatives drawn from all of them, for each (temperature, similarity temperature) pair given. Reports mean lexical overlap
(shared words / longer sentence) and mean guide cosine of positive and negative pairs, and timings.
"""

from __future__ import annotations

import argparse
import json

from benchmarks.harness.provenance import uptime, write_stamped_json
from st_debias.data.io.corpus import read_sentences
from st_debias.data.ipw.builder import IPWBuilder
from st_debias.paths import load_model


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--limit", type=int, default=10000)
    parser.add_argument("--shard", default="0/20")
    parser.add_argument(
        "--configs",
        default="1:1,0.05:1,1:0.01,0.05:0.01",
        help="comma-separated temperature:similarity_temperature pairs (eq. 4/6 : eq. 1-2)",
    )
    parser.add_argument("--out", default="benchmarks/builders/results/ipw_stats.json")
    args = parser.parse_args(argv)
    sentences = read_sentences(limit=args.limit)
    shard = tuple(int(x) for x in args.shard.split("/"))
    model = load_model()
    runs = []
    before = uptime()
    for config in args.configs.split(","):
        temperature, similarity_temperature = (float(x) for x in config.split(":"))
        builder = IPWBuilder(
            model, temperature=temperature, similarity_temperature=similarity_temperature, seed=0
        )
        rows = builder.build(sentences, shard=shard)
        runs.append(
            {
                "temperature": temperature,
                "similarity_temperature": similarity_temperature,
                "report": builder.report.as_dict(),
                "examples": rows.select(range(min(3, len(rows)))).to_list(),
                "uptime": uptime(),
            }
        )
        print(json.dumps(runs[-1]["report"]["statistics"], indent=2), flush=True)
    write_stamped_json(
        args.out, {"args": vars(args), "uptime_before": before, "runs": runs, "uptime_after": uptime()}
    )


if __name__ == "__main__":
    main()
