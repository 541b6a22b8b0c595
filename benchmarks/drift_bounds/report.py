"""The drift-bounds study's tables, from its result files (``select_dev.py``'s, paths relative to
``benchmarks/``), written into the README between its table markers.

    python benchmarks/drift_bounds/report.py            # rewrite the tables
    python benchmarks/drift_bounds/report.py --check    # exit 1 if they are out of date
"""

from __future__ import annotations

from pathlib import Path

from benchmarks.harness.tables import OPPN_SIDES, curve_table, dev_table, run

README = Path(__file__).resolve().parent / "README.md"
R = "drift_bounds/results"
V6 = "budget/results/v6"
RUNS_500 = (
    ("version 6 (recall γ 1e-3)", f"{V6}/cpu-dev-500/last-checkpoint/v6-swap10-gamma1e3-seed42.json"),
    ("γ 0, nothing bounds the drift", f"{V6}/cpu-dev-500/last-checkpoint/v6-norecall-swap10-seed42.json"),
    (
        "γ 0, top two layers only (`frozen4`)",
        f"{R}/cpu-dev-500/last-checkpoint/v6-norecall-swap10-frozen4-last-seed42.json",
    ),
    (
        "γ 0, pulled back after each step (`decay300`)",
        f"{R}/cpu-dev-500/v6-norecall-swap10-last-decay300-seed42.json",
    ),
    (
        "the pull, rows from 150,000 lines",
        f"{R}/cpu-dev-500/v6-norecall-swap10-mix150k-last-decay300-seed42.json",
    ),
    ("the pull, the margin alone", f"{R}/cpu-dev-500/v6-norecall-swap10-margin-last-decay300-seed42.json"),
    (
        "γ 0, rank-8 adapters (`lora8`, lr 3e-4)",
        f"{R}/cpu-dev-500/v6-norecall-swap10-lr3e4-last-lora8-seed42.json",
    ),
)


def tables() -> dict[str, list[str]]:
    return {
        "at-100": dev_table(
            [
                ("version 6", f"{V6}/cpu-dev-100/last-checkpoint/v6-swap10-gamma1e3-seed43.json"),
                ("version 6, embedding layer frozen", f"{R}/cpu-dev-100/v6-freeze-emb-last-seed43.json"),
                (
                    "γ 0, pulled back after each step",
                    f"{R}/cpu-dev-100/v6-norecall-swap10-last-decay300-seed43.json",
                ),
                (
                    "the pull, the margin alone",
                    f"{R}/cpu-dev-100/v6-norecall-swap10-margin-last-decay300-seed43.json",
                ),
                ("γ 0, rank-8 adapters", f"{R}/cpu-dev-100/v6-norecall-swap10-lr3e4-last-lora8-seed43.json"),
            ],
            head="(100 steps, seed 43, last checkpoint)",
        ),
        "at-500": dev_table(RUNS_500, head="(step 500, seed 42)"),
        "curves": curve_table(
            [(label, path.replace("/last-checkpoint", "")) for label, path in RUNS_500],
            head="(500 steps, seed 42)",
        ),
        "sides": dev_table(RUNS_500, OPPN_SIDES, head="(step 500, seed 42)"),
    }


def main(argv: list[str] | None = None) -> int:
    return run(README, tables, argv, __doc__)


if __name__ == "__main__":
    raise SystemExit(main())
