"""STS suite in the SimCSE/SentEval "all" setting, and the STS-B dev evaluator for checkpoint selection.

Protocol (docs/evaluation.md): for each of STS12–16, STS-B test and SICK-R test, one Spearman correlation of
cosine similarity against the gold score over *all* pairs of the dataset (not the mean over SemEval
subsets), ×100; then the plain average of the seven. The fast path here encodes every unique sentence
once through :class:`~st_debias.evaluation.embeddings.EmbeddingCache` and gives the same number as
sentence-transformers' ``EmbeddingSimilarityEvaluator`` on the same pairs (tested).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy.stats import spearmanr

from st_debias.evaluation.embeddings import EmbeddingCache
from st_debias.evaluation.sts_data import STS_TASKS, STSData, TextField, load_sts


def spearman_x100(predicted: Sequence[float] | np.ndarray, gold: Sequence[float] | np.ndarray) -> float:
    """Spearman rank correlation of ``predicted`` vs ``gold``, ×100.

    Raises:
        ValueError: fewer than two pairs, or lengths differ.
    """
    predicted = np.asarray(predicted, dtype=np.float64)
    gold = np.asarray(gold, dtype=np.float64)
    if predicted.shape != gold.shape or predicted.size < 2:
        raise ValueError(
            f"need two equal-length score vectors of ≥ 2 items, got {predicted.shape} and {gold.shape}"
        )
    return float(spearmanr(predicted, gold)[0]) * 100.0


class STSSuite:
    """The STS-7 test sets, scored from one shared embedding table.

    Args:
        tasks: task names (default: all of :data:`~st_debias.evaluation.sts_data.STS_TASKS`).
        data_dir: data folder (default ``$ST_DEBIAS_DATA``; hub fallback when none is configured).
        text: ``processed`` (SentEval text, the protocol) or ``raw``.

    Example:
        >>> suite = STSSuite()                       # doctest: +SKIP
        >>> suite.evaluate(EmbeddingCache(model))    # doctest: +SKIP
        {'STS12': 72.37, ..., 'SICK-R': 77.15, 'avg': 78.87}
    """

    def __init__(
        self,
        tasks: Sequence[str] = STS_TASKS,
        data_dir: str | os.PathLike[str] | None = None,
        text: TextField = "processed",
    ) -> None:
        if not tasks:
            raise ValueError("STSSuite needs at least one task")
        self.data: dict[str, STSData] = {name: load_sts(name, data_dir, text=text) for name in tasks}

    def sentences(self) -> list[str]:
        """All sentences of all tasks (duplicates kept; the cache dedupes)."""
        return [s for data in self.data.values() for s in data.sentences()]

    def cosines(self, cache: EmbeddingCache) -> dict[str, np.ndarray]:
        """Cosine similarity of every pair of every task."""
        cache.prefetch(self.sentences())
        return {name: cache.cosine(data.sentences1, data.sentences2) for name, data in self.data.items()}

    def evaluate(self, cache: EmbeddingCache | Any) -> dict[str, float]:
        """Spearman ×100 per task plus ``avg`` (mean of the tasks).

        Args:
            cache: an :class:`EmbeddingCache`, or a model (wrapped in a fresh cache).
        """
        if not isinstance(cache, EmbeddingCache):
            cache = EmbeddingCache(cache)
        cosines = self.cosines(cache)
        scores = {name: spearman_x100(cosines[name], data.scores) for name, data in self.data.items()}
        scores["avg"] = float(np.mean(list(scores.values())))
        return scores

    def subset_scores(self, cache: EmbeddingCache | Any) -> dict[str, dict[str, dict[str, float | int | None]]]:
        """Per task whose pairs come from several subsets (STS12–16's SemEval sources, STS-B's genres):
        ``{subset: {"spearman", "pairs", "mean_cosine"}}``, in file order.

        The protocol's score pools every pair of a task, so it also moves when one subset's cosines shift
        against another's (calibration) while each subset keeps its ranking; the per-subset Spearman and mean
        cosine tell the two apart. A subset whose Spearman is undefined (fewer than two pairs, or all gold scores
        or all cosines equal) has ``spearman`` None. Sets with a single subset (SICK-R) or without subset labels
        (the hub copies) are left out, so the result may be empty.

        Args:
            cache: an :class:`EmbeddingCache`, or a model (wrapped in a fresh cache).
        """
        if not isinstance(cache, EmbeddingCache):
            cache = EmbeddingCache(cache)
        cosines = self.cosines(cache)
        out: dict[str, dict[str, dict[str, float | int | None]]] = {}
        for name, data in self.data.items():
            if len(set(data.subsets)) < 2:
                continue
            labels = np.asarray(data.subsets)
            gold = np.asarray(data.scores, dtype=np.float64)
            out[name] = {}
            for subset in dict.fromkeys(data.subsets):
                chosen = labels == subset
                cos = cosines[name][chosen]
                ranked = cos.size >= 2 and np.ptp(gold[chosen]) > 0 and np.ptp(cos) > 0
                out[name][subset] = {
                    "spearman": spearman_x100(cos, gold[chosen]) if ranked else None,
                    "pairs": int(cos.size),
                    "mean_cosine": float(np.mean(cos)),
                }
        return out

    def sources(self) -> dict[str, dict[str, object]]:
        """Provenance of each task's data (path or hub id, pair count, text field, checksum)."""
        return {name: data.describe() for name, data in self.data.items()}


def sts_dev_evaluator(
    data_dir: str | os.PathLike[str] | None = None,
    name: str = "sts-dev",
    batch_size: int = 64,
    text: TextField = "processed",
):
    """sentence-transformers ``EmbeddingSimilarityEvaluator`` on STS-B dev, for checkpoint selection.

    Its cosine Spearman is reported as ``eval_{name}_spearman_cosine`` by ``SentenceTransformerTrainer``
    (``eval_sts-dev_spearman_cosine`` by default): use that as ``metric_for_best_model``.

    Args:
        data_dir: data folder (default ``$ST_DEBIAS_DATA``; hub fallback when none is configured).
        name: evaluator name (prefix of its metric keys).
        batch_size: encode batch size.
        text: ``processed`` (SentEval text) or ``raw``.
    """
    from sentence_transformers.sentence_transformer.evaluation import EmbeddingSimilarityEvaluator
    from sentence_transformers.util import SimilarityFunction

    data = load_sts("STSBenchmark-dev", data_dir, text=text)
    return EmbeddingSimilarityEvaluator(
        sentences1=data.sentences1,
        sentences2=data.sentences2,
        scores=data.scores,
        batch_size=batch_size,
        main_similarity=SimilarityFunction.COSINE,
        similarity_fn_names=["cosine"],
        name=name,
        write_csv=False,
    )
