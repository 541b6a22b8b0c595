"""The negation-meaning probe at every checkpoint of a run: (i), (ii), (iii), word order and STS-B dev against the
step, with the learning rate, from ``select_dev.py --probe-every-eval`` result files of one folder.

    python benchmarks/negation_meaning/plot_trace.py benchmarks/recipe_v6/results/cpu-dev-500-trace

Writes ``trace.png``, ``trace.md`` (per run: every checkpoint's figures, then where (i) is lowest and where it
first falls below the start model) and the curves, stamped, as ``trace.json`` into that folder. The probe is
scored at the start model's own length, as the kept models are; STS-B dev at the training length (32 tokens).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from benchmarks.harness.provenance import write_stamped_json
from benchmarks.selection.plot_budget import curves
from st_debias.files import atomic_write_text

#: (log key, start.json key, label, higher is better) for each panel after STS-B dev.
PANELS = (
    ("probe/nm_over_affirmative", "nm_over_affirmative", "(i) cos(not A, B) > cos(not A, A)", True),
    ("probe/nm_over_negated_antonym", "nm_over_negated_antonym", "(ii) cos(not A, B) > cos(not A, not B)", True),
    ("probe/nm_polarity_cluster", "nm_polarity_cluster", "(iii) polarity cluster", False),
    ("probe/word_order_cos", "word_order_cos", "word-order cosine", False),
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", type=Path)
    args = parser.parse_args(argv)
    start_file = args.folder / "start.json"
    if not start_file.is_file():
        parser.error(f"{start_file}: no start model scores (select_dev.py writes them with the runs)")
    start = json.loads(start_file.read_text())["scores"]
    dev, dev_start = curves(args.folder)
    series = {key: curves(args.folder, metric=key, scale=1.0)[0] for key, *_ in PANELS}
    rates = curves(args.folder, metric="learning_rate", scale=1.0)[0]
    runs = [name for name in dev if series[PANELS[0][0]].get(name)]
    if not runs:
        raise SystemExit(f"no result file with probe/ figures in its log history in {args.folder}")
    import matplotlib
    from scipy.stats import spearmanr

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(2, 3, figsize=(15, 8), sharex=True)
    panels = [(dev, dev_start, "STS-B dev Spearman × 100 (32 tokens)", True)]
    panels += [(series[key], start[start_key], label, higher) for key, start_key, label, higher in PANELS]
    for axis, (data, start_value, label, higher) in zip(axes.flat, panels, strict=False):
        for k, name in enumerate(runs):
            steps, values = zip(*data[name], strict=True)
            axis.plot(steps, values, marker=".", color=f"C{k}", label=name)
        axis.axhline(start_value, color="black", linestyle="--", label=f"start model ({start_value:.3g})")
        axis.set_title(f"{label} {'↑' if higher else '↓'}", fontsize=10)
        axis.grid(alpha=0.3)
    rate_axis = axes.flat[5]
    for k, name in enumerate(runs):
        steps, values = zip(*rates[name], strict=True)
        rate_axis.plot(steps, values, color=f"C{k}", label=name)
    rate_axis.set_title("learning rate", fontsize=10)
    rate_axis.grid(alpha=0.3)
    for axis in axes[1]:
        axis.set_xlabel("training step (batch 64)")
    axes.flat[0].legend(fontsize=8, loc="lower right")
    figure.suptitle("The negation-meaning probe at every checkpoint (dev data; probe at the model's own length)")
    figure.tight_layout()
    figure.savefig(args.folder / "trace.png", dpi=100)

    lines = [f"Start model: STS-B dev {dev_start:.2f} (32 tokens); " + ", ".join(
        f"{label.split(' ')[0]} {start[start_key]:.4g}" for _, start_key, label, _ in PANELS
    ) + "\n"]
    for name in runs:
        by_step = {key: dict(series[key][name]) for key, *_ in PANELS}
        lines += [f"## {name}\n", "| step | STS-B dev | (i) | (ii) | (iii) | word order |", "|---:|---:|---:|---:|---:|---:|"]
        for step, score in dev[name]:
            lines.append(f"| {step} | {score:.2f} | " + " | ".join(
                f"{by_step[key].get(step, float('nan')):.4g}" for key, *_ in PANELS
            ) + " |")
        trace = series[PANELS[0][0]][name]
        low = min(trace, key=lambda point: point[1])
        below = [step for step, value in trace if value < start["nm_over_affirmative"]]
        late = [value for step, value in trace if step > trace[-1][0] // 2]
        cluster = [by_step[PANELS[2][0]][step] for step, _ in trace]
        rho = spearmanr([value for _, value in trace], cluster).statistic
        lines.append(
            f"\n(i): lowest {low[1]:.3f} at step {low[0]}, last {trace[-1][1]:.3f}; below the start model at "
            f"{len(below)} of {len(trace)} checkpoints{' (steps ' + ', '.join(map(str, below)) + ')' if below else ''}; "
            f"{min(late):.3f}–{max(late):.3f} over the second half of the run. Spearman correlation of (i) with (iii) "
            f"across the checkpoints: {rho:.2f}."
        )
        apart = [(value, step) for (step, value), excess in zip(trace, cluster, strict=True)
                 if excess <= start["nm_polarity_cluster"]]
        if apart:
            best = max(apart)
            lines.append(
                f"Checkpoints with (iii) at or below the start model: {len(apart)}; their highest (i) {best[0]:.3f} "
                f"(step {best[1]})."
            )
        lines.append("")
    atomic_write_text(args.folder / "trace.md", "\n".join(lines))
    write_stamped_json(
        args.folder / "trace.json",
        {"start": {"dev": dev_start, **start}, "dev": dev, "rates": rates, **{key: series[key] for key, *_ in PANELS}},
    )
    print((args.folder / "trace.md").read_text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
