"""One-call entry points over the builder classes, the named candidate-generator choices, shard merging.

The generator choices (:data:`GENERATOR_CHOICES`) are the ones the recipes, ``st-debias build --generator``
and the one-call builders share:

* ``syntactic``: :class:`~st_debias.data.paraphrase.syntactic.SyntacticParaphraser` (rule-based syntactic
  rewrites from a spaCy parse; the recipes' and :class:`OssCSEBuilder`'s default);
* ``syntactic+edits``: syntactic where the parse gives a candidate in the MER window, word edits for the
  other sentences;
* ``edits``: word edits and WordNet synonyms: for negation rows the chained edits strong enough to pass the
  MER filter, for IPW rows DebCSE's single edits (:class:`IPWBuilder`'s default, as in the debcse recipe);
* ``dropout``: no generator; the anchor stands in for its paraphrase/positive (the SimCSE dropout view).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Literal

from datasets import Dataset, concatenate_datasets

from st_debias.data.generators import (
    DEFAULT_PARAPHRASES,
    DEFAULT_POSITIVES,
    GENERATOR_CHOICES,
    CandidateGenerator,
)
from st_debias.data.io.report import BuildReport, merge_reports
from st_debias.data.ipw.builder import IPWBuilder
from st_debias.data.negation.builder import OssCSEBuilder
from st_debias.data.text import MER_WINDOW

__all__ = [
    "GENERATOR_CHOICES",
    "build_ipw_dataset",
    "build_negation_dataset",
    "candidate_generators",
    "merge_builds",
    "negation_builder",
]


def candidate_generators(
    choice: str,
    builder: Literal["negation", "ipw"] = "negation",
    *,
    mer_range: tuple[float, float] = MER_WINDOW,
    spacy_model: str | None = None,
) -> list[CandidateGenerator]:
    """The generators of one of :data:`GENERATOR_CHOICES` (``dropout``: none).

    Args:
        choice: the generator choice (see the module docstring).
        builder: which rows they feed: ``negation`` (paraphrases) or ``ipw`` (positives); picks the edits.
        mer_range: word-level MER window of syntactic candidates (and of the syntactic+edits hand-over).
        spacy_model: spaCy model of the syntactic paraphraser (default: the negator's setting).

    Raises:
        ValueError: an unknown choice.
    """
    if choice not in GENERATOR_CHOICES:
        raise ValueError(f"Unknown generator {choice!r}; choose one of {list(GENERATOR_CHOICES)}.")
    if builder not in ("negation", "ipw"):
        raise ValueError(f"builder must be 'negation' or 'ipw', got {builder!r}")
    if choice == "dropout":
        return []
    from st_debias.data.paraphrase.edits import default_edit_generators, default_paraphrase_generators

    edits = default_paraphrase_generators() if builder == "negation" else default_edit_generators()
    if choice == "edits":
        return edits
    from st_debias.data.paraphrase.syntactic import SyntacticParaphraser

    syntactic = SyntacticParaphraser(spacy_model, mer_window=mer_range)
    if choice == "syntactic":
        return [syntactic]
    from st_debias.data.generators import FirstAvailable
    from st_debias.data.text import match_error_rate

    low, high = mer_range
    return [
        FirstAvailable(
            [syntactic, *edits],
            accept=lambda sentence, candidate: low <= match_error_rate(sentence, candidate.text) <= high,
        )
    ]


def build_ipw_dataset(
    sentences: Iterable[object] | Dataset,
    model: Any = None,
    *,
    column: str | None = None,
    generator: str = DEFAULT_POSITIVES,
    shard: tuple[int, int] | None = None,
    return_report: bool = False,
    **options: Any,
) -> Dataset | tuple[Dataset, BuildReport]:
    """DebCSE rows ``(anchor, positive, negative_1..m[, label])``: :class:`IPWBuilder` (options) ``.build``.

    Args:
        sentences: any iterable of strings (list, generator, ``dataset["text"]``) or a ``datasets.Dataset``.
        model: the guide model (instance, name/path, or None for all-MiniLM-L6-v2).
        column: the sentence column of a ``Dataset``.
        generator: positive generator choice (:data:`GENERATOR_CHOICES`, default ``edits``; ``--generator`` of
            ``st-debias build``); ignored when ``options`` give ``positive_generators``.
        shard: build only the anchors of shard ``(index, count)``.
        return_report: also return the :class:`BuildReport`.
        **options: other :class:`IPWBuilder` arguments.

    Example:
        >>> rows, report = build_ipw_dataset(read_sentences(limit=2000), return_report=True)  # doctest: +SKIP
    """
    if "positive_generators" not in options:
        options["positive_generators"] = candidate_generators(generator, "ipw")
        if generator == "dropout":
            options["on_missing_positive"] = "anchor"
    builder = IPWBuilder(model, **options)
    rows = builder.build(sentences, column=column, shard=shard)
    return (rows, builder.report) if return_report else rows


def negation_builder(*, generator: str = DEFAULT_PARAPHRASES, **options: Any) -> OssCSEBuilder:
    """An :class:`OssCSEBuilder` whose paraphrase candidates come from the named ``generator`` choice (ignored
    when ``options`` give ``paraphrase_generators``); ``options`` are the builder's other arguments."""
    if "paraphrase_generators" not in options:
        negator = options.get("negator")
        options["paraphrase_generators"] = candidate_generators(
            generator,
            "negation",
            mer_range=options.get("mer_range", MER_WINDOW),
            spacy_model=negator.model if negator is not None else None,
        )
        if generator == "dropout":
            options["on_missing_paraphrase"] = "anchor"
    return OssCSEBuilder(**options)


def build_negation_dataset(
    sentences: Iterable[object] | Dataset,
    *,
    column: str | None = None,
    generator: str = DEFAULT_PARAPHRASES,
    return_report: bool = False,
    num_proc: int | None = 1,
    **options: Any,
) -> Dataset | tuple[Dataset, BuildReport]:
    """OssCSE rows ``(anchor, paraphrase, negation)``: :class:`OssCSEBuilder` (options) ``.build``.

    Args:
        sentences: any iterable of strings (list, generator, ``dataset["text"]``) or a ``datasets.Dataset``.
        column: the sentence column of a ``Dataset``.
        generator: paraphrase generator choice (:data:`GENERATOR_CHOICES`, default ``syntactic`` as in the
            recipes; ``--generator`` of ``st-debias build``, ``data.options.generator`` of a recipe); ignored when
            ``options`` give ``paraphrase_generators``.
        return_report: also return the :class:`BuildReport`.
        num_proc: processes (None: every usable core); any number gives the same rows.
        **options: other :class:`OssCSEBuilder` arguments (``negator``, ``mer_range``, ``seed``...).

    Example:
        >>> rows = build_negation_dataset(dataset, column="text", num_proc=4)  # doctest: +SKIP
    """
    builder = negation_builder(generator=generator, **options)
    rows = builder.build(sentences, column=column, num_proc=num_proc)
    return (rows, builder.report) if return_report else rows


def merge_builds(parts: Sequence[tuple[Dataset, BuildReport]]) -> tuple[Dataset, BuildReport]:
    """Concatenate shard builds (``IPWBuilder.build(..., shard=...)`` outputs, in shard order) and merge
    their reports."""
    if not parts:
        raise ValueError("No shards to merge.")
    return concatenate_datasets([rows for rows, _ in parts]), merge_reports([report for _, report in parts])
