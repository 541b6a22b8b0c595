"""SentEval transfer tasks on frozen embeddings: logistic regression with scikit-learn.

The protocol follows SentEval (Conneau & Kiela, 2018), as SimCSE, DebCSE and OssCSE report it:

* MR, CR, SUBJ, MPQA: stratified 10-fold cross-validation; inside each training fold the regularisation
  is chosen by a second, inner 10-fold cross-validation (SentEval's ``InnerKFoldClassifier``).
* SST-2: one classifier per regularisation on ``train``, the one best on ``dev`` scored on ``test``.
* TREC and MRPC: the regularisation chosen by 10-fold cross-validation on ``train``, the classifier refit
  on all of ``train`` and scored on ``test``. MRPC's features are ``[u, v, |u−v|, u·v]``; it reports
  accuracy and F1.

The classifier is scikit-learn's ``LogisticRegression`` (L-BFGS) on the raw embeddings, with the inverse
regularisation strength ``C`` searched over SentEval's grid (:data:`C_GRID`), each ``C`` warm-started from
the previous one. Folds are shuffled with a fixed seed,
so the same embeddings give the same figures to the last digit. The test sentences are encoded with the rest
(no labels), and a task's test features and labels reach a classifier only after its regularisation is fixed
(before that they are only hashed, for the cache key below): every selection figure (``selection_accuracy``)
comes from dev or cross-validation data.

Embeddings are the model's own (not re-normalised). Every distinct sentence of the requested tasks is
encoded once, before any classifier, and cached on disk task by task
(:func:`st_debias.data.io.embeddings.encode_corpus`, keyed by the weights and the sentences). Each task's
figures are cached too (``<cache>/transfer/<digest>.json``), keyed by the exact bytes of its features and
labels, the protocol settings, the versions of the numerical libraries and the machine: scoring the same
embeddings again (the start model of every comparison) reads them back instead of fitting the classifiers again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from st_debias.evaluation.transfer_data import (
    SST2_QUICK,
    TRANSFER_TASKS,
    Split,
    TransferTask,
    load_transfer_task,
)
from st_debias.files import atomic_write_json
from st_debias.paths import cache_root
from st_debias.progress import announce, usable_cores

logger = logging.getLogger(__name__)

#: Inverse regularisation strengths searched, ascending (SentEval's scikit-learn grid, 2^-2 … 2^3).
C_GRID: tuple[float, ...] = tuple(2.0**t for t in range(-2, 4))

#: Folds of every cross-validation (outer and inner), as in SentEval.
FOLDS = 10

#: L-BFGS iterations allowed per fit (sentence embeddings converge in well under 100).
MAX_ITER = 1000

#: Seed of the fold shuffles (SentEval's default seed).
SEED = 1111

#: Version of the code behind a task's figures. Bump it when :func:`score_task`'s computation changes, so that
#: figures cached by the old code are recomputed, not reused.
SCORES_FORMAT = 1

#: The quick subset: SST-2 trained on its dev split instead of its 67,349 training phrases.
QUICK_TRANSFER_TASKS: tuple[str, ...] = tuple(SST2_QUICK if t == "SST2" else t for t in TRANSFER_TASKS)


def _folds(seed: int, folds: int = FOLDS) -> Any:
    from sklearn.model_selection import StratifiedKFold

    return StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)


class _Path:
    """Logistic regressions along ``grid`` (ascending ``C``), each fit starting from the previous, more
    regularised solution (the warm-started path scikit-learn's ``LogisticRegressionCV`` takes).
    """

    def __init__(self, features: np.ndarray, labels: np.ndarray) -> None:
        from sklearn.linear_model import LogisticRegression

        self.features = features
        self.labels = labels
        self.model = LogisticRegression(max_iter=MAX_ITER, warm_start=True)

    def fit(self, c: float) -> _Path:
        self.model.set_params(C=c).fit(self.features, self.labels)
        return self

    def predict(self, features: np.ndarray) -> np.ndarray:
        return self.model.predict(features)

    def accuracy(self, features: np.ndarray, labels: np.ndarray) -> float:
        return 100.0 * float(np.mean(self.predict(features) == labels))


def _fit(features: np.ndarray, labels: np.ndarray, c: float, grid: Sequence[float]) -> _Path:
    """A classifier at ``c``, reached along the grid as in selection (the same optimum, fewer iterations)."""
    path = _Path(features, labels)
    for step in grid:
        if step > c:
            break
        path.fit(step)
    return path


def _fold_scores(
    features: np.ndarray, labels: np.ndarray, fit_index: np.ndarray, held_out: np.ndarray, grid: Sequence[float]
) -> list[float]:
    """Held-out accuracy of each ``C`` along the grid, fit on one fold's training rows."""
    path = _Path(features[fit_index], labels[fit_index])
    return [path.fit(c).accuracy(features[held_out], labels[held_out]) for c in grid]


def _fold_scores_one_thread(*args: Any) -> list[float]:
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):  # the same sums, hence the same figures, in any process on any machine
        return _fold_scores(*args)


