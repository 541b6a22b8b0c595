"""Evaluation: STS suite (SentEval 'all' setting), MTEB STS tasks, surface-structure bias probes, report.

Protocol: docs/evaluation.md. Entry points:

* :func:`evaluate_model` — one model → one ``results.json`` entry (STS-7, bias probes, optional MTEB).
* :func:`evaluate_transfer` — SentEval's seven transfer tasks (logistic regression on frozen embeddings).
* :func:`evaluate_or_reuse` — the same, or a packaged/cached entry with the same weights, data and settings.
* :mod:`~st_debias.evaluation.mteb_tasks` — the STS-7 and the bias probes as MTEB tasks.
* :func:`sts_dev_evaluator` — STS-B dev ``EmbeddingSimilarityEvaluator`` for checkpoint selection.
* :func:`write_report` / :func:`compare_table` — Markdown + PNG report, before/after table.
"""

from __future__ import annotations

from st_debias.evaluation.bias import (
    ContOppnSplit,
    WordOrderPairs,
    alignment_uniformity,
    cont_oppn_scores,
    cont_oppn_split,
    negation_meaning_probe,
    negation_meaning_without_direction,
    negation_probe,
    shuffle_word_order,
    word_order_probe,
)
from st_debias.evaluation.bias_data import (
    CorpusSlice,
    NegationMeaningItems,
    NegationPairs,
    load_negation_meaning_items,
    load_negation_pairs,
    load_word_order_sentences,
)
from st_debias.evaluation.embeddings import EmbeddingCache, model_fingerprint
from st_debias.evaluation.evaluate import QUICK_STS_TASKS, evaluate_model
from st_debias.evaluation.mteb_tasks import local_task, mteb_model, mteb_tasks, run_mteb
from st_debias.evaluation.pairs import load_pair_rows, training_pair_statistics
from st_debias.evaluation.report import compare_table, write_report, write_results
from st_debias.evaluation.reuse import EvaluationKey, evaluate_or_reuse, evaluation_key
from st_debias.evaluation.sts import STSSuite, spearman_x100, sts_dev_evaluator
from st_debias.evaluation.sts_data import STS_TASKS, STSData, load_sts, load_sts_file
from st_debias.evaluation.transfer import QUICK_TRANSFER_TASKS, evaluate_transfer
from st_debias.evaluation.transfer_data import TRANSFER_TASKS, TransferTask, load_transfer_task

__all__ = [
    "QUICK_STS_TASKS",
    "QUICK_TRANSFER_TASKS",
    "STS_TASKS",
    "TRANSFER_TASKS",
    "ContOppnSplit",
    "CorpusSlice",
    "EmbeddingCache",
    "EvaluationKey",
    "NegationMeaningItems",
    "NegationPairs",
    "STSData",
    "STSSuite",
    "TransferTask",
    "WordOrderPairs",
    "alignment_uniformity",
    "compare_table",
    "cont_oppn_scores",
    "cont_oppn_split",
    "evaluate_model",
    "evaluate_or_reuse",
    "evaluate_transfer",
    "evaluation_key",
    "load_negation_meaning_items",
    "load_negation_pairs",
    "load_pair_rows",
    "load_sts",
    "load_sts_file",
    "load_transfer_task",
    "load_word_order_sentences",
    "local_task",
    "model_fingerprint",
    "mteb_model",
    "mteb_tasks",
    "negation_meaning_probe",
    "negation_meaning_without_direction",
    "negation_probe",
    "run_mteb",
    "shuffle_word_order",
    "spearman_x100",
    "sts_dev_evaluator",
    "training_pair_statistics",
    "word_order_probe",
    "write_report",
    "write_results",
]
