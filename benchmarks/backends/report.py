"""The study's table and plot, from its result files (``results/*_backends*.json``): per model, tasks and backend,
the evaluation's wall time, its speed against torch's, the one-off conversion, and the reported figure furthest
from torch's. Written into the README (``--check``: exit 1 when it is out of date) and to ``results/backends.png``.

    python benchmarks/backends/report.py
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchmarks.harness import tables as generated

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
README = HERE / "README.md"


def runs() -> list[tuple[str, dict[str, Any]]]:
    """``(result file stem, its content)`` of every timing result, in name order."""
    return [(file.stem, json.loads(file.read_text(encoding="utf-8"))) for file in sorted(RESULTS.glob("*_backends*.json"))]


def furthest(run: dict[str, Any]) -> str:
    """The reported figure furthest from torch's, as ``difference (path: torch → backend)``; ``equal`` when none
    differs."""
    differences = run["largest_differences"]
    if not differences:
        return "equal"
    top = differences[0]
    return f"{top['difference']:.2g} (`{top['figure'].lstrip('/')}`: {top['torch']:.2f} → {top['backend']:.2f})"


def tables() -> dict[str, list[str]]:
    return {"timings": timing_table()}


def timing_table() -> list[str]:
    lines = [
        "| model | tasks | backend | wall s | torch's time ÷ this | conversion s | quiet | reported figure furthest from torch's |",
        "|---|---|---|---:|---:|---:|---|---|",
    ]
    for _, result in runs():
        torch_s = result["runs"].get("torch", {}).get("wall_s")
        for backend, run in result["runs"].items():
            if "skipped" in run and "wall_s" not in run:
                lines.append(f"| {result['model']} | {result['tasks']} | {backend} | skipped: {run['skipped']} | | | | |")
                continue
            speed = f"{torch_s / run['wall_s']:.2f}" if torch_s else "–"
            lines.append(
                f"| {result['model']} | {result['tasks']} | {backend} | {run['wall_s']:.1f} | "
                f"{speed} | {run['convert_s']:.1f} | {'yes' if run['machine']['quiet'] else 'no'} | {furthest(run)} |"
            )
    return lines


def plot(path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    results = runs()
    fig, axes = plt.subplots(1, len(results), figsize=(4.2 * len(results), 3.6), squeeze=False)
    for axis, (_, result) in zip(axes[0], results, strict=True):
        names = [b for b, r in result["runs"].items() if "wall_s" in r]
        walls = [result["runs"][b]["wall_s"] for b in names]
        bars = axis.bar(names, walls, color=["#777777" if b == "torch" else "#4c72b0" for b in names])
        axis.bar_label(bars, labels=[f"{w:.0f} s" for w in walls], fontsize=8)
        axis.set_title(f"{result['model']}: {result['tasks']}", fontsize=9)
        axis.set_ylabel("wall seconds (2-core CPU, alone)")
        axis.tick_params(axis="x", labelsize=8)
    fig.suptitle("Evaluation wall time by inference backend (int8: an approximation, not torch's figures)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    return generated.run(README, tables, argv, __doc__, plot=lambda: plot(RESULTS / "backends.png"))


if __name__ == "__main__":
    raise SystemExit(main())
