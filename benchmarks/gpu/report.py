"""The GPU study's tables and plot, from its result files (``results/step_time.json``, ``results/memory.json``,
``results/epoch/*.json``): each loss's step time against MultipleNegativesRankingLoss on the same columns, each
Cached loss's peak memory from batch 512 up, and the one-epoch runs. Written into the README (``--check``: exit 1
when it is out of date) and to ``results/gpu.png`` and ``results/epoch.png``.

    python benchmarks/gpu/report.py
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.harness import tables as generated

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
README = HERE / "README.md"
STEP_TARGET = 1.15  # an in-batch loss's step time at batch 512, ÷ MNRL's on the same columns
MEMORY_TARGET = 1.2  # a Cached loss's peak memory at its largest batch, ÷ at its smallest


def _load(name: str) -> dict[str, Any] | None:
    path = RESULTS / name
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def _device(result: dict[str, Any]) -> str:
    return (f"{result['device_name']} ({result['memory_gib']} GiB), torch {result['torch']}, CUDA {result['cuda']}, "
            f"commit {result['provenance']['commit'][:7]}")


def _same_columns(rows: list[dict[str, Any]], precision: str, batch: int) -> dict[int, float]:
    """MNRL's median step time per number of encoded columns, at one precision and batch."""
    return {row["columns"]: row["median_step_s"] for row in rows
            if row["case"].startswith("MultipleNegativesRankingLoss") and row["precision"] == precision
            and row["batch_size"] == batch and isinstance(row["median_step_s"], float)}


def _default_embedded_columns(loss: str, columns: int) -> int:
    """For result files written before rows recorded it: the columns a loss embeds with its default arguments."""
    from benchmarks.gpu.run_gpu import embedded_columns
    from st_debias.recipes.losses import LOSSES

    return embedded_columns(LOSSES[loss](None), columns)


def step_table(result: dict[str, Any]) -> list[str]:
    rows = result["rows"]
    batches = sorted({row["batch_size"] for row in rows})
    head = " | ".join(f"{precision} {batch}" for precision in result["precisions"] for batch in batches)
    lines = [f"Median step (forward, backward, AdamW) in ms, and ÷ MNRL on the same columns; {_device(result)}; "
             f"{result['tokens']} tokens, {result['full_length_share']:.0%} of rows full length.", "",
             f"| loss | columns | {head} |", "|---|---:|" + "---:|" * (len(result["precisions"]) * len(batches))]
    for case in dict.fromkeys(row["case"] for row in rows):
        cells = []
        columns = None
        for precision in result["precisions"]:
            for batch in batches:
                row = next(r for r in rows if r["case"] == case and r["precision"] == precision
                           and r["batch_size"] == batch)
                columns = row["columns"]
                if not isinstance(row["median_step_s"], float):
                    cells.append(str(row["median_step_s"]))
                elif case.startswith("MultipleNegativesRankingLoss"):
                    cells.append(f"{row['median_step_s'] * 1e3:.1f}")
                elif row["ratio"] is None:  # MNRL ran out of memory, this loss did not
                    cells.append(f"{row['median_step_s'] * 1e3:.1f} (MNRL: oom)")
                else:
                    mark = " **✗**" if batch == 512 and row["ratio"] > STEP_TARGET else ""
                    cells.append(f"{row['median_step_s'] * 1e3:.1f} ({row['ratio']:.2f}×){mark}")
        lines.append(f"| {case} | {columns} | {' | '.join(cells)} |")
    return lines


