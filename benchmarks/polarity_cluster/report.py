"""The polarity-cluster study's tables, from its result files (``select_dev.py``'s, paths relative to
``benchmarks/``), written into the README between its table markers.

    python benchmarks/polarity_cluster/report.py            # rewrite the tables
    python benchmarks/polarity_cluster/report.py --check    # exit 1 if they are out of date
"""

from __future__ import annotations

from pathlib import Path

from benchmarks.harness.tables import WITHOUT_DIRECTION, dev_table, run

README = Path(__file__).resolve().parent / "README.md"
R = "polarity_cluster/results"
V6 = "budget/results/v6"
V6_100 = {
    42: f"{V6}/cpu-dev-100/v6-swap10-gamma1e3-last-seed42.json",
    43: f"{V6}/cpu-dev-100/last-checkpoint/v6-swap10-gamma1e3-seed43.json",
    44: f"{V6}/cpu-dev-100/v6-swap10-gamma1e3-last-seed44.json",
}
V6_500 = {
    42: f"{V6}/cpu-dev-500/last-checkpoint/v6-swap10-gamma1e3-seed42.json",
    43: f"{V6}/cpu-dev-500/v6-swap10-gamma1e3-last-seed43.json",
    44: f"{V6}/cpu-dev-500/v6-swap10-gamma1e3-last-seed44.json",
}


def _v(steps: int, name: str, seed: int, sub: str = "") -> str:
    return f"{R}/cpu-dev-{steps}/{sub}v6-swap10-gamma1e3-{name}-last-seed{seed}.json"


def tables() -> dict[str, list[str]]:
    return {
        "views": dev_table(
            [
                ("100 steps: version 6 (the anchor's view)", V6_100[43]),
                (
                    "100: the margin alone (`../family_ablation/`)",
                    "family_ablation/results/cpu-dev-100/v6-swap10-gamma1e3-margin-last-seed43.json",
                ),
                ("100: the negation column's view (`negviews`)", _v(100, "negviews", 43)),
                ("100: both views (`bothviews`)", _v(100, "bothviews", 43)),
                ("100: the negation view at half weight (`negviews05`)", _v(100, "negviews05", 43)),
                ("100: the same in the library's arguments", _v(100, "negviews05-library", 43)),
                ("100: a quarter weight (`negviews025`)", _v(100, "negviews025", 43)),
                ("100: deshared margin", _v(100, "deshared", 43)),
                ("100: `negviews05`, deshared margin", _v(100, "negviews05-deshared", 43)),
                ("100: cap over the negation column, 0.02 (`cap02`)", _v(100, "cap02", 43)),
                ("100: cap over the column, 0.1 (`cap10`)", _v(100, "cap10", 43)),
                ("100: cap over the negated rows (`negcap02`)", _v(100, "negcap02", 43)),
                ("100: the same, reference without dropout", _v(100, "negcap02-evalref", 43)),
                ("100: two-sided hold (`neghold05`)", _v(100, "neghold05", 43)),
                ("100: deshared margin + hold", _v(100, "deshared-neghold05", 43)),
            ],
            head="(seed 43, last checkpoint)",
        ),
        "views-500": dev_table(
            [
                ("500 steps: version 6", V6_500[42]),
                (
                    "500: the margin alone",
                    "family_ablation/results/cpu-dev-500/v6-swap10-gamma1e3-margin-last-seed42.json",
                ),
                ("500: `negviews`", _v(500, "negviews", 42)),
                ("500: `negviews05`", _v(500, "negviews05", 42)),
                ("500: `negviews05`, deshared margin", _v(500, "negviews05-deshared", 42)),
                (
                    "500: the view over the first 150 steps only (last checkpoint)",
                    _v(500, "negviews05-deshared-early150", 42, "last-checkpoint/"),
                ),
                ("500: the view fading to zero", _v(500, "negviews05-deshared-fade500", 42)),
                (
                    "1,000 steps: version 6",
                    f"{V6}/cpu-dev-1000/last-checkpoint/v6-swap10-gamma1e3-seed42.json",
                ),
                ("1,000: `negviews05`", _v(1000, "negviews05", 42)),
            ],
            head="(seed 42, last checkpoint)",
        ),
        "seeds": dev_table(
            [
                ("100 steps: version 6, mean of 3", list(V6_100.values())),
                ("100: `negviews05`, mean of 3", [_v(100, "negviews05", s) for s in (42, 43, 44)]),
                ("100: deshared margin, mean of 3", [_v(100, "deshared", s) for s in (42, 43, 44)]),
                (
                    "100: `negviews05`, deshared, mean of 3",
                    [_v(100, "negviews05-deshared", s) for s in (42, 43, 44)],
                ),
                ("500: version 6, mean of 3", list(V6_500.values())),
                ("500: `negviews05`, mean of 3", [_v(500, "negviews05", s) for s in (42, 43, 44)]),
                *[(f"500: `negviews05`, seed {s}", _v(500, "negviews05", s)) for s in (42, 43, 44)],
                ("500: deshared margin, mean of 3", [_v(500, "deshared", s) for s in (42, 43, 44)]),
                (
                    "500: `negviews05`, deshared, mean of 2",
                    [_v(500, "negviews05-deshared", s) for s in (42, 43)],
                ),
            ],
            head="(dev, last checkpoint)",
        ),
        "without-direction": dev_table(
            [
                *[
                    (f"{steps}: deshared margin, seed {s}", _v(steps, "deshared", s))
                    for steps in (100, 500)
                    for s in (42, 43, 44)
                ],
                *[
                    (f"100: `negviews05`, deshared, seed {s}", _v(100, "negviews05-deshared", s))
                    for s in (42, 43, 44)
                ],
            ],
            WITHOUT_DIRECTION,
            start="negation_teacher/results/dev-100/start.json",
            head="(dev, last checkpoint)",
        ),
    }


def main(argv: list[str] | None = None) -> int:
    return run(README, tables, argv, __doc__)


if __name__ == "__main__":
    raise SystemExit(main())
