"""Offline syntactic paraphrases: voice change, constituent movement and lexical edits on a spaCy parse."""

from __future__ import annotations

from st_debias.data.paraphrase.syntactic.generator import LEXICAL, STRUCTURAL, SyntacticParaphraser
from st_debias.data.paraphrase.syntactic.rules import RULES

__all__ = ["LEXICAL", "RULES", "STRUCTURAL", "SyntacticParaphraser"]
