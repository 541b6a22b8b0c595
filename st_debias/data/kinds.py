"""Data kinds: the kinds of training rows a recipe (``data.kind``) or ``st-debias build`` can ask for.

:data:`DATA_KINDS` is the one registry of them, as :data:`st_debias.recipes.losses.LOSSES` is of the losses.
The recipe loader checks a kind's options through it, the row cache keys on its generator versions,
training reads its oversample factor, and ``st-debias build`` builds every kind through it.

Example:
    >>> from st_debias.data.kinds import DATA_KINDS
    >>> sorted(DATA_KINDS.builtin())  # st_debias's own; installed packages may add more
    ['ipw', 'minimal_pairs', 'negation', 'paraphrase', 'simcse']
    >>> rows, report = DATA_KINDS["simcse"].build(["A man plays a guitar.", "A dog runs."], seed=0, resume=False)
    >>> rows.column_names, report.rows
    (['anchor', 'positive'], 2)
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from st_debias.data.generators import DEFAULT_PARAPHRASES, DEFAULT_POSITIVES
from st_debias.registry import DATA_KIND_GROUP, Registry, check_data_kind

if TYPE_CHECKING:
    from datasets import Dataset

    from st_debias.data.io.report import BuildReport
    from st_debias.data.minimal_pairs import MinimalPairBuilder
    from st_debias.data.negation.builder import OssCSEBuilder
    from st_debias.data.parallel import BlockBuilder
    from st_debias.data.paraphrase.pairs import ParaphrasePairBuilder

__all__ = ["DATA_KINDS", "BlockWorker", "DataKind", "block_builder", "generator_versions", "spacy_machinery"]

#: Builder arguments that are not data options: the machinery (recipe training, ``st-debias build``) passes them.
MACHINERY_OPTIONS = frozenset(
    {"model", "seed", "cache_dir", "show_progress_bar", "num_proc", "negator", "positive_generators",
     "paraphrase_generators"}
)

#: Generators whose code decides the rows: each one's version, read from its class.
_GENERATORS = {
    "ipw": "st_debias.data.ipw.builder:IPWBuilder",
    "syntactic": "st_debias.data.paraphrase.syntactic:SyntacticParaphraser",
    "minimal_pairs": "st_debias.data.minimal_pairs:MinimalPairBuilder",
}


def _as_builder_arguments(options: dict[str, Any] | None) -> dict[str, Any]:
    """Options as a builder takes them: YAML lists become tuples (``mer_range: [0.15, 0.6]``)."""
    return {key: tuple(value) if isinstance(value, list) else value for key, value in (options or {}).items()}


def _declared_arguments(reference: str | None) -> tuple[dict[str, Any], str]:
    """The literal defaults of the ``__init__`` parameters of the class ``"module:Class"``, and its class docstring,
    read from its source without importing the module."""
    if reference is None:
        return {}, ""
    module, name = reference.split(":")
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        return {}, ""
    tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
    cls = next((node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == name), None)
    init = next((node for node in (cls.body if cls else []) if isinstance(node, ast.FunctionDef) and node.name == "__init__"), None)
    if cls is None or init is None:
        return {}, ""
    arguments = init.args
    positional = arguments.posonlyargs + arguments.args
    pairs = list(zip(positional[len(positional) - len(arguments.defaults):], arguments.defaults, strict=True))
    pairs += [(argument, default) for argument, default in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True) if default]
    defaults = {}
    for argument, default in pairs:
        try:
            defaults[argument.arg] = ast.literal_eval(default)
        except ValueError:
            continue  # not a literal: no flag can take it
    return defaults, ast.get_docstring(cls) or ""


def _argument_help(doc: str, name: str) -> str:
    """The first line of ``name``'s entry in the ``Args:`` section of a Google-style docstring."""
    found = re.search(rf"^\s+{re.escape(name)}(?: \(.*?\))?: (.+)$", doc, re.MULTILINE)
    return found.group(1).strip() if found else name.replace("_", " ")


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
        make: with ``in_blocks``, makes the :class:`~st_debias.data.parallel.BlockBuilder` (``seed``, ``options``,
            ``show_progress_bar`` and machinery such as ``negator``); otherwise builds the rows and report of the
            whole corpus at once, or of the anchor slice ``shard`` (``(index, count)`` or None) against it.
        in_blocks: whether the rows build block by block (:mod:`st_debias.data.parallel`): on ``num_proc``
            processes, as ``shard`` parts joined by :meth:`finish_parts`, resuming an interrupted build. A kind
            whose rows need the whole corpus at once (ipw: each anchor's negatives are searched among every
            sentence) is not; its ``make`` builds the rows of one anchor slice (``shard``) against the whole
            corpus, and the slices' rows concatenate (:func:`st_debias.data.builders.merge_builds`).
        generator_choice: whether the ``generator`` option (:data:`st_debias.data.builders.GENERATOR_CHOICES`)
            picks the candidates, and which choice is the default.
        oversample: corpus sentences read per wanted row (builders that skip sentences need more than one).
        generators: the generators (:data:`_GENERATORS`) whose versions the rows depend on.
        mixable: whether rows of ``data.mix`` sources, (anchor, positive, negative), can join the rows.
        flags: builder options that ``st-debias build`` also takes as flags of their own (``--num-negatives``);
            type, default and help come from the builder's signature and docstring.
        guide_model: the rows are built with a guide model (``model``; ``st-debias build --model``).
        parses: the builder parses sentences with spaCy (``negator``; ``st-debias build --spacy-model``).
    """

    name: str
    description: str
    columns: tuple[str, ...]
    builder: str | None
    make: Callable[..., Any]
    in_blocks: bool = False
    generator_choice: str | None = None
    oversample: int = 1
    generators: tuple[str, ...] = ()
    mixable: bool = False
    flags: tuple[str, ...] = ()
    guide_model: bool = False
    parses: bool = False

    def builder_class(self) -> type | None:
        return _load(self.builder) if self.builder else None

    def option_names(self) -> list[str]:
        """The options a recipe's ``data.options`` (or ``st-debias build --option``) may set."""
        builder = self.builder_class()
        names = [n for n in inspect.signature(builder).parameters if n not in MACHINERY_OPTIONS] if builder else []
        return (["generator"] if self.generator_choice else []) + names

    def flag_options(self) -> dict[str, tuple[Any, str]]:
        """Each of :attr:`flags` with its default and help text, read from the builder's ``__init__`` signature and
        the ``Args:`` of its class docstring (the one place the option is declared). The builder's source is read,
        not imported, so that ``st-debias --help`` never loads torch.

        Raises:
            ValueError: a flag that is not a parameter of the builder with a literal default.
        """
        if not self.flags:
            return {}
        defaults, doc = _declared_arguments(self.builder)
        missing = [name for name in self.flags if name not in defaults]
        if missing:
            raise ValueError(f"data kind {self.name!r}: flags {missing} are not parameters of {self.builder} with a default")
        return {name: (defaults[name], _argument_help(doc, name)) for name in self.flags}

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

    def builder_options(self, options: dict[str, Any] | None) -> dict[str, Any]:
        """``options`` as the builder takes them (YAML and JSON lists become tuples)."""
        return _as_builder_arguments(options)

    def identity(self, seed: int, options: dict[str, Any] | None = None, **machinery: Any) -> str:
        """What decides the rows besides the sentences: names a build's parts, so that a resumed build or a merge
        never mixes parts of another."""
        negator = machinery.get("negator")
        described = {
            "kind": self.name, "seed": seed, "versions": self.versions(),
            "options": repr(sorted(_as_builder_arguments(options).items())),
            "spacy_model": getattr(negator, "model", None),
        }
        return json.dumps(described, sort_keys=True)

    def build(
        self,
        sentences: list[str],
        *,
        seed: int,
        options: dict[str, Any] | None = None,
        model: Any = None,
        cache_dir: Any = None,
        show_progress_bar: bool = False,
        num_proc: int | None = 1,
        resume: bool = True,
        shard: tuple[int, int] | None = None,
        **machinery: Any,
    ) -> tuple[Dataset, BuildReport]:
        """The rows of ``sentences`` and the build report.

        Args:
            sentences: the corpus.
            seed: the builder's seed.
            options: the builder options (a recipe's ``data.options``).
            model: the guide model (ipw).
            cache_dir: the cache folder (default ``$ST_DEBIAS_CACHE``): embeddings, and the parts of a build in
                blocks while it runs.
            show_progress_bar: progress bars.
            num_proc: workers (None: every usable core): processes for the blocks of a kind built in blocks,
                threads for the negative draws of ``ipw``; the rows are the same for any count.
            resume: keep a build's finished parts under ``cache_dir`` until it ends, and reuse them.
            shard: ``(index, count)``: for a kind not built in blocks, the rows of that anchor slice against the
                whole corpus (a kind in blocks builds its shards with :meth:`build_part`).
            **machinery: builder arguments a recipe does not set (``negator``).
        """
        options = _as_builder_arguments(options)
        if not self.in_blocks:
            return self.make(
                sentences, seed=seed, options=options, model=model, cache_dir=cache_dir,
                show_progress_bar=show_progress_bar, num_proc=num_proc, shard=shard, **machinery,
            )
        if shard is not None:
            raise ValueError(f"data kind {self.name!r} is built in blocks: build a shard with build_part.")
        from st_debias.data.parallel import run_blocks

        builder = self.make(seed=seed, options=options, show_progress_bar=show_progress_bar, **machinery)
        return run_blocks(
            builder, sentences, num_proc=num_proc, identity=self.identity(seed, options, **machinery),
            resume_folder=self._parts_folder(cache_dir) if resume else None, show_progress_bar=show_progress_bar,
        )

    def build_part(
        self,
        sentences: list[str],
        shard: tuple[int, int],
        *,
        seed: int,
        options: dict[str, Any] | None = None,
        cache_dir: Any = None,
        show_progress_bar: bool = False,
        num_proc: int | None = 1,
        **machinery: Any,
    ) -> Dataset:
        """The block records of shard ``(index, count)`` of a build in blocks (a job-array task); the records of
        all ``count`` shards give the rows of :meth:`build` through :meth:`finish_parts`."""
        from st_debias.data.parallel import build_blocks

        if not self.in_blocks:
            raise ValueError(f"data kind {self.name!r} is not built in blocks; its builder takes its own shard.")
        options = _as_builder_arguments(options)
        builder = self.make(seed=seed, options=options, show_progress_bar=show_progress_bar, **machinery)
        return build_blocks(
            builder, sentences, num_proc=num_proc, shard=shard, identity=self.identity(seed, options, **machinery),
            resume_folder=self._parts_folder(cache_dir), show_progress_bar=show_progress_bar,
        )

    def discard_parts(self, records: Dataset, cache_dir: Any = None) -> None:
        """Remove the resume parts :meth:`build_part` kept in the cache for ``records``, once they are saved."""
        from st_debias.data.parallel import discard_parts

        discard_parts(self._parts_folder(cache_dir), records)

    def finish_parts(
        self, parts: list[Dataset], *, seed: int, options: dict[str, Any] | None = None, **machinery: Any
    ) -> tuple[Dataset, BuildReport]:
        """The rows and report of the block records of every shard of one build.

        Raises:
            ValueError: parts of different builds, or a block missing or repeated.
        """
        from st_debias.data.parallel import finish_blocks

        builder = self.make(seed=seed, options=_as_builder_arguments(options), **machinery)
        return finish_blocks(builder, parts)

    @staticmethod
    def _parts_folder(cache_dir: Any) -> Path:
        from st_debias.paths import cache_root

        return cache_root(cache_dir) / "blocks"


