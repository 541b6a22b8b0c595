"""Evaluation: STS suite (SentEval 'all' setting), MTEB STS tasks, surface-structure bias probes, report.

Protocol: docs/evaluation.md. Entry points:

* :func:`evaluate_model` — one model → one ``results.json`` entry (STS-7, bias probes, optional MTEB).
* :func:`evaluate_transfer` — SentEval's seven transfer tasks (logistic regression on frozen embeddings).
* :func:`evaluate_or_reuse` — the same, or a packaged/cached entry with the same weights, data and settings.
* :func:`backend_model` — a model whose transformer runs in ONNX Runtime or OpenVINO, checked against torch.
* :mod:`~st_debias.evaluation.mteb_tasks` — the STS-7 and the bias probes as MTEB tasks.
* :func:`sts_dev_evaluator` — STS-B dev ``EmbeddingSimilarityEvaluator`` for checkpoint selection.
* :func:`write_report` / :func:`compare_table` — Markdown + PNG report, before/after table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from st_debias._exports import lazy_exports

if TYPE_CHECKING:
    from st_debias.evaluation.backends import BACKENDS
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
    from st_debias.evaluation.runtimes import backend_model
    from st_debias.evaluation.sts import STSSuite, spearman_x100, sts_dev_evaluator
    from st_debias.evaluation.sts_data import STS_TASKS, STSData, load_sts, load_sts_file
    from st_debias.evaluation.transfer import QUICK_TRANSFER_TASKS, evaluate_transfer
    from st_debias.evaluation.transfer_data import TRANSFER_TASKS, TransferTask, load_transfer_task

#: Each public name and the module that defines it, imported on first use: ``st-debias eval --help`` and the
#: data loaders stay free of torch and sentence-transformers.
_EXPORTS: dict[str, str] = {
    "BACKENDS": "st_debias.evaluation.backends",
    "ContOppnSplit": "st_debias.evaluation.bias",
    "CorpusSlice": "st_debias.evaluation.bias_data",
    "EmbeddingCache": "st_debias.evaluation.embeddings",
    "EvaluationKey": "st_debias.evaluation.reuse",
    "NegationMeaningItems": "st_debias.evaluation.bias_data",
    "NegationPairs": "st_debias.evaluation.bias_data",
    "QUICK_STS_TASKS": "st_debias.evaluation.evaluate",
    "QUICK_TRANSFER_TASKS": "st_debias.evaluation.transfer",
    "STSData": "st_debias.evaluation.sts_data",
    "STSSuite": "st_debias.evaluation.sts",
    "STS_TASKS": "st_debias.evaluation.sts_data",
    "TRANSFER_TASKS": "st_debias.evaluation.transfer_data",
    "TransferTask": "st_debias.evaluation.transfer_data",
    "WordOrderPairs": "st_debias.evaluation.bias",
    "alignment_uniformity": "st_debias.evaluation.bias",
    "backend_model": "st_debias.evaluation.runtimes",
    "compare_table": "st_debias.evaluation.report",
    "cont_oppn_scores": "st_debias.evaluation.bias",
    "cont_oppn_split": "st_debias.evaluation.bias",
    "evaluate_model": "st_debias.evaluation.evaluate",
    "evaluate_or_reuse": "st_debias.evaluation.reuse",
    "evaluate_transfer": "st_debias.evaluation.transfer",
    "evaluation_key": "st_debias.evaluation.reuse",
    "load_negation_meaning_items": "st_debias.evaluation.bias_data",
    "load_negation_pairs": "st_debias.evaluation.bias_data",
    "load_pair_rows": "st_debias.evaluation.pairs",
    "load_sts": "st_debias.evaluation.sts_data",
    "load_sts_file": "st_debias.evaluation.sts_data",
    "load_transfer_task": "st_debias.evaluation.transfer_data",
    "load_word_order_sentences": "st_debias.evaluation.bias_data",
    "local_task": "st_debias.evaluation.mteb_tasks",
    "model_fingerprint": "st_debias.evaluation.embeddings",
    "mteb_model": "st_debias.evaluation.mteb_tasks",
    "mteb_tasks": "st_debias.evaluation.mteb_tasks",
    "negation_meaning_probe": "st_debias.evaluation.bias",
    "negation_meaning_without_direction": "st_debias.evaluation.bias",
    "negation_probe": "st_debias.evaluation.bias",
    "run_mteb": "st_debias.evaluation.mteb_tasks",
    "shuffle_word_order": "st_debias.evaluation.bias",
    "spearman_x100": "st_debias.evaluation.sts",
    "sts_dev_evaluator": "st_debias.evaluation.sts",
    "training_pair_statistics": "st_debias.evaluation.pairs",
    "word_order_probe": "st_debias.evaluation.bias",
    "write_report": "st_debias.evaluation.report",
    "write_results": "st_debias.evaluation.report",
}

__all__ = [
    "BACKENDS",
    "ContOppnSplit",
    "CorpusSlice",
    "EmbeddingCache",
    "EvaluationKey",
    "NegationMeaningItems",
    "NegationPairs",
    "QUICK_STS_TASKS",
    "QUICK_TRANSFER_TASKS",
    "STSData",
    "STSSuite",
    "STS_TASKS",
    "TRANSFER_TASKS",
    "TransferTask",
    "WordOrderPairs",
    "alignment_uniformity",
    "backend_model",
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
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
