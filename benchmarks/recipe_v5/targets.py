"""The `st-debias` recipe against its test-set targets, per seed and on average, from the runs of the 100-step
comparison (``benchmarks/compare/results/100-steps/``: the STS-7, the bias probes and the transfer tasks of
the trained model and of the start model scored in the same run).

    python benchmarks/recipe_v5/targets.py

writes ``results/targets-100.md`` and the same figures, stamped, as ``results/targets-100.json``. A target on the start model compares each seed with the start model of its
own run (two machines score the transfer tasks a few hundredths apart; everything else is the same there).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[2]))  # the repository root
from benchmarks.harness.provenance import write_stamped_json  # noqa: E402
from st_debias.files import atomic_write_text  # noqa: E402

HERE = Path(__file__).resolve().parent
COMPARE = HERE.parents[0] / "compare" / "results" / "100-steps"
OPPN_SETS = ("STS13", "STS14", "STS15", "STS16", "STSBenchmark")


def figures(entry: dict) -> dict[str, float]:
    """The figures the targets name, from one evaluation entry (``before`` or ``after``)."""
    bias = entry["bias"]
    split = bias["cont_oppn"]
    meaning = bias["negation_meaning"]
    out = {"STS-7": entry["sts"]["avg"]}
    for name in OPPN_SETS:
        out[f"Oppn {name}"] = split[name]["oppn"]["spearman"]
        out[f"Cont {name}"] = split[name]["cont"]["spearman"]
    out |= {
        "CANNOT ↓": bias["negation"]["mean_cosine"],
        "word order ↓": bias["word_order"]["mean_cosine"],
        "(i) ↑": meaning["paraphrase_over_affirmative"],
        "(ii) ↑": meaning["paraphrase_over_negated_antonym"],
        "(iii) ↓": meaning["polarity_cluster"],
        "transfer avg": entry["transfer"]["avg"],
    }
    return out


def _target(name: str, value: float, start: float, others: list[float]) -> bool:
    """Whether ``value`` meets the issue's target for figure ``name``."""
    if name == "STS-7":
        return value >= 80.0 and all(value >= other for other in others)
    if name == "Oppn STSBenchmark":
        return value >= max(start, 67.5)
    if name == "CANNOT ↓":
        return value <= 0.80
    if name == "word order ↓":
        return value <= 0.85
    if name.endswith("↓"):
        return value <= start
    return value >= start


TARGETS = {
    "STS-7": "≥ 80.0 and ≥ every other recipe's mean", "Oppn STSBenchmark": "≥ start and ≥ 67.5",
    "CANNOT ↓": "≤ 0.80", "word order ↓": "≤ 0.85", "(iii) ↓": "≤ start",
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--recipe", default="st-debias")
    parser.add_argument("--out", default=str(HERE / "results" / "targets-100.md"))
    args = parser.parse_args(argv)
    runs = [json.loads(p.read_text()) for p in sorted(COMPARE.glob(f"{args.recipe}-seed*.json"))]
    if not runs:
        raise SystemExit(f"no {args.recipe} runs in {COMPARE}")
    others: dict[str, list[float]] = {}
    for path in COMPARE.glob("*-seed*.json"):
        entry = json.loads(path.read_text())
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
        decimals = 3 if name.endswith(("↑", "↓")) and not name.startswith(("Oppn", "Cont")) else 2
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
