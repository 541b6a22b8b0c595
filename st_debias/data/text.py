"""Word-level text helpers shared by builders and evaluation: tokenisation, integers, MER, lexical overlap."""

from __future__ import annotations

import re
from collections import Counter

from rapidfuzz.distance import Levenshtein

#: OssCSE's window of word-level match error rate between a sentence and its paraphrase (paper: [0.15, 0.6]): the
#: default of every builder and generator that filters paraphrases by it.
MER_WINDOW: tuple[float, float] = (0.15, 0.6)

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?", re.UNICODE)


def words(text: str, lowercase: bool = True) -> list[str]:
    """Words of ``text`` with punctuation removed (straight or curly apostrophes inside words kept), lower-cased by default."""
    return _WORD.findall(text.lower() if lowercase else text)


def word_key(text: str) -> str:
    """The lower-cased words of ``text`` joined by single spaces: how two texts are compared when case,
    spacing and punctuation must not matter (``"Two women ."`` and ``"two women"`` give the same key)."""
    return " ".join(words(text))


def swapped_words(first: str, second: str) -> tuple[str, str]:
    """The one word in which two texts of the same words otherwise differ, as (word of ``first``, word of
    ``second``), lower-cased: ``("The road is narrow.", "The road is wide.")`` gives ``("narrow", "wide")``.

    Raises:
        ValueError: the texts differ in their word count, or in more or fewer than one word.
    """
    left, right = words(first), words(second)
    changed = [(x, y) for x, y in zip(left, right, strict=False) if x != y]
    if len(left) != len(right) or len(changed) != 1:
        raise ValueError(f"Not one swapped word: {first!r} / {second!r}")
    return changed[0]


def is_ascii_integer(text: str) -> bool:
    """Whether ``text`` is written in the digits 0–9 only, so that ``int(text)`` reads it. ``str.isdigit``
    is not enough: it accepts superscripts ("10¹²", Wikipedia line 95,150), which ``int`` rejects."""
    return text.isascii() and text.isdigit()


def match_error_rate(reference: str | list[str], hypothesis: str | list[str]) -> float:
    """Word-level match error rate MER = (S + D + I) / (S + D + I + C) (Morris et al. 2004).

    Strings are split with :func:`words` (lower-cased, punctuation removed); lists are used as given.
    The alignment is a minimum-edit (Levenshtein) alignment from rapidfuzz. Two empty inputs give 0.
    """
    ref = words(reference) if isinstance(reference, str) else reference
    hyp = words(hypothesis) if isinstance(hypothesis, str) else hypothesis
    ops = Counter(op.tag for op in Levenshtein.editops(ref, hyp))
    substitutions, deletions, insertions = ops["replace"], ops["delete"], ops["insert"]
    correct = len(ref) - substitutions - deletions
    errors = substitutions + deletions + insertions
    return errors / (errors + correct) if errors + correct else 0.0


def lexical_overlap(a: str, b: str) -> float:
    """Shared words / length of the longer sentence (DebCSE Tables 1 and 4), on :func:`words`."""
    wa, wb = words(a), words(b)
    longer = max(len(wa), len(wb))
    if longer == 0:
        return 0.0
    shared = sum((Counter(wa) & Counter(wb)).values())
    return shared / longer
