"""Train every recipe from the same start model, budget and sentences; score each with the STS suite and bias probes.

Usage (CPU; results land in benchmarks/compare/results/):

    python benchmarks/compare/compare.py --recipes simcse focal dclr debcse osscse st-debias --steps 100 --seeds 42

Each (recipe, seed) writes ``<recipe>-seed<seed>.json`` (the after-training results entry, with the SentEval
transfer tasks of the trained and the start model unless ``--transfer none``, plus the training log) stamped
with the commit, package and builder versions (``benchmarks.harness.provenance``). An existing file is reused
only when its stamp matches the current code; otherwise the run is repeated (``--reuse-stale`` keeps it
anyway). ``--table`` only rebuilds ``compare.md`` and ``compare.png`` from the files
present; result files without a stamp, kept in ``archive/`` of the results folder, fill in the (recipe, seed)
pairs that have no stamped file.

A second start model, with an evaluation limited to STS-B test, its Cont/Oppn split and the probes (what a
2-core CPU affords for all-mpnet-base-v2; labelled so in the table):

    python benchmarks/compare/compare.py --model outputs/models/all-mpnet-base-v2 --recipes simcse st-debias \
        --steps 20 --eval-steps 20 --seeds 42 --sts-tasks STSBenchmark --results-dir benchmarks/mpnet/results \
        --work-dir outputs/mpnet
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

from benchmarks.harness.provenance import write_stamped_json
from benchmarks.harness.runner import ARCHIVE, result_files, train_and_record
from st_debias.evaluation.entries import CONT_OPPN_PARTS, cont_oppn_part, eligible_cont_oppn
from st_debias.files import atomic_write_text

RESULTS = Path(__file__).resolve().parent / "results"
TRANSFER = "transfer avg"
TRANSFER_SELECTION = "transfer dev/CV avg"
OWN_START = "own start"  # a run's own start-model figures, for the "(below start)" flags


def run_one(recipe_name: str, seed: int, args: argparse.Namespace) -> Path:
    from st_debias.recipes import load_recipe, override

    label = Path(recipe_name).stem
    recipe = override(
        load_recipe(recipe_name),
        steps=args.steps,
        batch_size=args.batch_size,
        max_seq_length=args.max_seq_length,
        eval_steps=args.eval_steps,
        seed=seed,
        sentences=args.sentences,
    )

    def entry(result, wall_s: float) -> dict:
        print(f"[compare] {label} seed {seed}: {wall_s} s\n{result.table}", flush=True)
        if args.transfer != "none":
            add_transfer(result.after, result.model_dir, args.transfer, args.quiet)
            add_transfer(result.before, args.model or "default", args.transfer, args.quiet)
        return {
            "recipe": label,
            "seed": seed,
            "budget": {"steps": args.steps, "batch_size": args.batch_size, "max_seq_length": args.max_seq_length},
            "sts_tasks": args.sts_tasks,
            "transfer": args.transfer,
            "wall_s": wall_s,
            "best_checkpoint": result.best_checkpoint,
            "start_as_candidate": args.start_as_candidate,
            "selection": result.selection,
            "before": result.before,
            "after": result.after,
            "data_report": result.data_report,
            "log_history": result.log_history,
        }

    target = RESULTS / f"{label}-seed{seed}.json"
    stored_tasks = json.loads(target.read_text()).get("sts_tasks") if target.is_file() else args.sts_tasks
    if stored_tasks != args.sts_tasks:
        raise SystemExit(
            f"[compare] error: {target} was evaluated on STS sets {stored_tasks or 'STS-7'}, "
            f"this run asks for {args.sts_tasks or 'STS-7'}; give another --results-dir"
        )
    return train_and_record(
        target,
        recipe,
        work_dir=Path(args.work_dir) / f"{label}-seed{seed}",
        entry=entry,
        model=args.model,
        quiet=args.quiet,
        reuse_stale=args.reuse_stale,
        resume=args.resume,
        tag="compare",
        sts_tasks=args.sts_tasks,
        start_as_candidate=args.start_as_candidate,
    )


def add_transfer(block: dict | None, model: str | Path, tasks: str, quiet: bool) -> None:
    """Add the SentEval transfer figures of ``model`` to a results entry (``tasks``: ``full`` or ``quick``)."""
    from st_debias.evaluation.transfer import QUICK_TRANSFER_TASKS, evaluate_transfer
    from st_debias.evaluation.transfer_data import TRANSFER_TASKS
    from st_debias.paths import load_model

    if block is None:
        return
    result = evaluate_transfer(
        load_model(model), QUICK_TRANSFER_TASKS if tasks == "quick" else TRANSFER_TASKS, show_progress_bar=not quiet
    )
    block.update(
        transfer=result["scores"], transfer_selection=result["selection"], transfer_details=result["details"]
    )
    block.setdefault("sources", {})["transfer"] = result["sources"]


def score_metrics(entry: dict) -> dict[str, float | None]:
    """The STS averages and sets, the STS-B Cont/Oppn split, the CANNOT cosine and the transfer averages of
    ``entry``'s trained model."""
    result = entry["after"]
    bias = result.get("bias", {})
    negation = bias.get("negation", {})
    sts = {task: score for task, score in result["sts"].items() if task != "avg"}
    if "evaluation" not in result:  # the full protocol
        average = {"STS-7 avg": result["sts"]["avg"]}
    else:  # a subset is never called the STS-7; one set needs no average
        average = {f"avg ({', '.join(sts)})": result["sts"]["avg"]} if len(sts) > 1 else {}
    return {
        **average,
        **sts,
        "STS-B Cont": cont_oppn_part(result, "STSBenchmark", "cont").get("spearman"),
        "STS-B Oppn": cont_oppn_part(result, "STSBenchmark", "oppn").get("spearman"),
        "CANNOT neg. cosine": negation.get("mean_cosine"),
        TRANSFER: result.get("transfer", {}).get("avg"),
        TRANSFER_SELECTION: result.get("transfer_selection", {}).get("avg"),
    }


