"""An experimental ``data.mix`` source: the negation-meaning rows of half the curated antonym pairs only.

The library's ``negation_meaning`` rows and the dev negation-meaning probe are built the same way, from the same
curated antonym lexicon (:data:`st_debias.data.lexicon.SAFE_ANTONYMS`). Their sentences differ (corpus lines
below 150,000 against lines 150,001–180,000), but their antonym pairs mostly do not: 370 of the probe's 371 items
use a pair that a 1,000-step run's rows also use (``../recipe_v6/results/probe_budget.md``). A rise of the probe's
figures can then be the pairs learnt, not what a negation means.

``negation_meaning_half_pairs`` keeps the rows of the quadruples whose antonym pair falls in the training half
of a fixed split of the pairs (:func:`in_training_half`, a hash of the pair, so the split needs no list and
does not depend on the corpus). The probe's items whose pair is in the other half are then pairs the model
never saw in a negation-meaning row: the figures on those items measure what carries over to new pairs.

``negation_meaning_lexical_pairs`` keeps the rows of the quadruples whose pair is two words, not one word and
its prefixed form ("able"/"unable", "possible"/"impossible"; :func:`st_debias.data.lexicon.is_prefixed_antonym`).
1,239 of the 1,966 quadruples of the first 150,000 lines are prefixed; on those, "X is not A" and the antonym
"X is unA" share the word's stem, and the rows can teach that a negation matches the sentence that repeats its
word with a prefix.

The lab's entry points (``benchmarks/pyproject.toml``) add the sources to the recipe mix registry, so
that a lab recipe YAML can name them.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

from st_debias.data.lexicon import is_prefixed_antonym
from st_debias.data.text import swapped_words
from st_debias.recipes.mix_sources import MixSource, SourceRows, meaning_rows, negation_meaning_quadruples

#: The sources' names in ``data.mix``.
SOURCE = "negation_meaning_half_pairs"
LEXICAL_SOURCE = "negation_meaning_lexical_pairs"


def antonym_pair(affirmative: str, antonym: str) -> tuple[str, str]:
    """The (lower-cased, sorted) pair of words that tells "X is A" from "X is B".

    Raises:
        ValueError: the two sentences differ in more or fewer than one word.
    """
    first, second = sorted(swapped_words(affirmative, antonym))
    return first, second


def in_training_half(pair: tuple[str, str]) -> bool:
    """Whether ``pair`` is in the training half of the split: the first byte of the MD5 of "A|B" is even."""
    return hashlib.md5("|".join(pair).encode()).digest()[0] % 2 == 0


def training_half(quadruples: list[tuple[str, str, str, str]]) -> list[tuple[str, str, str, str]]:
    """The quadruples whose antonym pair ("X is A", "X is B") is in the training half, in order."""
    return [quadruple for quadruple in quadruples if in_training_half(antonym_pair(quadruple[0], quadruple[2]))]


def half_pair_rows(
    *, data_dir: str | os.PathLike[str] | None = None, sentences: list[str] | None = None, cache_dir: Any = None
) -> SourceRows:
    """The library's negation-meaning rows of the quadruples of ``sentences`` whose antonym pair is in the
    training half (module docstring).

    Raises:
        ValueError: no corpus sentences.
    """
    quadruples, described = negation_meaning_quadruples(sentences, cache_dir)
    kept = training_half(quadruples)
    pairs = {antonym_pair(quadruple[0], quadruple[2]) for quadruple in kept}
    return meaning_rows(kept), {**described, "kept_quadruples": len(kept), "kept_pairs": len(pairs)}


def lexical_pair_rows(
    *, data_dir: str | os.PathLike[str] | None = None, sentences: list[str] | None = None, cache_dir: Any = None
) -> SourceRows:
    """The library's negation-meaning rows of the quadruples of ``sentences`` whose antonym pair is not prefixed
    (module docstring).

    Raises:
        ValueError: no corpus sentences.
    """
    quadruples, described = negation_meaning_quadruples(sentences, cache_dir)
    kept = [quadruple for quadruple in quadruples if not is_prefixed_antonym(*antonym_pair(quadruple[0], quadruple[2]))]
    pairs = {antonym_pair(quadruple[0], quadruple[2]) for quadruple in kept}
    return meaning_rows(kept), {**described, "kept_quadruples": len(kept), "kept_pairs": len(pairs)}


#: The ``negation_meaning_half_pairs`` and ``negation_meaning_lexical_pairs`` sources (entry points of the lab).
HALF_PAIRS = MixSource(half_pair_rows, reads_corpus=True)
LEXICAL_PAIRS = MixSource(lexical_pair_rows, reads_corpus=True)
