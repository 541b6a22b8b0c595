"""Offline syntactic paraphrase generator (issue #6); the implementation lives in :mod:`st_debias.data.syntactic`."""

from __future__ import annotations

from st_debias.data.syntactic import LEXICAL, RULES, STRUCTURAL, SyntacticParaphraser

__all__ = ["LEXICAL", "RULES", "STRUCTURAL", "SyntacticParaphraser"]
