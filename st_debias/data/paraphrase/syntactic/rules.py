"""The transforms: each looks at one parsed sentence and returns the edits it can make, or why it declines.

A rule is a function ``rule(parsed) -> list[Edit] | str``; a string is the reason it declines (recorded
as ``"<rule>:<reason>"`` in the generator's report). An :class:`Edit` rewrites a :class:`Draft` and
returns None when the draft no longer fits (a token it needs was already rewritten or moved apart),
so edits compose in any order.

Structural rules (voice, constituent movement) handle a single declarative sentence and decline on
questions, imperatives, verbs sharing a subject, quotes, and complements they do not understand. Voice
also changes inside a subordinate or coordinated clause that has its own subject; movement stays in the
main clause.

The rules live by kind: :mod:`.voice`, :mod:`.movement`, :mod:`.noun_phrase` and :mod:`.lexical`, on the
shared :mod:`.parsed` helpers; :data:`RULES` below is the one registry the generator reads.
"""

from __future__ import annotations

from collections.abc import Callable

from st_debias.data.paraphrase.syntactic.lexical import (
    antonym_negation,
    contraction,
    number_word,
    phrase,
    synonym,
)
from st_debias.data.paraphrase.syntactic.movement import (
    back_adverbial,
    back_clause,
    front_adverbial,
    front_clause,
    mid_adverbial,
)
from st_debias.data.paraphrase.syntactic.noun_phrase import (
    coordination,
    genitive,
    relative_expansion,
    relative_pronoun,
    relative_reduction,
)
from st_debias.data.paraphrase.syntactic.parsed import Edit, Parsed
from st_debias.data.paraphrase.syntactic.voice import active, copula_swap, passive

__all__ = ["RULES", "Edit", "Parsed", "Rule"]

Rule = Callable[[Parsed], list[Edit] | str]
"""A transform: the edits it proposes for a parsed sentence, or the reason it declines."""

RULES: dict[str, Rule] = {
    "passive": passive,
    "active": active,
    "copula_swap": copula_swap,
    "front_adverbial": front_adverbial,
    "back_adverbial": back_adverbial,
    "front_clause": front_clause,
    "back_clause": back_clause,
    "mid_adverbial": mid_adverbial,
    "genitive": genitive,
    "coordination": coordination,
    "relative_reduction": relative_reduction,
    "relative_expansion": relative_expansion,
    "relative_pronoun": relative_pronoun,
    "phrase": phrase,
    "synonym": synonym,
    "antonym_negation": antonym_negation,
    "contraction": contraction,
    "number_word": number_word,
}
"""All transforms, by name, in the order they are tried."""