def encoded_columns_table(result: dict[str, Any]) -> list[str]:
    """Losses that embed more columns than their inputs (a second dropout view) against MNRL on as many columns."""
    lines = ["| loss | inputs → embedded columns | precision | batch | ÷ MNRL on the inputs | ÷ MNRL on as many embedded columns |",
             "|---|---|---|---:|---:|---:|"]
    for row in result["rows"]:
        inputs = row["columns"]
        embedded = row.get("embedded_columns") or _default_embedded_columns(row["loss"], inputs)
        if row["case"].startswith("MultipleNegativesRankingLoss") or embedded == inputs:
            continue
        baseline = _same_columns(result["rows"], row["precision"], row["batch_size"]).get(embedded)
        if baseline is None or not isinstance(row["median_step_s"], float):
            continue
        ratio = "–" if row["ratio"] is None else f"{row['ratio']:.2f}"
        lines.append(f"| {row['case']} | {inputs} → {embedded} | {row['precision']} | {row['batch_size']} | "
                     f"{ratio} | {row['median_step_s'] / baseline:.2f} |")
    return lines


def memory_table(result: dict[str, Any]) -> list[str]:
    rows = result["rows"]
    batches = sorted({row["batch_size"] for row in rows})
    lines = [f"Peak allocated MiB (`torch.cuda.max_memory_allocated`, {result.get('precision', 'fp32')}, mini-batch "
             f"{rows[0]['mini_batch_size']} for the Cached losses); {_device(result)}.", "",
             f"| loss | {' | '.join(str(batch) for batch in batches)} | largest ÷ smallest |",
             "|---|" + "---:|" * (len(batches) + 1)]  # growth: Cached losses only
    for loss in dict.fromkeys(row["loss"] for row in rows):
        peaks = {row["batch_size"]: row["peak_mib"] for row in rows if row["loss"] == loss}
        measured = [peaks[batch] for batch in batches if isinstance(peaks.get(batch), float)]
        cached = loss.startswith("Cached")
        growth = measured[-1] / measured[0] if cached and len(measured) > 1 else None
        mark = " **✗**" if cached and growth and growth > MEMORY_TARGET else ""
        cells = [f"{peaks[batch]:.0f}" if isinstance(peaks.get(batch), float) else str(peaks.get(batch, "–"))
                 for batch in batches]
        lines.append(f"| {loss} | {' | '.join(cells)} | {f'{growth:.2f}×{mark}' if growth else '–'} |")
    return lines


def cached_step_table(result: dict[str, Any]) -> list[str]:
    """Each Cached loss's mean step time in the memory stage, ÷ its uncached form's at the same batch."""
    rows = {(row["loss"], row["batch_size"]): row for row in result["rows"]}
    batches = sorted({batch for _, batch in rows})
    lines = [f"| Cached loss: step ÷ uncached | {' | '.join(str(batch) for batch in batches)} |",
             "|---|" + "---:|" * len(batches)]
    for loss in dict.fromkeys(name for name, _ in rows if name.startswith("Cached")):
        cells = []
        for batch in batches:
            cached, plain = rows.get((loss, batch), {}), rows.get((loss.removeprefix("Cached"), batch), {})
            both = isinstance(cached.get("mean_step_s"), float) and isinstance(plain.get("mean_step_s"), float)
            cells.append(f"{cached['mean_step_s'] / plain['mean_step_s']:.2f}" if both else "–")
        lines.append(f"| {loss} | {' | '.join(cells)} |")
    return lines


EPOCH_COLUMNS = (  # (header, metric of compare.py's score_metrics/bias_metrics, +1 higher is better / -1 lower)
    ("STS-7", "STS-7 avg", 1), ("SICK-R", "SICK-R", 1), ("STS-B Cont", "STS-B Cont", 1), ("STS-B Oppn", "STS-B Oppn", 1),
    ("Oppn STS13", "STS13 Oppn", 1), ("Oppn STS14", "STS14 Oppn", 1), ("Oppn STS15", "STS15 Oppn", 1),
    ("Oppn STS16", "STS16 Oppn", 1), ("CANNOT ↓", "CANNOT neg. cosine", -1), ("word order ↓", "word-order cosine", -1),
    ("(i) ↑", "neg. meaning (i) ↑", 1), ("(ii) ↑", "neg. meaning (ii) ↑", 1),
    ("(iii) ↓", "neg. meaning (iii) polarity cluster ↓", -1),
)


