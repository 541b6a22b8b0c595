"""Encode each unique sentence once per model, and identify a model's weights.

The STS files share many sentences (STS-B reuses STS12–16 text, each file repeats sentences), and the
bias probes reuse the STS-B test set. :class:`EmbeddingCache` keeps one ``sentence → embedding`` table
per model, encodes only what it has not seen, in one ``model.encode`` call per request (so
sentence-transformers sorts the whole request by length once), and hands back L2-normalised rows.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from st_debias.fingerprint import model_fingerprint


class EmbeddingCache:
    """A per-model ``sentence → unit-norm embedding`` table that encodes each unique sentence once.

    Args:
        model: a SentenceTransformer (anything with ``encode(list[str], batch_size=..., ...)``).
        batch_size: encode batch size.
        show_progress_bar: show sentence-transformers' tqdm bar while encoding.

    Attributes:
        encoded: how many sentences were sent to ``model.encode`` so far (each unique sentence counts once).

    Example:
        >>> cache = EmbeddingCache(model)          # doctest: +SKIP
        >>> cache.prefetch(all_sentences)          # doctest: +SKIP
        >>> a, b = cache.embed(s1), cache.embed(s2)  # doctest: +SKIP
        >>> cosine = (a * b).sum(1)                # doctest: +SKIP
    """

    def __init__(self, model: Any, batch_size: int = 64, show_progress_bar: bool = False) -> None:
        self.model = model
        self.batch_size = batch_size
        self.show_progress_bar = show_progress_bar
        self._index: dict[str, int] = {}
        self._blocks: list[np.ndarray] = []
        self._matrix: np.ndarray | None = None
        self.encoded = 0

    def __len__(self) -> int:
        return len(self._index)

    def __contains__(self, sentence: object) -> bool:
        return sentence in self._index

    def prefetch(self, sentences: Iterable[str]) -> int:
        """Encode every sentence not yet in the table, in one ``encode`` call. Returns how many were new."""
        missing = list(dict.fromkeys(s for s in sentences if s not in self._index))
        if not missing:
            return 0
        vectors = self.model.encode(
            missing,
            batch_size=self.batch_size,
            show_progress_bar=self.show_progress_bar,
            convert_to_numpy=True,
            normalize_embeddings=False,
        )
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[0] != len(missing):
            raise ValueError(f"model.encode returned shape {vectors.shape} for {len(missing)} sentences")
        check_finite_embeddings(vectors, missing, self.model)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        vectors = vectors / np.maximum(norms, 1e-12)
        start = len(self._index)
        for offset, sentence in enumerate(missing):
            self._index[sentence] = start + offset
        self._blocks.append(vectors)
        self._matrix = None
        self.encoded += len(missing)
        return len(missing)

    def embed(self, sentences: Sequence[str]) -> np.ndarray:
        """Unit-norm embeddings of ``sentences`` (rows in the given order), encoding any missing ones."""
        self.prefetch(sentences)
        if self._matrix is None:
            self._matrix = (
                np.concatenate(self._blocks, axis=0) if self._blocks else np.zeros((0, 0), np.float32)
            )
        return self._matrix[[self._index[s] for s in sentences]]

    def cosine(self, sentences1: Sequence[str], sentences2: Sequence[str]) -> np.ndarray:
        """Cosine similarity of each pair ``(sentences1[i], sentences2[i])``."""
        if len(sentences1) != len(sentences2):
            raise ValueError(f"{len(sentences1)} first sentences but {len(sentences2)} second sentences")
        a = self.embed(sentences1).astype(np.float64)
        b = self.embed(sentences2).astype(np.float64)
        return np.einsum("ij,ij->i", a, b)


class NonFiniteEmbeddings(ValueError):
    """A model gave NaN or infinite embeddings: its scores would be meaningless, so none are reported."""


def check_finite_embeddings(vectors: np.ndarray, sentences: Sequence[str], model: Any) -> None:
    """Raise :class:`NonFiniteEmbeddings` naming ``model`` when any row of ``vectors`` is not finite.

    A model whose weights hold a NaN (a diverged training run) embeds every sentence as NaN; cosines, Spearman
    correlations and averages of it are NaN too, and would be reported as if they were scores.
    """
    bad = ~np.isfinite(vectors).all(axis=1)
    if bad.any():
        first = sentences[int(np.flatnonzero(bad)[0])]
        raise NonFiniteEmbeddings(
            f"model {_instance_label(model)} gives non-finite (NaN or infinite) embeddings for {int(bad.sum()):,} of "
            f"{len(sentences):,} sentences (first: {first!r}); its weights are not usable (a diverged training run?), "
            "so no score is reported for it."
        )


def load_any_model(model: Any) -> tuple[Any, str]:
    """Return ``(SentenceTransformer, label)`` for an instance, a saved folder, ``"default"`` or a hub id."""
    from st_debias.paths import load_model, packaged_model_path, resolve_model_name

    if not isinstance(model, str | os.PathLike):
        return model, _instance_label(model)
    resolved = resolve_model_name(model)
    packaged = packaged_model_path()
    if packaged is not None and Path(resolved) == packaged:
        label = "all-MiniLM-L6-v2"
    else:
        label = str(model)
    return load_model(model), label


def _instance_label(model: Any) -> str:
    card = getattr(model, "model_card_data", None)
    for attribute in ("model_id", "model_name", "base_model"):
        value = getattr(card, attribute, None)
        if value:
            return str(value)
    return f"{type(model).__name__}@{model_fingerprint(model)[:8]}"
