"""One call that evaluates a model: STS suite, bias probes and (optionally) MTEB → one results.json entry."""

from __future__ import annotations

import logging
import os
import platform
import time
from collections.abc import Sequence
from typing import Any

from st_debias.evaluation.backends import backend_label, model_backend, resolve_backend
from st_debias.evaluation.bias import (
    alignment_uniformity,
    cont_oppn_scores,
    cont_oppn_split,
    negation_meaning_probe,
    negation_probe,
    shuffle_word_order,
    word_order_probe,
)
from st_debias.evaluation.bias_data import (
    DEFAULT_NEGATION_PAIRS,
    DEFAULT_WORD_ORDER_LINES,
    load_negation_meaning_items,
    load_negation_pairs,
    load_word_order_sentences,
)
from st_debias.evaluation.embeddings import EmbeddingCache, load_any_model, model_fingerprint
from st_debias.evaluation.entries import check_tasks
from st_debias.evaluation.pairs import load_pair_rows, training_pair_statistics
from st_debias.evaluation.runtimes import BackendMismatch, backend_model
from st_debias.evaluation.sts import STSSuite
from st_debias.evaluation.sts_data import STS_TASKS
from st_debias.evaluation.transfer import check_transfer_tasks, evaluate_transfer
from st_debias.evaluation.transfer_data import TRANSFER_TASKS
from st_debias.paths import portable_path
from st_debias.progress import announce, torch_threads

logger = logging.getLogger(__name__)

#: The quick evaluation: STS-B test and SICK-R test (the bias probes keep their full data: STS-B test
#: Cont/Oppn, alignment/uniformity, 3,000 CANNOT pairs), about 40 % of the full evaluation's sentences.
QUICK_STS_TASKS: tuple[str, ...] = ("STSBenchmark", "SICK-R")


