"""What the report reads from ``results.json`` entries: model labels, task order and averages, the Cont/Oppn
parts and the STS subsets. Shared by the tables (:mod:`st_debias.evaluation.report`) and the plots
(:mod:`st_debias.evaluation.plots`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from st_debias.evaluation.sts_data import STS_TASKS
from st_debias.evaluation.transfer_data import SST2_QUICK

#: The evaluation groups an entry can hold (``st-debias eval --tasks``).
TASK_GROUPS = ("sts", "mteb", "bias", "transfer")


def check_tasks(tasks: Sequence[str] | str) -> tuple[str, ...]:
    """The evaluation groups of ``tasks`` (a comma-separated string is split), each once, in order.

    Raises:
        ValueError: an unknown group, or none.
    """
    if isinstance(tasks, str):
        tasks = [t.strip() for t in tasks.split(",") if t.strip()]
    unknown = sorted(set(tasks) - set(TASK_GROUPS))
    if unknown or not tasks:
        raise ValueError(f"Unknown evaluation task group(s) {unknown or tasks!r}; choose from {list(TASK_GROUPS)}")
    return tuple(dict.fromkeys(tasks))

#: Display names of the Cont/Oppn parts, in bar order.
CONT_OPPN_PARTS = {
    "cont": "Cont",
    "oppn": "Oppn",
    "high_overlap_low_score": "Oppn: high overlap, low score",
    "low_overlap_high_score": "Oppn: low overlap, high score",
}


def _labels(results: list[dict[str, Any]]) -> list[str]:
    """Each entry's model name, shortened to its last path part where those are unique."""
    labels = [str(r.get("model", f"model {i}")) for i, r in enumerate(results)]
    short = [Path(label).name or label for label in labels]
    return short if len(set(short)) == len(short) else labels


def eligible_cont_oppn(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The Cont/Oppn splits of one results entry, only for datasets large enough to be split."""
    return {k: v for k, v in result.get("bias", {}).get("cont_oppn", {}).items() if v.get("eligible")}


def _is_average(key: str) -> bool:
    """``avg``, or the mean of one metric kind (``avg cosine_ap``) in an MTEB block."""
    return key == "avg" or key.startswith("avg ")


def _main_scores(results: list[dict[str, Any]]) -> dict[str, str]:
    """Task → main score name of the MTEB tasks, as recorded by ``run_mteb``."""
    return {
        task: metric
        for r in results
        for task, metric in r.get("sources", {}).get("mteb", {}).get("main_scores", {}).items()
    }


def _average_label(results: list[dict[str, Any]], block: str, prefix: str, key: str = "avg") -> str:
    """'STS-7 avg' only over the seven sets; otherwise say how many tasks (of which metric) the mean covers."""
    tasks = {t for r in results for t in r.get(block, {}) if not _is_average(t)}
    if block == "sts" and tasks == set(STS_TASKS):
        return f"{prefix}-7 avg"
    if key != "avg":
        metric = key.removeprefix("avg ")
        tasks = {t for t in tasks if _main_scores(results).get(t) == metric}
        return f"{prefix} avg {metric} of {len(tasks)} task{'s' if len(tasks) != 1 else ''}"
    if block == "transfer":  # each entry's mean covers its own tasks (a full and a quick one have 7 each)
        count = max(sum(not _is_average(t) for t in r.get(block, {})) for r in results)
        label = f"{prefix} avg of {count} task{'s' if count != 1 else ''}"
    else:
        label = f"{prefix} avg of {len(tasks)} task{'s' if len(tasks) != 1 else ''}"
    if block == "transfer":
        # SST-2 trained on its dev split is not SentEval's SST-2: the average must say so.
        return label + (" (quick: SST-2 trained on its dev split)" if SST2_QUICK in tasks else "")
    # A quick evaluation's mean covers fewer sets and must not be read as the STS-7 average.
    return label + (" (quick evaluation, not STS-7)" if block == "sts" and len(tasks) > 1 else "")


def cont_oppn_part(result: dict[str, Any], dataset: str, part: str) -> dict[str, Any]:
    """The ``cont``/``oppn`` block, or one side of Oppn, of ``dataset`` in one entry ({} when absent)."""
    block = result.get("bias", {}).get("cont_oppn", {}).get(dataset, {})
    if part in ("cont", "oppn"):
        return block.get(part, {})
    return block.get("oppn_sides", {}).get(part, {})


def _task_order(results: list[dict[str, Any]], block: str) -> list[str]:
    """Tasks of ``block`` across entries: the STS-7 order first, then any other task, averages left out."""
    present = [t for r in results for t in r.get(block, {}) if not _is_average(t)]
    return [t for t in STS_TASKS if t in present] + [t for t in dict.fromkeys(present) if t not in STS_TASKS]


def _average_keys(results: list[dict[str, Any]], block: str) -> list[str]:
    """The average keys of ``block`` across entries (``avg``, or one per metric kind), in first-seen order."""
    return list(dict.fromkeys(t for r in results for t in r.get(block, {}) if _is_average(t)))


def _subset_entries(results: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """(label, entry) of the entries that have ``sts_subsets``, labelled as in the rest of the report."""
    return [(label, r) for label, r in zip(_labels(results), results, strict=True) if r.get("sts_subsets")]


def _subset_rows(results: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(task, subset) of every entry's ``sts_subsets``, tasks in the STS-7 order, subsets in file order."""
    present = [(task, subset) for r in results for task, block in r.get("sts_subsets", {}).items() for subset in block]
    order = {task: i for i, task in enumerate(STS_TASKS)}
    unique = list(dict.fromkeys(present))
    return sorted(unique, key=lambda row: (order.get(row[0], len(order)), unique.index(row)))


def _subset_value(result: dict[str, Any], task: str, subset: str, key: str) -> float | None:
    """One figure of one subset; None where it is absent or not finite (a NaN read back from a hand-made entry)."""
    value = result.get("sts_subsets", {}).get(task, {}).get(subset, {}).get(key)
    return value if value is not None and np.isfinite(value) else None
