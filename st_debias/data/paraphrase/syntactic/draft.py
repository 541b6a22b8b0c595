"""A rewrite in progress: original tokens (by index) and inserted words, rendered back to text.

Transforms never re-parse. They work on one spaCy ``Doc`` and describe their output as a
:class:`Draft`: an ordered tuple of items, each either an original token (``(i, "")``) or an inserted
word (``(-1, text)``), plus per-token text overrides. Because moved and replaced tokens keep their
original index, transforms compose (a passive can be followed by fronting an adverbial and by a
synonym inside the moved object) and :attr:`Draft.claimed` stops two transforms from rewriting the
same token.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # spaCy is imported where a model is loaded, not for the type names
    from spacy.tokens import Doc, Token


NEW = -1
"""Index of an inserted word in :attr:`Draft.items`."""

_NO_SPACE_BEFORE = frozenset(
    {",", ".", ";", ":", "!", "?", ")", "]", "}", "%", "n't", "'s", "'re", "'m", "'ll", "'ve", "'d"}
)
_NO_SPACE_AFTER = frozenset({"(", "[", "{", "$"})


@dataclass(frozen=True)
class Draft:
    """An immutable rewrite of a parsed sentence.

    Attributes:
        items: the output order; ``(i, "")`` is original token ``i``, ``(NEW, text)`` an inserted word.
        overrides: original index -> replacement text (``""`` deletes the token).
        claimed: original indices (and negative slot ids) already rewritten by a transform.
        transforms: names of the transforms applied, in order.
    """

    items: tuple[tuple[int, str], ...]
    overrides: dict[int, str] = field(default_factory=dict)
    claimed: frozenset[int] = frozenset()
    transforms: tuple[str, ...] = ()

    @classmethod
    def identity(cls, doc: Doc) -> Draft:
        """The unchanged sentence."""
        return cls(items=tuple((i, "") for i in range(len(doc))))

    def free(self, claims: Iterable[int]) -> bool:
        """True when none of ``claims`` was rewritten yet."""
        return self.claimed.isdisjoint(claims)

    def positions(self, indices: Iterable[int]) -> list[int]:
        """Positions in :attr:`items` of the given original indices (missing ones are skipped)."""
        wanted = set(indices)
        return [p for p, (i, _) in enumerate(self.items) if i in wanted]

    def derive(
        self,
        name: str,
        claims: Iterable[int],
        items: Iterable[tuple[int, str]] | None = None,
        overrides: dict[int, str] | None = None,
    ) -> Draft:
        """A new draft with ``name`` appended to the transforms and ``claims`` marked as rewritten."""
        merged = dict(self.overrides)
        if overrides:
            merged.update(overrides)
        return Draft(
            items=tuple(items) if items is not None else self.items,
            overrides=merged,
            claimed=self.claimed | frozenset(claims),
            transforms=(*self.transforms, name),
        )


def keeps_capital(token: Token) -> bool:
    """Whether a capitalised sentence-initial token must stay capitalised elsewhere in the sentence."""
    text = token.text
    return token.tag_ in ("NNP", "NNPS") or text == "I" or any(c.isupper() for c in text[1:])


def render(doc: Doc, draft: Draft, surface: Surface | None = None) -> str:
    """Turn a draft back into text: original spacing where neighbours stay neighbours, else one space.

    The first word is capitalised; the original first token is lower-cased when it moved away from the
    front, unless it is a proper noun, "I" or an acronym. Pass ``surface`` (made once per sentence) to
    avoid re-reading the Doc on every call.
    """
    texts, spaces, keep0 = surface if surface is not None else surface_of(doc)
    out: list[str] = []
    prev_idx, prev_text = NEW, ""
    overrides = draft.overrides
    for idx, new_text in draft.items:
        if idx >= 0:
            text = overrides.get(idx, texts[idx])
        else:
            text = new_text
        if not text:
            continue
        if not out:
            text = text[0].upper() + text[1:]
        elif idx == 0 and not keep0 and 0 not in overrides:
            text = text[0].lower() + text[1:]
        if out:
            if prev_idx >= 0 and idx == prev_idx + 1 and prev_idx not in overrides and idx not in overrides:
                out.append(spaces[prev_idx])
            elif prev_idx >= 0 and _glued(texts, spaces, overrides, prev_idx, idx):
                pass
            elif text.lower() in _NO_SPACE_BEFORE or text == "'" or prev_text in _NO_SPACE_AFTER:
                pass
            else:
                out.append(" ")
        out.append(text)
        prev_idx, prev_text = idx, text
    return "".join(out).strip()


def _glued(texts: list[str], spaces: list[str], overrides: dict[int, str], prev_idx: int, idx: int) -> bool:
    """Whether a word stays glued to punctuation it was glued to although one side changed or was inserted.

    True when ``prev_idx`` had no space after it in the input, the output continues right where the input
    did (``idx`` is its neighbour, or an inserted word; an inserted word continues the input when it
    stands where the neighbour was), and the unchanged side is a quote, dash or bracket rather than a word
    or a clitic: ``"died"`` -> ``"did not die"``.
    """
    if spaces[prev_idx] or prev_idx + 1 >= len(texts):
        return False
    if idx != NEW and idx != prev_idx + 1:
        return False
    left, right = texts[prev_idx], texts[prev_idx + 1]
    if prev_idx not in overrides and _is_mark(left):
        return True
    return idx == prev_idx + 1 and idx not in overrides and _is_mark(right)


def _is_mark(text: str) -> bool:
    return not any(c.isalnum() for c in text) and text.lower() not in _NO_SPACE_BEFORE and text not in ".,;:!?"


Surface = tuple[list[str], list[str], bool]
"""Token texts, trailing whitespace, and whether the first token keeps its capital (see :func:`render`)."""


def surface_of(doc: Doc, tokens: list[Token] | None = None, text: str | None = None) -> Surface:
    """What :func:`render` needs from a Doc, read once (pass ``list(doc)`` and ``doc.text`` if already made)."""
    if tokens is None:
        tokens = list(doc)
    texts = [t.text for t in tokens]
    starts = [t.idx for t in tokens]
    full = doc.text if text is None else text
    ends = [*starts[1:], len(full)]
    # Token.whitespace_ is slow; the gap to the next token is the same string.
    spaces = [full[a + len(t) : b] for a, t, b in zip(starts, texts, ends)]
    return texts, spaces, keeps_capital(tokens[0]) if tokens else True
