"""What every rule shares: the parsed sentence (:class:`Parsed`), the :class:`Edit` a rule proposes, and
helpers to locate, move and replace token blocks in a :class:`~st_debias.data.paraphrase.syntactic.draft.Draft`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from st_debias.data.paraphrase.syntactic.draft import Draft, Surface, surface_of

if TYPE_CHECKING:  # spaCy is imported where a model is loaded, not for the type names
    from spacy.tokens import Doc, Token

QUOTES = frozenset({'"', "“", "”", "``", "''", "„", "«", "»"})
TERMINAL = frozenset({".", "!"})
YEAR = re.compile(r"^(1[0-9]{3}|20[0-9]{2})s?$")
MONTHS = frozenset(
    "january february march april may june july august september october november december".split()
)
WEEKDAYS = frozenset("monday tuesday wednesday thursday friday saturday sunday".split())
TIME_NOUNS = frozenset(
    """year years month months week weeks day days morning mornings afternoon evening evenings night
    nights century centuries decade decades season seasons summer winter spring autumn hour hours
    minute minutes weekend weekends period era time times today yesterday tomorrow""".split()
)
ORDINARY_WHITESPACE = " "
SUBJECT_DEPS = frozenset({"nsubj", "nsubjpass", "expl", "csubj"})


@dataclass(frozen=True)
class Edit:
    """One applicable rewrite of a parsed sentence.

    Attributes:
        name: transform name recorded on the candidate.
        claims: original token indices (and slot ids below 0) it rewrites; two edits with overlapping
            claims never combine.
        fn: the rewrite itself; returns None when the draft no longer fits.
        structural: True for voice and movement (they start a composition), False for lexical edits.
    """

    name: str
    claims: frozenset[int]
    fn: Callable[[Draft], Draft | None]
    structural: bool

    def apply(self, draft: Draft) -> Draft | None:
        """The draft with this edit applied, or None when it conflicts with earlier edits."""
        if not draft.free(self.claims):
            return None
        return self.fn(draft)


# Claim slots for sentence positions (negative so they never collide with token indices).
FRONT_SLOT, END_SLOT = -2, -3


@dataclass
class Parsed:
    """What every rule needs to know about one parsed sentence."""

    doc: Doc
    tokens: list[Token]
    spaces: list[str]
    root: Token
    subject: Token | None
    single: bool
    has_quotes: bool
    quoted: frozenset[int]
    quote_regions: tuple[tuple[int, int], ...]
    balanced: bool
    last: int  # index of the last non-punctuation token
    clean_end: bool  # only terminal punctuation follows ``last``
    coordinated: str  # "" (none), "shared" (verb phrases share the subject) or "clauses"
    surface: Surface  # what ``render`` needs, read once
    semicolon: bool  # a ";" joins clauses

    @classmethod
    def of(cls, doc: Doc, text: str | None = None) -> Parsed:
        """Read ``doc`` once (pass ``text`` when ``doc.text`` is already at hand)."""
        tokens = list(doc)
        surface = surface_of(doc, tokens, text)
        texts = surface[0]
        sents = list(doc.sents)
        root = sents[0].root
        subject = next((c for c in root.children if c.dep_ in ("nsubj", "nsubjpass", "csubj", "expl")), None)
        quoted: set[int] = set()
        regions: list[tuple[int, int]] = []
        opened: int | None = None
        for i, word in enumerate(texts):
            if word in QUOTES:
                if opened is None:
                    opened = i
                else:
                    regions.append((opened, i))
                    opened = None
                quoted.add(i)
            elif opened is not None:
                quoted.add(i)
        last = len(tokens) - 1
        while last > 0 and tokens[last].is_punct:
            last -= 1
        clean_end = all(texts[i] in TERMINAL for i in range(last + 1, len(tokens)))
        conj_verbs = [c for c in root.children if c.dep_ == "conj" and c.pos_ in ("VERB", "AUX")]
        # "shared" = verb phrases sharing the subject ("He wrote X and left"); "clauses" = each has its own.
        has_subject = [any(x.dep_ in ("nsubj", "nsubjpass", "expl") for x in c.children) for c in conj_verbs]
        coordinated = "shared" if not all(has_subject) else "clauses" if conj_verbs else ""
        return cls(
            doc,
            tokens,
            surface[1],
            root,
            subject,
            len(sents) == 1,
            bool(quoted),
            frozenset(quoted),
            tuple(regions),
            opened is None,
            last,
            clean_end,
            coordinated,
            surface,
            ";" in texts,
        )

    def splits_quote(self, indices) -> bool:
        """Whether moving/rewriting ``indices`` would cut a quoted stretch in two."""
        chosen = set(indices)
        return any(0 < len(chosen.intersection(range(a, b + 1))) < b - a + 1 for a, b in self.quote_regions)

    def clause_problem(self, allow_clauses: bool = False) -> str | None:
        """Why a structural rule cannot touch this sentence, or None.

        Args:
            allow_clauses: accept a main clause followed by coordinated clauses with their own subjects
                ("X approved Y, and Z left"): rewriting inside the first clause leaves the others intact.
        """
        if not self.single:
            return "multiple_sentences"
        if not self.balanced or self.root.i in self.quoted:
            return "quotes"
        if self.semicolon:
            return "multiple_clauses"
        if self.root.pos_ not in ("VERB", "AUX"):
            return "no_verb_root"
        if self.subject is None:
            return "imperative" if self.root.tag_ == "VB" else "no_subject"
        if self.coordinated == "shared" or (self.coordinated and not allow_clauses):
            return "coordinated"
        if not self.clean_end:
            return "unclear_ending"
        return None


def subtree_indices(token: Token) -> list[int]:
    return list(range(token.left_edge.i, token.right_edge.i + 1))


def contiguous_block(draft: Draft, indices: list[int]) -> tuple[int, int] | None:
    """Start/end positions of ``indices`` in the draft if they sit there contiguously in the same order."""
    pos = draft.positions(indices)
    if len(pos) != len(indices) or pos != list(range(pos[0], pos[0] + len(pos))):
        return None
    if [draft.items[p][0] for p in pos] != indices:
        return None
    return pos[0], pos[-1]


def replace_block(
    draft: Draft, indices: list[int], new_items: list[tuple[int, str]]
) -> list[tuple[int, str]] | None:
    block = contiguous_block(draft, indices)
    if block is None:
        return None
    start, end = block
    return [*draft.items[:start], *new_items, *draft.items[end + 1 :]]


def original_items(indices) -> list[tuple[int, str]]:
    return [(i, "") for i in indices]


def is_temporal(token: Token) -> bool:
    for t in (
        token,
        *(c for c in token.children if c.dep_ in ("nummod", "compound", "amod", "npadvmod", "det")),
    ):
        low = t.lower_
        if low in TIME_NOUNS or low in MONTHS or low in WEEKDAYS or YEAR.match(low):
            return True
    return False


def plain_word(p: Parsed, t: Token) -> bool:
    """A lower-case word outside quotes, not glued to a neighbour (hyphens, slashes)."""
    doc = p.doc
    if t.i in p.quoted or not t.is_alpha or not t.text.islower():
        return False
    if p.spaces[t.i] != ORDINARY_WHITESPACE and not (
        t.i + 1 < len(doc) and doc[t.i + 1].is_punct and doc[t.i + 1].text not in "-/"
    ):
        return False
    return t.i == 0 or p.spaces[t.i - 1] == ORDINARY_WHITESPACE


def word_edit(name: str, overrides: dict[int, str]) -> Edit:
    claims = frozenset(overrides)
    return Edit(name, claims, lambda d, o=overrides, c=claims: d.derive(name, c, overrides=o), False)
