"""Data kinds: the kinds of training rows a recipe (``data.kind``) or ``st-debias build`` can ask for.

:data:`DATA_KINDS` is the one registry of them, as :data:`st_debias.recipes.losses.LOSSES` is of the losses.
The recipe loader checks a kind's options through it, the row cache keys on its generator versions,
training reads its oversample factor, and ``st-debias build`` builds every kind through it.

Example:
    >>> from st_debias.data.kinds import DATA_KINDS
    >>> sorted(DATA_KINDS)
    ['ipw', 'minimal_pairs', 'negation', 'simcse']
    >>> rows, report = DATA_KINDS["simcse"].build(["A man plays a guitar.", "A dog runs."], seed=0)
    >>> rows.column_names, report.rows
    (['anchor', 'positive'], 2)
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from datasets import Dataset

    from st_debias.data.io.report import BuildReport

__all__ = ["DATA_KINDS", "DataKind", "generator_versions"]

#: Builder arguments that are not data options: the machinery (recipe training, ``st-debias build``) passes them.
MACHINERY_OPTIONS = frozenset(
    {"model", "seed", "cache_dir", "show_progress_bar", "negator", "positive_generators", "paraphrase_generators"}
)

#: Rule-based generators whose rules decide the rows: each one's version, read from its class.
_GENERATORS = {
    "syntactic": "st_debias.data.paraphrase.syntactic:SyntacticParaphraser",
    "minimal_pairs": "st_debias.data.minimal_pairs:MinimalPairBuilder",
}


def _as_builder_arguments(options: dict[str, Any] | None) -> dict[str, Any]:
    """Options as a builder takes them: YAML lists become tuples (``mer_range: [0.15, 0.6]``)."""
    return {key: tuple(value) if isinstance(value, list) else value for key, value in (options or {}).items()}


def _load(reference: str) -> Any:
    module, name = reference.split(":")
    return getattr(importlib.import_module(module), name)


@dataclass(frozen=True)
class DataKind:
    """One kind of training rows.

    Attributes:
        name: the kind's name (``data.kind`` in a recipe, the first argument of ``st-debias build``).
        description: what the rows are, for announcements and help.
        columns: the dataset's first columns, in order.
        builder: ``"module:Class"`` of the builder whose signature holds the options; None when it takes none.
        generator_choice: whether the ``generator`` option (:data:`st_debias.data.builders.GENERATOR_CHOICES`)
            picks the candidates, and which choice is the default.
        oversample: corpus sentences read per wanted row (builders that skip sentences need more than one).
        generators: the rule-based generators (:data:`_GENERATORS`) whose versions the rows depend on.
        mixable: whether rows of ``data.mix`` sources, (anchor, positive, negative), can join the rows.
    """

    name: str
    description: str
    columns: tuple[str, ...]
    builder: str | None
    make: Callable[..., tuple[Dataset, BuildReport]]
    generator_choice: str | None = None
    oversample: int = 1
    generators: tuple[str, ...] = ()
    mixable: bool = False

    def builder_class(self) -> type | None:
        return _load(self.builder) if self.builder else None

    def option_names(self) -> list[str]:
        """The options a recipe's ``data.options`` (or ``st-debias build --option``) may set."""
        builder = self.builder_class()
        names = [n for n in inspect.signature(builder).parameters if n not in MACHINERY_OPTIONS] if builder else []
        return (["generator"] if self.generator_choice else []) + names

    def check_options(self, options: dict[str, Any], label: str = "data.options") -> None:
        """Refuse unknown options and values the builder itself refuses; ``label`` names the options in messages.

        Raises:
            ValueError: naming the option, and the options the kind takes.
        """
        options = dict(options)
        if self.builder is None:
            if options:
                raise ValueError(f"data kind {self.name!r} takes no options, got {sorted(options)}.")
            return
        if self.generator_choice:
            from st_debias.data.generators import GENERATOR_CHOICES

            choice = options.pop("generator", self.generator_choice)
            if choice not in GENERATOR_CHOICES:
                older = " (older name: paraphrases)" if self.name == "negation" else ""
                raise ValueError(f"{label}.generator{older} must be one of {list(GENERATOR_CHOICES)}, got {choice!r}.")
        unknown = sorted(set(options) - set(self.option_names()))
        if unknown:
            raise ValueError(
                f"{label} {unknown} are not options of the {self.name} builder; it takes {self.option_names()}."
            )
        builder = self.builder_class()
        # Empty candidate generators: checking the options must not load spaCy or WordNet.
        placeholders = {
            name: [] for name in ("positive_generators", "paraphrase_generators")
            if name in inspect.signature(builder).parameters
        }  # fmt: skip
        try:
            builder(**placeholders, **_as_builder_arguments(options))
        except (TypeError, ValueError) as error:
            raise ValueError(f"{label}: {error}") from error

    def versions(self) -> dict[str, int]:
        """The versions of the generators the rows depend on: new rules must not reuse rows cached by old ones."""
        return {name: _load(_GENERATORS[name]).version for name in self.generators}

    def build(
        self,
        sentences: list[str],
        *,
        seed: int,
        options: dict[str, Any] | None = None,
        model: Any = None,
        cache_dir: Any = None,
        show_progress_bar: bool = False,
        **machinery: Any,
    ) -> tuple[Dataset, BuildReport]:
        """The rows of ``sentences`` and the build report; ``machinery`` holds builder arguments a recipe does not
        set (``negator``, ``shard`` for ipw)."""
        return self.make(
            sentences, seed=seed, options=_as_builder_arguments(options), model=model, cache_dir=cache_dir,
            show_progress_bar=show_progress_bar, **machinery,
        )


