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
exactly successive sampling without replacement (Plackett–Luce). The noise for anchor ``i`` is the stream
of ``numpy.random.default_rng([seed, stream, i])``, so results do not depend on batching or sharding. It
is generated for all anchors at once by a numpy-array version of SeedSequence and PCG64 (:func:`random_raw`)
that reproduces numpy's draws exactly, without a Python loop over anchors.
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

    return coded_edit_distance([code(t) for t in left], [code(t) for t in right], workers=workers)


def coded_edit_distance(left: Sequence[str], right: Sequence[str], *, workers: int = 1) -> np.ndarray:
    """Element-wise normalised Levenshtein distance of sentences already encoded by one :class:`WordCoder`."""
    return cpdist(left, right, scorer=Levenshtein.normalized_distance, dtype=np.float64, workers=workers)


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


# numpy.random.SeedSequence (pool of four 32-bit words) and PCG64 (128-bit LCG, XSL-RR output) constants.
_MASK32 = 0xFFFFFFFF
_POOL_SIZE = 4
_INIT_A, _MULT_A = 0x43B0D7E5, 0x931E8875
_INIT_B, _MULT_B = 0x8B51F9DD, 0x58F38DED
_MIX_MULT_L, _MIX_MULT_R = 0xCA01F9DD, 0x4973F715
_PCG_MULT_HIGH, _PCG_MULT_LOW = 0x2360ED051FC65DA4, 0x4385DF649FCCF645
_XSHIFT = np.uint32(16)
_LOW32 = np.uint64(_MASK32)
_SHIFT32 = np.uint64(32)
_DOUBLE_UNIT = 1.0 / 9007199254740992.0  # 2**-53, numpy's next_double
_SELECTION_LIMIT = 8  # largest m drawn by repeated argmax; larger m sort the whole row


def _uint32_words(value: int) -> list[int]:
    """``value`` as little-endian 32-bit words, as SeedSequence coerces an int (0 is one word)."""
    if value < 0:
        raise ValueError(f"Random stream keys must be >= 0, got {value}")
    out = []
    while value:
        out.append(value & _MASK32)
        value >>= 32
    return out or [0]


