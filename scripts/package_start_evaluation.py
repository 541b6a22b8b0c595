"""Compute the default start model's full evaluation and store it as package data.

``st-debias train`` reuses this entry for the "before" column instead of re-encoding every sentence of the evaluation,
but only when the loaded model's weight fingerprint, inference settings and the checksums of every
evaluation data file match the key stored beside it (``st_debias/evaluation/reuse.py``). Run it again
after bumping ``EVALUATION_FORMAT`` or when the evaluation data or the default model change.

Usage (from the repository root, with ``ST_DEBIAS_DATA`` set):

    python scripts/package_start_evaluation.py
"""

from __future__ import annotations

import argparse
import datetime
import subprocess
import sys
from pathlib import Path

from st_debias.evaluation import evaluate_model
from st_debias.evaluation.reuse import evaluation_key, packaged_dir, stored_entry
from st_debias.files import atomic_write_json
from st_debias.paths import load_model

TASKS = ("sts", "bias")


def _commit() -> str | None:
    try:
        return subprocess.run(
            ["git", "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
            cwd=Path(__file__).parent,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="default", help="model to evaluate (default: all-MiniLM-L6-v2)")
    parser.add_argument("--name", default="all-MiniLM-L6-v2", help="file stem and label of the stored entry")
    parser.add_argument(
        "--output-dir", default=None, help="folder to write into (default: the package's own)"
    )
    args = parser.parse_args(argv)

    commit = _commit()  # the code that computes the entry, before anything else can be committed
    model = load_model(args.model)
    key = evaluation_key(model, TASKS)
    if key is None:
        print("error: the evaluation data must be local files (set ST_DEBIAS_DATA)", file=sys.stderr)
        return 2
    result = evaluate_model(model, tasks=TASKS, label=args.name)
    result["computed_by"] = {
        "script": "scripts/package_start_evaluation.py",
        "commit": commit,
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }
    target = Path(args.output_dir) if args.output_dir else packaged_dir()
    path = target / f"{args.name}.json"
    atomic_write_json(path, stored_entry(key, result, None), indent=1)
    print(f"STS-7 avg {result['sts']['avg']:.2f}; wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
