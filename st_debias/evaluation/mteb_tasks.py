"""MTEB's STS tasks and the bias probes through ``mteb.evaluate``: hub data online, local files offline.

Two data paths, one scoring path:

* ``data="hub"``: MTEB's registered tasks (``mteb.get_tasks``), which download ``mteb/sts12-sts`` …
  Their text is the raw release text, and **their SICK-R has 9,927 pairs** (train + trial + test).
* ``data="local"``: :func:`local_task` builds an ``AbsTaskSTS`` subclass per task with MTEB's own
  metadata (renamed ``<task>-local``) and a ``load_data`` that reads ``$ST_DEBIAS_DATA/sts/*.jsonl``
  (SentEval text; **SICK-R test = 4,927 pairs**). Scoring is MTEB's ``AbsTaskSTS`` code either way, so
  identical data gives identical scores (tested by feeding the registered task the local rows).
* The bias probes are MTEB tasks too (:mod:`st_debias.evaluation.mteb_probes`): ``STS13-Cont`` …
  ``STSBenchmark-Oppn`` and the pair-classification tasks ``CANNOTNegationPC`` and ``WikiWordOrderPC``.
  Any other MTEB task runs from the hub only; asking for it locally is an error naming the task and folder.

Every source records its real pair count (SICK-R: 4,927 pairs locally, 9,927 on the hub).

Result cache: MTEB keys its cache on the model name and revision it sees. For a model loaded from a
folder those are not unique per checkpoint, so :func:`run_mteb` sets the name to ``st-debias/<label>``
and the revision to :func:`~st_debias.evaluation.embeddings.model_fingerprint` (a hash of the weights):
two checkpoints of one base never share cached results. By default no cache is used at all.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from st_debias.evaluation.embeddings import load_any_model, model_fingerprint
from st_debias.evaluation.mteb_probes import PROBE_TASKS, probe_task
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


def _mteb_model(model: Any, label: str):
    """Wrap a SentenceTransformer for MTEB with a name and revision unique to its weights."""
    from mteb.models.sentence_transformer_wrapper import SentenceTransformerEncoderWrapper

    wrapper = SentenceTransformerEncoderWrapper(model)
    safe = re.sub(r"[^0-9A-Za-z._-]+", "_", Path(label).name or label).strip("_") or "model"
    wrapper.mteb_model_meta = wrapper.mteb_model_meta.model_copy(
        update={"name": f"st-debias/{safe}", "revision": model_fingerprint(model)}
    )
    return wrapper


def run_mteb(
    model: Any,
    names: tuple[str, ...] | list[str] = STS_TASKS,
    data: str = "auto",
    data_dir: str | os.PathLike[str] | None = None,
    label: str | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    batch_size: int = 64,
    show_progress_bar: bool = False,
) -> dict[str, Any]:
    """Run MTEB tasks and return ``{"scores": {task: main score ×100, "avg": …}, "data": …, "sources": …}``.

    Args:
        model: a SentenceTransformer, a saved model folder, ``"default"`` or a hub id.
        names: MTEB task names (default: the STS-7; see :data:`LOCAL_TASKS` for what runs locally).
        data: ``local``, ``hub`` or ``auto`` (see :func:`mteb_tasks`).
        data_dir: data folder for local tasks.
        label: model label; becomes the MTEB model name ``st-debias/<label>`` (default: the path or model id).
        cache_dir: MTEB result cache folder; None (default) disables the cache. With a cache, the
            revision is the weights' fingerprint, so checkpoints never share entries.
        batch_size: encode batch size.
        show_progress_bar: MTEB's progress bars.
    """
    import mteb
    from mteb.cache import ResultCache

    model, default_label = load_any_model(model)
    label = label or default_label
    tasks, source = mteb_tasks(names, data, data_dir)
    wrapper = _mteb_model(model, label)
    cache = ResultCache(cache_path=str(cache_dir)) if cache_dir is not None else None
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
    ordered["avg"] = sum(ordered.values()) / len(ordered)
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
        "scores": ordered,
        "data": source,
        "model_name": wrapper.mteb_model_meta.name,
        "revision": wrapper.mteb_model_meta.revision,
        "sources": sources,
    }


__all__ = ["LOCAL_FILES", "LOCAL_TASKS", "SICK_R_PAIRS", "local_task", "mteb_tasks", "run_mteb"]