def _simcse(sentences: list[str], *, seed: int, options: dict[str, Any], **_: Any) -> tuple[Dataset, BuildReport]:
    from datasets import Dataset

    from st_debias.data.io.report import start_build

    cleaned, report = start_build("simcse", sentences)
    report.rows = report.anchors = len(cleaned.sentences)
    return Dataset.from_dict({"anchor": cleaned.sentences, "positive": cleaned.sentences}), report


def _ipw(
    sentences: list[str], *, seed: int, options: dict[str, Any], model: Any, cache_dir: Any, show_progress_bar: bool,
    shard: tuple[int, int] | None = None,
) -> tuple[Dataset, BuildReport]:
    from st_debias.data.builders import DEFAULT_POSITIVES, build_ipw_dataset

    options = dict(options)
    return build_ipw_dataset(
        sentences, model, generator=options.pop("generator", DEFAULT_POSITIVES), shard=shard, return_report=True,
        seed=seed, cache_dir=cache_dir, show_progress_bar=show_progress_bar, **options,
    )


def _negation(
    sentences: list[str], *, seed: int, options: dict[str, Any], show_progress_bar: bool, negator: Any = None, **_: Any
) -> tuple[Dataset, BuildReport]:
    from st_debias.data.builders import DEFAULT_PARAPHRASES, build_negation_dataset

    options = dict(options)
    machinery = {"negator": negator} if negator is not None else {}
    return build_negation_dataset(
        sentences, generator=options.pop("generator", DEFAULT_PARAPHRASES), return_report=True, seed=seed,
        show_progress_bar=show_progress_bar, **machinery, **options,
    )


def _minimal_pairs(
    sentences: list[str], *, seed: int, options: dict[str, Any], show_progress_bar: bool, negator: Any = None, **_: Any
) -> tuple[Dataset, BuildReport]:
    from st_debias.data.minimal_pairs import MinimalPairBuilder

    builder = MinimalPairBuilder(seed=seed, negator=negator, show_progress_bar=show_progress_bar, **options)
    return builder.build(sentences), builder.report


DATA_KINDS: dict[str, DataKind] = {
    kind.name: kind
    for kind in (
        DataKind("simcse", "(anchor, anchor) SimCSE pairs", ("anchor", "positive"), None, _simcse),
        DataKind(
            "ipw", "DebCSE inverse-propensity-weighted (anchor, positive, negative) rows",
            ("anchor", "positive", "negative_1"), "st_debias.data.ipw.builder:IPWBuilder", _ipw,
            generator_choice="edits",
        ),
        DataKind(
            "negation", "(anchor, paraphrase, negation) rows with spaCy negations",
            ("anchor", "paraphrase", "negation"), "st_debias.data.negation.builder:OssCSEBuilder", _negation,
            generator_choice="syntactic", oversample=3, generators=("syntactic",), mixable=True,
        ),
        DataKind(
            "minimal_pairs", "cue-balanced (anchor, positive, negative) minimal pairs",
            ("anchor", "positive", "negative"), "st_debias.data.minimal_pairs:MinimalPairBuilder", _minimal_pairs,
            oversample=2, generators=("syntactic", "minimal_pairs"), mixable=True,
        ),
    )
}


def generator_versions(kind: str | None = None) -> dict[str, int]:
    """The versions of the rule-based generators ``kind``'s rows depend on; of every generator when None."""
    if kind is None:
        return {name: _load(reference).version for name, reference in _GENERATORS.items()}
    return DATA_KINDS[kind].versions()