class _SimCSERows:
    """(anchor, anchor) rows: the SimCSE dropout view needs nothing but the cleaned sentences."""

    name = "simcse"

    def __init__(self, **_: Any) -> None:
        pass

    def prepare(self) -> None:
        pass

    def build_block(self, block: Any) -> tuple[dict[str, list], BuildReport]:
        from st_debias.data.io.report import BuildReport

        report = BuildReport(builder=self.name, rows=len(block.sentences), anchors=len(block.sentences))
        return {"anchor": block.sentences, "positive": block.sentences}, report

    def finish(self, rows: dict[str, list], report: BuildReport) -> Dataset:
        from datasets import Dataset

        return Dataset.from_dict({name: rows.get(name, []) for name in ("anchor", "positive")})


def _ipw(
    sentences: list[str], *, seed: int, options: dict[str, Any], model: Any, cache_dir: Any, show_progress_bar: bool,
    num_proc: int | None = 1, shard: tuple[int, int] | None = None,
) -> tuple[Dataset, BuildReport]:
    from st_debias.data.builders import build_ipw_dataset

    options = dict(options)
    return build_ipw_dataset(
        sentences, model, generator=options.pop("generator", DEFAULT_POSITIVES), shard=shard, return_report=True,
        seed=seed, cache_dir=cache_dir, show_progress_bar=show_progress_bar, num_proc=num_proc, **options,
    )