def bias_metrics(entry: dict) -> dict[str, float | None]:
    """Cont/Oppn per dataset, the two Oppn sides of STS-B (mean cosine) and the word-order probe."""
    result = entry["after"]
    out: dict[str, float | None] = {}
    for dataset, split in eligible_cont_oppn(result).items():
        short = "STS-B" if dataset == "STSBenchmark" else dataset
        out[f"{short} Cont"] = split["cont"]["spearman"]
        out[f"{short} Oppn"] = split["oppn"]["spearman"]
    for side in ("high_overlap_low_score", "low_overlap_high_score"):
        title = CONT_OPPN_PARTS[side].removeprefix("Oppn: ")
        out[f"STS-B Oppn cosine: {title}"] = cont_oppn_part(result, "STSBenchmark", side).get("mean_cosine")
    out["word-order cosine"] = result.get("bias", {}).get("word_order", {}).get("mean_cosine")
    meaning = result.get("bias", {}).get("negation_meaning", {})
    out["neg. meaning (i) ↑"] = meaning.get("paraphrase_over_affirmative")
    out["neg. meaning (ii) ↑"] = meaning.get("paraphrase_over_negated_antonym")
    out["neg. meaning (iii) polarity cluster ↓"] = meaning.get("polarity_cluster")
    return out


def _transfer_metrics(entry: dict) -> dict[str, float | None]:
    """Each transfer task's test accuracy (MRPC also its F1), the average, and the average the classifiers were
    chosen on (dev or cross-validation)."""
    result = entry["after"]
    scores = result.get("transfer", {})
    out: dict[str, float | None] = {task: value for task, value in scores.items() if task != "avg"}
    if "MRPC" in out:
        out["MRPC F1"] = result.get("transfer_details", {}).get("MRPC", {}).get("f1")
    out[TRANSFER] = scores.get("avg")
    out[TRANSFER_SELECTION] = result.get("transfer_selection", {}).get("avg")
    return out


