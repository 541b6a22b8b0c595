"""spaCy components of st_debias, registered with spaCy when this module is imported.

spaCy imports it by itself, through the ``spacy_factories`` entry point in ``pyproject.toml``, when it loads
a saved pipeline that holds one of them, so such a pipeline loads in a fresh process too.
"""

from __future__ import annotations

from typing import Any

from spacy.language import Language

from st_debias.data.spacy_pipeline import PosRules

__all__ = ["POS_RULES_FACTORY", "make_pos_rules"]

POS_RULES_FACTORY = "st_debias_pos_rules"
"""The factory of :class:`~st_debias.data.spacy_pipeline.PosRules` (:func:`~st_debias.data.spacy_pipeline.use_lookup_pos`)."""


@Language.factory(POS_RULES_FACTORY, default_config={"patterns": []})
def make_pos_rules(nlp: Language, name: str, patterns: list[dict[str, Any]]) -> PosRules:  # noqa: ARG001
    """A :class:`~st_debias.data.spacy_pipeline.PosRules` of an attribute ruler's ``patterns``."""
    return PosRules(patterns)
