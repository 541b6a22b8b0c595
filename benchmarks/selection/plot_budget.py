"""Budget curves of the v5 study: STS-B dev (32 tokens, the trainer's selection metric) at every checkpoint of
each variant, against the start model's score, from the ``benchmarks/selection/select_dev.py`` result files of
one folder.

    python benchmarks/selection/plot_budget.py benchmarks/recipe_v5/results/dev-1000

``--also`` adds result files from other folders (a baseline run) to the plot and the table.

Writes ``budget.png``, ``budget.md`` (per variant: the lowest and the last checkpoint score, the first
step below the start model if any) and the curves, stamped, as ``budget.json`` into that folder.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from benchmarks.harness.provenance import write_stamped_json
from benchmarks.harness.runner import result_files
from st_debias.files import atomic_write_text

METRIC = "eval_sts-dev_spearman_cosine"


def curves(
    folder: Path, extra: list[Path] | None = None, metric: str = METRIC, scale: float = 100.0
) -> tuple[dict[str, list[tuple[int, float]]], float | None]:
    """Per variant, (step, ``scale`` × ``metric``) of every logged step that has it (by default STS-B dev × 100 at
    every checkpoint); and the start model's STS-B dev score at 32 tokens.

    ``extra`` result files (e.g. another study's baseline run) are read after the folder's own.
    """
    out: dict[str, list[tuple[int, float]]] = {}
    start = None
    for path in [*result_files(folder)[0], *(extra or [])]:
        entry = json.loads(path.read_text())
        points = [(e["step"], scale * e[metric]) for e in entry.get("log_history", []) if metric in e]
        if points:
            out[f"{entry['variant']} (seed {entry['seed']})"] = points
        score = (entry.get("selection") or {}).get("start_score")
        if score is not None:
            start = 100 * score
    return out, start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", type=Path)
    parser.add_argument(
        "--highlight", nargs="+", default=None, metavar="VARIANT",
        help="variants drawn in colour and named in the legend; the others are drawn thin and grey (default: all)",
    )
    parser.add_argument(
        "--also", nargs="+", type=Path, default=[], metavar="RESULT_JSON",
        help="result files from other folders to draw with this folder's (a baseline run, for instance)",
    )
    args = parser.parse_args(argv)
    missing = [str(path) for path in args.also if not path.is_file()]
    if missing:
        parser.error(f"--also: no such file: {', '.join(missing)}")
    data, start = curves(args.folder, args.also)
    if not data:
        raise SystemExit(f"no result file with a checkpoint history in {args.folder}")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(10, 5.5))
    shown = set(args.highlight) if args.highlight else {name.split(" (")[0] for name in data}
    others = False
    drawn = 0
    for name, points in data.items():
        steps, scores = zip(*points, strict=True)
        if name.split(" (")[0] in shown:
            # Past ten curves the colours repeat: the repeats are dashed, so no two curves look alike.
            style = {"color": f"C{drawn % 10}", "linestyle": ("-", "--", ":")[drawn // 10 % 3]}
            axis.plot(steps, scores, marker=".", linewidth=1.8, label=name, zorder=3, **style)
            drawn += 1
        else:
            axis.plot(steps, scores, color="0.75", linewidth=0.8, zorder=1, label=None if others else "other variants")
            others = True
    lines = [
        "| variant | checkpoints | best (step) | lowest | last | first step below the start |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    if start is not None:
        axis.axhline(start, color="black", linestyle="--", label=f"start model ({start:.2f})")
    for name, points in data.items():
        best = max(points, key=lambda p: p[1])
        below = next((step for step, score in points if start is not None and score < start), None)
        lines.append(
            f"| {name} | {len(points)} | {best[1]:.2f} ({best[0]}) | {min(s for _, s in points):.2f} | "
            f"{points[-1][1]:.2f} | {below if below is not None else 'never'} |"
        )
    axis.set_xlabel("training step (batch 64)")
    axis.set_ylabel("STS-B dev Spearman × 100 (32 tokens)")
    axis.set_title("Budget curves: STS-B dev at every checkpoint")
    axis.grid(alpha=0.3)
    axis.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    figure.tight_layout()
    figure.savefig(args.folder / "budget.png", dpi=110)
    header = f"Start model on STS-B dev at 32 tokens: {start:.2f}\n\n" if start is not None else ""
    atomic_write_text(args.folder / "budget.md", header + "\n".join(lines) + "\n")
    write_stamped_json(args.folder / "budget.json", {"start": start, "curves": data})
    print((args.folder / "budget.md").read_text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