def _table(rows: dict[str, list[dict]], start: dict, start_name: str, order: list[str]) -> tuple[list[str], dict]:
    """Markdown rows (mean ± population std over seeds) and the summary behind them."""
    names = list(start)
    lines = [
        "| recipe | seeds | " + " | ".join(names) + " |",
        "|---|---:|" + "---:|" * len(names),
        f"| start ({start_name}) | – | " + " | ".join(_fmt(start[n], n) for n in names) + " |",
    ]
    summary: dict[str, dict] = {}
    for recipe in order:
        runs = rows[recipe]
        cells = []
        for name in names:
            values = [r[name] for r in runs if r.get(name) is not None]
            mean = statistics.fmean(values) if values else None
            spread = statistics.pstdev(values) if len(values) > 1 else None
            summary.setdefault(recipe, {})[name] = {"mean": mean, "std": spread, "n": len(values)}
            cell = _fmt(mean, name) + (f" ± {spread:.2f}" if spread is not None and not three_decimals(name) else "")
            if name in (TRANSFER, TRANSFER_SELECTION) and _below_start(runs, name, mean, start):
                cell += " (below start)"
            cells.append(cell)
        lines.append(f"| {recipe} | {len(runs)} | " + " | ".join(cells) + " |")
    return lines, summary


def _below_start(runs: list[dict], name: str, mean: float | None, start: dict) -> bool:
    """Whether a recipe's runs are under the start model on ``name``: on average against the start model as
    scored in each run itself (the same machine; CPUs differ in the last float bits, enough to move a
    transfer classifier), or against the table's start row where a run lacks its own figure."""
    if mean is None:
        return False
    own = [run[name] - run[OWN_START][name] for run in runs
           if run.get(name) is not None and run.get(OWN_START, {}).get(name) is not None]
    if own and len(own) == sum(run.get(name) is not None for run in runs):
        return round(statistics.fmean(own), 9) < 0  # an exact tie is not below, whatever the float error
    return start.get(name) is not None and round(mean - start[name], 9) < 0


