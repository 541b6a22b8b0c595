"""Which rows the teacher's floor pushes, batch by batch, over the steps where STS-B dev dips.

Every teacher run of this study falls under the start model on STS-B dev at step 100 of 500, where version 6 on the
same rows and batches does not. This script rebuilds a recipe's training rows and the trainer's batches (the same
builder, mix, no-duplicates sampler and seed as ``select_dev.py``; ``../negation_fit/rows.py``), and scores the floor
of ``TeacherDistillMarginLoss`` (``distill: margin_floor``) on every row of the chosen steps with each given student
against the teacher: per row its group (``row_group``), whether its positive is its anchor (rows without a
paraphrase: the teacher's own cosine there is 1, so its margin is 1 − t(a, n)), the teacher's margin
t(a, p) − t(a, n), the student's s(a, p) − s(a, n) without dropout and with it (one seeded forward pass per column;
training embeds the columns in other passes, with the same dropout), and its weighted push
w · g · max(0, t-margin − s-margin)² / B with the dropout margin: the floor's value on the row as training sees it.
Each row's word cue (:func:`word_cue`) says which candidate is fewer word edits from the anchor (the word-level match
error rate of the minimal-pair builder's ``row_cues``, the overlap measure of STS-B dev's Cont/Oppn split): where the
negative is, the floor can also be met by ranking candidates with more word edits nearer, the reverse of the overlap
shortcut (``sts_shift.py``). The floor's push and pull forms (``margin_floor_push``/``_pull``) have the same value.

    python benchmarks/teacher_dip/floor_batches.py \
        benchmarks/negation_teacher/configs/v6-halfpairs-marginfloor-negedit03-other2-negviews05-lr15e6.yaml \
        start=sentence-transformers/all-MiniLM-L6-v2 step50=CHECKPOINT step100=CHECKPOINT \
        --out benchmarks/teacher_dip/results/floor_batches.md

Writes the Markdown table, its JSON and a plot of the push per step by group (``.png``) beside ``--out``.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from benchmarks.harness.trained import MODEL_HELP, labelled_models

WINDOW = 25  # steps per row of the table: the evaluation interval of the runs


def margin(columns: Sequence[Any]) -> Any:
    """cos(a, p) − cos(a, n) per row of (anchor, positive, negative) embeddings."""
    from sentence_transformers.util import pairwise_cos_sim

    return pairwise_cos_sim(columns[0], columns[1]) - pairwise_cos_sim(columns[0], columns[2])


def row_pushes(teacher_margin: Any, student_margin: Any, weights: Any, batch_rows: int, teacher_weight: float,
               hinge_cap: float | None = None) -> Any:
    """Each row's weighted push w · g · floor / B, the floor being the loss's own (``row_floor``)."""
    from benchmarks.negation_teacher.distill_margin import row_floor

    return teacher_weight * weights * row_floor(teacher_margin, student_margin, hinge_cap) / batch_rows


def decoded_and_teacher(loss: Any, texts: list[tuple[str, str, str]]) -> tuple[list[tuple[str, str, str]], Any]:
    """The rows as the student's tokens decode them (what the teacher reads in training) and the teacher's
    (anchor, positive, negative) embeddings of them."""
    decoded = [loss.decoded_texts(loss.model.tokenize(list(column))) for column in zip(*texts, strict=True)]
    flat = [text for column in decoded for text in column]
    for start in range(0, len(flat), 256):  # the loss embeds each call's new texts in one batch
        loss.teacher_embeddings(flat[start:start + 256])
    teacher = loss.teacher_embeddings(flat).float().cpu().chunk(3)
    return list(zip(*decoded, strict=True)), teacher


def student_embeddings(model: Any, texts: list[tuple[str, str, str]], dropout: bool = False, seed: int = 0) -> list[Any]:
    """The student's (anchor, positive, negative) embeddings at its ``max_seq_length``, on the CPU: without dropout,
    or with it (one pass per column, torch seeded with ``seed``; the model is left in eval mode)."""
    import torch
    from sentence_transformers.util import batch_to_device

    if not dropout:
        return [model.encode(list(column), convert_to_tensor=True, batch_size=256, show_progress_bar=False).cpu()
                for column in zip(*texts, strict=True)]
    torch.manual_seed(seed)
    model.train()
    try:
        with torch.no_grad():
            return [torch.cat([
                model(batch_to_device(dict(model.tokenize(list(column[start:start + 256]))), model.device))[
                    "sentence_embedding"].cpu()
                for start in range(0, len(column), 256)])
                for column in zip(*texts, strict=True)]
    finally:
        model.eval()


MARGINS = ("teacher_margin", "student_margin", "dropout_margin")
WORD_CUES = ("negative fewer word edits", "as many", "positive fewer word edits")


def word_cue(anchor: str, positive: str, negative: str) -> str:
    """Which candidate is fewer word edits from the anchor (:data:`WORD_CUES`; the builder's match error rates)."""
    from st_debias.data.minimal_pairs.builder import CUE_FIGURES, row_cues

    cues = dict(zip(CUE_FIGURES, row_cues(anchor, positive, negative), strict=True))
    to_positive, to_negative = cues["positive_mer"], cues["negative_mer"]
    return WORD_CUES[0] if to_negative < to_positive else WORD_CUES[2] if to_negative > to_positive else WORD_CUES[1]


def windows(records: list[dict[str, Any]], steps: range) -> Iterator[tuple[str, list[dict[str, Any]], int]]:
    """Each window of :data:`WINDOW` steps: its name ("51-75"), its records and its step count (at least 1)."""
    for start in range(steps.start, steps.stop, WINDOW):
        window = [r for r in records if start <= r["step"] < start + WINDOW]
        yield f"{start}-{min(start + WINDOW, steps.stop) - 1}", window, len({r["step"] for r in window}) or 1


def cue_summary(records: list[dict[str, Any]], steps: range) -> dict[str, Any]:
    """Per window of steps and word cue: rows per step and push per step."""
    return {name: {cue: {"rows_per_step": sum(r["cue"] == cue for r in window) / count,
                         "push_per_step": sum(r["push"] for r in window if r["cue"] == cue) / count}
                   for cue in WORD_CUES}
            for name, window, count in windows(records, steps)}


def summarise(records: list[dict[str, Any]], steps: range, groups: Sequence[str]) -> dict[str, Any]:
    """Per window of steps and per group (and identical / paraphrase positive): rows, rows pushed, push per step."""
    out: dict[str, Any] = {}
    for name, window, count in windows(records, steps):
        cells = {}
        for group in groups:
            for identical in (True, False):
                picked = [r for r in window if r["group"] == group and r["identical"] == identical]
                cells[f"{group}, {'identical' if identical else 'paraphrase'}"] = {
                    "rows": len(picked), "pushed": sum(r["push"] > 0 for r in picked),
                    "push_per_step": sum(r["push"] for r in picked) / count,
                    **{key: sum(r[key] for r in picked) / len(picked) if picked else None for key in MARGINS},
                }
        out[name] = cells
    return out


def floor_settings(config: Path) -> str | None:
    """Why ``config``'s loss has no floor to score (None when it has one over every row)."""
    from st_debias.recipes import load_recipe

    try:
        loss = load_recipe(config).loss
    except ValueError as error:
        return f"is not a recipe: {error}"
    params = loss.params
    if loss.name != "TeacherDistillMarginLoss" or not str(params.get("distill", "")).startswith("margin_floor"):
        return "trains no TeacherDistillMarginLoss with distill: margin_floor (or its push or pull form)"
    if params.get("distill_rows", "all") != "all" or params.get("embedding_weight", 0):
        return "restricts the floor's rows or adds the embedding term, which this script does not score"
    return None


def main(argv: list[str] | None = None) -> int:
    """Check the arguments (exit 2, naming the bad one, before any work), then :func:`report`."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("config", type=Path, help="the recipe the runs trained (a configs/*.yaml)")
    parser.add_argument("models", nargs="+", help=f"{MODEL_HELP}: the students to score")
    parser.add_argument("--steps", type=int, default=500, help="the runs' optimiser steps (their schedule)")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--first", type=int, default=51, help="first step scored (1-based)")
    parser.add_argument("--last", type=int, default=175, help="last step scored")
    parser.add_argument("--out", type=Path, required=True, help="the Markdown table (JSON and PNG beside it)")
    args = parser.parse_args(argv)
    if not args.config.is_file():
        parser.error(f"config: no file at {args.config}")
    floor = floor_settings(args.config)
    if floor is not None:
        parser.error(f"config: {args.config} {floor}")
    if not 1 <= args.first <= args.last <= args.steps:
        parser.error(f"--first/--last: need 1 ≤ first ≤ last ≤ --steps, got {args.first}, {args.last}, {args.steps}")

    report(args, labelled_models(parser, args.models))
    return 0


def report(args: argparse.Namespace, models: dict[str, str]) -> None:
    """Build the rows and batches, embed them with the teacher once and each student twice, and write the table,
    its JSON and the plot."""
    import torch

    from benchmarks.harness.provenance import write_table
    from benchmarks.negation_fit.rows import training_batches, training_rows
    from benchmarks.negation_teacher.distill_margin import ROW_GROUPS, TeacherDistillMarginLoss, row_group
    from st_debias.paths import load_model, portable_path
    from st_debias.recipes import load_recipe, override
    from st_debias.recipes.losses import resolve_params

    recipe = override(load_recipe(args.config), steps=args.steps, batch_size=64, max_seq_length=32, eval_steps=25,
                      seed=args.seed)
    print(f"[floor] building the rows of {args.config.name} and the trainer's batches…", flush=True)
    start = load_model(None)  # builds the rows and reads them as training's tokenizer does
    rows = training_rows(recipe, start)[0]
    batches = training_batches(rows, recipe.training.batch_size, args.seed, args.last)[args.first - 1:]
    texts = [(rows[i]["anchor"], rows[i]["positive"], rows[i]["negative"]) for batch in batches for i in batch]
    steps = [args.first + k for k, batch in enumerate(batches) for _ in batch]
    params = resolve_params(recipe.loss.params)
    group_weights = params.get("group_weights") or {}
    results = {}
    start.max_seq_length = recipe.training.max_seq_length
    print(f"[floor] the teacher embeds the {len(texts):,} rows of steps {args.first}–{args.last}…", flush=True)
    decoded, teacher = decoded_and_teacher(TeacherDistillMarginLoss(start, **params), texts)
    teacher_margin = margin(teacher)
    groups = [row_group(*row) for row in decoded]
    identical = [row[0] == row[1] for row in decoded]
    cues = [word_cue(*row) for row in decoded]
    weights = torch.tensor([group_weights.get(g, 1.0) for g in groups])
    for label, name in models.items():
        print(f"[floor] scoring them with {label}…", flush=True)
        model = load_model(name)
        model.max_seq_length = recipe.training.max_seq_length
        student, dropped = (margin(student_embeddings(model, texts, dropout=d, seed=args.seed)) for d in (False, True))
        pushes = row_pushes(teacher_margin, dropped, weights, recipe.training.batch_size,
                            float(params.get("teacher_weight", 1.0)), params.get("hinge_cap"))
        records = [{"step": s, "group": g, "identical": i, "cue": c, "push": p, "teacher_margin": t,
                    "student_margin": m, "dropout_margin": d}
                   for s, g, i, c, p, t, m, d in zip(steps, groups, identical, cues, pushes.tolist(),
                                                     teacher_margin.tolist(), student.tolist(), dropped.tolist(),
                                                     strict=True)]
        scored = range(args.first, args.last + 1)
        results[label] = {"windows": summarise(records, scored, ROW_GROUPS), "word_cues": cue_summary(records, scored),
                          "per_step": per_step(records, ROW_GROUPS)}
        if label == next(iter(models)):
            top = [{"step": steps[k], "group": groups[k], "push": float(pushes[k]), "row": list(decoded[k])}
                   for k in pushes.argsort(descending=True)[:10].tolist()]
    write_table(args.out, table(results, models), {
        "config": portable_path(args.config), "models": {k: portable_path(v) if Path(v).exists() else v
                                                          for k, v in models.items()},
        "steps": [args.first, args.last], "seed": args.seed, "results": results,
        "top_rows_first_model": top,
    })
    plot(results, args.out.with_suffix(".png"), ROW_GROUPS)


def per_step(records: list[dict[str, Any]], groups: Sequence[str]) -> dict[str, dict[int, float]]:
    """Push per step and group (identical positives apart), for the plot."""
    out: dict[str, dict[int, float]] = {}
    for r in records:
        key = f"{r['group']}{', identical' if r['identical'] else ''}"
        out.setdefault(key, {}).setdefault(r["step"], 0.0)
        out[key][r["step"]] += r["push"]
    return {k: out[k] for k in sorted(out, key=lambda k: (groups.index(k.split(",")[0]), k))}


def table(results: dict[str, Any], models: dict[str, str]) -> list[str]:
    """The Markdown lines: per model, a row per window of steps and a column per group and positive."""
    lines = ["The floor's push per step (×1e4, with dropout as in training) by row group and positive, per window of",
             "steps: push (rows pushed / rows; mean margin: teacher / student / student with dropout). A group",
             "without rows is left out.", ""]
    for label in models:
        windows = results[label]["windows"]
        cells = [c for c in next(iter(windows.values())) if any(w[c]["rows"] for w in windows.values())]
        lines += [f"**{label}**", "", "| steps | " + " | ".join(cells) + " |", "|---|" + "---:|" * len(cells)]
        for window, row in windows.items():
            lines.append(f"| {window} | " + " | ".join(
                f"{1e4 * row[c]['push_per_step']:.2f} ({row[c]['pushed']}/{row[c]['rows']}; "
                + " / ".join(f"{row[c][key] or 0:.3f}" for key in MARGINS) + ")" for c in cells) + " |")
        lines += ["", f"{label}, by word cue: push per step ×1e4 (rows per step)", "",
                  "| steps | " + " | ".join(WORD_CUES) + " |", "|---|" + "---:|" * len(WORD_CUES)]
        for window, row in results[label]["word_cues"].items():
            lines.append(f"| {window} | " + " | ".join(
                f"{1e4 * row[c]['push_per_step']:.2f} ({row[c]['rows_per_step']:.1f})" for c in WORD_CUES) + " |")
        lines.append("")
    return lines


def plot(results: dict[str, Any], path: Path, groups: Sequence[str]) -> None:
    """One panel per model: the push per step, stacked by group, with the evaluation steps dotted."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(results), 1, figsize=(10, 3.2 * len(results)), sharex=True, squeeze=False)
    for ax, (label, result) in zip(axes[:, 0], results.items(), strict=True):
        series = result["per_step"]
        steps = sorted({s for values in series.values() for s in values})
        bottom = [0.0] * len(steps)
        for key, values in series.items():
            heights = [1e4 * values.get(s, 0.0) for s in steps]
            ax.bar(steps, heights, bottom=bottom, width=1.0, label=key)
            bottom = [b + h for b, h in zip(bottom, heights, strict=True)]
        ax.set_title(f"{label}: the floor's push per step by row group (with dropout)")
        ax.set_ylabel("push (×1e4)")
        for edge in range(25 * (steps[0] // 25 + 1), steps[-1] + 1, 25):
            ax.axvline(edge, color="grey", lw=0.5, ls=":")
    axes[0, 0].legend(fontsize=7, ncols=3)
    axes[-1, 0].set_xlabel("optimiser step (STS-B dev is scored at the dotted lines)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    raise SystemExit(main())
