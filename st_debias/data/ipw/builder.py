"""DebCSE training rows by inverse-propensity-weighted sampling (Miao et al., CIKM 2023, §4.1–4.2).

Pipeline for a plain list of sentences:

1. validate (non-strings raise; empty strings and duplicates are skipped and counted);
2. embed the corpus with a guide SentenceTransformer (cached on disk, :mod:`st_debias.data.io.embeddings`);
3. negative pool per anchor: the ``pool_size`` nearest corpus neighbours with guide cosine in
   ``negative_range`` (exact, O(N·K) memory, :mod:`st_debias.data.neighbours`);
4. negatives: ``num_negatives`` drawn without replacement with P_neg (eq. 1–4,
   :mod:`st_debias.data.ipw.propensity`);
5. positive pool per anchor: the union of the candidates of the positive generators (word edits,
   corpus neighbours, a seq2seq model, the syntactic paraphraser...), embedded with the guide;
6. positives: ``num_positives`` drawn with P_pos (eq. 5–6).

Output columns: ``anchor, positive, negative_1 … negative_m`` and, when ``weight`` is set, ``label``
(per-row instance weight, read by the losses as ``labels``). With ``num_positives > 1`` an anchor gets
one row per sampled positive (same negatives); use a no-duplicates batch sampler then.

Scaling: ``build(..., shard=(i, n))`` builds rows for the i-th of n anchor slices against the whole
corpus; with the per-anchor random streams of :mod:`st_debias.data.ipw.propensity`, concatenating the
shards (:func:`st_debias.data.builders.merge_builds`) gives exactly the unsharded result. Shards can run on separate machines
that share the embedding cache.
"""

from __future__ import annotations

import math
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

import numpy as np
from datasets import Dataset

from st_debias.data.generators import CandidateGenerator, candidate_pools
from st_debias.data.io.corpus import clean_sentences, sentence_list
from st_debias.data.io.embeddings import encode_corpus, shard_bounds
from st_debias.data.io.report import BuildReport, pair_statistics
from st_debias.data.ipw.propensity import (
    WordCoder,
    coded_edit_distance,
    gumbel_noise,
    negative_probabilities,
    pairwise_word_edit,
    positive_probabilities,
    sample_without_replacement,
)
from st_debias.data.neighbours import range_topk
from st_debias.paths import ensure_model

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

NEGATIVE_STREAM = 1
POSITIVE_STREAM = 2


@dataclass
class NegativeSample:
    """Negatives drawn for a slice of anchors.

    Attributes:
        anchor_ids: (n,) corpus index of each anchor.
        chosen: (n, m) corpus indices of the drawn negatives, -1 where the pool was too small.
        cosine: (n, m) guide cosine anchor→negative (NaN where missing).
        probability: (n, m) P_neg of each drawn negative.
        pool_sizes: (n,) in-range candidates found per anchor.
        timings: seconds per step: ``neighbour_search``; ``negative_word_codes``: each sentence's words as
            codes, once; ``negative_edit_distance``: word edits of eq. 1; ``negative_sampling``: eq. 1–4
            probabilities and the draws (these two summed over the threads); ``negative_draws_wall``: wall
            time of everything after the search.
    """

    anchor_ids: np.ndarray
    chosen: np.ndarray
    cosine: np.ndarray
    probability: np.ndarray
    pool_sizes: np.ndarray
    timings: dict[str, float] = field(default_factory=dict)