def write_table() -> Path:
    stamped, archived = result_files(RESULTS)
    entries = [json.loads(p.read_text()) for p in stamped + archived]
    if not entries:
        raise SystemExit("no results yet")
    scopes = {json.dumps(entry["after"].get("evaluation", {}).get("sts_tasks")) for entry in entries}
    if len(scopes) > 1:  # one table, one evaluation: a limited run never sits beside STS-7 rows
        raise SystemExit(f"[compare] error: {RESULTS} mixes evaluations of different STS sets: {sorted(scopes)}")
    if {e.get("transfer") for e in entries} >= {"full", "quick"}:  # two different transfer averages
        raise SystemExit(f"[compare] error: {RESULTS} mixes full and quick transfer evaluations")
    by_recipe: dict[str, list[dict]] = {}
    by_recipe_bias: dict[str, list[dict]] = {}
    by_recipe_transfer: dict[str, list[dict]] = {}
    for entry in entries:
        own_start = _transfer_metrics({"after": entry["before"]})
        by_recipe.setdefault(entry["recipe"], []).append({**score_metrics(entry), OWN_START: own_start})
        by_recipe_bias.setdefault(entry["recipe"], []).append(bias_metrics(entry))
        by_recipe_transfer.setdefault(entry["recipe"], []).append({**_transfer_metrics(entry), OWN_START: own_start})
    # The start model's row: an evaluation that has every probe (older files predate the word-order probe).
    probed = [e["before"] for e in entries if "word_order" in e["before"].get("bias", {})] or [entries[0]["before"]]
    before = next((b for b in probed if "transfer" in b), probed[0])
    start = score_metrics({"after": before})
    start_bias = bias_metrics({"after": before})
    order = [r for r in ("simcse", "focal", "dclr", "debcse", "osscse", "osscse-dropout", "st-debias") if r in by_recipe]
    order += sorted(set(by_recipe) - set(order))
    start_name = Path(before["model"].removesuffix(" (start)")).name
    lines, summary = _table(by_recipe, start, start_name, order)
    bias_lines, bias_summary = _table(by_recipe_bias, start_bias, start_name, order)
    start_transfer = _transfer_metrics({"after": before})
    transfer_lines, transfer_summary = (
        _table(by_recipe_transfer, start_transfer, start_name, order) if "transfer" in before else ([], {})
    )
    budget = entries[0]["budget"]
    scope = before.get("evaluation")
    folder = RESULTS.relative_to(Path.cwd()) if RESULTS.is_relative_to(Path.cwd()) else RESULTS
    keeping_last = sorted({e["recipe"] for e in entries if (e.get("selection") or {}).get("keep") == "last"})
    kept = "best STS-B dev checkpoint" + (
        f" (the last one for {', '.join(keeping_last)}, whose recipe keeps it)" if keeping_last else ""
    )
    text = [
        "# Recipe comparison",
        "",
        f"Start model {start_name}; {budget['steps']} steps, batch {budget['batch_size']}, "
        f"{budget['max_seq_length']} tokens, the same Wikipedia sentences for every recipe; {kept}. "
        "Spearman ×100 (SentEval 'all' setting); Cont/Oppn = OssCSE splits of STS-B test; CANNOT = mean cosine of "
        "sentence vs human negation (lower = negations separated). Transfer = SentEval's seven tasks, logistic "
        "regression accuracy ×100 (test figures; 'dev/CV' = the dev or cross-validation accuracies the classifiers "
        "were chosen on); '(below start)' marks a recipe under the start model as scored in the same runs (the same "
        "machine: another CPU moves the start model's transfer figures by a few hundredths). Mean ± population "
        "std over seeds.",
        *(
            ["", f"**Limited evaluation:** STS sets {', '.join(scope['sts_tasks'])} only (not the STS-7), plus the "
             "bias probes."]
            if scope else []
        ),
        "",
        *lines,
        "",
        "## Bias probes per dataset",
        "",
        "Cont/Oppn Spearman ×100 on each eligible test set; mean cosine of the two Oppn sides of STS-B test "
        "(high overlap/low score: lower is better; low overlap/high score: higher is better); word-order cosine "
        "= a Wikipedia sentence vs its words shuffled (lower = order matters). Cosine columns show the mean "
        "only. '–' = not measured by that run.",
        "",
        *bias_lines,
        "",
        *(
            ["## Transfer tasks", "",
             "SentEval's seven tasks (logistic regression on the frozen embeddings): test accuracy ×100 per task, "
             "MRPC's F1, the average, and the average of the dev or cross-validation accuracies the classifiers "
             "were chosen on. '–' = not measured by that run.", "", *transfer_lines, ""]
            if transfer_lines else []
        ),
        f"Files: `{folder}/*.json`"
        + (f"; without a provenance stamp: `{folder}/{ARCHIVE}/*.json`." if archived else "."),
    ]
    atomic_write_text(RESULTS / "compare.md", "\n".join(text) + "\n")
    write_stamped_json(
        RESULTS / "summary.json",
        {
            "start": {**start, **start_bias, **(start_transfer if transfer_lines else {})},
            "recipes": {r: {**summary[r], **bias_summary[r], **transfer_summary.get(r, {})} for r in order},
        },
        indent=1,
    )
    own_start = {
        recipe: statistics.fmean(values)
        for recipe, runs in by_recipe_transfer.items()
        if (values := [run[OWN_START][TRANSFER] for run in runs if run[OWN_START].get(TRANSFER) is not None])
    }
    _plot(order, summary, start, own_start)
    return RESULTS / "compare.md"


def three_decimals(name: str) -> bool:
    """Cosines and the negation-meaning shares are shown to three decimals, without a ± (STS: two, with ±)."""
    return "cosine" in name or name.startswith("neg. meaning")


def _fmt(value, name: str) -> str:
    if value is None:
        return "–"
    return f"{value:.3f}" if three_decimals(name) else f"{value:.2f}"


