"""Training-pair statistics (DebCSE Tables 1 and 4, lexical overlap) for the shared data's pair sets.

Writes ``results/pair_stats.json`` (or ``--out``), stamped with :func:`benchmarks.harness.provenance.stamp`. No
model is needed for lexical overlap (guide cosine is left out here; ``st-debias eval MODEL --tasks bias --pairs
FILE`` adds it with MODEL as the guide).

    export ST_DEBIAS_DATA=$PWD/../shared/data
    python benchmarks/eval/pair_stats.py
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from benchmarks.harness.provenance import write_stamped_json
from st_debias.evaluation import load_pair_rows, training_pair_statistics
from st_debias.paths import data_file


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "pair_stats.json")
    parser.add_argument(
        "--wiki", type=int, default=5000, help="first N lines of wiki1m_head.txt as SimCSE pairs"
    )
    args = parser.parse_args(argv)
    nli = load_pair_rows(data_file("nli/snli_devtest_triplets.jsonl"))
    wiki = data_file("corpus/wiki1m_head.txt").read_text(encoding="utf-8").splitlines()[: args.wiki]
    out = {
        "snli_devtest_triplets": training_pair_statistics(nli),
        f"wiki1m_head_first{args.wiki}_as_simcse": training_pair_statistics([(s, s) for s in wiki]),
    }
    write_stamped_json(args.out, out)
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