def _negation(
    *, seed: int, options: dict[str, Any], show_progress_bar: bool = False, negator: Any = None
) -> OssCSEBuilder:
    from st_debias.data.builders import negation_builder

    options = dict(options)
    machinery = {"negator": negator} if negator is not None else {}
    return negation_builder(
        generator=options.pop("generator", DEFAULT_PARAPHRASES), seed=seed, show_progress_bar=show_progress_bar,
        **machinery, **options,
    )


def _minimal_pairs(
    *, seed: int, options: dict[str, Any], show_progress_bar: bool = False, negator: Any = None
) -> MinimalPairBuilder:
    from st_debias.data.minimal_pairs import MinimalPairBuilder

    return MinimalPairBuilder(seed=seed, negator=negator, show_progress_bar=show_progress_bar, **options)


def _paraphrase(
    *, seed: int, options: dict[str, Any], show_progress_bar: bool = False, negator: Any = None
) -> ParaphrasePairBuilder:
    from st_debias.data.paraphrase.pairs import ParaphrasePairBuilder

    return ParaphrasePairBuilder(seed=seed, negator=negator, show_progress_bar=show_progress_bar, **options)


#: Every kind of training rows: st_debias's own, and those of installed packages (:mod:`st_debias.registry`).
DATA_KINDS: Registry[DataKind] = Registry("data kind", DATA_KIND_GROUP, {
    kind.name: kind
    for kind in (
        DataKind("simcse", "(anchor, anchor) SimCSE pairs", ("anchor", "positive"), None, _SimCSERows, in_blocks=True),
        DataKind(
            "ipw", "DebCSE inverse-propensity-weighted (anchor, positive, negative) rows",
            ("anchor", "positive", "negative_1"), "st_debias.data.ipw.builder:IPWBuilder", _ipw,
            generator_choice=DEFAULT_POSITIVES, generators=("ipw", "syntactic"), guide_model=True,
            flags=("num_negatives", "pool_size", "lambda_n", "lambda_p", "temperature"),
        ),
        DataKind(
            "negation", "(anchor, paraphrase, negation) rows with spaCy negations",
            ("anchor", "paraphrase", "negation"), "st_debias.data.negation.builder:OssCSEBuilder", _negation,
            in_blocks=True, generator_choice=DEFAULT_PARAPHRASES, oversample=3, generators=("syntactic",), mixable=True,
            parses=True,
        ),
        DataKind(
            "minimal_pairs", "cue-balanced (anchor, positive, negative) minimal pairs",
            ("anchor", "positive", "negative"), "st_debias.data.minimal_pairs:MinimalPairBuilder", _minimal_pairs,
            in_blocks=True, oversample=2, generators=("syntactic", "minimal_pairs"), mixable=True, parses=True,
        ),
        DataKind(
            "paraphrase", "(anchor, positive) pairs of syntactic paraphrases", ("anchor", "positive"),
            "st_debias.data.paraphrase.pairs:ParaphrasePairBuilder", _paraphrase, in_blocks=True, oversample=2,
            generators=("syntactic",), parses=True,
        ),
    )
}, check_data_kind)


