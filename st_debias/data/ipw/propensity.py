"""DebCSE inverse-propensity sampling probabilities (Miao et al., CIKM 2023, §4.1–4.2, eq. 1–6).

For an anchor x_i and its candidate pool {x_j} (n candidates):

* eq. 1  S_sur(x_i, x_j) = 1 − softmax_j(edit(x_i, x_j) / T_s)
* eq. 2  S_sem(x_i, x_j) = softmax_j(cos(h_i, h_j) / T_s)
* eq. 3  P̃_neg = (1 − λ_n)·S_sur + λ_n·(1 − S_sem)          eq. 4  P_neg = softmax_j(P̃_neg / T)
* eq. 5  P̃_pos = (1 − λ_p)·(1 − S_sur) + λ_p·S_sem          eq. 6  P_pos = softmax_j(P̃_pos / T)

Decision (the paper leaves it open, docs/builders/ipw.md): ``edit`` is the **word-level** Levenshtein distance
(words from :func:`st_debias.data.text.words`: lower-cased, punctuation removed) **normalised** by the
longer sentence's word count, so it lies in [0, 1] like the cosine and the two softmaxes of eq. 1–2
are on the same scale. An unnormalised character distance (tens to hundreds) would make eq. 1 a
one-hot on the most distant candidate.

Temperatures: ``similarity_temperature`` (T_s, eq. 1–2) and ``temperature`` (T, eq. 4 and 6) both
default to 1, the paper's setting. With T = 1 the final softmax over values in [0, 1] is nearly flat
(the largest probability ratio between two candidates is at most e); lower T sharpens it.

Sampling m candidates without replacement in proportion to P uses the Gumbel-top-m trick, which is
exactly successive sampling without replacement (Plackett–Luce). The noise for anchor ``i`` comes from
``numpy.random.default_rng([seed, stream, i])``, so results do not depend on batching or sharding.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from rapidfuzz.distance import Levenshtein
from rapidfuzz.process import cpdist

from st_debias.data.text import words

_SURROGATES = range(0xD800, 0xE000)


class WordCoder:
    """Encodes each distinct word as one Unicode character so that rapidfuzz's fast string Levenshtein
    computes the word-level distance."""

    def __init__(self) -> None:
        self._codes: dict[str, str] = {}

    def encode(self, text: str) -> str:
        out = []
        for word in words(text):
            code = self._codes.get(word)
            if code is None:
                value = len(self._codes) + 0x100
                if value >= _SURROGATES.start:
                    value += len(_SURROGATES)
                if value > 0x10FFFF:
                    raise ValueError("Vocabulary too large for the word coder (over 1.1M distinct words).")
                code = self._codes[word] = chr(value)
            out.append(code)
        return "".join(out)


def word_edit_distance(a: str, b: str) -> float:
    """Normalised word-level Levenshtein distance in [0, 1] (0 = same words in the same order)."""
    coder = WordCoder()
    return Levenshtein.normalized_distance(coder.encode(a), coder.encode(b))


def pairwise_word_edit(
    left: Sequence[str], right: Sequence[str], *, coder: WordCoder | None = None, workers: int = 1
) -> np.ndarray:
    """Element-wise :func:`word_edit_distance` of two equal-length lists (vectorised with rapidfuzz)."""
    if len(left) != len(right):
        raise ValueError(f"Lists differ in length: {len(left)} vs {len(right)}")
    if not left:
        return np.zeros(0, dtype=np.float64)
    coder = coder or WordCoder()
    cache: dict[str, str] = {}

    def code(text: str) -> str:
        hit = cache.get(text)
        if hit is None:
            hit = cache[text] = coder.encode(text)
        return hit

    return cpdist(
        [code(t) for t in left],
        [code(t) for t in right],
        scorer=Levenshtein.normalized_distance,
        dtype=np.float64,
        workers=workers,
    )


def masked_softmax(values: np.ndarray, mask: np.ndarray | None = None, temperature: float = 1.0) -> np.ndarray:
    """Row-wise softmax of ``values / temperature`` over the entries where ``mask`` is True (0 elsewhere).
    Rows with no valid entry are all zero."""
    if temperature <= 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    values = np.asarray(values, dtype=np.float64)
    mask = np.ones(values.shape, dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    scaled = np.where(mask, values / temperature, -np.inf)
    top = scaled.max(axis=-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    exp = np.where(mask, np.exp(scaled - top), 0.0)
    total = exp.sum(axis=-1, keepdims=True)
    return np.divide(exp, total, out=np.zeros_like(exp), where=total > 0)


def _check_lambda(value: float, name: str) -> None:
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be in [0, 1], got {value}")


def similarity_scores(
    edit: np.ndarray, cosine: np.ndarray, mask: np.ndarray | None = None, similarity_temperature: float = 1.0
) -> tuple[np.ndarray, np.ndarray]:
    """(S_sur, S_sem) of eq. 1–2 over each row's pool. Masked entries are 0."""
    mask = np.ones(np.shape(edit), dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    s_sur = np.where(mask, 1.0 - masked_softmax(edit, mask, similarity_temperature), 0.0)
    s_sem = masked_softmax(cosine, mask, similarity_temperature)
    return s_sur, s_sem


def negative_probabilities(
    edit: np.ndarray,
    cosine: np.ndarray,
    mask: np.ndarray | None = None,
    *,
    lambda_n: float = 0.8,
    temperature: float = 1.0,
    similarity_temperature: float = 1.0,
) -> np.ndarray:
    """P_neg of eq. 4 (rows sum to 1 over valid entries): high surface, low semantic similarity.

    Args:
        edit: (n, K) normalised word edit distances anchor→candidate.
        cosine: (n, K) guide cosines anchor→candidate.
        mask: (n, K) True for real candidates (pools may be ragged).
        lambda_n: weight of semantic dissimilarity (paper best 0.8, Table 6).
        temperature: T of eq. 4 (1 = paper).
        similarity_temperature: T_s of eq. 1–2 (1 = paper).
    """
    _check_lambda(lambda_n, "lambda_n")
    s_sur, s_sem = similarity_scores(edit, cosine, mask, similarity_temperature)
    raw = (1.0 - lambda_n) * s_sur + lambda_n * (1.0 - s_sem)
    return masked_softmax(raw, mask, temperature)


def positive_probabilities(
    edit: np.ndarray,
    cosine: np.ndarray,
    mask: np.ndarray | None = None,
    *,
    lambda_p: float = 0.8,
    temperature: float = 1.0,
    similarity_temperature: float = 1.0,
) -> np.ndarray:
    """P_pos of eq. 6: low surface, high semantic similarity. Arguments as :func:`negative_probabilities`."""
    _check_lambda(lambda_p, "lambda_p")
    s_sur, s_sem = similarity_scores(edit, cosine, mask, similarity_temperature)
    raw = (1.0 - lambda_p) * (1.0 - s_sur) + lambda_p * s_sem
    return masked_softmax(raw, mask, temperature)


def gumbel_noise(shape: tuple[int, int], row_ids: Sequence[int] | np.ndarray, seed: int, stream: int) -> np.ndarray:
    """Gumbel(0, 1) noise, row ``r`` drawn from ``default_rng([seed, stream, row_ids[r]])``."""
    out = np.empty(shape, dtype=np.float64)
    for r, row_id in enumerate(row_ids):
        out[r] = np.random.default_rng([seed, stream, int(row_id)]).gumbel(size=shape[1])
    return out


def sample_without_replacement(probabilities: np.ndarray, m: int, noise: np.ndarray) -> np.ndarray:
    """Draw ``m`` column indices per row without replacement, proportionally to ``probabilities``.

    Gumbel-top-m: argsort of ``log p + noise``. Entries with p = 0 are never drawn; where a row has
    fewer than ``m`` positive entries the missing draws are -1.
    """
    if m < 1:
        raise ValueError(f"m must be >= 1, got {m}")
    probabilities = np.asarray(probabilities, dtype=np.float64)
    with np.errstate(divide="ignore"):
        keys = np.where(probabilities > 0, np.log(probabilities) + noise, -np.inf)
    m_eff = min(m, keys.shape[1])
    order = np.argsort(-keys, axis=1, kind="stable")[:, :m_eff]
    chosen = np.where(np.isfinite(np.take_along_axis(keys, order, axis=1)), order, -1)
    if m_eff < m:
        chosen = np.concatenate([chosen, np.full((len(chosen), m - m_eff), -1)], axis=1)
    return chosen
