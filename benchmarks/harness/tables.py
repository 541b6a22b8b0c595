"""README tables generated from committed result files, shared by the study folders' ``report.py``.

A study's README holds each generated table between two markers::

    <!-- table NAME: begin (report.py) -->
    ...
    <!-- table NAME: end -->

and its ``report.py`` maps each NAME to the table's lines (built with :func:`dev_table` or :func:`curve_table`
from ``select_dev.py`` result files, paths relative to ``benchmarks/``). ``python benchmarks/<study>/report.py``
rewrites the blocks; ``--check`` exits 1 when the README differs from what its result files give.
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from pathlib import Path
from statistics import mean

from st_debias.files import atomic_write_text

BENCHMARKS = Path(__file__).resolve().parents[1]

#: (column, score key, better direction: 1 higher, -1 lower, decimals)
Column = tuple[str, str, int, int]
DEV: tuple[Column, ...] = (
    ("STS-B dev", "dev", 1, 2),
    ("dev Cont", "dev_cont", 1, 2),
    ("dev Oppn", "dev_oppn", 1, 2),
    ("CANNOT ↓", "neg_cos_heldout", -1, 3),
    ("word order ↓", "word_order_cos", -1, 3),
    ("minimal pairs", "mp_accuracy", 1, 3),
    ("(i) ↑", "nm_over_affirmative", 1, 3),
    ("(ii) ↑", "nm_over_negated_antonym", 1, 3),
    ("(iii) ↓", "nm_polarity_cluster", -1, 3),
)
#: The Oppn split's two sides (mean cosines), for the studies that ask where it is lost.
OPPN_SIDES: tuple[Column, ...] = (
    ("dev Oppn", "dev_oppn", 1, 2),
    ("Oppn cos, high overlap / low score ↓", "dev_oppn_side/high_overlap_low_score", -1, 4),
    ("Oppn cos, low overlap / high score ↑", "dev_oppn_side/low_overlap_high_score", 1, 4),
)
#: The negation-meaning probe without the negated sentences' common direction.
WITHOUT_DIRECTION: tuple[Column, ...] = (
    ("(i) ↑", "nm_over_affirmative", 1, 3),
    ("(iii) ↓", "nm_polarity_cluster", -1, 3),
    ("(i) w/o dir. ↑", "i_wo_dir", 1, 3),
    ("(ii) w/o dir. ↑", "ii_wo_dir", 1, 3),
)
#: A row: a label and one result file, or several whose scores are averaged (a mean over seeds).
Row = tuple[str, str | Sequence[str]]
START = "budget/results/v6/cpu-dev-100/start.json"
"""The start model's development scores (all-MiniLM-L6-v2; every ``select_dev.py`` study scores the same)."""


@cache
def result(path: str) -> dict:
    """A committed result file, by its path relative to ``benchmarks/``."""
    return json.loads((BENCHMARKS / path).read_text(encoding="utf-8"))


def scores(paths: str | Sequence[str]) -> dict[str, float]:
    """The development scores of one result file, or their mean over several (keys all of them have)."""
    files = [paths] if isinstance(paths, str) else list(paths)
    each = [result(path)["scores"] for path in files]
    keys = [key for key in each[0] if all(key in s for s in each)]
    return {
        key: mean(s[key] for s in each) for key in keys if all(isinstance(s[key], int | float) for s in each)
    }


def _cell(value: float | None, start: float | None, direction: int, decimals: int) -> str:
    if value is None:
        return "–"
    text = f"{value:.{decimals}f}"
    return f"**{text}**" if start is not None and (value - start) * direction < 0 else text


def dev_table(
    rows: Sequence[Row], columns: Sequence[Column] = DEV, start: str = START, head: str = "(dev)"
) -> list[str]:
    """One row per result file (or mean of files), the start model first; bold: worse than the start model; a run that
    kept the start model says so instead of repeating the start model's figures."""
    base = scores(start)
    lines = [f"| {head} | " + " | ".join(c[0] for c in columns) + " |", "|---|" + "---:|" * len(columns)]
    lines.append(
        "| start | " + " | ".join(_cell(base.get(key), None, 1, d) for _, key, _, d in columns) + " |"
    )
    for label, paths in rows:
        kept = start_kept(paths)
        if kept is not None:  # no checkpoint beat the start model: its figures are the start's, not the run's
            lines.append(f"| {label} | {kept} |" + " |" * (len(columns) - 1))
            continue
        values = scores(paths)
        cells = [_cell(values.get(key), base.get(key), sign, d) for _, key, sign, d in columns]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return lines


def start_kept(paths: str | Sequence[str]) -> str | None:
    """For one result file whose run kept the start model (``best_checkpoint: start``), the cell that says so, with
    the last checkpoint's STS-B dev that lost to it where the file records it; None otherwise."""
    if not isinstance(paths, str) or result(paths).get("best_checkpoint") != "start":
        return None
    last = result(paths).get("selection", {}).get("last_checkpoint_score")
    return "start model kept" + ("" if last is None else f": STS-B dev {100 * last:.3f} at its last checkpoint")


def curve(path: str) -> tuple[float, list[tuple[int, float]]]:
    """The start model's STS-B dev and the run's (step, STS-B dev) at 32 tokens, as the trainer logged them."""
    data = result(path)
    metric = data["selection"]["metric"]
    points = [(entry["step"], 100 * entry[metric]) for entry in data["log_history"] if metric in entry]
    return 100 * data["selection"]["start_score"], points


def curve_table(rows: Sequence[tuple[str, str]], head: str = "(STS-B dev at 32 tokens)") -> list[str]:
    """Each run's STS-B dev curve in five figures: best (step), lowest, last, first checkpoint below the start."""
    lines = [
        f"| {head} | start | best (step) | lowest | last | first checkpoint below the start |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for label, path in rows:
        start, points = curve(path)
        best = max(points, key=lambda point: point[1])
        below = next((str(step) for step, value in points if value < start), "never")
        lines.append(
            f"| {label} | {start:.2f} | {best[1]:.2f} ({best[0]}) | {min(v for _, v in points):.2f} | "
            f"{points[-1][1]:.2f} | {below} |"
        )
    return lines


def _block(name: str) -> re.Pattern[str]:
    return re.compile(
        rf"(<!-- table {re.escape(name)}: begin \(report\.py\) -->\n).*?(<!-- table {re.escape(name)}: end -->)",
        flags=re.S,
    )


def render(readme: str, tables: Mapping[str, Sequence[str]]) -> str:
    """``readme`` with each named block replaced by its table; a name without its markers is an error."""
    for name, lines in tables.items():
        pattern = _block(name)
        if not pattern.search(readme):
            raise ValueError(f"the README has no markers for table {name!r}")
        readme = pattern.sub(lambda m, lines=lines: m.group(1) + "\n".join(lines) + "\n" + m.group(2), readme)
    return readme


def run(
    readme: Path, tables: Callable[[], Mapping[str, Sequence[str]]], argv: list[str] | None, doc: str | None,
    plot: Callable[[], None] | None = None,
) -> int:
    """A ``report.py``'s command line: write the tables into ``readme`` (and draw ``plot``, when given), or
    ``--check`` that they are current."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--check", action="store_true", help="exit 1 if the README's tables are not up to date"
    )
    args = parser.parse_args(argv)
    text = readme.read_text(encoding="utf-8")
    new = render(text, tables())
    if args.check:
        if new != text:
            print(f"{readme}: tables out of date; run its report.py")
            return 1
        return 0
    if new != text:
        atomic_write_text(readme, new)
    if plot is not None:
        plot()
    return 0
