"""An experimental ``data.mix`` source: negation-meaning rows whose negative is the sentence the anchor negates.

The library's ``negation_meaning`` source gives, from each quadruple ("X is A", "X is not A", "X is B", "X is not
B"), the rows ("X is not A", "X is B", "X is not B") and ("X is not B", "X is A", "X is not A"). They rank the
antonym paraphrase above the other negation: the dev probe's figure (ii). Nothing in the rows ranks "X is B"
above "X is A" for the anchor "X is not A", the probe's figure (i); that comes only from the negation rows
separating a sentence from its negation, and part of that separation is the direction every negation shares
(the polarity cluster, figure (iii)).

``negation_meaning_affirmative`` gives the rows ("X is not A", "X is B", "X is A") and ("X is not B", "X is A",
"X is B"), from the same cached quadruples. The positive and the negative both carry no negation, so the rows
hold no negation cue; each affirmative sentence is the positive of one row and the negative of the other. What
they could teach instead is "the candidate that shares the anchor's content word is the farther one", an
overlap cue: the Oppn split of STS-B dev is where that would show.

``negation_meaning_affirmative_half`` gives the same rows from the quadruples whose antonym pair is in the training
half of ``held_out_pairs.py``'s split, so that the probe's held-out pairs stay out of every row.

The lab's entry points (``benchmarks/pyproject.toml``) add the sources to the recipe mix registry, so
that a lab recipe YAML can name it.
"""

from __future__ import annotations

import os
from typing import Any

from benchmarks.negation_meaning.held_out_pairs import training_half
from st_debias.recipes.mix_sources import MixSource, Row, SourceRows, negation_meaning_quadruples

#: The sources' names in ``data.mix``: every quadruple's rows, and the training half's only.
SOURCE = "negation_meaning_affirmative"
HALF_SOURCE = "negation_meaning_affirmative_half"


def affirmative_rows(quadruples: list[tuple[str, str, str, str]]) -> list[Row]:
    """("X is not A", "X is B", "X is A") and ("X is not B", "X is A", "X is B") of each quadruple, in order."""
    rows: list[Row] = []
    for a, not_a, b, not_b in quadruples:
        rows += [(not_a, b, a), (not_b, a, b)]
    return rows


def affirmative_negative_rows(
    *, data_dir: str | os.PathLike[str] | None = None, sentences: list[str] | None = None, cache_dir: Any = None
) -> SourceRows:
    """The rows ("X is not A", "X is B", "X is A") and ("X is not B", "X is A", "X is B") of each quadruple of
    ``sentences`` (module docstring).

    Raises:
        ValueError: no corpus sentences.
    """
    quadruples, described = negation_meaning_quadruples(sentences, cache_dir)
    return affirmative_rows(quadruples), described


def affirmative_half_rows(
    *, data_dir: str | os.PathLike[str] | None = None, sentences: list[str] | None = None, cache_dir: Any = None
) -> SourceRows:
    """:func:`affirmative_negative_rows` of the quadruples whose antonym pair is in the training half.

    Raises:
        ValueError: no corpus sentences.
    """
    quadruples, described = negation_meaning_quadruples(sentences, cache_dir)
    kept = training_half(quadruples)
    return affirmative_rows(kept), {**described, "kept_quadruples": len(kept)}


# The two sources, in the order of their names above (entry points of the lab).
AFFIRMATIVE_NEGATIVES = MixSource(affirmative_negative_rows, reads_corpus=True)
AFFIRMATIVE_HALF = MixSource(affirmative_half_rows, reads_corpus=True)
