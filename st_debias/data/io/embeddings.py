"""Guide-model embeddings of a corpus, cached on disk keyed by model and corpus.

The cache lives outside the repository: ``cache_dir`` argument, else ``$ST_DEBIAS_CACHE``, else
``~/.cache/st_debias``. The key hashes (a) the model's weights (:func:`st_debias.fingerprint.model_fingerprint`,
so a model retrained into the same folder never reads its predecessor's embeddings), (b)
``max_seq_length`` and normalisation, and (c) every sentence in order. A rerun on the same model and
corpus therefore loads the ``.npy`` file instead of re-encoding; any change re-encodes.

Scaling past one machine: :func:`shard_bounds` cuts a corpus into contiguous slices; each slice encoded with
:func:`encode_corpus` is cached under its own key, so slices can run on different machines sharing a cache
folder, or be copied together.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from st_debias.files import atomic_path, remove_stale_staging
from st_debias.fingerprint import model_fingerprint
from st_debias.paths import cache_root, ensure_model

logger = logging.getLogger(__name__)

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

def corpus_key(
    sentences: Sequence[str],
    model_id: str,
    *,
    max_seq_length: int | None,
    normalize: bool,
    by_token_length: bool = False,
) -> str:
    """The cache key of (model, corpus, encoding settings)."""
    digest = hashlib.sha256()
    digest.update(f"{model_id}|{max_seq_length}|{normalize}|{len(sentences)}".encode())
    if by_token_length:  # other batches, other float rounding: a key of its own (older keys stay valid)
        digest.update(b"|by_token_length")
    for sentence in sentences:
        digest.update(sentence.encode("utf-8"))
        digest.update(b"\x00")
    return digest.hexdigest()[:32]


def encode_corpus(
    sentences: Sequence[str],
    model: SentenceTransformer | str | None = None,
    *,
    batch_size: int = 64,
    cache_dir: str | os.PathLike[str] | None = None,
    use_cache: bool = True,
    normalize: bool = True,
    show_progress_bar: bool = True,
    by_token_length: bool = False,
) -> np.ndarray:
    """Embed ``sentences`` with the guide model (batched, progress bar), using the on-disk cache.

    Args:
        sentences: the corpus, in order.
        model: a ``SentenceTransformer``, a model name/path, or ``None`` for the packaged
            all-MiniLM-L6-v2.
        batch_size: encoding batch size.
        cache_dir: cache folder (default ``$ST_DEBIAS_CACHE`` or ``~/.cache/st_debias``).
        use_cache: read and write the cache.
        normalize: L2-normalise (cosine = dot product); the builders require it.
        show_progress_bar: tqdm bar while encoding.
        by_token_length: batch by token length (:func:`encode_by_token_length`), faster on short texts of
            mixed lengths; the figures differ from ``model.encode``'s order only in float rounding.

    Returns:
        float32 array of shape (len(sentences), dim).
    """
    if len(sentences) == 0:
        return np.zeros((0, 0), dtype=np.float32)
    st_model = ensure_model(model)
    target = None
    if use_cache:
        key = corpus_key(
            sentences, model_fingerprint(st_model), max_seq_length=st_model.max_seq_length, normalize=normalize,
            by_token_length=by_token_length,
        )  # fmt: skip
        target = cache_root(cache_dir) / "embeddings" / f"{key}.npy"
        cached = _read_cached_embeddings(target, len(sentences))
        if cached is not None:
            return cached
    encode = encode_by_token_length if by_token_length else _encode
    embeddings = encode(
        st_model, sentences, batch_size=batch_size, normalize=normalize, show_progress_bar=show_progress_bar
    ).astype(np.float32, copy=False)
    if target is not None:
        target.parent.mkdir(parents=True, exist_ok=True)
        remove_stale_staging(target.parent)
        with atomic_path(target) as partial:
            np.save(partial, embeddings)
    return embeddings


def _encode(
    model: SentenceTransformer, sentences: Sequence[str], *, batch_size: int, normalize: bool, show_progress_bar: bool
) -> np.ndarray:
    return model.encode(
        list(sentences),
        batch_size=batch_size,
        show_progress_bar=show_progress_bar,
        convert_to_numpy=True,
        normalize_embeddings=normalize,
    )


def encode_by_token_length(
    model: SentenceTransformer,
    sentences: Sequence[str],
    *,
    batch_size: int = 64,
    normalize: bool = False,
    show_progress_bar: bool = True,
) -> np.ndarray:
    """``model.encode`` in batches of sentences of near-equal token length, rows in the given order.

    sentence-transformers sorts a request by character length, so a batch mixes token lengths and pads to its
    longest: on the SentEval transfer sentences that is 39 % more tokens than batches sorted by the tokenizer's
    count, which this takes. A model without a tokenizer is encoded in ``model.encode``'s own order.
    """
    from tqdm.auto import tqdm

    try:
        ids = model.tokenizer(list(sentences), truncation=True, max_length=model.max_seq_length)["input_ids"]
    except (AttributeError, TypeError, KeyError):
        return _encode(
            model, sentences, batch_size=batch_size, normalize=normalize, show_progress_bar=show_progress_bar
        )
    order = np.argsort(-np.fromiter(map(len, ids), dtype=np.int64, count=len(ids)), kind="stable")
    embeddings: np.ndarray | None = None
    for start in tqdm(range(0, len(order), batch_size), desc="Batches", disable=not show_progress_bar):
        rows = order[start : start + batch_size]
        vectors = _encode(
            model, [sentences[i] for i in rows], batch_size=batch_size, normalize=normalize, show_progress_bar=False
        )
        if embeddings is None:
            embeddings = np.empty((len(sentences), vectors.shape[1]), dtype=vectors.dtype)
        embeddings[rows] = vectors
    return embeddings if embeddings is not None else np.zeros((0, 0), dtype=np.float32)


def _read_cached_embeddings(target: Path, rows: int) -> np.ndarray | None:
    """The cached embeddings in ``target``, or None; an unreadable or misshapen entry is named, removed and rebuilt."""
    if not target.exists():
        return None
    try:
        embeddings = np.load(target)
        if embeddings.ndim != 2 or embeddings.shape[0] != rows:
            raise ValueError(f"shape {embeddings.shape}, expected {rows} rows")
    except (OSError, ValueError, EOFError) as error:  # cut short by a kill or a full disk
        logger.warning(
            "Embedding cache entry %s is unreadable (%s: %s); rebuilding it.", target, type(error).__name__, error
        )
        target.unlink(missing_ok=True)
        return None
    return embeddings


def shard_bounds(total: int, index: int, count: int) -> tuple[int, int]:
    """Start/stop of the ``index``-th of ``count`` contiguous, near-equal slices of ``range(total)``."""
    if count < 1 or not 0 <= index < count:
        raise ValueError(f"Shard index {index} out of range for {count} shards.")
    base, extra = divmod(total, count)
    start = index * base + min(index, extra)
    return start, start + base + (1 if index < extra else 0)
