"""An experimental ``data.mix`` source: the negation-meaning rows cut down to their phrases.

In a negation-meaning quadruple ("X is A", "X is not A", "X is B", "X is not B") every sentence shares X, so
all-MiniLM-L6-v2 puts "X is A" and "X is B" at a cosine of about 0.97 for other-word antonyms
(``../negation_fit/``): the antonym is a small part of each embedding, and so of each row's gradient.
``negation_meaning_phrases_half`` gives, from each training-half quadruple of the corpus
(``../negation_meaning/held_out_pairs.py``), the same two rows on the words alone: ("not A", "B", "not B") and
("not B", "A", "not A"), where the antonym is most of what the model embeds. The pairs and their frequency are
the sentence rows'; the probe's held-out pairs stay out of both.

The lab's entry points (``benchmarks/pyproject.toml``) add the source to the recipe mix registry.
"""

from __future__ import annotations

import os
from typing import Any

from benchmarks.negation_meaning.held_out_pairs import training_half
from benchmarks.negation_teacher.wordnet_pairs import sorted_pair
from st_debias.data.text import swapped_words
from st_debias.recipes.mix_sources import MixSource, SourceRows, meaning_rows, negation_meaning_quadruples

#: The source's name in ``data.mix``.
SOURCE = "negation_meaning_phrases_half"


def phrase_quadruple(affirmative: str, antonym: str) -> tuple[str, str, str, str]:
    """("A", "not A", "B", "not B") from the two affirmative sentences "X is A" and "X is B".

    Raises:
        ValueError: the sentences differ in more or fewer than one word.
    """
    a, b = swapped_words(affirmative, antonym)
    return a, f"not {a}", b, f"not {b}"


def phrase_rows(
    *, data_dir: str | os.PathLike[str] | None = None, sentences: list[str] | None = None, cache_dir: Any = None
) -> SourceRows:
    """The phrase rows of the training-half quadruples of ``sentences``, one pair of rows per quadruple (module
    docstring).

    Raises:
        ValueError: no corpus sentences.
    """
    quadruples, described = negation_meaning_quadruples(sentences, cache_dir)
    kept = [phrase_quadruple(quadruple[0], quadruple[2]) for quadruple in training_half(quadruples)]
    pairs = {sorted_pair(a, b) for a, _, b, _ in kept}
    return meaning_rows(kept), {**described, "kept_quadruples": len(kept), "kept_pairs": len(pairs)}


#: The ``negation_meaning_phrases_half`` source (an entry point of the lab).
PHRASES_HALF = MixSource(phrase_rows, reads_corpus=True)