def select_c_by_cross_validation(
    features: np.ndarray,
    labels: np.ndarray,
    seed: int = SEED,
    grid: Sequence[float] = C_GRID,
    folds: int = FOLDS,
    n_jobs: int = 1,
) -> tuple[float, float, _Path]:
    """Choose ``C`` by stratified k-fold cross-validation on one split, then refit on all of it.

    ``n_jobs`` folds run at once (joblib processes); the figures do not depend on it. Every fit runs on one
    BLAS thread.

    Returns:
        ``(C, mean cross-validated accuracy × 100 of that C, classifier fit on the whole split)``. Ties go to
        the smaller ``C`` (the first in ``grid``).
    """
    from joblib import Parallel, delayed
    from threadpoolctl import threadpool_limits

    splits = list(_folds(seed, folds).split(features, labels))
    if n_jobs != 1:  # joblib's convention: -1 is every core
        jobs = (delayed(_fold_scores_one_thread)(features, labels, fit, held_out, grid) for fit, held_out in splits)
        scores = np.asarray(Parallel(n_jobs=min(n_jobs, len(splits)))(jobs))
    with threadpool_limits(1):
        if n_jobs == 1:
            scores = np.asarray([_fold_scores(features, labels, fit, held_out, grid) for fit, held_out in splits])
        mean = scores.mean(axis=0)
        best = int(np.argmax(mean))  # the first maximum: the smaller C
        return float(grid[best]), float(mean[best]), _fit(features, labels, grid[best], grid)


def select_c_on_dev(
    train: tuple[np.ndarray, np.ndarray], dev: tuple[np.ndarray, np.ndarray], grid: Sequence[float] = C_GRID
) -> tuple[float, float, _Path]:
    """Fit one classifier per ``C`` on ``train`` and keep the one most accurate on ``dev``.

    Returns:
        ``(C, its dev accuracy × 100, the classifier trained on train with it)``; ties go to the smaller ``C``.
    """
    path = _Path(*train)
    accuracies = [path.fit(c).accuracy(*dev) for c in grid]
    best = int(np.argmax(accuracies))
    return float(grid[best]), accuracies[best], _fit(*train, grid[best], grid)


def _outer_fold(
    features: np.ndarray,
    labels: np.ndarray,
    fit_index: np.ndarray,
    held_out: np.ndarray,
    seed: int,
    grid: Sequence[float],
) -> tuple[float, float, float]:
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):  # one call per outer fold: the inner cross-validation runs under it
        c, selection, model = select_c_by_cross_validation(features[fit_index], labels[fit_index], seed, grid)
        return model.accuracy(features[held_out], labels[held_out]), c, selection


def nested_cross_validation(
    features: np.ndarray,
    labels: np.ndarray,
    seed: int = SEED,
    grid: Sequence[float] = C_GRID,
    n_jobs: int = 1,
    progress: str | None = None,
) -> dict[str, Any]:
    """SentEval's inner k-fold protocol: accuracy over outer folds, ``C`` chosen inside each training fold.

    ``n_jobs`` outer folds run at once (joblib processes); the figures do not depend on it. ``progress``:
    the label of a progress bar over the outer folds (None: no bar).
    """
    from joblib import Parallel, delayed
    from tqdm.auto import tqdm

    splits = list(_folds(seed).split(features, labels))
    parallel = Parallel(n_jobs=min(n_jobs, len(splits)), return_as="generator")
    jobs = (
        delayed(_outer_fold)(features, labels, fit_index, held_out, seed, grid)
        for fit_index, held_out in splits
    )
    runs = list(tqdm(parallel(jobs), total=len(splits), desc=progress, unit="fold", disable=progress is None))
    accuracies, chosen, inner = (list(column) for column in zip(*runs, strict=True))
    return {
        "accuracy": float(np.mean(accuracies)),
        "fold_accuracies": [round(a, 4) for a in accuracies],
        "C": chosen,
        "selection_accuracy": float(np.mean(inner)),
        "selected_on": f"inner {FOLDS}-fold cross-validation inside each of {FOLDS} outer folds",
    }