def epoch_metrics(result: dict[str, Any]) -> dict[str, float | None]:
    """Every axis of one evaluation (a run's ``before`` or ``after``), as the comparison study names them."""
    from benchmarks.compare.compare import bias_metrics, score_metrics

    return {**score_metrics({"after": result}), **bias_metrics({"after": result})}


def epoch_table() -> list[str]:
    """The start model and each one-epoch run on every measured axis (bold: worse than the start model), with the
    checkpoint kept and its STS-B dev score."""
    files = sorted((RESULTS / "epoch").glob("*.json")) if (RESULTS / "epoch").is_dir() else []
    if not files:
        return ["Not run yet."]
    runs = [json.loads(file.read_text(encoding="utf-8")) for file in files]

    if len({run["before"]["fingerprint"] for run in runs}) > 1:
        raise ValueError("the epoch runs' start models differ (before.fingerprint): one start row cannot stand for them")
    start = epoch_metrics(runs[0]["before"])
    header = ["run", "steps", "train s", "kept (STS-B dev)", *(title for title, _, _ in EPOCH_COLUMNS)]
    lines = ["| " + " | ".join(header) + " |", "|---|" + "---:|" * (len(header) - 1)]

    def cells(values: dict[str, float | None], compare: bool) -> list[str]:
        out = []
        for _, key, sign in EPOCH_COLUMNS:
            value = values.get(key)
            text = "–" if value is None else (f"{value:.3f}" if abs(value) < 1.5 else f"{value:.2f}")
            worse = compare and value is not None and start.get(key) is not None and sign * (value - start[key]) < 0
            out.append(f"**{text}**" if worse else text)
        return out

    score = runs[0]["selection"]["start_score"] * 100
    lines.append(f"| start ({runs[0]['before']['model'].removesuffix(' (start)')}) | – | – | {score:.2f} | "
                 + " | ".join(cells(start, False)) + " |")
    for file, run in zip(files, runs, strict=True):
        kept = run["selection"]["kept"]
        scores = {entry.get("step"): entry["eval_sts-dev_spearman_cosine"] * 100 for entry in run["log_history"]
                  if "eval_sts-dev_spearman_cosine" in entry}
        if kept == "start":
            kept_cell = f"start ({score:.2f})"
        else:
            step = int(kept.rsplit("-", 1)[-1])
            kept_cell = f"step {step} ({scores[step]:.2f})" if step in scores else f"step {step}"
        train = next((entry["train_runtime"] for entry in run["log_history"] if "train_runtime" in entry), None)
        lines.append(f"| {file.stem} | {run['budget']['steps']:,} | {'–' if train is None else f'{train:.0f}'} | {kept_cell} | "
                     + " | ".join(cells(epoch_metrics(run["after"]), True)) + " |")
    return lines


def tables() -> dict[str, list[str]]:
    def table(build: Callable[[dict[str, Any]], list[str]], name: str) -> list[str]:
        result = _load(name)
        return build(result) if result is not None else ["Not run yet."]

    return {"step_time": table(step_table, "step_time.json"), "embedded_columns": table(encoded_columns_table, "step_time.json"),
            "memory": table(memory_table, "memory.json"), "cached_step": table(cached_step_table, "memory.json"),
            "epoch": epoch_table()}


