"""Training-pair statistics (DebCSE Tables 1 and 4, lexical overlap) for the shared data's pair sets.

Writes ``results/pair_stats.json``. No model is needed for lexical overlap (guide cosine is left out here;
``st-debias eval MODEL --tasks bias --pairs FILE`` adds it with MODEL as the guide).

    export ST_DEBIAS_DATA=$PWD/../shared/data
    python benchmarks/eval/pair_stats.py
"""

from __future__ import annotations

import json
from pathlib import Path

from st_debias.evaluation import load_pair_rows, training_pair_statistics
from st_debias.paths import data_file


def main() -> int:
    nli = load_pair_rows(data_file("nli/snli_devtest_triplets.jsonl"))
    wiki = data_file("corpus/wiki1m_head.txt").read_text(encoding="utf-8").splitlines()[:5000]
    out = {
        "snli_devtest_triplets": training_pair_statistics(nli),
        "wiki1m_head_first5000_as_simcse": training_pair_statistics([(s, s) for s in wiki]),
    }
    path = Path(__file__).parent / "results" / "pair_stats.json"
    path.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
