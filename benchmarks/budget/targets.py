"""The `st-debias` recipe against its test-set targets, per seed and on average, from the runs of the 100-step
comparison (``benchmarks/compare/results/100-steps/``: the STS-7, the bias probes and the transfer tasks of
the trained model and of the start model scored in the same run).

    python benchmarks/budget/targets.py

writes ``results/targets-100.md`` and the same figures, stamped, as ``results/targets-100.json``. A target on the start model compares each seed with the start model of its
own run (two machines score the transfer tasks a few hundredths apart; everything else is the same there).
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from benchmarks.compare.compare import bias_metrics, score_metrics, three_decimals
from benchmarks.harness.provenance import write_stamped_json
from st_debias.files import atomic_write_text

HERE = Path(__file__).resolve().parent
COMPARE = HERE.parents[0] / "compare" / "results" / "100-steps"
#: The figures the targets name, as ``compare.py`` calls them (STS-7, Cont/Oppn per set, the probes, transfer).
FIGURES = (
    "STS-7 avg",
    *(f"{name} {part}" for name in ("STS13", "STS14", "STS15", "STS16", "STS-B") for part in ("Oppn", "Cont")),
    "CANNOT neg. cosine", "word-order cosine",
    "neg. meaning (i) ↑", "neg. meaning (ii) ↑", "neg. meaning (iii) polarity cluster ↓", "transfer avg",
)
#: Lower is better for these; the rest are higher-is-better.
LOWER_IS_BETTER = ("CANNOT neg. cosine", "word-order cosine", "neg. meaning (iii) polarity cluster ↓")
TARGETS = {
    "STS-7 avg": "≥ 80.0 and ≥ every other recipe's mean", "STS-B Oppn": "≥ start and ≥ 67.5",
    "CANNOT neg. cosine": "≤ 0.80", "word-order cosine": "≤ 0.85",
    "neg. meaning (iii) polarity cluster ↓": "≤ start",
}


def figures(evaluation: dict) -> dict[str, float]:
    """:data:`FIGURES` of one evaluation entry (a run's ``before`` or ``after``), read by ``compare.py``'s tables."""
    entry = {"after": evaluation}
    table = {**score_metrics(entry), **bias_metrics(entry)}
    return {name: table[name] for name in FIGURES}


def _target(name: str, value: float, start: float, others: list[float]) -> bool:
    """Whether ``value`` meets the issue's target for figure ``name``."""
    if name == "STS-7 avg":
        return value >= 80.0 and all(value >= other for other in others)
    if name == "STS-B Oppn":
        return value >= max(start, 67.5)
    if name == "CANNOT neg. cosine":
        return value <= 0.80
    if name == "word-order cosine":
        return value <= 0.85
    return value <= start if name in LOWER_IS_BETTER else value >= start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--recipe", default="st-debias")
    parser.add_argument("--out", default=str(HERE / "results" / "targets-100.md"))
    args = parser.parse_args(argv)
    entries = [json.loads(path.read_text()) for path in sorted(COMPARE.glob("*-seed*.json"))]
    runs = [entry for entry in entries if entry["recipe"] == args.recipe]
    if not runs:
        raise SystemExit(f"no {args.recipe} runs in {COMPARE}")
    others: dict[str, list[float]] = {}
    for entry in entries:
        if entry["recipe"] != args.recipe:
            others.setdefault(entry["recipe"], []).append(entry["after"]["sts"]["avg"])
    other_means = [statistics.fmean(values) for values in others.values()]
    seeds = [run["seed"] for run in runs]
    before = [figures(run["before"]) for run in runs]
    after = [figures(run["after"]) for run in runs]
    rows: list[dict] = []
    lines = [
        f"# `{args.recipe}` at 100 steps against its targets ({len(runs)} seeds)",
        "",
        f"From `benchmarks/compare/results/100-steps/{args.recipe}-seed*.json` (commits "
        + ", ".join(sorted({run["provenance"]["commit"][:7] for run in runs})) + "). 'start': the start model "
        "scored in the same run (the first seed's; each seed is judged against its own). Other recipes' STS-7 "
        "means: " + ", ".join(f"{name} {statistics.fmean(v):.2f}" for name, v in sorted(others.items())) + ".",
        "",
        "| figure | start | " + " | ".join(f"seed {seed}" for seed in seeds) + " | mean | target | met |",
        "|---|---:|" + "---:|" * (len(seeds) + 1) + "---|---|",
    ]
    for name in after[0]:
        decimals = 3 if three_decimals(name) else 2
        values = [figures_[name] for figures_ in after]
        mean = statistics.fmean(values)
        met_each = [_target(name, v, b[name], other_means) for v, b in zip(values, before, strict=True)]
        met_mean = _target(name, mean, statistics.fmean(b[name] for b in before), other_means)
        verdict = ("met" if met_mean else "**missed**") + ("" if all(met_each) == met_mean else
                                                           f" (seeds: {sum(met_each)} of {len(seeds)} met)")
        rows.append({"figure": name, "start": [b[name] for b in before], "seeds": dict(zip(seeds, values, strict=True)),
                     "mean": mean, "target": TARGETS.get(name, "≥ start"), "met": met_mean, "met_per_seed": met_each})
        lines.append(
            f"| {name} | {before[0][name]:.{decimals}f} | " + " | ".join(f"{v:.{decimals}f}" for v in values)
            + f" | {mean:.{decimals}f} | {TARGETS.get(name, '≥ start')} | {verdict} |"
        )
    atomic_write_text(Path(args.out), "\n".join(lines) + "\n")
    write_stamped_json(Path(args.out).with_suffix(".json"), {"recipe": args.recipe, "figures": rows})
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
