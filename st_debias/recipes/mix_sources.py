"""The sources ``data.mix`` can take (anchor, positive, negative) rows from: one registry, read by the recipe check
(:mod:`st_debias.recipes.config`) and by the row builder (:func:`st_debias.recipes.data.mix_rows`)."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from st_debias.registry import MIX_SOURCE_GROUP, Registry, check_mix_source

#: One row: (anchor, positive, negative).
Row = tuple[str, str, str]
#: The rows of a source and a description of how they were made (counts, what was dropped and why).
SourceRows = tuple[list[Row], dict[str, Any]]


@dataclass(frozen=True)
class MixSource:
    """A ``data.mix`` source: ``rows(data_dir=..., sentences=..., cache_dir=...)`` gives its rows and their
    description. ``reads_corpus``: the rows are built from the corpus sentences (those the run's own rows are built
    from, unless a recipe extension's ``mix_corpus_sentences`` says how many), not read from a file under
    ``data_dir``."""

    rows: Callable[..., SourceRows]
    reads_corpus: bool


def nli_rows(
    *, data_dir: str | os.PathLike[str] | None = None, sentences: list[str] | None = None, cache_dir: Any = None
) -> SourceRows:
    """SNLI (premise, entailed, contradicting) triplets, filtered (:mod:`st_debias.data.io.nli`)."""
    from st_debias.data.io.nli import load_nli_triplets
    from st_debias.evaluation.sts_data import evaluation_sentences

    triplets = load_nli_triplets(data_dir=data_dir, exclude=evaluation_sentences(data_dir))
    return list(zip(triplets.anchors, triplets.positives, triplets.negatives, strict=True)), triplets.describe()


def negation_meaning_rows(
    *, data_dir: str | os.PathLike[str] | None = None, sentences: list[str] | None = None, cache_dir: Any = None
) -> SourceRows:
    """From each corpus sentence "X is A" with a curated antonym B (:mod:`st_debias.data.negation.meaning`), the
    rows ("X is not A", "X is B", "X is not B") and ("X is not B", "X is A", "X is not A"): a negated anchor
    whose positive has no negation and whose negative has one, the cue of the other rows reversed. Built with
    spaCy once per corpus and cached (:func:`~st_debias.data.negation.meaning.cached_negation_meaning_quadruples`).

    Raises:
        ValueError: no corpus sentences.
    """
    built, described = negation_meaning_quadruples(sentences, cache_dir)
    return meaning_rows(built), described


def meaning_rows(quadruples: list[tuple[str, str, str, str]]) -> list[Row]:
    """The two ``negation_meaning`` rows of each ("X is A", "X is not A", "X is B", "X is not B") quadruple:
    ("X is not A", "X is B", "X is not B") and ("X is not B", "X is A", "X is not A")."""
    rows: list[Row] = []
    for a, not_a, b, not_b in quadruples:
        rows += [(not_a, b, not_b), (not_b, a, not_a)]
    return rows


def negation_meaning_quadruples(
    sentences: list[str] | None, cache_dir: Any, antonyms: Mapping[str, str] | None = None
) -> tuple[list[tuple[str, str, str, str]], dict[str, Any]]:
    """The cached ("X is A", "X is not A", "X is B", "X is not B") quadruples of ``sentences`` and their
    description, for the sources built from them; ``antonyms`` replaces the curated antonym pairs
    (:func:`~st_debias.data.negation.meaning.negation_meaning_quadruples`).

    Raises:
        ValueError: no corpus sentences.
    """
    if not sentences:
        raise ValueError("The negation_meaning mix source needs the corpus sentences.")
    from st_debias.data.negation.meaning import cached_negation_meaning_quadruples

    built = cached_negation_meaning_quadruples(sentences, cache_dir, antonyms)
    quadruples = list(zip(built.affirmative, built.negated, built.antonym, built.negated_antonym, strict=True))
    described = {"sentences": len(sentences), "quadruples": len(built), "declined": dict(sorted(built.declined.items()))}
    return quadruples, described


#: Every ``data.mix`` source: name → how its rows are made; st_debias's own, and those of installed packages
#: (:mod:`st_debias.registry`).
MIX_SOURCES: Registry[MixSource] = Registry("data.mix source", MIX_SOURCE_GROUP, {
    "nli": MixSource(nli_rows, reads_corpus=False),
    "negation_meaning": MixSource(negation_meaning_rows, reads_corpus=True),
}, check_mix_source)
