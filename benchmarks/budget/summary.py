"""One table of every v5 variant's dev scores at each budget (from ``results/dev-<steps>/``), with the lowest
STS-B dev checkpoint of its run: ``python benchmarks/budget/summary.py`` writes ``results/summary.md`` and
the same rows, stamped, as ``results/summary.json``."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from benchmarks.harness.provenance import write_stamped_json
from st_debias.files import atomic_write_text

RESULTS = Path(__file__).resolve().parent / "results"
COLUMNS = {
    "dev": "STS-B dev", "dev_oppn": "dev Oppn", "neg_cos_heldout": "CANNOT held-out ↓", "word_order_cos": "word order ↓",
    "mp_accuracy": "dev minimal pairs", "nm_over_affirmative": "(i) ↑", "nm_over_negated_antonym": "(ii) ↑",
    "nm_polarity_cluster": "(iii) ↓",
}
METRIC = "eval_sts-dev_spearman_cosine"


def _cells(scores: dict) -> str:
    return " | ".join(f"{scores[k]:.2f}" if k.startswith("dev") else f"{scores[k]:.3f}" for k in COLUMNS)


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(description=__doc__).parse_args(argv)
    folders = sorted(RESULTS.glob("dev-*"), key=lambda f: int(f.name.split("-")[1]))
    start = json.loads((folders[0] / "start.json").read_text())["scores"]
    rows: list[dict] = []
    lines = [
        "| variant | steps | " + " | ".join(COLUMNS.values()) + " | lowest STS-B dev checkpoint (32 tokens) |",
        "|---|---:|" + "---:|" * (len(COLUMNS) + 1),
        "| start | – | " + _cells(start) + " | 86.61 (the start itself) |",
    ]
    for folder in folders:
        for path in sorted(folder.glob("v5-*-seed*.json")):
            entry = json.loads(path.read_text())
            curve = [100 * e[METRIC] for e in entry["log_history"] if METRIC in e]
            steps = folder.name.split("-")[1]
            lines.append(f"| {entry['variant']} | {steps} | {_cells(entry['scores'])} | {min(curve):.2f} |")
            rows.append({"variant": entry["variant"], "steps": int(steps), "lowest_checkpoint": min(curve),
                         **{k: entry["scores"][k] for k in COLUMNS}})
    atomic_write_text(RESULTS / "summary.md", "\n".join(lines) + "\n")
    write_stamped_json(RESULTS / "summary.json", {"start": {k: start[k] for k in COLUMNS}, "runs": rows})
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