def plot(path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps, memory = _load("step_time.json"), _load("memory.json")
    if steps is None or memory is None:
        return
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 4.4))
    cases = [case for case in dict.fromkeys(row["case"] for row in steps["rows"])
             if not case.startswith("MultipleNegativesRankingLoss")]
    settings = [(precision, batch) for precision in steps["precisions"]
                for batch in sorted({row["batch_size"] for row in steps["rows"]})]
    width = 0.8 / len(cases)
    for index, case in enumerate(cases):
        ratios = [next(row["ratio"] or 0.0 for row in steps["rows"] if row["case"] == case and row["precision"] == precision
                       and row["batch_size"] == batch) for precision, batch in settings]
        left.bar([x + index * width for x in range(len(settings))], ratios, width, label=case)
    left.axhline(1.0, color="black", linewidth=0.8)
    left.axhline(STEP_TARGET, color="#c44e52", linestyle="--", linewidth=0.8, label=f"target at 512: {STEP_TARGET}×")
    left.set_xticks([x + 0.4 - width / 2 for x in range(len(settings))],
                    [f"{precision}\n{batch}" for precision, batch in settings], fontsize=8)
    left.set_ylim(0.8, max(row["ratio"] or 1 for row in steps["rows"]) + 0.15)
    left.set_ylabel("step time ÷ MNRL on the same columns")
    left.set_title("Step time against MultipleNegativesRankingLoss", fontsize=9)
    left.legend(fontsize=7, ncol=2, loc="upper left")
    colours = {}
    for loss in dict.fromkeys(row["loss"] for row in memory["rows"]):
        points = [(row["batch_size"], row["peak_mib"]) for row in memory["rows"]
                  if row["loss"] == loss and isinstance(row["peak_mib"], float)]
        colour = colours.setdefault(loss.removeprefix("Cached"), f"C{len(colours)}")
        style = "-o" if loss.startswith("Cached") else ":x"
        right.plot(*zip(*points, strict=True), style, color=colour, label=loss, markersize=4)
    right.set_xscale("log", base=2)
    right.set_yscale("log")
    right.set_xlabel("batch size")
    right.set_ylabel("peak allocated MiB")
    right.set_title("Peak memory: Cached (solid) and uncached (dotted)", fontsize=9)
    right.legend(fontsize=6, loc="center left", bbox_to_anchor=(1.02, 0.5))
    fig.suptitle(f"all-MiniLM-L6-v2 on {steps['device_name']}, {steps['tokens']} tokens", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_epoch(path: Path) -> None:
    """Each one-epoch run's change from the start model on every axis of the epoch table, signed so that up is
    better: Spearman points on the left, the probes' cosines and shares on the right."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    files = sorted((RESULTS / "epoch").glob("*.json")) if (RESULTS / "epoch").is_dir() else []
    if not files:
        return
    runs = {file.stem: json.loads(file.read_text(encoding="utf-8")) for file in files}
    start = epoch_metrics(next(iter(runs.values()))["before"])
    panels = (EPOCH_COLUMNS[:8], EPOCH_COLUMNS[8:])
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.4), gridspec_kw={"width_ratios": [8, 5]})
    width = 0.8 / len(runs)
    for axis, columns, unit in zip(axes, panels, ("Spearman ×100", "cosine or share"), strict=True):
        for index, (name, run) in enumerate(runs.items()):
            values = epoch_metrics(run["after"])
            changes = [0.0 if values.get(key) is None or start.get(key) is None else sign * (values[key] - start[key])
                       for _, key, sign in columns]  # an axis not measured draws no bar
            axis.bar([x + index * width for x in range(len(columns))], changes, width, label=name, color=f"C{index}")
        axis.axhline(0.0, color="black", linewidth=0.8)
        axis.set_xticks([x + width * (len(runs) - 1) / 2 for x in range(len(columns))],
                        [title for title, _, _ in columns], fontsize=8, rotation=30, ha="right")
        axis.set_ylabel(f"change ({unit}), up = better", fontsize=8)
    axes[0].set_title("STS and the Oppn splits (test sets)", fontsize=9)
    axes[1].set_title("Bias probes (sign flipped where lower is better)", fontsize=9)
    axes[0].legend(fontsize=8)
    fig.suptitle("One epoch from all-MiniLM-L6-v2 (3,125 steps of 64, seed 42): change from the start model", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    def plots() -> None:
        plot(RESULTS / "gpu.png")
        plot_epoch(RESULTS / "epoch.png")

    return generated.run(README, tables, argv, __doc__, plot=plots)


if __name__ == "__main__":
    raise SystemExit(main())