def _plot(order: list[str], summary: dict, start: dict, own_start: dict[str, float] | None = None) -> None:
    """The headline panels; ``own_start``: each recipe's mean transfer average of the start model as scored in
    its own runs, marked over its bar where it differs from the start row (runs from different machines)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    headline = "STS-7 avg" if "STS-7 avg" in start else next(iter(start))
    panels = [(headline, f"{headline} (↑)"), ("STS-B Oppn", "STS-B Oppn split (↑)"), ("CANNOT neg. cosine", "negation cosine (↓)")]
    if any(summary[r].get(TRANSFER, {}).get("mean") is not None for r in order):
        panels.append((TRANSFER, "SentEval transfer avg (↑)"))
    figure, axes = plt.subplots(1, len(panels), figsize=(4.4 * len(panels), 4.4))
    for axis, (metric, title) in zip(axes, panels):
        means = [summary[r][metric]["mean"] or 0 for r in order]
        errors = [summary[r][metric]["std"] or 0 for r in order]
        colors = ["#dd8452" if recipe == "st-debias" else "#4c72b0" for recipe in order]  # the packaged recipe
        axis.bar(range(len(order)), means, yerr=errors, color=colors, capsize=3)
        axis.set_xticks(range(len(order)), order, rotation=40, ha="right", fontsize=8)
        if start.get(metric) is not None:
            axis.axhline(start[metric], color="#c44e52", linestyle="--", label="start")
        if (metric == TRANSFER and own_start and start.get(metric) is not None
                and any(abs(v - start[metric]) >= 0.005 for v in own_start.values())):
            marks = [(i, own_start[r]) for i, r in enumerate(order) if r in own_start]
            axis.scatter(*zip(*marks, strict=True), marker="_", s=500, color="black", zorder=3,
                         label="start, in the same runs")
        values = [m for m in means if m] + ([start[metric]] if start.get(metric) else [])
        if values:
            low, high = min(values), max(values)
            pad = max(0.5 if "cosine" not in metric else 0.01, 0.15 * (high - low))
            axis.set_ylim(low - pad, high + pad)
        axis.set_title(title)
        axis.legend(loc="best", fontsize=8)
    figure.tight_layout()
    figure.savefig(RESULTS / "compare.png", dpi=120)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--recipes", nargs="+", default=["simcse", "focal", "dclr", "debcse", "osscse", "st-debias"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[42])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--max-seq-length", type=int, default=32)
    parser.add_argument("--eval-steps", type=int, default=50)
    parser.add_argument("--sentences", type=int, default=None)
    parser.add_argument("--model", default=None)
    parser.add_argument(
        "--sts-tasks", nargs="+", default=None, metavar="SET",
        help="score only these STS test sets (e.g. STSBenchmark for a large model on a CPU); default the STS-7",
    )
    parser.add_argument(
        "--no-start-as-candidate", dest="start_as_candidate", action="store_false",
        help="select among the trained checkpoints only, even when the start model scores higher on STS-B dev "
        "(to compare with runs made before the start model was a candidate)",
    )
    parser.add_argument(
        "--transfer", choices=("full", "quick", "none"), default="full",
        help="SentEval transfer tasks for the trained and the start model: all seven (default), the quick subset "
        "(SST-2 trained on its dev split) or none",
    )
    parser.add_argument("--work-dir", default="outputs/compare")
    parser.add_argument(
        "--results-dir", default=None, help="where the JSON, table and plot go (default benchmarks/compare/results)"
    )
    parser.add_argument("--table", action="store_true", help="only rebuild compare.md / compare.png")
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("--reuse-stale", action="store_true", help="reuse result files whose provenance stamp differs")
    parser.add_argument(
        "--resume", action="store_true",
        help="continue a run cut short in --work-dir from its newest complete checkpoint (same code only)",
    )
    args = parser.parse_args(argv)
    if args.results_dir:
        global RESULTS
        RESULTS = Path(args.results_dir).resolve()
    if not args.table:
        for seed in args.seeds:
            for recipe in args.recipes:
                run_one(recipe, seed, args)
    print(write_table().read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
