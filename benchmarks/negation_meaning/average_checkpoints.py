"""A run's checkpoints alone and averaged, and the negation-meaning probe without the negated sentences' common
direction, from the weights ``select_dev.py --keep-weights`` keeps (``<run>/weights/checkpoint-N``).

    python benchmarks/negation_meaning/average_checkpoints.py \
        outputs/v6/cpu-dev-1000-trace/v6-swap10-gamma1e3-last-seed42 \
        --average 100:1 225:1 500:1 500:4 500:8 1000:1 1000:2 1000:4 1000:8 1000:20 --every-checkpoint \
        --out benchmarks/negation_meaning/results/cpu-dev-1000-trace/average.md

``STEP:K`` is the uniform mean of the weights of the K kept checkpoints that end at step STEP (``STEP:1`` is that
checkpoint alone). Each is scored as ``select_dev.py`` scores a kept model (its ``dev_scores``, without transfer), at
the start model's own length, and the start model first.

The probe's (iii) says negated sentences share a direction whatever they say, and (i) moves with it from checkpoint
to checkpoint. "Without the direction" scores (i), (ii) and (iii) again after removing, from every probe sentence,
the mean of (not A − A) and (not B − B) over the other half of the items (the items split by parity, each half
scored with the other half's direction), then normalising: what the model says a negation means once it no longer
says "negated" (the library probe's ``without_negation_direction``). ``--every-checkpoint`` adds (i), (ii) and
(iii) with and without the direction for every kept checkpoint (a second table, and a plot next to the table:
``<out>.png``).
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from benchmarks.harness.provenance import write_table

AVERAGE = re.compile(r"^(\d+):(\d+)$")
COLUMNS = (  # (key, header, digits)
    ("dev", "STS-B dev", 2), ("dev_oppn", "Oppn", 2), ("neg_cos_heldout", "CANNOT ↓", 3),
    ("word_order_cos", "word order ↓", 3), ("mp_accuracy", "minimal pairs", 3), ("nm_over_affirmative", "(i)", 3),
    ("nm_over_negated_antonym", "(ii)", 3), ("nm_polarity_cluster", "(iii) ↓", 4), ("i_wo_dir", "(i) w/o dir.", 3),
    ("ii_wo_dir", "(ii) w/o dir.", 3), ("iii_wo_dir", "(iii) w/o dir. ↓", 4),
)


def kept_checkpoints(run: Path) -> dict[int, Path]:
    """Step → folder of every checkpoint kept in ``<run>/weights``."""
    folders = {
        int(path.name.split("-")[1]): path
        for path in (run / "weights").glob("checkpoint-*")
        if path.is_dir() and re.fullmatch(r"checkpoint-\d+", path.name)  # not an interrupted link (.partial)
    }
    return dict(sorted(folders.items()))


#: (key, header, digits) of the probe with and without the direction, for a table row per model or checkpoint.
DIRECTION_COLUMNS = (
    ("nm_over_affirmative", "(i)", 3), ("i_wo_dir", "(i) w/o dir.", 3), ("nm_over_negated_antonym", "(ii)", 3),
    ("ii_wo_dir", "(ii) w/o dir.", 3), ("nm_polarity_cluster", "(iii) ↓", 4), ("iii_wo_dir", "(iii) w/o dir. ↓", 4),
    ("negation_direction_norm", "direction norm", 4),
)


def direction_table(rows: list[dict], label: str, cell, numeric_label: bool = False) -> list[str]:
    """A Markdown table of :data:`DIRECTION_COLUMNS`, each row labelled ``cell(row)`` under ``label``."""
    lines = [
        f"| {label} | " + " | ".join(header for _, header, _ in DIRECTION_COLUMNS) + " |",
        f"|{'---:' if numeric_label else '---'}|" + "---:|" * len(DIRECTION_COLUMNS),
    ]
    return lines + [
        f"| {cell(row)} | " + " | ".join(f"{row[key]:.{digits}f}" for key, _, digits in DIRECTION_COLUMNS) + " |"
        for row in rows
    ]


def averaged(folders: list[Path], length: int):
    """The uniform mean of the checkpoints' weights, in one model at ``length`` tokens."""
    import torch
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(folders[-1]), device="cpu")
    model.max_seq_length = length
    if len(folders) == 1:
        return model
    total = {name: value.detach().to(torch.float64).clone() for name, value in model.state_dict().items()}
    for folder in folders[:-1]:
        for name, value in SentenceTransformer(str(folder), device="cpu").state_dict().items():
            total[name] += value.to(torch.float64)
    own = model.state_dict()
    model.load_state_dict({name: (value / len(folders)).to(own[name].dtype) for name, value in total.items()})
    return model


