"""Surface-structure bias probes (the maths; files are read by :mod:`st_debias.evaluation.bias_data`).

* Cont/Oppn (OssCSE §3.3, docs/evaluation.md): on a dataset whose median gold score lies in [2, 3.5], a pair is
  *Cont* (surface and meaning agree) when (score > median score and MER < median MER) or (score <
  median score and MER > median MER), otherwise *Oppn*. Pairs exactly on a median go to Oppn, as the
  rule is written. MER is :func:`st_debias.data.text.match_error_rate` (lower-cased words, punctuation
  removed). A model that leans on lexical overlap does well on Cont and badly on Oppn. Oppn is further
  reported per side: *high overlap, low score* (MER < median, score < median: the trap of a model that
  trusts shared words) and *low overlap, high score* (MER > median, score > median: paraphrases in other
  words); pairs on a median belong to neither side.
* Negation probe: cosine of a sentence with its human-written negation (CANNOT); a model that ignores
  negation puts them close. Mean cosine, share above 0.8 and, where a paraphrase column exists, how
  often the negation outranks the paraphrase.
* Negation-meaning probe: for items "X is A" / "X is not A" / "X is B" / "X is not B" with B an antonym of A,
  (i) how often "not A" is closer to its paraphrase "B" than to "A", (ii) how often it is closer to "B" than
  to "not B", and (iii) the polarity cluster: the mean cosine between negated sentences of different items
  minus the same for their affirmative forms. A model that reads negation as a feature ("contains *not*")
  rather than as meaning fails (ii) and shows a positive (iii). The same three figures are given again
  without the negated sentences' common direction (the mean of not A − A and not B − B), so that what a model
  says a negation *means* is read apart from the fact that it says "negated".
* Word-order probe: cosine of a sentence with the same words in a seeded random order; a bag-of-words
  model puts them close. Mean cosine and share above 0.9 (lower is better for both).
* Alignment and uniformity (Wang & Isola 2020) on STS-B test, as in Focal-InfoNCE Table 3 and DebCSE
  Table 5.
* Training-pair statistics (DebCSE Tables 1 and 4): lexical overlap and guide-model cosine of
  anchor–positive and anchor–negative pairs of a training set.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from st_debias.data.text import match_error_rate
from st_debias.evaluation.bias_data import NegationMeaningItems, NegationPairs
from st_debias.evaluation.embeddings import EmbeddingCache
from st_debias.evaluation.sts import spearman_x100
from st_debias.evaluation.sts_data import STSData

#: OssCSE's eligibility window for the median gold score of a dataset.
MEDIAN_SCORE_RANGE: tuple[float, float] = (2.0, 3.5)

#: Fixed histogram edges for probe cosines (width 0.02 over [-1, 1]), stored in results.json.
HISTOGRAM_EDGES = np.round(np.linspace(-1.0, 1.0, 101), 6)

#: The two sides of the Oppn split, in report order.
OPPN_SIDES = ("high_overlap_low_score", "low_overlap_high_score")

#: Word-order probe defaults: sentences with fewer words are skipped; the seed of every shuffle.
WORD_ORDER_MIN_WORDS = 4
WORD_ORDER_SEED = 0
WORD_ORDER_THRESHOLD = 0.9


def cosine_summary(cosines: np.ndarray, threshold: float) -> dict[str, Any]:
    """Pair count, mean cosine, share above ``threshold`` and a histogram on :data:`HISTOGRAM_EDGES`."""
    counts, _ = np.histogram(np.clip(cosines, -1.0, 1.0), bins=HISTOGRAM_EDGES)
    return {
        "pairs": int(cosines.size),
        "mean_cosine": float(cosines.mean()),
        "threshold": threshold,
        "share_above": float((cosines > threshold).mean()),
        "histogram": {"edges": HISTOGRAM_EDGES.tolist(), "counts": counts.tolist()},
    }


# --------------------------------------------------------------------------------------------------
# Cont / Oppn
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ContOppnSplit:
    """OssCSE's Cont/Oppn partition of one dataset, with the two sides of Oppn.

    Attributes:
        median_score: median gold score.
        median_mer: median word-level MER of the pairs.
        eligible: median score inside :data:`MEDIAN_SCORE_RANGE`.
        cont: indices of Cont pairs.
        oppn: indices of Oppn pairs.
        high_overlap_low_score: Oppn pairs with MER < median MER and score < median score.
        low_overlap_high_score: Oppn pairs with MER > median MER and score > median score.
    """

    median_score: float
    median_mer: float
    eligible: bool
    cont: np.ndarray = field(repr=False)
    oppn: np.ndarray = field(repr=False)
    high_overlap_low_score: np.ndarray = field(repr=False)
    low_overlap_high_score: np.ndarray = field(repr=False)


def cont_oppn_split(
    sentences1: Sequence[str],
    sentences2: Sequence[str],
    scores: Sequence[float],
    score_range: tuple[float, float] = MEDIAN_SCORE_RANGE,
) -> ContOppnSplit:
    """Split pairs into OssCSE's Cont and Oppn sets and the two sides of Oppn (module docstring has the rule).

    Raises:
        ValueError: lengths differ or there are no pairs.
    """
    if not (len(sentences1) == len(sentences2) == len(scores)) or not scores:
        raise ValueError("cont_oppn_split needs equal-length, non-empty sentences1, sentences2 and scores")
    gold = np.asarray(scores, dtype=np.float64)
    mer = np.array([match_error_rate(a, b) for a, b in zip(sentences1, sentences2, strict=True)])
    median_score = float(np.median(gold))
    median_mer = float(np.median(mer))
    cont_mask = ((gold > median_score) & (mer < median_mer)) | ((gold < median_score) & (mer > median_mer))
    return ContOppnSplit(
        median_score=median_score,
        median_mer=median_mer,
        eligible=score_range[0] <= median_score <= score_range[1],
        cont=np.flatnonzero(cont_mask),
        oppn=np.flatnonzero(~cont_mask),
        high_overlap_low_score=np.flatnonzero((mer < median_mer) & (gold < median_score)),
        low_overlap_high_score=np.flatnonzero((mer > median_mer) & (gold > median_score)),
    )


def _spearman_or_none(cosines: np.ndarray, gold: np.ndarray) -> float | None:
    """Spearman ×100, or None where it is undefined (fewer than 2 pairs, or constant cosines or gold)."""
    if cosines.size < 2 or np.ptp(gold) == 0 or np.ptp(cosines) == 0:
        return None
    return spearman_x100(cosines, gold)


def cont_oppn_scores(
    data: STSData, cosines: np.ndarray, split: ContOppnSplit | None = None
) -> dict[str, Any]:
    """Spearman ×100 on the Cont and Oppn pairs of one dataset (null scores when it is not eligible).

    ``oppn_sides`` gives, for each side of Oppn (:data:`OPPN_SIDES`), its pair count, Spearman ×100 (null
    when the set is not eligible or the correlation is undefined) and mean cosine; ``on_median`` counts
    the Oppn pairs that sit on a median and so belong to neither side.
    """
    split = split or cont_oppn_split(data.sentences1, data.sentences2, data.scores)
    gold = np.asarray(data.scores, dtype=np.float64)
    out: dict[str, Any] = {
        "median_score": split.median_score,
        "median_mer": round(split.median_mer, 6),
        "eligible": split.eligible,
        "cont": {"pairs": int(split.cont.size), "spearman": None},
        "oppn": {"pairs": int(split.oppn.size), "spearman": None},
    }
    if split.eligible:
        for key, index in (("cont", split.cont), ("oppn", split.oppn)):
            if index.size >= 2:
                out[key]["spearman"] = spearman_x100(cosines[index], gold[index])
    sides: dict[str, Any] = {}
    for side in OPPN_SIDES:
        index = getattr(split, side)
        sides[side] = {
            "pairs": int(index.size),
            "spearman": _spearman_or_none(cosines[index], gold[index]) if split.eligible else None,
            "mean_cosine": float(cosines[index].mean()) if index.size else None,
        }
    sides["on_median"] = int(split.oppn.size - sum(sides[side]["pairs"] for side in OPPN_SIDES))
    out["oppn_sides"] = sides
    return out


# --------------------------------------------------------------------------------------------------
# Word-order probe
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WordOrderPairs:
    """Sentences and the same words shuffled, with the counts of sentences left out.

    Attributes:
        sentences: the kept sentences.
        shuffled: each sentence's words (split on whitespace, punctuation stays attached) in a new order.
        skipped_short: sentences with fewer than ``min_words`` words.
        skipped_unchanged: sentences no shuffle could change (e.g. repeated words), after 10 tries.
        seed: shuffle seed; sentence ``s`` is shuffled by ``random.Random(f"{seed}:{s}")``.
        min_words: the length cut-off.
    """

    sentences: list[str]
    shuffled: list[str]
    skipped_short: int
    skipped_unchanged: int
    seed: int
    min_words: int

    def __len__(self) -> int:
        return len(self.sentences)

    def describe(self) -> dict[str, Any]:
        """JSON-ready description of how the pairs were made."""
        return {
            "pairs": len(self),
            "skipped_short": self.skipped_short,
            "skipped_unchanged": self.skipped_unchanged,
            "seed": self.seed,
            "min_words": self.min_words,
            "shuffle": "whitespace words, random.Random(f'{seed}:{sentence}').shuffle, retried until changed",
        }


def shuffle_word_order(
    sentences: Iterable[str], seed: int = WORD_ORDER_SEED, min_words: int = WORD_ORDER_MIN_WORDS
) -> WordOrderPairs:
    """Pair each sentence with its words shuffled; deterministic per sentence (independent of the others).

    Raises:
        ValueError: ``min_words`` < 2 (a one-word sentence has no order to change).
    """
    if min_words < 2:
        raise ValueError(f"min_words must be ≥ 2, got {min_words}")
    kept, shuffled = [], []
    short = unchanged = 0
    for sentence in sentences:
        words = sentence.split()
        if len(words) < min_words:
            short += 1
            continue
        rng = random.Random(f"{seed}:{sentence}")
        for _ in range(10):
            order = words.copy()
            rng.shuffle(order)
            if order != words:
                kept.append(sentence)
                shuffled.append(" ".join(order))
                break
        else:
            unchanged += 1
    return WordOrderPairs(kept, shuffled, short, unchanged, seed, min_words)


def word_order_probe(
    cache: EmbeddingCache, pairs: WordOrderPairs, threshold: float = WORD_ORDER_THRESHOLD
) -> dict[str, Any]:
    """Cosine of each sentence with its shuffled words: mean, share above ``threshold``, histogram, skips.

    Raises:
        ValueError: no pairs (every sentence was skipped).
    """
    if len(pairs) == 0:
        raise ValueError(
            f"word_order_probe got no pairs ({pairs.skipped_short} sentences shorter than {pairs.min_words} "
            f"words, {pairs.skipped_unchanged} that no shuffle changed)"
        )
    out = cosine_summary(cache.cosine(pairs.sentences, pairs.shuffled), threshold)
    out["skipped_short"] = pairs.skipped_short
    out["skipped_unchanged"] = pairs.skipped_unchanged
    return out


# --------------------------------------------------------------------------------------------------
# Negation probe
# --------------------------------------------------------------------------------------------------


def negation_probe(cache: EmbeddingCache, pairs: NegationPairs, threshold: float = 0.8) -> dict[str, Any]:
    """Cosine of each sentence with its negation: mean, share above ``threshold``, histogram.

    Where paraphrases exist, ``negation_outranks_paraphrase`` is the share of those rows in which
    cos(sentence, negation) > cos(sentence, paraphrase); otherwise it is null.
    """
    if len(pairs) == 0:
        raise ValueError("negation_probe got no pairs")
    cos = cache.cosine(pairs.sentences, pairs.negations)
    out = cosine_summary(cos, threshold)
    out["paraphrase_pairs"] = 0
    out["negation_outranks_paraphrase"] = None
    with_para = [i for i, p in enumerate(pairs.paraphrases) if p is not None]
    if with_para:
        para_cos = cache.cosine(
            [pairs.sentences[i] for i in with_para], [pairs.paraphrases[i] for i in with_para]
        )
        out["paraphrase_pairs"] = len(with_para)
        out["negation_outranks_paraphrase"] = float((cos[with_para] > para_cos).mean())
    return out


def mean_offdiagonal_cosine(embeddings: np.ndarray) -> float:
    """Mean cosine over all pairs of distinct rows of ``embeddings`` (rows need not be normalised)."""
    count = len(embeddings)
    if count < 2:
        raise ValueError("mean_offdiagonal_cosine needs at least two rows")
    unit = embeddings / np.linalg.norm(embeddings, axis=1, keepdims=True)
    total = unit.sum(axis=0)
    # Σ_{i≠j} u_i·u_j = ‖Σ u‖² − Σ ‖u_i‖², with ‖u_i‖ = 1.
    return float((total @ total - count) / (count * (count - 1)))


def _without_direction(embeddings: np.ndarray, unit: np.ndarray) -> np.ndarray:
    """Rows of ``embeddings`` with their component along the unit vector ``unit`` removed, then L2-normalised."""
    rest = embeddings - np.outer(embeddings @ unit, unit)
    return rest / np.maximum(np.linalg.norm(rest, axis=1, keepdims=True), np.finfo(np.float64).tiny)


def negation_meaning_without_direction(
    affirmative: np.ndarray, negated: np.ndarray, antonym: np.ndarray, negated_antonym: np.ndarray
) -> dict[str, float]:
    """The negation-meaning figures (i), (ii) and (iii) once the negated sentences' common direction is removed.

    The direction is the mean of the differences not A − A and not B − B, at unit length. It is fitted on one
    half of the items (even and odd rows) and removed from every sentence of the other half, which is then
    normalised and scored, so that no item sets the direction it is scored without. (i) and (ii) are shares
    over all items; (iii) is the mean of the two halves' polarity clusters.

    Args:
        affirmative: one embedding per item of "X is A" (rows in item order; at least four items).
        negated: "X is not A", in the same order.
        antonym: "X is B", in the same order.
        negated_antonym: "X is not B", in the same order.

    Returns:
        ``paraphrase_over_affirmative`` (i), ``paraphrase_over_negated_antonym`` (ii), ``polarity_cluster`` (iii),
        and ``direction_length``: the length of the mean difference the direction comes from (the mean of
        the two halves'), how far a model moves a sentence when it negates it, whatever the sentence says.
    """
    count = len(affirmative)
    if count < 4:
        raise ValueError(f"negation_meaning_without_direction needs at least four items, got {count}")
    affirmative, negated, antonym, negated_antonym = (
        np.asarray(x, dtype=np.float64) for x in (affirmative, negated, antonym, negated_antonym)
    )
    half = np.arange(count) % 2
    over_affirmative, over_negated_antonym = np.zeros(count, dtype=bool), np.zeros(count, dtype=bool)
    clusters, lengths = [], []
    for side in (0, 1):
        scored, fitted = half == side, half != side
        difference = np.concatenate(
            [negated[fitted] - affirmative[fitted], negated_antonym[fitted] - antonym[fitted]]
        ).mean(axis=0)
        length = float(np.linalg.norm(difference))
        unit = difference / length if length > 0 else difference  # no common direction: nothing removed
        lengths.append(length)
        a, n, b, nb = (_without_direction(x[scored], unit) for x in (affirmative, negated, antonym, negated_antonym))
        to_paraphrase = np.einsum("ij,ij->i", n, b)
        over_affirmative[scored] = to_paraphrase > np.einsum("ij,ij->i", n, a)
        over_negated_antonym[scored] = to_paraphrase > np.einsum("ij,ij->i", n, nb)
        clusters.append(mean_offdiagonal_cosine(n) - mean_offdiagonal_cosine(a))
    return {
        "paraphrase_over_affirmative": float(over_affirmative.mean()),
        "paraphrase_over_negated_antonym": float(over_negated_antonym.mean()),
        "polarity_cluster": float(np.mean(clusters)),
        "direction_length": float(np.mean(lengths)),
    }


def negation_meaning_probe(cache: EmbeddingCache, items: NegationMeaningItems) -> dict[str, Any]:
    """Whether "not A" is read as the meaning "B" or as the feature *not* (items of
    :func:`~st_debias.evaluation.bias_data.load_negation_meaning_items`).

    Returns:
        ``items``; ``paraphrase_over_affirmative`` (i): share with cos(not A, B) > cos(not A, A);
        ``paraphrase_over_negated_antonym`` (ii): share with cos(not A, B) > cos(not A, not B) (higher is
        better for both); ``polarity_cluster`` (iii): mean cosine between the negated sentences of
        different items minus the same for the affirmative sentences (lower is better; > 0 means negated
        sentences move toward each other whatever they say), with its two terms; the mean of each
        cosine compared; and ``by_antonym_kind``: ``items``, (i) and (ii) on the items whose antonym is the
        adjective with a negative prefix (``prefixed``: "able"/"unable", where "not A" and "B" share the
        stem) and on those whose antonym is another word (``other_word``: "large"/"small"), each kind present;
        and, from four items on, ``without_negation_direction``: (i), (ii) and (iii) without the negated
        sentences' common direction, with its length (:func:`negation_meaning_without_direction`).
    """
    if len(items) < 2:
        raise ValueError("negation_meaning_probe needs at least two items")
    to_paraphrase = cache.cosine(items.negated, items.antonym)
    to_affirmative = cache.cosine(items.negated, items.affirmative)
    to_negated_antonym = cache.cosine(items.negated, items.negated_antonym)
    over_affirmative, over_negated_antonym = to_paraphrase > to_affirmative, to_paraphrase > to_negated_antonym
    prefixed = np.asarray(items.prefixed_antonyms(), dtype=bool)
    by_kind = {
        kind: {
            "items": int(mask.sum()),
            "paraphrase_over_affirmative": float(over_affirmative[mask].mean()),
            "paraphrase_over_negated_antonym": float(over_negated_antonym[mask].mean()),
        }
        for kind, mask in (("prefixed", prefixed), ("other_word", ~prefixed))
        if mask.any()
    }
    negated_mean = mean_offdiagonal_cosine(cache.embed(items.negated).astype(np.float64))
    affirmative_mean = mean_offdiagonal_cosine(cache.embed(items.affirmative).astype(np.float64))
    out = {
        "items": len(items),
        "paraphrase_over_affirmative": float(over_affirmative.mean()),
        "paraphrase_over_negated_antonym": float(over_negated_antonym.mean()),
        "polarity_cluster": negated_mean - affirmative_mean,
        "negated_pairs_mean_cosine": negated_mean,
        "affirmative_pairs_mean_cosine": affirmative_mean,
        "mean_cosine": {
            "negated_to_paraphrase": float(to_paraphrase.mean()),
            "negated_to_affirmative": float(to_affirmative.mean()),
            "negated_to_negated_antonym": float(to_negated_antonym.mean()),
        },
        "by_antonym_kind": by_kind,
    }
    if len(items) >= 4:
        out["without_negation_direction"] = negation_meaning_without_direction(
            *(cache.embed(column) for column in (items.affirmative, items.negated, items.antonym, items.negated_antonym))
        )
    return out


# --------------------------------------------------------------------------------------------------
# Alignment and uniformity
# --------------------------------------------------------------------------------------------------


def alignment_uniformity(
    cache: EmbeddingCache, data: STSData, positive_threshold: float = 4.0, t: float = 2.0, alpha: float = 2.0
) -> dict[str, Any]:
    """Wang & Isola's alignment and uniformity on an STS set (STS-B test by convention).

    alignment = E ‖f(x) − f(x⁺)‖₂^α over pairs with gold score > ``positive_threshold``;
    uniformity = log E exp(−t ‖f(x) − f(y)‖²) over all distinct pairs of the set's unique sentences.
    Embeddings are L2-normalised. Lower is better for both.
    """
    gold = np.asarray(data.scores)
    positive = np.flatnonzero(gold > positive_threshold)
    if positive.size == 0:
        raise ValueError(f"{data.name}: no pair with score > {positive_threshold} for alignment")
    a = cache.embed([data.sentences1[i] for i in positive]).astype(np.float64)
    b = cache.embed([data.sentences2[i] for i in positive]).astype(np.float64)
    alignment = float((np.linalg.norm(a - b, axis=1) ** alpha).mean())
    unique = list(dict.fromkeys(data.sentences()))
    x = cache.embed(unique).astype(np.float64)
    squared = np.maximum(2.0 - 2.0 * (x @ x.T), 0.0)
    upper = squared[np.triu_indices(len(unique), k=1)]
    values = -t * upper
    uniformity = float(np.log(np.mean(np.exp(values - values.max()))) + values.max())
    return {
        "alignment": alignment,
        "uniformity": uniformity,
        "positive_pairs": int(positive.size),
        "sentences": len(unique),
        "dataset": data.name,
    }


# --------------------------------------------------------------------------------------------------
# Training-pair statistics
# --------------------------------------------------------------------------------------------------
