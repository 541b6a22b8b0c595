"""The budget study's tables, from its result files (``select_dev.py``'s, paths relative to ``benchmarks/``),
written into the README between its table markers.

    python benchmarks/budget/report.py            # rewrite the tables
    python benchmarks/budget/report.py --check    # exit 1 if they are out of date
"""

from __future__ import annotations

from pathlib import Path

from benchmarks.harness.tables import DEV, curve_table, dev_table, run

README = Path(__file__).resolve().parent / "README.md"
V5 = "budget/results/v5"
V6 = "budget/results/v6"
V6_100 = (
    f"{V6}/cpu-dev-100/v6-swap10-gamma1e3-last-seed42.json",
    f"{V6}/cpu-dev-100/last-checkpoint/v6-swap10-gamma1e3-seed43.json",
    f"{V6}/cpu-dev-100/v6-swap10-gamma1e3-last-seed44.json",
)
V6_500 = (
    f"{V6}/cpu-dev-500/last-checkpoint/v6-swap10-gamma1e3-seed42.json",
    f"{V6}/cpu-dev-500/v6-swap10-gamma1e3-last-seed43.json",
    f"{V6}/cpu-dev-500/v6-swap10-gamma1e3-last-seed44.json",
)
NO_CONT = tuple(c for c in DEV if c[1] != "dev_cont")


def tables() -> dict[str, list[str]]:
    v5_runs = [
        ("v4 (`v5-base`, λ 1)", "v5-base"),
        ("λ 3e-3", "v5-lam3e3"),
        ("λ 3e-3 + 30 % SNLI", "v5-nli30-lam3e3"),
        ("λ 3e-3 + 20 % negation meaning", "v5-nm20-lam3e3"),
        ("**λ 2e-3 + 20 % negation meaning (v5)**", "v5-nm20-lam2e3"),
        ("λ 1e-3 + 20 % negation meaning", "v5-nm20-lam1e3"),
        ("λ 1e-3 + 40 % negation meaning", "v5-nm40-lam1e3"),
    ]
    return {
        "v5": dev_table(
            [(label, f"{V5}/dev-1000/{name}-seed42.json") for label, name in v5_runs],
            NO_CONT,
            head="(1,000 steps, seed 42, kept checkpoint)",
        ),
        "v5-curves": curve_table(
            [(label, f"{V5}/dev-1000/{name}-seed42.json") for label, name in v5_runs],
            head="(1,000 steps, seed 42)",
        ),
        "v5-budgets": dev_table(
            [
                ("100 steps, seed 43", f"{V5}/cpu-dev-100/st-debias-seed43.json"),
                ("100 steps, seed 44", f"{V5}/cpu-dev-100/st-debias-seed44.json"),
                ("500 steps, seed 42 (best checkpoint)", f"{V5}/cpu-dev-500/v5-nm20-lam2e3-seed42.json"),
                ("1,000 steps, seed 42 (GPU, best checkpoint)", f"{V5}/dev-1000/v5-nm20-lam2e3-seed42.json"),
            ],
            NO_CONT,
            head="(v5, dev)",
        ),
        "recall-curves": curve_table(
            [
                ("v5", f"{V5}/cpu-dev-500/v5-nm20-lam2e3-seed42.json"),
                ("γ 0 (`v6-norecall-swap10`)", f"{V6}/cpu-dev-500/v6-norecall-swap10-seed42.json"),
                ("γ 1e-3 (`v6-swap10-gamma1e3`)", f"{V6}/cpu-dev-500/v6-swap10-gamma1e3-seed42.json"),
                (
                    "γ 5e-4 (`v6-swap10-gamma5e4-last`)",
                    f"{V6}/cpu-dev-500/v6-swap10-gamma5e4-last-seed42.json",
                ),
                ("v5 (GPU), 1,000 steps", f"{V5}/dev-1000/v5-nm20-lam2e3-seed42.json"),
                ("γ 1e-3, 1,000 steps", f"{V6}/cpu-dev-1000/v6-swap10-gamma1e3-seed42.json"),
            ],
            head="(seed 42)",
        ),
        "recall-500": dev_table(
            [
                ("v5", f"{V6}/cpu-dev-500/last-checkpoint/v5-nm20-lam2e3-seed42.json"),
                (
                    "γ 0 (`v6-norecall-swap10`)",
                    f"{V6}/cpu-dev-500/last-checkpoint/v6-norecall-swap10-seed42.json",
                ),
                (
                    "γ 5e-4 (`v6-swap10-gamma5e4-last`)",
                    f"{V6}/cpu-dev-500/v6-swap10-gamma5e4-last-seed42.json",
                ),
                (
                    "γ 1e-3 (`v6-swap10-gamma1e3`)",
                    f"{V6}/cpu-dev-500/last-checkpoint/v6-swap10-gamma1e3-seed42.json",
                ),
            ],
            NO_CONT,
            head="(step 500, seed 42)",
        ),
        "keep": dev_table(
            [
                ("500 steps, best (step 225)", f"{V6}/cpu-dev-500/v6-swap10-gamma1e3-seed42.json"),
                ("500 steps, last", f"{V6}/cpu-dev-500/last-checkpoint/v6-swap10-gamma1e3-seed42.json"),
                ("1,000 steps, best (step 500)", f"{V6}/cpu-dev-1000/v6-swap10-gamma1e3-seed42.json"),
                ("1,000 steps, last", f"{V6}/cpu-dev-1000/last-checkpoint/v6-swap10-gamma1e3-seed42.json"),
            ],
            NO_CONT,
            head="(γ 1e-3, seed 42)",
        ),
        "seeds": dev_table(
            [
                *[(f"100 steps, seed {seed}", path) for seed, path in zip((42, 43, 44), V6_100, strict=True)],
                ("100 steps, mean of 3", V6_100),
                ("γ 5e-4, 100 steps, seed 43", f"{V6}/cpu-dev-100/v6-swap10-gamma5e4-last-seed43.json"),
                ("γ 5e-4, 100 steps, seed 44", f"{V6}/cpu-dev-100/v6-swap10-gamma5e4-last-seed44.json"),
                *[(f"500 steps, seed {seed}", path) for seed, path in zip((42, 43, 44), V6_500, strict=True)],
                ("500 steps, mean of 3", V6_500),
            ],
            head="(`v6-swap10-gamma1e3-last`, last checkpoint)",
        ),
        "choice": dev_table(
            [
                ("v5, 100 steps (seed 43)", f"{V5}/cpu-dev-100/st-debias-seed43.json"),
                ("v6, 100 steps (mean of 3)", V6_100),
                (
                    "v5, 500 steps (last checkpoint)",
                    f"{V6}/cpu-dev-500/last-checkpoint/v5-nm20-lam2e3-seed42.json",
                ),
                ("v6, 500 steps", V6_500[0]),
                ("v5, 1,000 steps (GPU, best checkpoint)", f"{V5}/dev-1000/v5-nm20-lam2e3-seed42.json"),
                ("v6, 1,000 steps", f"{V6}/cpu-dev-1000/last-checkpoint/v6-swap10-gamma1e3-seed42.json"),
            ],
            NO_CONT,
        ),
    }


def main(argv: list[str] | None = None) -> int:
    return run(README, tables, argv, __doc__)


if __name__ == "__main__":
    raise SystemExit(main())
