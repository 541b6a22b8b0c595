"""The family ablation's tables, from its result files (``select_dev.py``'s, paths relative to ``benchmarks/``),
written into the README between its table markers.

    python benchmarks/family_ablation/report.py            # rewrite the tables
    python benchmarks/family_ablation/report.py --check    # exit 1 if they are out of date
"""

from __future__ import annotations

from pathlib import Path

from benchmarks.harness.tables import DEV, dev_table, run

README = Path(__file__).resolve().parent / "README.md"
R100 = "family_ablation/results/cpu-dev-100"
R500 = "family_ablation/results/cpu-dev-500"
V5 = "budget/results/v5/cpu-dev-100/st-debias-seed43.json"
V6 = "budget/results/v6/cpu-dev-100/last-checkpoint/v6-swap10-gamma1e3-seed43.json"
V6_500 = "budget/results/v6/cpu-dev-500/last-checkpoint/v6-swap10-gamma1e3-seed42.json"
NO_CONT = tuple(c for c in DEV if c[1] != "dev_cont")


def tables() -> dict[str, list[str]]:
    return {
        "parts": dev_table(
            [
                *[
                    (f"`{name}` ({seed})", f"{R100}/{name}-seed{seed}.json")
                    for name, seed in (
                        ("simcse", 43),
                        ("osscse", 43),
                        ("debcse", 42),
                        ("focal", 42),
                        ("dclr", 42),
                    )
                ],
                ("v5 (seed 43)", V5),
                ("v5 with OssCSE's margins (`v6-ossmargin`)", f"{R100}/v6-ossmargin-seed43.json"),
                ("v5 without phrase swaps (`v6-noswap`)", f"{R100}/v6-noswap-seed43.json"),
                ("v5 without the recall regulariser, γ 0 (`v6-norecall`)", f"{R100}/v6-norecall-seed43.json"),
                ("γ 0, margin weight 1e-3", f"{R100}/v6-norecall-lam1e3-seed43.json"),
                ("γ 0, 10 % negation-meaning rows", f"{R100}/v6-norecall-nm10-seed43.json"),
                ("γ 0, no phrase swaps", f"{R100}/v6-norecall-noswap-seed43.json"),
                ("γ 0, phrase swaps 10 % (`v6-norecall-swap10`)", f"{R100}/v6-norecall-swap10-seed43.json"),
                (
                    "γ 1e-3, phrase swaps 10 % (`v6-swap10-gamma1e3`)",
                    "budget/results/v6/cpu-dev-100/v6-swap10-gamma1e3-seed43.json",
                ),
            ],
            NO_CONT,
            head="(100 steps, best checkpoint; seed)",
        ),
        "shares": dev_table(
            [
                ("version 6 (20 % negation-meaning rows)", V6),
                ("30 %", f"{R100}/v6-swap10-gamma1e3-nm30-last-seed43.json"),
                ("25 %", f"{R100}/v6-swap10-gamma1e3-nm25-last-seed43.json"),
                ("30 %, phrase swaps 20 %", f"{R100}/v6-nm30-swap20-last-seed43.json"),
                ("30 %, λ 3e-3", f"{R100}/v6-nm30-lam3e3-last-seed43.json"),
                (
                    "30 %, λ 3e-3, mean of seeds 42–44",
                    [f"{R100}/v6-nm30-lam3e3-last-seed{s}.json" for s in (42, 43, 44)],
                ),
                (
                    "InfoNCE on the rows' positives instead of a dropout view (`v6-paraphrase-last`)",
                    f"{R100}/v6-paraphrase-last-seed43.json",
                ),
                (
                    "the margin alone, no contrastive part (`v6-swap10-gamma1e3-margin-last`)",
                    f"{R100}/v6-swap10-gamma1e3-margin-last-seed43.json",
                ),
            ],
            head="(100 steps, seed 43, last checkpoint)",
        ),
        "antonym": dev_table(
            [
                ("version 6", "budget/results/v6/cpu-dev-100/v6-swap10-gamma1e3-last-seed42.json"),
                (
                    "without the antonym family (`noantonym`)",
                    f"{R100}/v6-swap10-gamma1e3-noantonym-last-seed42.json",
                ),
                (
                    "the antonym family asked at 0.3 (`antonym30`)",
                    f"{R100}/v6-swap10-gamma1e3-antonym30-last-seed42.json",
                ),
            ],
            head="(100 steps, seed 42, last checkpoint)",
        ),
        "at-500": dev_table(
            [
                ("version 6", V6_500),
                ("30 %, λ 3e-3", f"{R500}/v6-nm30-lam3e3-last-seed42.json"),
                ("the margin alone", f"{R500}/v6-swap10-gamma1e3-margin-last-seed42.json"),
            ],
            head="(500 steps, seed 42, last checkpoint)",
        ),
    }


def main(argv: list[str] | None = None) -> int:
    return run(README, tables, argv, __doc__)


if __name__ == "__main__":
    raise SystemExit(main())
