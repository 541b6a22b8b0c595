"""The table of the versions 2-4 study, from its result files (``select_dev.py``'s, paths relative to
``benchmarks/``), written into the README between its table markers.

    python benchmarks/minimal_pairs_margin/report.py            # rewrite the table
    python benchmarks/minimal_pairs_margin/report.py --check    # exit 1 if it is out of date
"""

from __future__ import annotations

from pathlib import Path

from benchmarks.harness.tables import DEV, OPPN_SIDES, dev_table, run

README = Path(__file__).resolve().parent / "README.md"
R = "minimal_pairs_margin/results"
COLUMNS = (*DEV[:3], *OPPN_SIDES[1:], *DEV[3:6])
VARIANTS = (
    ("`v3-mp-margin`: minimal pairs, builder version 1, α 0.05, β 0.2, λ 1", "v3-mp-margin"),
    ("`v4-mp-swap`: builder version 2, α 0.05, β 0.2", "v4-mp-swap"),
    ("`v4-mp-swap-m15`: α 0.15, β 0.4 (version 2's window)", "v4-mp-swap-m15"),
    ("`v4-mp-swap-m15-preserve`: + SimilarityPreservation 20", "v4-mp-swap-m15-preserve"),
    ("**`v4-mp-swap-m10`: α 0.1, β 0.3 → version 3 (and 4)**", "v4-mp-swap-m10"),
    ("`v4-mp-swap-m10-preserve`: + SimilarityPreservation 20", "v4-mp-swap-m10-preserve"),
    ("`v4-mp-swap-m10-preserve-nodrop`: the same without dropout", "v4-mp-swap-m10-preserve-nodrop"),
    ("`v4-mp-swap-m10-lr1e5`: lr 1e-5, 200 steps", "v4-mp-swap-m10-lr1e5"),
    (
        "`v4-mp-m10-order-negation`: negation and order families only (kept the start model)",
        "v4-mp-m10-order-negation",
    ),
    ("`v4-mp-swap-m10-lam3e2`: margin weight λ 3e-2", "v4-mp-swap-m10-lam3e2"),
    ("`v4-mp-swap-m10-lam3e3`: margin weight λ 3e-3", "v4-mp-swap-m10-lam3e3"),
)


def tables() -> dict[str, list[str]]:
    return {
        "variants": dev_table(
            [(label, f"{R}/{name}-seed42.json") for label, name in VARIANTS],
            COLUMNS,
            start=f"{R}/start.json",
            head="(seed 42, 100 steps, kept checkpoint)",
        )
    }


def main(argv: list[str] | None = None) -> int:
    return run(README, tables, argv, __doc__)


if __name__ == "__main__":
    raise SystemExit(main())
