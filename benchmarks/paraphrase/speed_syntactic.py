"""End-to-end speed of SyntacticParaphraser (parse + transforms) with one and two spaCy processes.

Run it on a quiet machine (:class:`benchmarks.harness.provenance.LoadWatch` records the load, the CPU other
processes used and the peak memory, and nothing is written when the machine was loaded):

    python benchmarks/paraphrase/speed_syntactic.py --n 4000

Writes ``results/syntactic_speed_quiet.json``. Start-up (spaCy, WordNet, lemminflect) is excluded: one warm-up
call on 200 other sentences loads everything first.
"""

from __future__ import annotations

import argparse
import os
import sys
from datetime import datetime, timezone
from pathlib import Path

from benchmarks.harness.provenance import LoadWatch, command_line, wait_for_idle, write_stamped_json
from st_debias.data.io.corpus import read_sentences
from st_debias.data.paraphrase.syntactic import SyntacticParaphraser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=4000, help="sentences from the head of the corpus")
    parser.add_argument("--processes", type=int, nargs="+", default=[1, 2])
    parser.add_argument(
        "--out", type=Path, default=Path(__file__).resolve().parent / "results" / "syntactic_speed_quiet.json"
    )
    parser.add_argument(
        "--allow-load", action="store_true", help="write the result even if the machine was loaded"
    )
    args = parser.parse_args(argv)
    sentences = read_sentences(None, limit=args.n + 200)
    warmup, timed = sentences[args.n :], sentences[: args.n]
    runs = []
    for processes in args.processes:
        generator = SyntacticParaphraser(n_process=processes)
        generator.generate(warmup)
        wait_for_idle()
        with LoadWatch() as watch:
            generator.generate(timed)
        seconds = watch.wall_s
        runs.append(
            {
                "n_process": processes,
                "sentences": len(timed),
                "seconds": round(seconds, 2),
                "sentences_per_s": round(len(timed) / seconds, 1),
                "coverage": round(generator.report.with_candidates / len(timed), 4),
                "machine": watch.record(),
            }
        )
        print(runs[-1], flush=True)
        watch.refuse_if_loaded(allow=args.allow_load)
    result = {
        "command": command_line(__file__, argv),
        "date_utc": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M"),
        "cpus": os.cpu_count(),
        "runs": runs,
    }
    write_stamped_json(args.out, result, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