def plot_trace(trace: list[dict], path: Path, title: str) -> None:
    """(i), (ii) and (iii), with and without the common direction, against the step."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = [row["step"] for row in trace]
    figure, axes = plt.subplots(1, 3, figsize=(15, 4.5), sharex=True)
    for axis, (key, removed, label) in zip(axes, (
        ("nm_over_affirmative", "i_wo_dir", "(i) cos(not A, B) > cos(not A, A) ↑"),
        ("nm_over_negated_antonym", "ii_wo_dir", "(ii) cos(not A, B) > cos(not A, not B) ↑"),
        ("nm_polarity_cluster", "iii_wo_dir", "(iii) polarity cluster ↓"),
    ), strict=True):
        axis.plot(steps, [row[key] for row in trace], marker=".", label="as scored")
        axis.plot(steps, [row[removed] for row in trace], marker=".", label="negated sentences' common direction removed")
        for series, colour in ((key, "C0"), (removed, "C1")):
            axis.axhline(trace[0][series], color=colour, linestyle="--", linewidth=0.8)
        axis.set_title(label, fontsize=10)
        axis.set_xlabel("training step (step 0 and dashed: the start model)")
        axis.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    figure.suptitle(f"The negation-meaning probe at every kept checkpoint of {title} (dev data)")
    figure.tight_layout()
    figure.savefig(path, dpi=100)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run", type=Path, help="a select_dev.py run folder with weights/ (--keep-weights)")
    parser.add_argument("--average", nargs="+", default=[], metavar="STEP:K")
    parser.add_argument("--every-checkpoint", action="store_true", help="the figures without the direction, per step")
    parser.add_argument("--out", type=Path, required=True, help="the Markdown table (its JSON goes beside it)")
    args = parser.parse_args(argv)
    kept = kept_checkpoints(args.run)
    if not kept:
        parser.error(f"{args.run / 'weights'}: no kept checkpoint (train with select_dev.py --keep-weights)")
    steps = list(kept)
    windows = []
    for spec in args.average:
        match = AVERAGE.match(spec)
        if match is None:
            parser.error(f"--average {spec}: expected STEP:K, e.g. 1000:4")
        step, k = int(match[1]), int(match[2])
        if step not in kept or k < 1 or steps.index(step) + 1 < k:
            parser.error(f"--average {spec}: {args.run / 'weights'} has no {k} checkpoint(s) ending at step {step}")
        windows.append((spec, [kept[s] for s in steps[steps.index(step) + 1 - k : steps.index(step) + 1]]))
    if not args.out.parent.is_dir():
        parser.error(f"--out {args.out}: no folder {args.out.parent}")

    from benchmarks.selection import select_dev
    from benchmarks.selection.dev_probes import negation_meaning_scores
    from st_debias.evaluation import EmbeddingCache
    from st_debias.recipes.train import load_start_model

    select_dev.TRANSFER = "none"
    start = load_start_model(None)
    length = start.max_seq_length
    rows = []
    for label, model in [("start", lambda: start)] + [
        (spec, lambda folders=folders: averaged(folders, length)) for spec, folders in windows
    ]:
        print(f"[average] scoring {label}", flush=True)
        loaded = model()
        scores = select_dev.dev_scores(loaded)
        rows.append({"model": label, **scores})  # dev_scores holds the probe without the direction
    trace = []
    if args.every_checkpoint:
        for step, folder in [(0, None), *kept.items()]:
            cache = EmbeddingCache(start if folder is None else averaged([folder], length))
            trace.append({"step": step, **negation_meaning_scores(cache)})
            print(f"[average] step {step}: {trace[-1]}", flush=True)
        plot_trace(trace, args.out.with_suffix(".png"), args.run.name)

    lines = [
        f"Run `{args.run.name}`; `STEP:K` = the mean weights of the K kept checkpoints ending at STEP (checkpoints "
        f"every {steps[1] - steps[0] if len(steps) > 1 else steps[0]} steps); dev data only, at the start model's "
        f"length ({length} tokens). \"w/o dir.\": the probe with the negated sentences' common direction removed.",
        "",
        "| model | " + " | ".join(header for _, header, _ in COLUMNS) + " |",
        "|---|" + "---:|" * len(COLUMNS),
    ]
    lines += [f"| {row['model']} | " + " | ".join(f"{row[key]:.{digits}f}" for key, _, digits in COLUMNS) + " |"
              for row in rows]
    if trace:
        lines += ["", "Every kept checkpoint (step 0: the start model):", ""]
        lines += direction_table(trace, "step", lambda row: row["step"], numeric_label=True)
        from scipy.stats import spearmanr

        for key, label in (("nm_over_affirmative", "(i)"), ("i_wo_dir", "(i) w/o dir.")):
            rho = spearmanr([row[key] for row in trace[1:]], [row["nm_polarity_cluster"] for row in trace[1:]])
            lines.append(f"\nSpearman correlation of {label} with (iii) across the checkpoints: {rho.statistic:.2f}.")
    write_table(args.out, lines, {"run": args.run.name, "length": length, "rows": rows, "trace": trace})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