def _seed_sequence_state(entropy: list[np.ndarray | int], n: int) -> list[np.ndarray]:
    """``SeedSequence(entropy).generate_state(4, np.uint64)`` for ``n`` rows at once.

    Args:
        entropy: the entropy as 32-bit words, each a scalar (same for every row) or an (n,) array.
        n: number of rows.

    Returns:
        Four (n,) uint64 arrays, the columns of the generated state.
    """
    hash_const = _INIT_A

    def hashmix(value: np.ndarray) -> np.ndarray:
        nonlocal hash_const
        value = value ^ np.uint32(hash_const)
        hash_const = (hash_const * _MULT_A) & _MASK32
        value = value * np.uint32(hash_const)
        return value ^ (value >> _XSHIFT)

    def mix(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        result = np.uint32(_MIX_MULT_L) * x - np.uint32(_MIX_MULT_R) * y
        return result ^ (result >> _XSHIFT)

    words_ = [np.broadcast_to(np.asarray(w, dtype=np.uint32), (n,)) for w in entropy]
    zero = np.zeros(n, dtype=np.uint32)
    mixer = [hashmix(words_[i] if i < len(words_) else zero) for i in range(_POOL_SIZE)]
    for src in range(_POOL_SIZE):
        for dst in range(_POOL_SIZE):
            if src != dst:
                mixer[dst] = mix(mixer[dst], hashmix(mixer[src]))
    for src in range(_POOL_SIZE, len(words_)):
        for dst in range(_POOL_SIZE):
            mixer[dst] = mix(mixer[dst], hashmix(words_[src]))
    hash_const = _INIT_B
    state = []
    for i in range(2 * _POOL_SIZE):
        value = mixer[i % _POOL_SIZE] ^ np.uint32(hash_const)
        hash_const = (hash_const * _MULT_B) & _MASK32
        value = value * np.uint32(hash_const)
        state.append((value ^ (value >> _XSHIFT)).astype(np.uint64))
    return [state[2 * i] | (state[2 * i + 1] << _SHIFT32) for i in range(_POOL_SIZE)]


def _mulhi64(a: np.ndarray, b: int) -> np.ndarray:
    """High 64 bits of the 128-bit products ``a * b`` (uint64 array times a constant, via 32-bit limbs)."""
    b0, b1 = np.uint64(b & _MASK32), np.uint64(b >> 32)
    a0, a1 = a & _LOW32, a >> _SHIFT32
    p01, p10 = a0 * b1, a1 * b0
    middle = ((a0 * b0) >> _SHIFT32) + (p01 & _LOW32) + (p10 & _LOW32)
    return a1 * b1 + (p01 >> _SHIFT32) + (p10 >> _SHIFT32) + (middle >> _SHIFT32)


class _PCG64Rows:
    """One PCG64 generator per row, advanced together; 128-bit numbers are (high, low) uint64 pairs."""

    _MULT_HIGH = np.uint64(_PCG_MULT_HIGH)
    _MULT_LOW = np.uint64(_PCG_MULT_LOW)

    def __init__(self, seed_state: list[np.ndarray]) -> None:
        # pcg64_set_seed: inc = (initseq << 1) | 1; state = 0; step (state = inc); state += initstate; step.
        s_high, s_low, i_high, i_low = seed_state
        self.inc_high = (i_high << np.uint64(1)) | (i_low >> np.uint64(63))
        self.inc_low = (i_low << np.uint64(1)) | np.uint64(1)
        self.high, self.low = self._add(self.inc_high, self.inc_low, s_high, s_low)
        self._step()

    @staticmethod
    def _add(
        a_high: np.ndarray, a_low: np.ndarray, b_high: np.ndarray, b_low: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """(a + b) mod 2**128."""
        low = a_low + b_low
        return a_high + b_high + (low < a_low).astype(np.uint64), low

    def _step(self) -> None:
        """state = state * MULT + inc (mod 2**128)."""
        high = _mulhi64(self.low, _PCG_MULT_LOW) + self.low * self._MULT_HIGH + self.high * self._MULT_LOW
        self.high, self.low = self._add(high, self.low * self._MULT_LOW, self.inc_high, self.inc_low)

    def next64(self) -> np.ndarray:
        """The next raw 64-bit output of every row (XSL-RR of the stepped state)."""
        self._step()
        x = self.high ^ self.low
        rot = self.high >> np.uint64(58)
        return (x >> rot) | (x << ((np.uint64(64) - rot) & np.uint64(63)))


def _row_keys(row_ids: Sequence[int] | np.ndarray) -> np.ndarray:
    """``row_ids`` as a uint64 array; ``ValueError``/``TypeError`` for keys SeedSequence would reject."""
    ids = np.asarray(row_ids)
    if ids.ndim != 1:
        raise ValueError(f"row_ids must be one-dimensional, got shape {ids.shape}")
    if ids.size == 0:
        return np.zeros(0, dtype=np.uint64)
    if ids.dtype.kind not in "iu":
        raise TypeError(f"row_ids must be integers, got dtype {ids.dtype}")
    if ids.dtype.kind == "i" and ids.min() < 0:
        raise ValueError(f"Random stream keys must be >= 0, got {int(ids.min())}")
    return ids.astype(np.uint64)


def random_raw(row_ids: Sequence[int] | np.ndarray, seed: int, stream: int, size: int) -> np.ndarray:
    """Raw PCG64 draws, one stream per row: ``PCG64(SeedSequence([seed, stream, row_id])).random_raw(size)``.

    SeedSequence hashing and the 128-bit LCG run on all rows at once with numpy integer arithmetic
    (wrapping uint32/uint64), so there is no per-row Python loop.

    Args:
        row_ids: (n,) non-negative integer stream keys (corpus indices).
        seed: non-negative seed.
        stream: non-negative stream number.
        size: draws per row.

    Returns:
        (n, size) uint64 array.
    """
    keys = _row_keys(row_ids)
    out = np.empty((len(keys), size), dtype=np.uint64)
    prefix = _uint32_words(int(seed)) + _uint32_words(int(stream))
    one_word = keys <= _MASK32
    # A key of 2**32 or more is two entropy words, which changes the hashing: one group per word count.
    for rows, key_words in (
        (np.flatnonzero(one_word), lambda k: [k & _LOW32]),
        (np.flatnonzero(~one_word), lambda k: [k & _LOW32, k >> _SHIFT32]),
    ):
        if len(rows) == 0:
            continue
        generator = _PCG64Rows(_seed_sequence_state(prefix + key_words(keys[rows]), len(rows)))
        block = np.empty((size, len(rows)), dtype=np.uint64)
        for column in range(size):
            block[column] = generator.next64()
        out[rows] = block.T
    return out


def gumbel_noise(
    shape: tuple[int, int], row_ids: Sequence[int] | np.ndarray, seed: int, stream: int
) -> np.ndarray:
    """Gumbel(0, 1) noise, one stream per row: ``default_rng([seed, stream, row_id]).gumbel(size=shape[1])``.

    The per-row streams come from :func:`random_raw`; the transform is numpy's ``random_gumbel``
    (U = 1 − next_double, noise = 0 − log(−log U)). numpy redraws when U = 1 (probability 2**-53 per
    draw); such rows are regenerated with numpy's own generator. Where numpy's float64 ``np.log`` is its
    own SIMD kernel rather than the C library's ``log`` (AVX-512 builds), the noise may differ from numpy's
    generator in the last bit; it is still the same for every batching and sharding of the rows.
    """
    n, size = shape
    if len(row_ids) != n:
        raise ValueError(f"shape has {n} rows but {len(row_ids)} row ids were given")
    bits = random_raw(row_ids, seed, stream, size) >> np.uint64(11)
    with np.errstate(divide="ignore"):
        noise = 0.0 - np.log(-np.log(1.0 - bits * _DOUBLE_UNIT))
    for r in np.flatnonzero((bits == 0).any(axis=1)):
        noise[r] = np.random.default_rng([seed, stream, int(row_ids[r])]).gumbel(size=size)
    return noise


def _top_m(keys: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """Column indices of each row's ``m`` largest keys, largest first and ties by column (the first ``m``
    of a stable argsort of ``-keys``), with their keys."""
    if m > _SELECTION_LIMIT:
        order = np.argsort(-keys, axis=1, kind="stable")[:, :m]
        return order, np.take_along_axis(keys, order, axis=1)
    # Repeated argmax (the first maximum wins, as in a stable sort): O(m·K) per row instead of O(K log K).
    keys = keys.copy()
    rows = np.arange(len(keys))
    order = np.empty((len(keys), m), dtype=np.intp)
    values = np.empty((len(keys), m), dtype=keys.dtype)
    for j in range(m):
        order[:, j] = keys.argmax(axis=1)
        values[:, j] = keys[rows, order[:, j]]
        keys[rows, order[:, j]] = -np.inf
    return order, values


def sample_without_replacement(probabilities: np.ndarray, m: int, noise: np.ndarray) -> np.ndarray:
    """Draw ``m`` column indices per row without replacement, proportionally to ``probabilities``.

    Gumbel-top-m: the ``m`` largest ``log p + noise`` of each row, in decreasing order (ties by column).
    Entries with p = 0 are never drawn; where a row has fewer than ``m`` positive entries the missing
    draws are -1.

    Args:
        probabilities: (n, K) sampling probabilities (0 at invalid pool slots).
        m: draws per row.
        noise: (n, K) Gumbel(0, 1) noise (:func:`gumbel_noise`).

    Returns:
        (n, m) int64 column indices, -1 where a row ran out of candidates.
    """
    if m < 1:
        raise ValueError(f"m must be >= 1, got {m}")
    probabilities = np.asarray(probabilities, dtype=np.float64)
    with np.errstate(divide="ignore"):
        keys = np.where(probabilities > 0, np.log(probabilities) + noise, -np.inf)
    m_eff = min(m, keys.shape[1])
    order, values = _top_m(keys, m_eff)
    chosen = np.where(np.isfinite(values), order, -1).astype(np.int64)
    if m_eff < m:
        chosen = np.concatenate([chosen, np.full((len(chosen), m - m_eff), -1, dtype=np.int64)], axis=1)
    return chosen
