"""The negation-meaning study's tables, from its result files (``select_dev.py``'s, paths relative to
``benchmarks/``), written into the README between its table markers. The item-by-item comparisons are the
result files of ``probe_cosines.py`` and ``probe_direction.py`` (``results/probe_*.md``).

    python benchmarks/negation_meaning/report.py            # rewrite the tables
    python benchmarks/negation_meaning/report.py --check    # exit 1 if they are out of date
"""

from __future__ import annotations

from pathlib import Path

from benchmarks.harness.tables import dev_table, run

README = Path(__file__).resolve().parent / "README.md"
R = "negation_meaning/results"
V6 = "budget/results/v6"


def _v(steps: int, name: str, seed: int) -> str:
    return f"{R}/cpu-dev-{steps}/v6-swap10-gamma1e3-{name}-last-seed{seed}.json"


def tables() -> dict[str, list[str]]:
    return {
        "rows": dev_table(
            [
                ("version 6, seed 42", f"{V6}/cpu-dev-100/v6-swap10-gamma1e3-last-seed42.json"),
                ("version 6, seed 43", f"{V6}/cpu-dev-100/last-checkpoint/v6-swap10-gamma1e3-seed43.json"),
                ("+ 10 % rows ranking B above A (`affneg10`), seed 43", _v(100, "affneg10", 43)),
                ("`negviews05` + 10 % of them, seed 43", _v(100, "negviews05-affneg10", 43)),
                (
                    "`negviews05`, them in place of half the meaning rows, seed 43",
                    _v(100, "negviews05-nm10-affneg10", 43),
                ),
                (
                    "`negviews05`, half the antonym pairs held out, seed 42",
                    _v(100, "negviews05-halfpairs", 42),
                ),
                ("the same, seed 43", _v(100, "negviews05-halfpairs", 43)),
                (
                    "`negviews05`, other-word pairs only (`lexical150k`), seed 42",
                    _v(100, "negviews05-lexical150k", 42),
                ),
                ("the meaning rows' margin ×5 (`meaning5`), seed 42", _v(100, "meaning5", 42)),
                ('×5, half their negatives "X is A", seed 42', _v(100, "meaning5-nm10-affneg10", 42)),
                ("×2.5, the same, seed 42", _v(100, "meaning25-nm10-affneg10", 42)),
            ],
            head="(100 steps, last checkpoint)",
        ),
        "repeats": dev_table(
            [
                (
                    "100 steps: version 6, mean of 3",
                    [
                        f"{V6}/cpu-dev-100/v6-swap10-gamma1e3-last-seed42.json",
                        f"{V6}/cpu-dev-100/last-checkpoint/v6-swap10-gamma1e3-seed43.json",
                        f"{V6}/cpu-dev-100/v6-swap10-gamma1e3-last-seed44.json",
                    ],
                ),
                (
                    "100: rows from 150,000 lines (`mix150k`), mean of 3",
                    [_v(100, "mix150k", s) for s in (42, 43, 44)],
                ),
                (
                    "100: `negviews05-mix150k`, mean of 3",
                    [_v(100, "negviews05-mix150k", s) for s in (42, 43, 44)],
                ),
                *[(f"500: `mix150k`, seed {s}", _v(500, "mix150k", s)) for s in (42, 43, 44)],
                *[
                    (f"500: `negviews05-mix150k`, seed {s}", _v(500, "negviews05-mix150k", s))
                    for s in (42, 43)
                ],
                ("500: `negviews05`, half the pairs held out, seed 42", _v(500, "negviews05-halfpairs", 42)),
                (
                    '500: `meaning5`, half their negatives "X is A", seed 42',
                    _v(500, "meaning5-nm10-affneg10", 42),
                ),
                ("1,000: `mix150k`, seed 42", _v(1000, "mix150k", 42)),
                ("1,000: `negviews05-mix150k`, seed 42", _v(1000, "negviews05-mix150k", 42)),
            ],
            head="(dev, last checkpoint)",
        ),
    }


def main(argv: list[str] | None = None) -> int:
    return run(README, tables, argv, __doc__)


if __name__ == "__main__":
    raise SystemExit(main())