def evaluate_model(
    model: Any,
    tasks: Sequence[str] | str = ("sts", "bias"),
    data_dir: str | os.PathLike[str] | None = None,
    batch_size: int = 64,
    show_progress_bar: bool = True,
    *,
    label: str | None = None,
    negation_pairs: int | None = DEFAULT_NEGATION_PAIRS,
    word_order_lines: int = DEFAULT_WORD_ORDER_LINES,
    mteb_data: str = "auto",
    mteb_tasks: Sequence[str] = STS_TASKS,
    mteb_cache_dir: str | os.PathLike[str] | None = None,
    pair_dataset: Any | None = None,
    pair_columns: Sequence[str] | None = None,
    sts_tasks: Sequence[str] = STS_TASKS,
    transfer_tasks: Sequence[str] = TRANSFER_TASKS,
    backend: str = "torch",
    cache_dir: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """Evaluate one model and return its ``results.json`` entry.

    All sentences of the STS-7 sets and of the probes are collected first and encoded once, in one
    ``encode`` call (each unique sentence once); every score is then computed from that table. MTEB, if
    asked for, runs through ``mteb.evaluate`` with its own encoding.

    Args:
        model: a SentenceTransformer, a saved model folder (e.g. a training output), ``"default"`` or a
            hub id (resolved by :func:`st_debias.paths.load_model`).
        tasks: groups among ``sts``, ``bias``, ``mteb`` (list or comma-separated string).
        data_dir: data folder (default ``$ST_DEBIAS_DATA``).
        batch_size: encode batch size.
        show_progress_bar: tqdm bar while encoding.
        label: name shown in reports (default: the path/name, or the model card's id).
        negation_pairs: CANNOT pairs for the negation probe (default 3,000; None = all).
        word_order_lines: lines from the end of the Wikipedia corpus for the word-order probe (default
            1,000; sentences under 4 words are skipped and counted).
        mteb_data: ``auto``, ``local`` or ``hub`` (see :func:`st_debias.evaluation.mteb_tasks.mteb_tasks`).
        mteb_tasks: MTEB task names for the ``mteb`` group (default: the STS-7; the probe tasks of
            :mod:`st_debias.evaluation.mteb_probes` run locally too).
        mteb_cache_dir: MTEB result cache; None disables it.
        pair_dataset: optional training set of (anchor, positive, negative…) rows (a ``datasets.Dataset``,
            rows, or a .jsonl/.csv/.tsv path); its lexical overlap and cosine under *this* model (as the
            guide) go to ``bias.training_pairs`` (DebCSE Tables 1 and 4).
        pair_columns: column names of a ``pair_dataset`` file, in (anchor, positive, negatives…) order.
        sts_tasks: the STS sets to score (default the STS-7 of the protocol). A subset, e.g.
            :data:`QUICK_STS_TASKS`, is recorded as ``evaluation.sts_tasks`` and its average is not the
            STS-7 average; the bias probes need ``STSBenchmark`` in it.
        transfer_tasks: the SentEval transfer tasks of the ``transfer`` group (default all seven;
            :data:`~st_debias.evaluation.transfer.QUICK_TRANSFER_TASKS` trains SST-2 on its dev split).
        backend: what runs the transformer for every encode (STS, probes, MTEB, transfer): ``torch``, or
            ``onnx``/``openvino``/``onnx-int8`` through :func:`~st_debias.evaluation.runtimes.backend_model`,
            which converts once and checks the fp32 backends against torch; ``auto``: the installed fp32 backend
            measured fastest here (:func:`~st_debias.evaluation.backends.resolve_backend`), torch when its
            conversion fails the check (with a warning). Recorded as ``backend``; the label gets ``[backend]``
            appended (``[onnx-int8]``: not the model's fp32 figures).
        cache_dir: cache root for a backend's conversion and the transfer tasks' embeddings and figures (default
            ``$ST_DEBIAS_CACHE`` or ~/.cache/st_debias).

    Returns:
        ``{"model", "fingerprint", "sts": {task: score, "avg"}, "sts_subsets": {task: {subset: {...}}}, "bias":
        {...}, "mteb": {...}, "transfer": {task: accuracy, "avg"}, "transfer_selection": {...},
        "transfer_details": {...}, "sources": {...}, "backend": {...}, "encoded_sentences", "timing_s", "environment"}``;
        blocks
        for groups not asked for are absent (``sts_subsets``: :meth:`~st_debias.evaluation.sts.STSSuite.subset_scores`,
        absent when no set scored has several subsets).
        STS scores are Spearman ×100, transfer scores accuracy ×100 (``transfer_selection``: the dev or
        cross-validation accuracy each classifier was chosen on, never a test figure).
    """
    groups = check_tasks(tasks)
    if pair_dataset is not None and "bias" not in groups:
        raise ValueError("pair_dataset (--pairs) is scored by the bias probes: add 'bias' to the tasks")
    if "transfer" in groups:
        transfer_tasks = check_transfer_tasks(transfer_tasks)
    sts_tasks = tuple(sts_tasks)
    unknown = sorted(set(sts_tasks) - set(STS_TASKS))
    if unknown or not sts_tasks:
        raise ValueError(f"Unknown STS task(s) {unknown or sts_tasks!r}; choose from {list(STS_TASKS)}")
    if "bias" in groups and "STSBenchmark" not in sts_tasks:
        raise ValueError(
            "The bias probes (alignment/uniformity, Cont/Oppn) need STSBenchmark among sts_tasks"
        )
    chosen = resolve_backend(backend)
    start = time.perf_counter()
    st_model, default_label = load_any_model(model)
    try:
        encoder = backend_model(st_model, chosen, cache_dir)
    except BackendMismatch as error:
        if backend != "auto":
            raise
        logger.warning("backend auto: %s is not torch's on this model (%s); evaluating with torch.", chosen, error)
        encoder = st_model
    info = model_backend(encoder)
    label = backend_label(label or default_label, info.name)
    timing: dict[str, float] = {"load_model": time.perf_counter() - start}
    entry: dict[str, Any] = {"model": label, "fingerprint": model_fingerprint(st_model), "backend": info.as_dict()}
    if sts_tasks != STS_TASKS:
        entry["evaluation"] = {"sts_tasks": list(sts_tasks), "full": False}
    sources: dict[str, Any] = {}

    t0 = time.perf_counter()
    needs_sts_data = "sts" in groups or "bias" in groups
    suite = STSSuite(sts_tasks, data_dir) if needs_sts_data else None
    negations = word_order = corpus_slice = None
    if "bias" in groups:
        negations = load_negation_pairs(data_dir, limit=negation_pairs)
        corpus_slice = load_word_order_sentences(data_dir, count=word_order_lines)
        word_order = shuffle_word_order(corpus_slice.sentences)
        negation_meaning = load_negation_meaning_items(data_dir)
    timing["load_data"] = time.perf_counter() - t0

    cache = EmbeddingCache(encoder, batch_size=batch_size, show_progress_bar=show_progress_bar)
    if suite is not None:
        t0 = time.perf_counter()
        sentences = suite.sentences()
        if negations is not None:
            sentences += negations.sentences + negations.negations
            sentences += [p for p in negations.paraphrases if p is not None]
            sentences += word_order.sentences + word_order.shuffled
            sentences += negation_meaning.sentences()
        announce(
            f"Evaluating {label} on {_describe(groups, negations, sts_tasks)}: {len(dict.fromkeys(sentences)):,} unique "
            f"sentences (up to {st_model.max_seq_length} tokens, batch {batch_size}, {torch_threads()}"
            f"{'' if info.name == 'torch' else ', backend ' + info.name})…",
            show_progress_bar,
        )
        cache.prefetch(sentences)
        timing["encode"] = time.perf_counter() - t0
        cosines = suite.cosines(cache)
        sources["sts"] = suite.sources()

    if "sts" in groups:
        entry["sts"] = suite.evaluate(cache)
        subsets = suite.subset_scores(cache)
        if subsets:
            entry["sts_subsets"] = subsets

    if "bias" in groups:
        t0 = time.perf_counter()
        cont_oppn = {}
        for name, data in suite.data.items():
            split = cont_oppn_split(data.sentences1, data.sentences2, data.scores)
            cont_oppn[name] = cont_oppn_scores(data, cosines[name], split)
        entry["bias"] = {
            "cont_oppn": cont_oppn,
            "negation": negation_probe(cache, negations),
            "word_order": word_order_probe(cache, word_order),
            "negation_meaning": negation_meaning_probe(cache, negation_meaning),
            "alignment_uniformity": alignment_uniformity(cache, suite.data["STSBenchmark"]),
        }
        sources["negation"] = negations.describe()
        sources["word_order"] = {**corpus_slice.describe(), **word_order.describe()}
        sources["negation_meaning"] = negation_meaning.describe()
        sources["alignment_uniformity"] = (
            "STSBenchmark test: alignment over pairs with score > 4, uniformity over unique sentences"
        )
        if pair_dataset is not None:
            if isinstance(pair_dataset, str | os.PathLike):
                sources["training_pairs"] = {"source": portable_path(pair_dataset), "columns": pair_columns}
                pair_dataset = load_pair_rows(pair_dataset, columns=pair_columns)
            entry["bias"]["training_pairs"] = training_pair_statistics(pair_dataset, guide=cache)
        timing["bias"] = time.perf_counter() - t0

    if "mteb" in groups:
        from st_debias.evaluation.mteb_tasks import run_mteb

        t0 = time.perf_counter()
        mteb_result = run_mteb(
            encoder,
            list(mteb_tasks),
            data=mteb_data,
            data_dir=data_dir,
            label=label,
            mteb_cache_dir=mteb_cache_dir,
            batch_size=batch_size,
            show_progress_bar=show_progress_bar,
        )
        entry["mteb"] = mteb_result["scores"]
        sources["mteb"] = {k: v for k, v in mteb_result.items() if k != "scores"}
        timing["mteb"] = time.perf_counter() - t0

    if "transfer" in groups:
        t0 = time.perf_counter()
        transfer = evaluate_transfer(
            encoder, transfer_tasks, data_dir, batch_size=batch_size, show_progress_bar=show_progress_bar,
            cache_dir=cache_dir,
        )
        entry["transfer"] = transfer["scores"]
        entry["transfer_selection"] = transfer["selection"]
        entry["transfer_details"] = transfer["details"]
        sources["transfer"] = transfer["sources"]
        timing["transfer"] = time.perf_counter() - t0

    entry["sources"] = sources
    entry["encoded_sentences"] = cache.encoded
    timing["total"] = time.perf_counter() - start
    entry["timing_s"] = {k: round(v, 2) for k, v in timing.items()}
    entry["environment"] = run_environment()
    return entry


def _sts_names(sts_tasks: Sequence[str]) -> str:
    """``STS12–16, STS-B, SICK-R`` for the full suite, else the sets named one by one, marked quick."""
    if tuple(sts_tasks) == STS_TASKS:
        return "STS12–16, STS-B, SICK-R"
    short = {"STSBenchmark": "STS-B"}
    return "the quick evaluation set (" + ", ".join(short.get(t, t) for t in sts_tasks) + ")"


def _describe(groups: Sequence[str], negations: Any | None, sts_tasks: Sequence[str] = STS_TASKS) -> str:
    """What the encoding pass is for, in words: ``STS12–16, STS-B, SICK-R and the bias probes (...)``."""
    parts = [_sts_names(sts_tasks)]
    if negations is not None:
        parts.append(
            f"the bias probes (Cont/Oppn, CANNOT negation {len(negations):,} pairs, negation meaning, word order, "
            "alignment/uniformity)"
        )
    return " and ".join(parts)


def run_environment() -> dict[str, Any]:
    """The versions of torch, sentence-transformers and Python, the CPU and thread counts and the load averages
    a result was measured under."""
    import sentence_transformers
    import torch

    env: dict[str, Any] = {
        "torch": torch.__version__,
        "sentence_transformers": sentence_transformers.__version__,
        "python": platform.python_version(),
        "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
    }
    if hasattr(os, "getloadavg"):
        env["load_average"] = [round(x, 2) for x in os.getloadavg()]
    return env
