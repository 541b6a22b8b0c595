"""Reuse an evaluation only when it is provably the same computation: same weights, data and settings.

A ``results.json`` entry depends on the model's weights, its inference settings (modules, pooling,
``max_seq_length``), the backend that ran it (torch, or a conversion: :mod:`st_debias.evaluation.backends`), the
evaluation data files, the evaluation settings (task groups, negation pairs)
and the metric code. :class:`EvaluationKey` records all of them; an entry is reused only when every
field matches. Two places are searched, in order:

* **packaged evaluations** (``st_debias/evaluation/packaged/*.json``): the full evaluation of the default
  start model (all-MiniLM-L6-v2), shipped so that ``st-debias train`` does not spend its first minutes
  re-encoding the tens of thousands of sentences it has scored before (the entry's ``encoded_sentences``). Regenerate with
  ``python scripts/package_start_evaluation.py`` whenever :data:`EVALUATION_FORMAT` is bumped.
* **the on-disk cache** (``<cache>/eval/<key digest>.json``), written after each evaluation.

Data paths are stored relative to the data folder (``$ST_DEBIAS_DATA/sts/…``) and expanded to the
user's folder on reuse: the checksums prove the files are the same bytes.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from st_debias.data.io.corpus import WIKI_CORPUS
from st_debias.datafiles import file_sha256
from st_debias.evaluation.backends import backend_info, backend_label, resolve_backend
from st_debias.evaluation.bias_data import CANNOT_DIR, DEFAULT_NEGATION_PAIRS, DEFAULT_WORD_ORDER_LINES
from st_debias.evaluation.sts_data import LOCAL_FILES, STS_TASKS
from st_debias.files import atomic_write_json
from st_debias.fingerprint import model_fingerprint
from st_debias.paths import DATA_ENV, DataNotFoundError, data_dir, portable_path

logger = logging.getLogger(__name__)

#: Version of the metric code behind a results entry. Bump it when a score's computation changes or an entry
#: gains a block, so that packaged and cached entries computed by the old code are recomputed, not reused.
EVALUATION_FORMAT = 6

#: Task groups whose inputs are all local files (MTEB has its own data and result cache: never reused here).
REUSABLE_GROUPS = frozenset({"sts", "bias"})

#: The transfer tasks: never stored as an entry (their embeddings and each task's figures have caches of their
#: own, in :mod:`st_debias.evaluation.transfer`), added to a reused one.
TRANSFER_GROUP = "transfer"

DATA_PLACEHOLDER = f"${DATA_ENV}"


@dataclass(frozen=True)
class EvaluationKey:
    """Everything a ``results.json`` entry depends on.

    Attributes:
        fingerprint: :func:`st_debias.fingerprint.model_fingerprint` of the weights.
        inference: digest of the model's module configurations, ``max_seq_length`` and tokenizer.
        tasks: task groups, sorted.
        negation_pairs: CANNOT pairs used by the negation probe.
        data: ``{path relative to the data folder: sha256}`` of every evaluation file read.
        format: :data:`EVALUATION_FORMAT`.
        sts_tasks: the STS sets scored (the STS-7, or a quick subset).
        backend: :meth:`~st_debias.evaluation.backends.BackendInfo.tag` of the backend that encoded: ``torch``, or
            the backend, runtime and exporter versions and precision of a conversion. Left out of the stored key
            (and of the digest) for torch, so entries stored before backends existed still match.
    """

    fingerprint: str
    inference: str
    tasks: tuple[str, ...]
    negation_pairs: int | None
    data: dict[str, str]
    format: int = EVALUATION_FORMAT
    sts_tasks: tuple[str, ...] = STS_TASKS
    backend: str = "torch"

    def as_dict(self) -> dict[str, Any]:
        values = {**asdict(self), "tasks": list(self.tasks), "sts_tasks": list(self.sts_tasks)}
        if self.backend == "torch":
            del values["backend"]
        return values

    def digest(self) -> str:
        """A short hash of the whole key (the cache file name)."""
        return hashlib.sha256(json.dumps(self.as_dict(), sort_keys=True).encode()).hexdigest()[:20]

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> EvaluationKey:
        return cls(
            **{
                **values,
                "tasks": tuple(values["tasks"]),
                "sts_tasks": tuple(values.get("sts_tasks", STS_TASKS)),
            }
        )

    def mismatch(self, other: EvaluationKey) -> str | None:
        """Why ``other`` describes a different evaluation (None when it is the same), in words."""
        if self.fingerprint != other.fingerprint:
            return f"weights fingerprint {other.fingerprint} ≠ {self.fingerprint}"
        if self.backend != other.backend:
            return f"backend {other.backend} ≠ {self.backend}"
        if self.inference != other.inference:
            return "inference settings differ (modules, pooling, max_seq_length or tokenizer)"
        if self.format != other.format:
            return f"evaluation code format {other.format} ≠ {self.format}"
        if (self.tasks, self.sts_tasks, self.negation_pairs) != (
            other.tasks,
            other.sts_tasks,
            other.negation_pairs,
        ):
            return (
                f"settings differ (tasks {list(other.tasks)}, STS sets {list(other.sts_tasks)}, "
                f"negation pairs {other.negation_pairs})"
            )
        changed = sorted(set(self.data.items()) ^ set(other.data.items()))
        if changed:
            names = sorted({name for name, _ in changed})
            return f"data checksums differ ({', '.join(names)})"
        return None


def inference_digest(model: Any) -> str:
    """Hash of what, besides the weights, changes a model's embeddings: modules, their configs, length, tokenizer."""
    modules = []
    for module in model if hasattr(model, "__iter__") else [model]:
        config = module.get_config_dict() if hasattr(module, "get_config_dict") else {}
        modules.append([type(module).__name__, config])
    tokenizer = getattr(model, "tokenizer", None)
    payload = {
        "modules": modules,
        "max_seq_length": getattr(model, "max_seq_length", None),
        "tokenizer": [type(tokenizer).__name__, len(tokenizer)] if tokenizer is not None else None,
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()[:16]



def evaluation_data_files(
    tasks: Sequence[str],
    data_folder: str | os.PathLike[str] | None = None,
    sts_tasks: Sequence[str] = STS_TASKS,
) -> dict[str, Path] | None:
    """``{relative path: file}`` of every local file the evaluation reads; None when any is not local."""
    try:
        root = data_dir(data_folder)
    except DataNotFoundError:
        return None
    relative = [LOCAL_FILES[task] for task in sts_tasks]
    if "bias" in tasks:
        cannot = root / CANNOT_DIR
        if not cannot.is_dir():
            return None
        relative += [f"{CANNOT_DIR}/{path.name}" for path in sorted(cannot.glob("*.tsv"))]
        relative.append(WIKI_CORPUS)  # the word-order probe's sentences are the corpus's last lines
    files = {name: root / name for name in relative}
    return files if all(path.is_file() for path in files.values()) else None


def evaluation_key(
    model: Any,
    tasks: Sequence[str],
    data_folder: str | os.PathLike[str] | None = None,
    negation_pairs: int | None = DEFAULT_NEGATION_PAIRS,
    sts_tasks: Sequence[str] = STS_TASKS,
    backend: str = "torch",
) -> EvaluationKey | None:
    """The key of evaluating ``model`` on ``tasks``; None when the evaluation cannot be reused.

    ``backend`` (one of :data:`~st_debias.evaluation.backends.BACKENDS`) enters the key with its runtime's
    version, so figures of one backend are never reused as another's.

    Not reusable: a task group outside :data:`REUSABLE_GROUPS` (MTEB), or data not read from local files
    (hub fallback, missing folder), whose content cannot be checksummed.
    """
    groups = tuple(sorted(dict.fromkeys(tasks)))
    if not groups or not set(groups) <= REUSABLE_GROUPS:
        return None
    files = evaluation_data_files(groups, data_folder, sts_tasks)
    if files is None:
        return None
    return EvaluationKey(
        fingerprint=model_fingerprint(model),
        inference=inference_digest(model),
        tasks=groups,
        negation_pairs=negation_pairs if "bias" in groups else None,
        data={name: file_sha256(path) for name, path in files.items()},
        sts_tasks=tuple(sts_tasks),
        backend=backend_info(backend).tag(),
    )


def restrict_entry(entry: dict[str, Any], sts_tasks: Sequence[str]) -> dict[str, Any]:
    """A full evaluation entry cut down to ``sts_tasks``: what evaluating only those sets gives.

    Every per-set score, Cont/Oppn split and the probes on STS-B test and CANNOT do not depend on the other
    sets, so they are copied; the average is recomputed over ``sts_tasks`` exactly as
    :meth:`~st_debias.evaluation.sts.STSSuite.evaluate` does. Encoding counts and timings, which described
    the full run, are dropped. (Encoding a smaller set batches sentences differently; the float32 padding
    noise that causes moves cosines by ~1e-9, far below any printed digit.)
    """
    out = {k: v for k, v in entry.items() if k not in ("encoded_sentences", "timing_s")}
    if "sts" in entry:
        scores = {task: entry["sts"][task] for task in sts_tasks}
        scores["avg"] = float(np.mean(list(scores.values())))
        out["sts"] = scores
    subsets = {task: block for task, block in entry.get("sts_subsets", {}).items() if task in sts_tasks}
    out.pop("sts_subsets", None)
    if subsets:
        out["sts_subsets"] = subsets
    if "bias" in entry:
        cont_oppn = entry["bias"].get("cont_oppn", {})
        out["bias"] = {**entry["bias"], "cont_oppn": {k: v for k, v in cont_oppn.items() if k in sts_tasks}}
    sources = dict(entry.get("sources", {}))
    if "sts" in sources:
        sources["sts"] = {k: v for k, v in sources["sts"].items() if k in sts_tasks}
    out["sources"] = sources
    out["evaluation"] = {"sts_tasks": list(sts_tasks), "full": False, "restricted_from_full_evaluation": True}
    return out


# ---------------------------------------------------------------------------------------------------
# Stored entries: {"key": EvaluationKey, "result": results.json entry with data paths made relative}
# ---------------------------------------------------------------------------------------------------


def _map_strings(value: Any, change: Callable[[str], str]) -> Any:
    """``change`` applied to every string of a JSON-like value."""
    if isinstance(value, str):
        return change(value)
    if isinstance(value, dict):
        return {k: _map_strings(v, change) for k, v in value.items()}
    if isinstance(value, list):
        return [_map_strings(v, change) for v in value]
    return value


def stored_entry(
    key: EvaluationKey, result: dict[str, Any], data_folder: str | os.PathLike[str] | None
) -> dict:
    """The JSON written to disk: the key, and the result with data paths relative to ``$ST_DEBIAS_DATA``."""
    root = str(data_dir(data_folder).resolve())
    stored = _map_strings(result, lambda text: DATA_PLACEHOLDER + text[len(root) :] if text.startswith(root) else text)
    return {"key": key.as_dict(), "result": stored}


def _restore(entry: dict[str, Any], data_folder: str | os.PathLike[str] | None) -> dict[str, Any]:
    """The stored result with its data paths written as a fresh evaluation writes them (:func:`portable_path`):
    never this machine's data folder when ``$ST_DEBIAS_DATA`` names it."""
    root = str(data_dir(data_folder).resolve())

    def restore(text: str) -> str:
        return portable_path(root + text[len(DATA_PLACEHOLDER) :]) if text.startswith(DATA_PLACEHOLDER) else text

    return _map_strings(entry["result"], restore)


def packaged_dir() -> Path:
    """Folder of the evaluations shipped with the package."""
    return Path(str(resources.files("st_debias.evaluation") / "packaged"))


@dataclass(frozen=True)
class Reused:
    """A stored entry that matches: the result (paths expanded) and where it came from."""

    result: dict[str, Any]
    path: Path
    kind: str  # "packaged" or "cache"


@dataclass(frozen=True)
class Lookup:
    """Outcome of :func:`find_evaluation`: a match, or the reasons the stored entries of this model did not match."""

    reused: Reused | None
    rejected: list[str]


def find_evaluation(
    key: EvaluationKey,
    data_folder: str | os.PathLike[str] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    packaged: Path | None = None,
) -> Lookup:
    """Look for a stored entry with exactly ``key``: packaged evaluations first, then the cache.

    ``rejected`` lists, for packaged entries of the same weights that did not match, why not (e.g. a data
    file changed), so a caller can say why it recomputes.
    """
    rejected: list[str] = []
    folder = packaged if packaged is not None else packaged_dir()
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        entry = json.loads(path.read_text(encoding="utf-8"))
        stored = EvaluationKey.from_dict(entry["key"])
        reason = key.mismatch(stored)
        if reason is None:
            return Lookup(Reused(_restore(entry, data_folder), path, "packaged"), rejected)
        if stored.fingerprint == key.fingerprint:
            rejected.append(f"{path.name}: {reason}")
    cached = cache_file(key, cache_dir)
    if cached.is_file():
        try:
            entry = json.loads(cached.read_text(encoding="utf-8"))
            stored = EvaluationKey.from_dict(entry["key"])
            if not isinstance(entry["result"], dict):
                raise TypeError(f"result is a {type(entry['result']).__name__}, not an object")
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:  # cut short, or another schema
            # The caller evaluates again and rewrites the entry.
            logger.warning(
                "Evaluation cache entry %s is unreadable (%s: %s); rebuilding it.", cached, type(error).__name__, error
            )
            return Lookup(None, rejected)
        if key.mismatch(stored) is None:
            return Lookup(Reused(_restore(entry, data_folder), cached, "cache"), rejected)
    return Lookup(None, rejected)


def cache_file(key: EvaluationKey, cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """Where the evaluation with ``key`` is cached (``<cache>/eval/<digest>.json``)."""
    from st_debias.paths import cache_root

    return cache_root(cache_dir) / "eval" / f"{key.digest()}.json"


def evaluate_or_reuse(
    model: Any,
    tasks: Sequence[str] = ("sts", "bias"),
    data_folder: str | os.PathLike[str] | None = None,
    *,
    label: str | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    show_progress_bar: bool = True,
    packaged: Path | None = None,
    sts_tasks: Sequence[str] = STS_TASKS,
    **evaluate_kwargs: Any,
) -> dict[str, Any]:
    """:func:`~st_debias.evaluation.evaluate_model`, or a stored entry with exactly the same key.

    A reused entry gets ``reused_from`` (``{"kind": "packaged"|"cache", "path", "computed_by"}``) and says
    so in one line on stderr; a computed entry is cached (atomically) for the next run.

    Args:
        model: a SentenceTransformer instance.
        tasks: evaluation groups; only ``sts``/``bias`` evaluations are reused (MTEB keeps its own cache). With
            ``transfer`` among other groups, those are reused where they can be and the transfer tasks (whose
            embeddings and figures are cached on disk) are added to the entry.
        data_folder: data folder (default ``$ST_DEBIAS_DATA``).
        label: name shown in reports.
        cache_dir: evaluation cache root (default ``$ST_DEBIAS_CACHE`` or ~/.cache/st_debias).
        show_progress_bar: progress bars and one-line announcements.
        packaged: folder of packaged evaluations to search (default: the package's own).
        sts_tasks: the STS sets to score; for a subset (quick evaluation) a stored *full* evaluation with
            the same key is reused through :func:`restrict_entry`.
        evaluate_kwargs: passed to ``evaluate_model`` (e.g. ``batch_size``); ``negation_pairs`` and ``backend`` are
            part of the key.
    """
    from st_debias.evaluation.evaluate import evaluate_model
    from st_debias.progress import announce

    groups = tuple(dict.fromkeys(tasks))
    if TRANSFER_GROUP in groups and len(groups) > 1:
        # The transfer tasks have their own caches (embeddings, each task's figures): reuse the rest, then add them.
        rest = tuple(group for group in groups if group != TRANSFER_GROUP)
        result = evaluate_or_reuse(
            model, rest, data_folder, label=label, cache_dir=cache_dir, show_progress_bar=show_progress_bar,
            packaged=packaged, sts_tasks=sts_tasks, **evaluate_kwargs,
        )  # fmt: skip
        transfer_kwargs = {
            k: v for k, v in evaluate_kwargs.items() if k in ("batch_size", "transfer_tasks", "backend")
        }
        transfer = evaluate_model(
            model, tasks=(TRANSFER_GROUP,), data_dir=data_folder, label=label,
            show_progress_bar=show_progress_bar, cache_dir=cache_dir, **transfer_kwargs,
        )  # fmt: skip
        for block in ("transfer", "transfer_selection", "transfer_details"):
            result[block] = transfer[block]
        result.setdefault("sources", {})[TRANSFER_GROUP] = transfer["sources"][TRANSFER_GROUP]
        result.setdefault("timing_s", {})[TRANSFER_GROUP] = transfer["timing_s"][TRANSFER_GROUP]
        return result
    negation_pairs = evaluate_kwargs.get("negation_pairs", DEFAULT_NEGATION_PAIRS)
    backend = resolve_backend(evaluate_kwargs.get("backend", "torch"))  # auto: the backend it stands for here
    sts_tasks = tuple(sts_tasks)
    key = evaluation_key(model, tasks, data_folder, negation_pairs, sts_tasks, backend)
    if evaluate_kwargs.get("pair_dataset") is not None:
        key = None  # training-pair statistics depend on a dataset the key does not describe
    if evaluate_kwargs.get("word_order_lines", DEFAULT_WORD_ORDER_LINES) != DEFAULT_WORD_ORDER_LINES:
        key = None  # the key describes the default word-order slice only
    if key is not None:
        candidates = [(key, False)]
        if sts_tasks != STS_TASKS:
            full_key = evaluation_key(model, tasks, data_folder, negation_pairs, STS_TASKS, backend)
            candidates += [(full_key, True)] if full_key is not None else []
        rejected: list[str] = []
        for candidate, restrict in candidates:
            lookup = find_evaluation(candidate, data_folder, cache_dir, packaged)
            rejected = lookup.rejected  # those of the full key: a quick key never matches a full entry
            if lookup.reused is None:
                continue
            result = lookup.reused.result
            where = "shipped with st_debias" if lookup.reused.kind == "packaged" else "cached"
            announce(
                f"Reusing the {'full ' * restrict}evaluation of {label or result.get('model')} {where}: "
                f"{portable_path(lookup.reused.path)} (same weights fingerprint {key.fingerprint}, inference settings and "
                f"checksums of {len(candidate.data)} evaluation data files)"
                + (f", restricted to {', '.join(sts_tasks)}." if restrict else "."),
                show_progress_bar,
            )
            if restrict:
                result = restrict_entry(result, sts_tasks)
            result["reused_from"] = {
                "kind": lookup.reused.kind,
                "path": portable_path(lookup.reused.path),
                "computed_by": result.get("computed_by"),
            }
            result.setdefault("backend", {"name": "torch"})  # stored before entries named their backend
            if label:
                result["model"] = backend_label(label, backend)
            return result
        for reason in rejected:
            announce(f"Not reusing the packaged evaluation {reason}; evaluating instead.", show_progress_bar)
    result = evaluate_model(
        model,
        tasks=tasks,
        data_dir=data_folder,
        label=label,
        show_progress_bar=show_progress_bar,
        sts_tasks=sts_tasks,
        cache_dir=cache_dir,
        **evaluate_kwargs,
    )
    if key is not None and result["backend"]["name"] != backend:  # auto fell back to torch: key what ran
        key = evaluation_key(model, tasks, data_folder, negation_pairs, sts_tasks, result["backend"]["name"])
    if key is not None:
        atomic_write_json(cache_file(key, cache_dir), stored_entry(key, result, data_folder), indent=1)
    return result
