"""Evaluation: STS suite (SentEval 'all' setting), MTEB STS tasks, surface-structure bias probes, report.

Protocol: docs/evaluation.md. Entry points:

* :func:`evaluate_model` — one model → one ``results.json`` entry (STS-7, bias probes, optional MTEB).
* :func:`sts_dev_evaluator` — STS-B dev ``EmbeddingSimilarityEvaluator`` for checkpoint selection.
* :func:`write_report` / :func:`compare_table` — Markdown + PNG report, before/after table.
"""

from __future__ import annotations

from st_debias.evaluation.bias import (
    ContOppnSplit,
    NegationPairs,
    alignment_uniformity,
    cont_oppn_scores,
    cont_oppn_split,
    load_negation_pairs,
    load_pair_rows,
    negation_probe,
    training_pair_statistics,
)
from st_debias.evaluation.embeddings import EmbeddingCache, model_fingerprint
from st_debias.evaluation.evaluate import evaluate_model
from st_debias.evaluation.mteb_tasks import local_task, mteb_tasks, run_mteb
from st_debias.evaluation.report import compare_table, write_report, write_results
from st_debias.evaluation.sts import STSSuite, spearman_x100, sts_dev_evaluator
from st_debias.evaluation.sts_data import STS_TASKS, STSData, load_sts, load_sts_file

__all__ = [
    "STS_TASKS",
    "ContOppnSplit",
    "EmbeddingCache",
    "NegationPairs",
    "STSData",
    "STSSuite",
    "alignment_uniformity",
    "compare_table",
    "cont_oppn_scores",
    "cont_oppn_split",
    "evaluate_model",
    "load_negation_pairs",
    "load_pair_rows",
    "load_sts",
    "load_sts_file",
    "local_task",
    "model_fingerprint",
    "mteb_tasks",
    "negation_probe",
    "run_mteb",
    "spearman_x100",
    "sts_dev_evaluator",
    "training_pair_statistics",
    "write_report",
    "write_results",
]
