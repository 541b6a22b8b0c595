"""Offline syntactic paraphrases: voice change, constituent movement and lexical edits on a spaCy parse."""

from __future__ import annotations

from typing import TYPE_CHECKING

from st_debias._exports import lazy_exports

if TYPE_CHECKING:
    from st_debias.data.paraphrase.syntactic.generator import LEXICAL, STRUCTURAL, SyntacticParaphraser
    from st_debias.data.paraphrase.syntactic.rules import RULES

_EXPORTS = {
    "LEXICAL": "st_debias.data.paraphrase.syntactic.generator",
    "STRUCTURAL": "st_debias.data.paraphrase.syntactic.generator",
    "SyntacticParaphraser": "st_debias.data.paraphrase.syntactic.generator",
    "RULES": "st_debias.data.paraphrase.syntactic.rules",
}

__all__ = [
    "LEXICAL",
    "RULES",
    "STRUCTURAL",
    "SyntacticParaphraser",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
