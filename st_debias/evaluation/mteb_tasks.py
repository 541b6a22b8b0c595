"""MTEB's STS tasks and the bias probes through ``mteb.evaluate``: hub data online, local files offline.

Two data paths, one scoring path:

* ``data="hub"``: MTEB's registered tasks (``mteb.get_tasks``), which download ``mteb/sts12-sts`` …
  Their text is the raw release text, and **their SICK-R has 9,927 pairs** (train + trial + test).
* ``data="local"``: :func:`local_task` builds an ``AbsTaskSTS`` subclass per task with MTEB's own
  metadata (renamed ``<task>-local``) and a ``load_data`` that reads ``$ST_DEBIAS_DATA/sts/*.jsonl``
  (SentEval text; **SICK-R test = 4,927 pairs**). Scoring is MTEB's ``AbsTaskSTS`` code either way, so
  identical data gives identical scores (tested by feeding the registered task the local rows).
* The bias probes are MTEB tasks too (:mod:`st_debias.evaluation.mteb_probes`): ``STS13-Cont`` …
  ``STSBenchmark-Oppn`` and the pair-classification tasks ``CANNOTNegationPC``, ``WikiWordOrderPC`` and
  ``WikiNegationMeaningPC``.
  Any other MTEB task runs from the hub only; asking for it locally is an error naming the task and folder.

Every source records its real pair count (SICK-R: 4,927 pairs locally, 9,927 on the hub).

Result cache: MTEB keys its cache on the model name and revision it sees. For a model loaded from a
folder MTEB has neither, so every local model shares one cache entry. :func:`mteb_model` (used by
:func:`run_mteb`, and the way to call ``mteb.evaluate`` yourself) sets the name to ``st-debias/<label>``
and the revision to :func:`~st_debias.fingerprint.model_fingerprint` (a hash of the weights): two models,
or two checkpoints of one base, never share cached results. By default :func:`run_mteb` uses no cache.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from st_debias.evaluation.embeddings import load_any_model, model_fingerprint
from st_debias.evaluation.mteb_probes import PROBE_TASKS, named_only, probe_task
from st_debias.evaluation.sts_data import LOCAL_FILES, STS_TASKS, TextField, load_sts
from st_debias.paths import DATA_ENV, DataNotFoundError, offline
from st_debias.paths import data_dir as resolve_data_dir

#: SICK-R pair counts, so every number can say which SICK-R it is.
SICK_R_PAIRS = {"hub": 9927, "local": 4927}

#: Every task :func:`local_task` can build from the data folder.
LOCAL_TASKS: tuple[str, ...] = (*STS_TASKS, *PROBE_TASKS)


def local_task(name: str, data_dir: str | os.PathLike[str] | None = None, text: TextField = "processed"):
    """An MTEB task for ``name`` over the local data folder: an STS-7 set or a probe task.

    For an STS-7 set (e.g. ``"STS12"``) the metadata is MTEB's with the name ``<name>-local`` and
    ``dataset.path`` set to the local file (``revision`` = its sha256), so local results never pose as hub
    results in a cache. A name of :data:`~st_debias.evaluation.mteb_probes.PROBE_TASKS` gives that probe task.

    Raises:
        DataNotFoundError: ``name`` has no local copy (the message names the task and the folder), or its
            local file is missing (the message names the path).
    """
    import mteb
    from datasets import Dataset, DatasetDict
    from mteb.abstasks.sts import AbsTaskSTS

    if name in PROBE_TASKS or name.endswith(("-Cont", "-Oppn")):
        return probe_task(name, "local", data_dir)
    if name not in STS_TASKS:
        try:
            folder = str(resolve_data_dir(data_dir))
        except DataNotFoundError:
            folder = str(data_dir) if data_dir is not None else f"${DATA_ENV} (not set)"
        raise DataNotFoundError(
            f"MTEB task {name!r} has no local copy in the data folder {folder}: local tasks are {list(LOCAL_TASKS)}. "
            "Run other MTEB tasks from the hub (data='hub', --mteb-data hub)."
        )
    data = load_sts(name, data_dir, text=text)  # fails early, naming the missing path
    upstream = mteb.get_task(name)
    split = upstream.metadata.eval_splits[0]
    metadata = upstream.metadata.model_copy(
        update={
            "name": f"{name}-local",
            "dataset": {"path": data.source, "revision": data.sha256 or "unknown"},
            "description": f"{upstream.metadata.description} Local copy: {data.source} ({len(data)} pairs, "
            f"{data.text_field} text).",
            "superseded_by": None,
        }
    )

    def load_data(self, num_proc: int | None = None, **kwargs: Any) -> None:
        if self.data_loaded:
            return
        rows = {"sentence1": data.sentences1, "sentence2": data.sentences2, "score": data.scores}
        self.dataset = DatasetDict({split: Dataset.from_dict(rows)})
        self.data_loaded = True

    cls = type(
        f"Local{re.sub(r'[^0-9A-Za-z]', '', name)}",
        (AbsTaskSTS,),
        {
            "metadata": metadata,
            "min_score": upstream.min_score,
            "max_score": upstream.max_score,
            "load_data": load_data,
            "evaluate": named_only(AbsTaskSTS, f"{name} (local)"),
            "__doc__": f"MTEB {name} over the local file {data.source}.",
        },
    )
    task = cls()
    task.st_debias_source = data.describe()
    return task


def mteb_tasks(
    names: tuple[str, ...] | list[str] = STS_TASKS,
    data: str = "auto",
    data_dir: str | os.PathLike[str] | None = None,
) -> tuple[list[Any], str]:
    """Build the MTEB tasks and say which data they use.

    Args:
        names: MTEB task names.
        data: ``local``, ``hub`` or ``auto`` (local when a data folder is configured or offline, else hub).
        data_dir: data folder for local tasks.

    Returns:
        (tasks, "local" | "hub").
    """
    if data not in ("auto", "local", "hub"):
        raise ValueError(f"data must be 'auto', 'local' or 'hub', got {data!r}")
    if data == "auto":
        data = "local" if (data_dir is not None or os.environ.get(DATA_ENV) or offline()) else "hub"
    if data == "local":
        return [local_task(name, data_dir) for name in names], "local"
    if offline():
        raise DataNotFoundError(
            "MTEB hub data requested but offline mode is on (HF_HUB_OFFLINE/ST_DEBIAS_OFFLINE): use data='local' "
            f"(--mteb-data local) with {DATA_ENV} pointing at the folder holding sts/."
        )
    import mteb

    registered = [name for name in names if name not in PROBE_TASKS]
    hub = (
        {t.metadata.name: t for t in mteb.get_tasks(tasks=registered, languages=["eng"])}
        if registered
        else {}
    )
    return [probe_task(name, "hub", data_dir) if name in PROBE_TASKS else hub[name] for name in names], "hub"


def mteb_model(model: Any, label: str | None = None) -> Any:
    """Wrap a SentenceTransformer for ``mteb.evaluate`` under a name and revision unique to its weights.

    MTEB files results in its ``ResultCache`` under the model's name and revision. A model loaded from a
    folder (or built in Python) has neither, so MTEB files every such model under
    ``no_model_name_available/no_revision_available``, and a second local model silently gets the first
    one's cached scores. The wrapper returned here is named ``st-debias/<label>`` and its revision is
    :func:`~st_debias.fingerprint.model_fingerprint` (a hash of the weights), so two different models, or
    two checkpoints saved under one label, never share cache entries.

    Args:
        model: a SentenceTransformer, a saved model folder, ``"default"`` or a hub id.
        label: the model's name in MTEB's cache and results (only its last path part is kept; default:
            the folder or model id).

    Returns:
        MTEB's ``SentenceTransformerEncoderWrapper`` around the model, for ``mteb.evaluate``.

    Example:
        ::

            import mteb
            from mteb.cache import ResultCache
            from st_debias.evaluation import mteb_model, mteb_tasks

            tasks, _ = mteb_tasks(["STSBenchmark-Oppn", "CANNOTNegationPC"], data="local")
            result = mteb.evaluate(mteb_model("default"), tasks, cache=ResultCache("mteb-cache"))
    """
    from mteb.models.sentence_transformer_wrapper import SentenceTransformerEncoderWrapper

    model, default_label = load_any_model(model)
    label = label or default_label
    wrapper = SentenceTransformerEncoderWrapper(model)
    safe = re.sub(r"[^0-9A-Za-z._-]+", "_", Path(label).name or label).strip("_") or "model"
    wrapper.mteb_model_meta = wrapper.mteb_model_meta.model_copy(
        update={"name": f"st-debias/{safe}", "revision": model_fingerprint(model)}
    )
    return wrapper


def average_by_metric(scores: dict[str, float], metrics: dict[str, str]) -> dict[str, float]:
    """Mean score of each metric kind: ``{"avg": …}`` for one kind, ``{"avg <metric>": …}`` per kind otherwise.

    Args:
        scores: task → score.
        metrics: task → its main score's name (``cosine_spearman``, ``cosine_ap``, …).
    """
    groups: dict[str, list[float]] = {}
    for task, score in scores.items():
        groups.setdefault(metrics[task], []).append(score)
    if len(groups) == 1:
        (values,) = groups.values()
        return {"avg": sum(values) / len(values)}
    return {f"avg {metric}": sum(values) / len(values) for metric, values in groups.items()}


def run_mteb(
    model: Any,
    names: tuple[str, ...] | list[str] = STS_TASKS,
    data: str = "auto",
    data_dir: str | os.PathLike[str] | None = None,
    label: str | None = None,
    mteb_cache_dir: str | os.PathLike[str] | None = None,
    batch_size: int = 64,
    show_progress_bar: bool = False,
) -> dict[str, Any]:
    """Run MTEB tasks: ``{"scores": {task: main score ×100, averages}, "main_scores", "chance", "data", "sources", …}``.

    The scores hold the mean of each metric kind (:func:`average_by_metric`): ``avg`` when every task has
    one main score, else ``avg cosine_spearman``, ``avg cosine_ap``, … (a Spearman is never averaged
    with an average precision). ``main_scores`` names each task's metric; ``chance`` gives the average
    precision ×100 of a random ranking for the pair-classification probes (the share of label-1 pairs).

    Args:
        model: a SentenceTransformer, a saved model folder, ``"default"`` or a hub id.
        names: MTEB task names (default: the STS-7; see :data:`LOCAL_TASKS` for what runs locally).
        data: ``local``, ``hub`` or ``auto`` (see :func:`mteb_tasks`).
        data_dir: data folder for local tasks.
        label: model label; becomes the MTEB model name ``st-debias/<label>`` (default: the path or model id).
        mteb_cache_dir: MTEB result cache folder (``--mteb-cache-dir`` of ``st-debias eval``, ``mteb_cache_dir``
            of :func:`~st_debias.evaluation.evaluate_model`); None (default) disables the cache. With a cache, the
            revision is the weights' fingerprint, so checkpoints never share entries.
        batch_size: encode batch size.
        show_progress_bar: MTEB's progress bars.
    """
    import mteb
    from mteb.cache import ResultCache

    tasks, source = mteb_tasks(names, data, data_dir)
    wrapper = mteb_model(model, label)
    cache = ResultCache(cache_path=str(mteb_cache_dir)) if mteb_cache_dir is not None else None
    result = mteb.evaluate(
        wrapper,
        tasks,
        cache=cache,
        encode_kwargs={"batch_size": batch_size, "show_progress_bar": show_progress_bar},
        show_progress_bar=show_progress_bar,
        overwrite_strategy="only-missing",
    )
    scores: dict[str, float] = {}
    for task_result in result.task_results:
        name = task_result.task_name.removesuffix("-local")
        scores[name] = float(task_result.get_score()) * 100.0
    ordered = {name: scores[name] for name in names if name in scores}
    metrics = {task.metadata.name.removesuffix("-local"): task.metadata.main_score for task in tasks}
    averages = average_by_metric(ordered, metrics)
    chance = {
        task.metadata.name: task.st_debias_source["chance_ap"] * 100.0
        for task in tasks
        if "chance_ap" in getattr(task, "st_debias_source", {})
    }
    sources: dict[str, Any] = {}
    for task in tasks:
        name = task.metadata.name.removesuffix("-local")
        if hasattr(task, "st_debias_source"):
            sources[name] = dict(task.st_debias_source)
        else:
            sources[name] = {
                "source": f"hub:{task.metadata.dataset['path']}",
                "revision": task.metadata.dataset.get("revision"),
            }
    if "SICK-R" in sources and source == "hub":
        sources["SICK-R"]["note"] = f"MTEB hub SICK-R: {SICK_R_PAIRS['hub']:,} pairs (train+trial+test)"
    return {
        "scores": {**ordered, **averages},
        "main_scores": metrics,
        "chance": chance,
        "data": source,
        "model_name": wrapper.mteb_model_meta.name,
        "revision": wrapper.mteb_model_meta.revision,
        "sources": sources,
    }


__all__ = [
    "LOCAL_FILES",
    "LOCAL_TASKS",
    "SICK_R_PAIRS",
    "average_by_metric",
    "local_task",
    "mteb_model",
    "mteb_tasks",
    "run_mteb",
]