def spacy_machinery(spacy_model: str | None) -> dict[str, Any]:
    """The loaded pipeline a builder takes for a spaCy model name: ``{"negator": Negator(spacy_model)}``, or
    nothing for None (the builder loads its default model)."""
    if spacy_model is None:
        return {}
    from st_debias.data.negation.negator import Negator

    return {"negator": Negator(spacy_model)}


def generator_versions(kind: str | None = None) -> dict[str, int]:
    """The versions of the generators ``kind``'s rows depend on; of every generator when None."""
    if kind is None:
        return {name: _load(reference).version for name, reference in _GENERATORS.items()}
    return DATA_KINDS[kind].versions()


class BlockWorker:
    """A callable that builds batches of block records with its own builder of a registered data kind, made
    once per worker: the ``map_batches`` class of Ray Data (``fn_constructor_kwargs`` gives the arguments).

    Args:
        kind: a kind of :data:`DATA_KINDS` built in blocks.
        seed: the builder's seed.
        options: the builder's options (a recipe's ``data.options``).
        spacy_model: the spaCy pipeline of the kinds that parse (default: the negator's setting).
    """

    def __init__(
        self, kind: str, seed: int = 0, options: dict[str, Any] | None = None, spacy_model: str | None = None
    ) -> None:
        self.builder = block_builder(kind, seed=seed, options=options, spacy_model=spacy_model)
        self.builder.prepare()

    def __call__(self, batch: dict[str, list[Any]]) -> dict[str, list[Any]]:
        from st_debias.data.parallel import build_block_batch

        return build_block_batch(batch, self.builder)


def block_builder(
    kind: str, *, seed: int = 0, options: dict[str, Any] | None = None, spacy_model: str | None = None
) -> BlockBuilder:
    """The block builder of a registered data kind, as recipes and ``st-debias build`` make it.

    Raises:
        ValueError: an unknown kind, or one that is not built in blocks.
    """
    if kind not in DATA_KINDS or not DATA_KINDS[kind].in_blocks:
        in_blocks = [name for name, entry in DATA_KINDS.items() if entry.in_blocks]
        raise ValueError(f"{kind!r} is not a data kind built in blocks; those are {in_blocks}.")
    options = DATA_KINDS[kind].builder_options(options)
    return DATA_KINDS[kind].make(seed=seed, options=options, **spacy_machinery(spacy_model))