def pair_features(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """``[u, v, |u − v|, u · v]`` (element-wise product) for sentence pairs: MRPC's classifier input."""
    return np.concatenate([first, second, np.abs(first - second), first * second], axis=1)


@dataclass(frozen=True)
class TaskResult:
    """One task's figures: the reported accuracy and how its classifier was chosen."""

    name: str
    accuracy: float
    details: dict[str, Any]


def score_task(
    task: TransferTask,
    embed: Callable[[Split], np.ndarray],
    seed: int = SEED,
    grid: Sequence[float] = C_GRID,
    n_jobs: int = 1,
    show_progress_bar: bool = False,
) -> TaskResult:
    """Score one task from embeddings; ``embed(split)`` returns the features of a split's examples.

    The test split is requested and scored only after ``C`` is fixed on train or dev data. ``n_jobs``
    parallelises the cross-validation folds (the outer ones of nested cross-validation, with a progress bar
    over them if asked).
    """
    from threadpoolctl import threadpool_limits

    train_x, train_y = embed(task.train), np.asarray(task.train.labels)
    details: dict[str, Any] = {
        "protocol": task.protocol,
        "examples": {k: len(v) for k, v in task.splits().items()},
    }
    if task.protocol == "cv":
        label = f"{task.name} classifiers (outer folds)" if show_progress_bar else None
        figures = nested_cross_validation(train_x, train_y, seed, grid, n_jobs, progress=label)
        details.update({k: v for k, v in figures.items() if k != "accuracy"})
        return TaskResult(task.name, figures["accuracy"], details)
    if task.protocol == "split":
        assert task.dev is not None
        dev = (embed(task.dev), np.asarray(task.dev.labels))
        with threadpool_limits(1):
            c, selection, model = select_c_on_dev((train_x, train_y), dev, grid)
        details["selected_on"] = "dev split"
    else:
        c, selection, model = select_c_by_cross_validation(train_x, train_y, seed, grid, n_jobs=n_jobs)
        details["selected_on"] = f"{FOLDS}-fold cross-validation on the training split"
    details.update({"C": c, "selection_accuracy": selection})
    assert task.test is not None
    test_y = np.asarray(task.test.labels)
    predictions = model.predict(embed(task.test))
    accuracy = 100.0 * float(np.mean(predictions == test_y))
    if task.pairs:
        from sklearn.metrics import f1_score

        details["f1"] = 100.0 * float(f1_score(test_y, predictions))
    return TaskResult(task.name, accuracy, details)


def split_embedder(
    model: Any,
    tasks: Sequence[TransferTask] = (),
    *,
    batch_size: int = 64,
    cache_dir: str | os.PathLike[str] | None = None,
    show_progress_bar: bool = True,
) -> Callable[[Split], np.ndarray]:
    """``embed(split)``: a split's features (pairs: MRPC's layout), from cached encoder calls.

    The sentences of ``tasks`` are encoded first, each once: one cached call per task for the sentences no
    earlier task had (SUBJ and SST-2 reuse 4,167 and 6,457 of MR's), so an interrupted evaluation resumes
    from the tasks already encoded. A split outside ``tasks`` is encoded in its own call, both sides of a
    pair together.
    """
    from st_debias.data.io.embeddings import encode_corpus

    def encode(sentences: list[str]) -> np.ndarray:
        return encode_corpus(
            sentences,
            model,
            batch_size=batch_size,
            cache_dir=cache_dir,
            normalize=False,
            show_progress_bar=show_progress_bar,
            by_token_length=True,
        )

    vectors: dict[str, np.ndarray] = {}
    # A shared sentence is encoded with the first task that has it, in SentEval's task order whatever the order
    # asked for (a vector depends, by float rounding, on the batch it is padded in).
    canonical = [*TRANSFER_TASKS, SST2_QUICK]
    tasks = sorted(tasks, key=lambda t: canonical.index(t.name) if t.name in canonical else len(canonical))
    for number, task in enumerate(tasks, start=1):
        distinct = dict.fromkeys(s for split in task.splits().values() for s in split.sentences())
        fresh = [sentence for sentence in distinct if sentence not in vectors]
        if fresh:
            announce(
                f"Encoding transfer task {number}/{len(tasks)}: {task.name} ({len(fresh):,} sentences)…",
                show_progress_bar,
            )
            vectors.update(zip(fresh, encode(fresh), strict=True))

    def embed(split: Split) -> np.ndarray:
        sentences = split.sentences()
        if all(sentence in vectors for sentence in sentences):
            both = np.stack([vectors[sentence] for sentence in sentences])
        else:
            both = encode(sentences)
        return pair_features(both[: len(split)], both[len(split) :]) if split.second else both

    return embed


def scores_key(
    task: TransferTask,
    embed: Callable[[Split], np.ndarray],
    seed: int = SEED,
    grid: Sequence[float] = C_GRID,
) -> str:
    """The digest that a task's cached figures are stored under. Nothing is fitted or scored.

    Args:
        task: the task, whose name, protocol, classes and every split's labels enter the key.
        embed: ``embed(split)``, the features :func:`score_task` would be given; their dtype, shape and bytes
            enter the key.
        seed: seed of the fold shuffles.
        grid: the ``C`` values searched.

    Returns:
        A SHA-256 hex digest that also covers the fold count, the iteration limit, :data:`SCORES_FORMAT`, the
        NumPy, SciPy and scikit-learn versions, the BLAS libraries loaded and the processor architecture.
    """
    import platform

    import scipy
    import sklearn
    from threadpoolctl import threadpool_info

    settings = {
        "format": SCORES_FORMAT,
        "task": [task.name, task.protocol, task.pairs, list(task.classes)],
        "seed": seed,
        "folds": FOLDS,
        "grid": [float(c) for c in grid],
        "max_iter": MAX_ITER,
        "versions": [np.__version__, scipy.__version__, sklearn.__version__],
        "blas": sorted(f"{i.get('internal_api')} {i.get('version')}" for i in threadpool_info()),
        "machine": platform.machine(),
    }
    digest = hashlib.sha256(json.dumps(settings, sort_keys=True).encode("utf-8"))
    for name, split in task.splits().items():
        features = np.ascontiguousarray(embed(split))
        digest.update(f"|{name}|{features.dtype}|{features.shape}|".encode())
        digest.update(memoryview(features).cast("B"))
        digest.update(np.asarray(split.labels, dtype=np.int64).tobytes())
    return digest.hexdigest()


def _cached_scores(path: Path, task: TransferTask) -> TaskResult | None:
    """The figures stored in ``path``, or None when there are none or they are unreadable (then scored again)."""
    if not path.is_file():
        return None
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
        details = dict(stored["details"])
        float(details["selection_accuracy"])  # what evaluate_transfer reads, and MRPC's F1
        if task.pairs:
            float(details["f1"])
        return TaskResult(task.name, float(stored["accuracy"]), details)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:  # cut short, or another schema
        reason = f"{type(error).__name__}: {error}"
        logger.warning("Transfer cache entry %s is unreadable (%s); scoring again.", path, reason)
        return None


def _store_scores(path: Path, result: TaskResult) -> None:
    """Cache a task's figures; a cache that cannot be written costs the next run its time, not this run."""
    try:
        atomic_write_json(path, {"task": result.name, "accuracy": result.accuracy, "details": result.details})
    except OSError as error:
        logger.warning("Transfer figures not cached in %s (%s: %s).", path, type(error).__name__, error)


def evaluate_transfer(
    model: Any,
    tasks: Sequence[str] = TRANSFER_TASKS,
    data_dir: str | os.PathLike[str] | None = None,
    *,
    batch_size: int = 64,
    cache_dir: str | os.PathLike[str] | None = None,
    show_progress_bar: bool = True,
    seed: int = SEED,
    n_jobs: int | None = None,
    reuse_scores: bool = True,
) -> dict[str, Any]:
    """Score a SentenceTransformer on the transfer tasks.

    Args:
        model: a SentenceTransformer.
        tasks: among :data:`~st_debias.evaluation.transfer_data.TRANSFER_TASKS`, or ``SST2-quick`` (SST-2
            trained on its dev split; :data:`QUICK_TRANSFER_TASKS` is the quick subset).
        data_dir: data folder (default ``$ST_DEBIAS_DATA``).
        batch_size: encode batch size.
        cache_dir: cache root of the embeddings and of each task's figures (default ``$ST_DEBIAS_CACHE`` or
            ``~/.cache/st_debias``).
        show_progress_bar: progress bars and one line per task.
        seed: seed of the fold shuffles.
        n_jobs: processes for the outer cross-validation folds (default: the usable cores); the figures do
            not depend on it.
        reuse_scores: reuse a task's cached figures when its features, labels and settings are byte for byte
            those they were computed from (:func:`scores_key`); ``False`` fits every classifier again (and
            still caches the figures).

    Returns:
        ``{"scores": {task: accuracy × 100, "avg"}, "selection": {task: dev/cross-validation accuracy,
        "avg"}, "details": {task: {...}}, "sources": {task: {...}}, "timing_s": {"encoding": seconds, task: seconds
        of its classifiers, or of reading its cached figures}}``. The ``selection`` figures never touch a test
        split: compare recipes on them.

    Raises:
        ValueError: an unknown task, or both ``SST2`` and ``SST2-quick``.
        DataNotFoundError, DataFileError: a missing or malformed data file (named in the message).
    """
    tasks = check_transfer_tasks(tasks)
    n_jobs = n_jobs or usable_cores()
    loaded = [load_transfer_task(name, data_dir) for name in tasks]  # every file checked before encoding
    start = time.perf_counter()
    embed = split_embedder(
        model, loaded, batch_size=batch_size, cache_dir=cache_dir, show_progress_bar=show_progress_bar
    )
    scores: dict[str, float] = {}
    selection: dict[str, float] = {}
    details: dict[str, Any] = {}
    timing: dict[str, float] = {"encoding": round(time.perf_counter() - start, 2)}
    for number, task in enumerate(loaded, start=1):
        start = time.perf_counter()
        cached = cache_root(cache_dir) / "transfer" / f"{scores_key(task, embed, seed)}.json"
        result = _cached_scores(cached, task) if reuse_scores else None
        sizes = ", ".join(f"{name} {len(split):,}" for name, split in task.splits().items())
        announce(
            f"Transfer task {number}/{len(loaded)}: {task.name} ({sizes}; {task.protocol})"
            + (": the figures of the same features, from the cache" if result else "…"),
            show_progress_bar,
        )
        if result is None:
            result = score_task(task, embed, seed, n_jobs=n_jobs, show_progress_bar=show_progress_bar)
            _store_scores(cached, result)
        timing[task.name] = round(time.perf_counter() - start, 2)
        scores[task.name] = result.accuracy
        selection[task.name] = result.details["selection_accuracy"]
        details[task.name] = result.details
    scores["avg"] = float(np.mean([scores[t] for t in tasks]))
    selection["avg"] = float(np.mean([selection[t] for t in tasks]))
    return {
        "scores": scores,
        "selection": selection,
        "details": details,
        "sources": {task.name: task.describe() for task in loaded},
        "timing_s": timing,
    }


def check_transfer_tasks(tasks: Sequence[str] | str) -> tuple[str, ...]:
    """The task names as a tuple, checked (a comma-separated string is split)."""
    if isinstance(tasks, str):
        tasks = [t.strip() for t in tasks.split(",") if t.strip()]
    known = (*TRANSFER_TASKS, SST2_QUICK)
    unknown = sorted(set(tasks) - set(known))
    if unknown or not tasks:
        raise ValueError(f"Unknown transfer task(s) {unknown or list(tasks)!r}; choose from {list(known)}")
    if "SST2" in tasks and SST2_QUICK in tasks:
        raise ValueError(f"Choose SST2 or {SST2_QUICK}, not both")
    return tuple(dict.fromkeys(tasks))