def sample_negatives(
    sentences: Sequence[str],
    embeddings: np.ndarray,
    *,
    num_negatives: int = 2,
    pool_size: int = 64,
    negative_range: tuple[float, float] = (0.25, 0.75),
    lambda_n: float = 0.8,
    temperature: float = 1.0,
    similarity_temperature: float = 1.0,
    seed: int = 0,
    query_range: tuple[int, int] | None = None,
    backend: str = "torch",
    block_size: int = 4096,
    chunk_size: int = 4096,
    show_progress_bar: bool = True,
    num_proc: int = 1,
) -> NegativeSample:
    """DebCSE negatives (eq. 1–4) for every anchor in ``query_range`` (default all) of a clean corpus.

    Args:
        sentences: the validated corpus (no empty strings, no duplicates).
        embeddings: its L2-normalised guide embeddings, shape (N, dim).
        num_negatives: m, negatives drawn per anchor (paper: 2).
        pool_size: K, nearest in-range neighbours forming the pool.
        negative_range: admissible guide cosine (paper: [0.25, 0.75]).
        lambda_n: eq. 3 balance (paper best: 0.8).
        temperature: eq. 4 sharpening temperature (1 = paper).
        similarity_temperature: eq. 1–2 temperature (1 = paper).
        seed: random seed (per-anchor streams: shard-invariant).
        query_range: anchors ``start:stop`` only (sharding).
        backend: neighbour search backend (``"torch"`` or ``"faiss"``).
        block_size: neighbour search block size.
        chunk_size: anchors per edit-distance/probability chunk (bounds memory; a few thousand keep a
            chunk's arrays in the CPU's cache).
        show_progress_bar: progress bars.
        num_proc: threads for eq. 1–4 and the draws, each taking chunks of at most ``chunk_size`` anchors in
            turn (a shard of fewer than ``num_proc * chunk_size`` anchors is split evenly between them;
            rapidfuzz's edit distance and numpy's array operations release the GIL). The draws are keyed by
            anchor, so the arrays are the same for any ``num_proc`` and ``chunk_size``. The neighbour search
            runs before them, on PyTorch's threads.
    """
    if len(sentences) != len(embeddings):
        raise ValueError(f"{len(sentences)} sentences but {len(embeddings)} embeddings")
    if pool_size < num_negatives:
        raise ValueError(f"pool_size ({pool_size}) must be >= num_negatives ({num_negatives})")
    if num_proc < 1:
        raise ValueError(f"num_proc must be at least 1, got {num_proc}")
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be at least 1, got {chunk_size}")
    low, high = negative_range
    t0 = time.perf_counter()
    table = range_topk(
        embeddings, pool_size, low=low, high=high, query_range=query_range, block_size=block_size,
        backend=backend, show_progress_bar=show_progress_bar,
    )
    timings = {"neighbour_search": time.perf_counter() - t0}
    start = 0 if query_range is None else query_range[0]
    n = table.indices.shape[0]
    settings = dict(
        num_negatives=num_negatives, lambda_n=lambda_n, temperature=temperature,
        similarity_temperature=similarity_temperature, seed=seed,
    )
    anchor_ids = np.arange(start, start + n)
    t0 = time.perf_counter()
    codes = _word_codes(sentences, anchor_ids, table.indices)
    timings["negative_word_codes"] = time.perf_counter() - t0
    # The draws of each anchor depend on its own pool only: chunks of anchors, on ``num_proc`` threads.
    # A shard smaller than ``num_proc`` chunks is split evenly, so that every thread gets a share.
    step = max(1, min(chunk_size, -(-n // num_proc)))
    bounds = [(a, min(a + step, n)) for a in range(0, n, step)]

    def draw(chunk: tuple[int, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, float]]:
        a, b = chunk
        return _draws(anchor_ids[a:b], table.indices[a:b], table.scores[a:b], codes, **settings)

    t1 = time.perf_counter()
    if num_proc > 1 and len(bounds) > 1:
        with ThreadPoolExecutor(min(num_proc, len(bounds))) as pool:
            parts = list(pool.map(draw, bounds))
    else:
        parts = [draw(chunk) for chunk in bounds] or [draw((0, 0))]
    timings["negative_draws_wall"] = timings["negative_word_codes"] + time.perf_counter() - t1
    for key in parts[0][-1]:  # seconds summed over the chunks (over the threads, with more than one)
        timings[key] = sum(part[-1][key] for part in parts)
    chosen, cosine, probability = (np.concatenate([part[i] for part in parts]) for i in range(3))
    return NegativeSample(anchor_ids, chosen, cosine, probability, table.counts(), timings)


def _word_codes(sentences: Sequence[str], anchor_ids: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """The word codes, from one :class:`WordCoder`, of the anchors and of every sentence in their pools
    (``indices``, -1 for an empty slot); None for the other sentences."""
    needed = np.zeros(len(sentences), dtype=bool)
    needed[anchor_ids] = True
    needed[indices[indices >= 0]] = True
    coder = WordCoder()
    coded = np.empty(len(sentences), dtype=object)
    for j in np.flatnonzero(needed).tolist():
        coded[j] = coder.encode(sentences[j])
    return coded


def _draws(
    anchor_ids: np.ndarray,
    indices: np.ndarray,
    scores: np.ndarray,
    codes: np.ndarray,
    *,
    num_negatives: int,
    lambda_n: float,
    temperature: float,
    similarity_temperature: float,
    seed: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, float]]:
    """Eq. 1–4 and the draws for ``anchor_ids`` with neighbour pools ``indices``/``scores``:
    ``(chosen, cosine, probability, seconds per step)``. ``codes``: :func:`_word_codes`."""
    t0 = time.perf_counter()
    mask = indices >= 0
    rows, cols = np.nonzero(mask)
    edit = np.zeros(indices.shape, dtype=np.float64)
    if len(rows):
        edit[rows, cols] = coded_edit_distance(codes[anchor_ids[rows]].tolist(), codes[indices[rows, cols]].tolist())
    t1 = time.perf_counter()
    cos = np.nan_to_num(scores.astype(np.float64))
    probs = negative_probabilities(
        edit, cos, mask, lambda_n=lambda_n, temperature=temperature, similarity_temperature=similarity_temperature
    )
    noise = gumbel_noise(indices.shape, anchor_ids, seed, NEGATIVE_STREAM)
    picks = sample_without_replacement(probs, num_negatives, noise)
    ok = picks >= 0
    safe = np.where(ok, picks, 0)
    chosen = np.where(ok, np.take_along_axis(indices, safe, 1), -1).astype(np.int64)
    cosine = np.where(ok, np.take_along_axis(scores, safe, 1), np.nan).astype(np.float32)
    probability = np.where(ok, np.take_along_axis(probs, safe, 1), np.nan).astype(np.float64)
    timings = {"negative_edit_distance": t1 - t0, "negative_sampling": time.perf_counter() - t1}
    return chosen, cosine, probability, timings


def default_positive_generators() -> list[CandidateGenerator]:
    """The offline positive generators used when none are given (word-level edits, WordNet synonyms)."""
    from st_debias.data.paraphrase.edits import default_edit_generators

    return default_edit_generators()


class IPWBuilder:
    """Builds DebCSE rows (anchor, positive, negative_1..m[, label]) from plain sentences.

    Args:
        model: guide SentenceTransformer, a model name/path, or ``None`` (packaged all-MiniLM-L6-v2).
        positive_generators: candidate generators for the positive pool (default
            :func:`default_positive_generators`).
        num_negatives: m negatives per anchor (paper: 2).
        num_positives: positives per anchor; each gives a row (default 1: one row per anchor).
        pool_size: K nearest in-range neighbours in the negative pool.
        negative_range: admissible guide cosine of negatives (paper: [0.25, 0.75]).
        lambda_n: eq. 3 (paper: 0.8).
        lambda_p: eq. 5 (paper: 0.8).
        temperature: eq. 4/6 sharpening temperature (paper: 1).
        similarity_temperature: eq. 1–2 temperature (paper: 1).
        weight: ``None`` (no ``label`` column), a finite float >= 0 (constant ``label``), or a callable
            taking the row dict (plus ``positive_probability`` and ``negative_probabilities``) and returning a
            finite float >= 0 (checked per row).
        on_missing_positive: ``"skip"`` (counted) or ``"anchor"`` (use the anchor itself as its positive,
            the SimCSE fallback; counted in ``statistics['positive_fallbacks']``).
        seed: random seed.
        batch_size: guide encoding batch size.
        cache_dir: embedding cache folder (default ``$ST_DEBIAS_CACHE`` or ``~/.cache/st_debias``).
        backend: neighbour search backend, ``"torch"`` or ``"faiss"``.
        block_size: neighbour search block size.
        show_progress_bar: progress bars.
        num_proc: threads for eq. 1–4 and the draws of the negatives (None: every usable core); the rows are
            the same for any count. The encoding and the neighbour search use PyTorch's threads.

    After :meth:`build`, :attr:`report` holds the :class:`BuildReport` (counts, skips with reasons,
    pair statistics of DebCSE Tables 1 and 4, timings).

    Raises:
        ValueError: at construction, for an argument outside its range (a NaN or negative ``weight``, an
            empty ``negative_range``, a non-positive temperature...), so bad rows are never written.

    Example:
        >>> builder = IPWBuilder()                                   # doctest: +SKIP
        >>> rows = builder.build(read_sentences(limit=5000))         # doctest: +SKIP
        >>> builder.report.statistics["negative_lexical_overlap"]    # doctest: +SKIP
    """

    name = "ipw"
    version = 2  # raised whenever the same sentences give other rows (the row cache keys on it)

    def __init__(
        self,
        model: SentenceTransformer | str | None = None,
        *,
        positive_generators: Sequence[CandidateGenerator] | None = None,
        num_negatives: int = 2,
        num_positives: int = 1,
        pool_size: int = 64,
        negative_range: tuple[float, float] = (0.25, 0.75),
        lambda_n: float = 0.8,
        lambda_p: float = 0.8,
        temperature: float = 1.0,
        similarity_temperature: float = 1.0,
        weight: float | Callable[[dict[str, object]], float] | None = None,
        on_missing_positive: Literal["skip", "anchor"] = "skip",
        seed: int = 0,
        batch_size: int = 64,
        cache_dir: str | os.PathLike[str] | None = None,
        backend: str = "torch",
        block_size: int = 4096,
        show_progress_bar: bool = True,
        num_proc: int | None = 1,
    ) -> None:
        from st_debias.progress import usable_cores

        num_proc = usable_cores() if num_proc is None else num_proc
        if isinstance(num_proc, bool) or not isinstance(num_proc, int) or num_proc < 1:
            raise ValueError(f"num_proc must be an int >= 1 (or None: every usable core), got {num_proc!r}")
        if num_negatives < 1 or num_positives < 1:
            raise ValueError("num_negatives and num_positives must be >= 1")
        if pool_size < num_negatives:
            raise ValueError(f"pool_size ({pool_size}) must be >= num_negatives ({num_negatives})")
        low, high = negative_range
        if not -1.0 <= low < high <= 1.0:
            raise ValueError(f"negative_range must satisfy -1 <= low < high <= 1, got {negative_range}")
        for name, value in (("lambda_n", lambda_n), ("lambda_p", lambda_p)):
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {value}")
        for name, value in (("temperature", temperature), ("similarity_temperature", similarity_temperature)):
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be a finite number > 0, got {value}")
        if weight is not None and not callable(weight):
            _check_weight(weight, "weight")
        if on_missing_positive not in ("skip", "anchor"):
            raise ValueError(f"on_missing_positive must be 'skip' or 'anchor', got {on_missing_positive!r}")
        self.model = model
        self.positive_generators = (
            list(positive_generators) if positive_generators is not None else default_positive_generators()
        )
        self.num_negatives = num_negatives
        self.num_positives = num_positives
        self.pool_size = pool_size
        self.negative_range = negative_range
        self.lambda_n = lambda_n
        self.lambda_p = lambda_p
        self.temperature = temperature
        self.similarity_temperature = similarity_temperature
        self.weight = weight
        self.on_missing_positive = on_missing_positive
        self.seed = seed
        self.batch_size = batch_size
        self.cache_dir = cache_dir
        self.backend = backend
        self.block_size = block_size
        self.show_progress_bar = show_progress_bar
        self.num_proc = num_proc
        self.report = BuildReport(builder=self.name)

    def _guide(self):
        self.model = ensure_model(self.model)
        return self.model

    def encode(self, sentences: Sequence[str]) -> np.ndarray:
        """Guide embeddings of ``sentences`` (L2-normalised, cached)."""
        return encode_corpus(
            sentences, self._guide(), batch_size=self.batch_size, cache_dir=self.cache_dir,
            show_progress_bar=self.show_progress_bar,
        )

    def build(
        self, sentences: Iterable[object], *, column: str | None = None, shard: tuple[int, int] | None = None
    ) -> Dataset:
        """Rows for every usable anchor (or for the anchors of ``shard=(index, count)``).

        Args:
            sentences: any iterable of strings (list, generator, ``dataset["text"]``) or a ``datasets.Dataset``.
            column: the sentence column when ``sentences`` is a ``Dataset`` (optional if it has one column).
            shard: ``(index, count)``: build only that slice of the anchors (against the whole corpus).

        Raises:
            ValueError: a single string, non-string items, or no sentence at all.
        """
        sentences = sentence_list(sentences, column)
        report = BuildReport(builder=self.name)
        t_start = time.perf_counter()
        cleaned = clean_sentences(sentences)
        corpus = cleaned.sentences
        if shard is not None:
            in_start, in_stop = shard_bounds(len(sentences), *shard)
            start = int(np.searchsorted(cleaned.positions, in_start))
            stop = int(np.searchsorted(cleaned.positions, in_stop))
            report.inputs = in_stop - in_start
            report.skipped.update(cleaned.skipped_between(in_start, in_stop))
        else:
            start, stop = 0, len(corpus)
            report.inputs = len(sentences)
            report.skipped.update(cleaned.skipped)
        if len(corpus) < 2:
            raise ValueError(f"Need at least 2 distinct non-empty sentences, got {len(corpus)}.")
        t0 = time.perf_counter()
        embeddings = self.encode(corpus)
        report.timings["encode_corpus"] = time.perf_counter() - t0
        negatives = sample_negatives(
            corpus, embeddings, num_negatives=self.num_negatives, pool_size=self.pool_size,
            negative_range=self.negative_range, lambda_n=self.lambda_n, temperature=self.temperature,
            similarity_temperature=self.similarity_temperature, seed=self.seed,
            # The whole corpus searches each pair of blocks once; a shard searches its rows against it.
            query_range=None if shard is None else (start, stop),
            backend=self.backend, block_size=self.block_size, show_progress_bar=self.show_progress_bar,
            num_proc=self.num_proc,
        )
        report.timings.update(negatives.timings)
        has_negatives = (negatives.chosen >= 0).all(axis=1)
        report.skipped["no_negative_candidates"] = int((negatives.pool_sizes == 0).sum())
        report.skipped["too_few_negative_candidates"] = int(
            ((negatives.pool_sizes > 0) & ~has_negatives).sum()
        )
        report.statistics["mean_negative_pool_size"] = float(negatives.pool_sizes.mean()) if stop > start else 0.0
        keep = np.flatnonzero(has_negatives)
        t0 = time.perf_counter()
        positives = self._sample_positives(corpus, embeddings, negatives.anchor_ids[keep], report)
        report.timings["positives"] = time.perf_counter() - t0
        rows: dict[str, list[object]] = {"anchor": [], "positive": []}
        for j in range(self.num_negatives):
            rows[f"negative_{j + 1}"] = []
        if self.weight is not None:
            rows["label"] = []
        pos_pairs: tuple[list[str], list[str], list[float]] = ([], [], [])
        neg_pairs: tuple[list[str], list[str], list[float]] = ([], [], [])
        for local in keep:
            anchor_id = int(negatives.anchor_ids[local])
            picked = positives.get(anchor_id)
            if not picked:
                continue
            anchor = corpus[anchor_id]
            negs = [corpus[int(j)] for j in negatives.chosen[local]]
            for j, text in enumerate(negs):
                neg_pairs[0].append(anchor)
                neg_pairs[1].append(text)
                neg_pairs[2].append(float(negatives.cosine[local, j]))
            report.anchors += 1
            for text, cos, prob in picked:
                rows["anchor"].append(anchor)
                rows["positive"].append(text)
                for j, neg in enumerate(negs):
                    rows[f"negative_{j + 1}"].append(neg)
                if self.weight is not None:
                    rows["label"].append(self._row_weight(rows, prob, negatives.probability[local]))
                pos_pairs[0].append(anchor)
                pos_pairs[1].append(text)
                pos_pairs[2].append(cos)
        report.rows = len(rows["anchor"])
        report.statistics.update(pair_statistics("positive", *pos_pairs))
        report.statistics.update(pair_statistics("negative", *neg_pairs))
        report.skipped = Counter({k: v for k, v in report.skipped.items() if v})
        report.timings["total"] = time.perf_counter() - t_start
        report.check_accounting()
        self.report = report
        return Dataset.from_dict(rows)

    def _row_weight(self, rows: dict[str, list[object]], positive_probability: float, negative_probs) -> float:
        if callable(self.weight):
            row = {key: values[-1] for key, values in rows.items() if key != "label"}
            row["positive_probability"] = positive_probability
            row["negative_probabilities"] = [float(p) for p in negative_probs]
            return _check_weight(self.weight(row), f"weight(row of anchor {str(row['anchor'])[:60]!r}) returned")
        return float(self.weight)

    def _sample_positives(
        self, corpus: Sequence[str], embeddings: np.ndarray, anchor_ids: np.ndarray, report: BuildReport
    ) -> dict[int, list[tuple[str, float, float]]]:
        """anchor id -> [(positive text, guide cosine, P_pos)] for the anchors that got candidates."""
        anchors = [corpus[int(i)] for i in anchor_ids]
        candidates, reports = candidate_pools(self.positive_generators, anchors, seed=self.seed)
        report.generators.update(reports)
        pools = [[c.text for c in pool] for pool in candidates]
        out: dict[int, list[tuple[str, float, float]]] = {}
        fallbacks = 0
        missing = [k for k, pool in enumerate(pools) if not pool]
        if self.on_missing_positive == "anchor":
            for k in missing:
                out[int(anchor_ids[k])] = [(anchors[k], 1.0, 1.0)]
            fallbacks = len(missing)
        else:
            report.skipped["no_positive_candidates"] += len(missing)
        report.statistics["positive_fallbacks"] = fallbacks
        with_pool = [k for k, pool in enumerate(pools) if pool]
        if not with_pool:
            return out
        width = max(len(pools[k]) for k in with_pool)
        unique = sorted({text for k in with_pool for text in pools[k]})
        cand_emb = self.encode(unique) if unique else np.zeros((0, embeddings.shape[1]), np.float32)
        where = {text: i for i, text in enumerate(unique)}
        n = len(with_pool)
        mask = np.zeros((n, width), dtype=bool)
        cos = np.zeros((n, width))
        left: list[str] = []
        right: list[str] = []
        for r, k in enumerate(with_pool):
            pool = pools[k]
            mask[r, : len(pool)] = True
            idx = [where[t] for t in pool]
            cos[r, : len(pool)] = cand_emb[idx] @ embeddings[int(anchor_ids[k])]
            left.extend([anchors[k]] * len(pool))
            right.extend(pool)
        edit = np.zeros((n, width))
        edit[mask] = pairwise_word_edit(left, right)
        probs = positive_probabilities(
            edit, cos, mask, lambda_p=self.lambda_p, temperature=self.temperature,
            similarity_temperature=self.similarity_temperature,
        )
        ids = anchor_ids[with_pool]
        picks = sample_without_replacement(probs, self.num_positives, gumbel_noise(probs.shape, ids, self.seed,
                                                                                  POSITIVE_STREAM))
        report.statistics["mean_positive_pool_size"] = float(mask.sum(axis=1).mean())
        for r, k in enumerate(with_pool):
            chosen = [int(c) for c in picks[r] if c >= 0]
            out[int(anchor_ids[k])] = [(pools[k][c], float(cos[r, c]), float(probs[r, c])) for c in chosen]
        return out


def _check_weight(value: object, what: str) -> float:
    """``value`` as a float if it is a finite number >= 0 (a row weight), else ``ValueError`` naming ``what``."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise ValueError(f"{what} must be a finite number >= 0, got {type(value).__name__} {value!r:.40}")
    if not (math.isfinite(value) and value >= 0):
        raise ValueError(f"{what} must be a finite number >= 0, got {value}")
    return float(value)


def to_input_examples(dataset: Dataset) -> list:
    """``InputExample(texts=[text columns...], label=label or 0.0)`` per row, for legacy ``model.fit``."""
    from sentence_transformers.sentence_transformer.readers import InputExample

    text_columns = [c for c in dataset.column_names if c != "label"]
    labels = dataset["label"] if "label" in dataset.column_names else None
    columns = [dataset[c] for c in text_columns]
    return [
        InputExample(texts=[col[i] for col in columns], label=float(labels[i]) if labels is not None else 0.0)
        for i in range(len(dataset))
    ]
