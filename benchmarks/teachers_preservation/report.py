"""The teachers-and-preservation study's tables, from its result files (``select_dev.py``'s, paths relative to
``benchmarks/``), written into the README between its table markers.

    python benchmarks/teachers_preservation/report.py            # rewrite the tables
    python benchmarks/teachers_preservation/report.py --check    # exit 1 if they are out of date
"""

from __future__ import annotations

from pathlib import Path

from benchmarks.harness.tables import DEV, OPPN_SIDES, dev_table, run

README = Path(__file__).resolve().parent / "README.md"
R = "teachers_preservation/results"
PULL = "drift_bounds/results/cpu-dev-500/v6-norecall-swap10-last-decay300-seed42.json"
SIDES = (*DEV[:3], *OPPN_SIDES[1:])
#: Version 6 and the runs with a teacher's in-batch cosines (100 steps, seed 42, last checkpoint).
TEACHER_RUNS = [
    ("version 6", "budget/results/v6/cpu-dev-100/v6-swap10-gamma1e3-last-seed42.json"),
    ("teacher over the batch, weight 1", f"{R}/cpu-dev-100/v6-swap10-gamma1e3-teacher1-last-seed42.json"),
    ("teacher over the batch, weight 0.1", f"{R}/cpu-dev-100/v6-swap10-gamma1e3-teacher01-last-seed42.json"),
    ("weight 0.1, 10 % SNLI rows", f"{R}/cpu-dev-100/v6-swap10-gamma1e3-teacher01-nli10-last-seed42.json"),
]


def tables() -> dict[str, list[str]]:
    return {
        "preservation-100": dev_table(
            [
                (
                    "30 %, λ 3e-3 (`../family_ablation/`)",
                    "family_ablation/results/cpu-dev-100/v6-nm30-lam3e3-last-seed43.json",
                ),
                ("+ preservation, weight 0.02", f"{R}/cpu-dev-100/v6-nm30-lam3e3-pres002-last-seed43.json"),
                ("+ preservation, weight 0.1", f"{R}/cpu-dev-100/v6-nm30-lam3e3-pres01-last-seed43.json"),
            ],
            head="(100 steps, seed 43, last checkpoint)",
        ),
        "preservation-500": dev_table(
            [
                ("version 6", "budget/results/v6/cpu-dev-500/last-checkpoint/v6-swap10-gamma1e3-seed42.json"),
                ("γ 0, pulled back after each step (`../drift_bounds/`)", PULL),
                (
                    "the same with preservation 0.02",
                    f"{R}/cpu-dev-500/v6-norecall-swap10-pres002-last-decay300-seed42.json",
                ),
                (
                    "the same with preservation 0.05",
                    f"{R}/cpu-dev-500/v6-norecall-swap10-pres005-last-decay300-seed42.json",
                ),
            ],
            head="(step 500, seed 42)",
        ),
        "teacher": dev_table(
            TEACHER_RUNS,
            head="(100 steps, seed 42, last checkpoint)",
        ),
        "teacher-sides": dev_table(
            TEACHER_RUNS,
            SIDES,
            head="(100 steps, seed 42)",
        ),
    }


def main(argv: list[str] | None = None) -> int:
    return run(README, tables, argv, __doc__)


if __name__ == "__main__":
    raise SystemExit(main())
