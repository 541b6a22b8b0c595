"""What a negation means: from "X is A" (A a gradable adjective with a curated antonym B), the four sentences
"X is A", "X is not A", "X is B" and "X is not B".

"X is not A" means "X is B", not "X is not B". A model that learns negation as a feature ("contains *not*")
rather than as meaning puts the two negated sentences together. :func:`negation_meaning_quadruples` makes
the four sentences for the negation-meaning probe (:mod:`st_debias.evaluation.bias`) and for training rows
("X is not A", "X is B", "X is not B") that teach the meaning (``data.mix`` source ``negation_meaning``).

A is an unmodified adjective complement of the main verb (``is large``, ``remains stable``; not ``is very
large`` or ``a large house``): the one position where negating the verb means the antonym. Every quadruple
is checked: the affirmative forms hold no negation word, the negated forms exactly one.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import os
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from st_debias.data.lexicon import SAFE_ANTONYMS
from st_debias.data.negation.negator import Negator, antonym_swap, negation_count

logger = logging.getLogger(__name__)

#: Bumped whenever the quadruples built from the same sentences change (caches keyed on it are rebuilt).
NEGATION_MEANING_VERSION = 1

_LINKING_VERBS = (
    r"is|are|was|were|be|been|being|'s|’s|remains?|remained|seems?|seemed|becomes?|became|appears?|appeared"
    r"|looks?|looked|stays?|stayed|proves?|proved|sounds?|sounded|feels?|felt|grows?|grew|turns?|turned"
)


def linked_adjective(words: Iterable[str]) -> re.Pattern[str]:
    """One of ``words`` right after a linking verb, or one word later: the only sentences worth parsing."""
    alternatives = "|".join(re.escape(word) for word in sorted(set(words), key=len, reverse=True))
    return re.compile(rf"(?:\b|(?<=\w))(?:{_LINKING_VERBS})\s+(?:\w+\s+)?(?:{alternatives})\b", re.IGNORECASE)


#: A curated adjective right after a linking verb, or one word later.
LINKED_ADJECTIVE = linked_adjective(SAFE_ANTONYMS)


@dataclass
class Quadruples:
    """The quadruples built from a list of sentences, the index of each one's source sentence, and the
    sentences declined by reason."""

    affirmative: list[str] = field(default_factory=list)
    negated: list[str] = field(default_factory=list)
    antonym: list[str] = field(default_factory=list)
    negated_antonym: list[str] = field(default_factory=list)
    sources: list[int] = field(default_factory=list)
    declined: Counter[str] = field(default_factory=Counter)

    def __len__(self) -> int:
        return len(self.affirmative)


def negation_meaning_quadruples(
    sentences: Sequence[str], negator: Negator | None = None, antonyms: Mapping[str, str] | None = None
) -> Quadruples:
    """("X is A", "X is not A", "X is B", "X is not B") for each sentence that allows it (module docstring).

    Deterministic; duplicates of an earlier sentence are declined. Only sentences with no negation word and
    an adjective of the antonym list after a linking verb (:func:`linked_adjective`) are parsed.

    Args:
        sentences: corpus sentences.
        negator: the rule negator (its spaCy model parses the sentences); a default one when None.
        antonyms: lower-cased adjective → antonym, in place of the curated pairs
            (:data:`~st_debias.data.lexicon.SAFE_ANTONYMS`). "X is not A" means "X is B" only when the pair
            is gradable and either word has one sense, which the curated pairs were chosen for.
    """
    pattern = LINKED_ADJECTIVE if antonyms is None else linked_adjective(antonyms)
    out = Quadruples()
    candidates: list[int] = []
    for index, text in enumerate(sentences):
        if negation_count(text):
            out.declined["already_negated"] += 1
        elif not pattern.search(text):
            out.declined["no_curated_adjective_after_verb"] += 1
        else:
            candidates.append(index)
    negator = negator or Negator()
    nlp = negator.nlp
    seen: set[str] = set()
    docs = nlp.pipe((sentences[i].strip() for i in candidates), batch_size=negator.batch_size)
    for index, doc in zip(candidates, docs):
        built = _quadruple(doc, negator, nlp, antonyms)
        reason = "duplicate" if doc.text in seen else built if isinstance(built, str) else None
        if reason:
            out.declined[reason] += 1
            continue
        seen.add(doc.text)
        for column, text in zip(("affirmative", "negated", "antonym", "negated_antonym"), built):
            getattr(out, column).append(text)
        out.sources.append(index)
    return out


def cached_negation_meaning_quadruples(
    sentences: Sequence[str],
    cache_dir: str | os.PathLike[str] | None = None,
    antonyms: Mapping[str, str] | None = None,
) -> Quadruples:
    """:func:`negation_meaning_quadruples` of ``sentences`` with the default negator, cached on disk under
    ``negation-meaning/`` of the cache folder (:func:`st_debias.paths.cache_root`), keyed by the sentences, the
    antonym list when one is given, and :data:`NEGATION_MEANING_VERSION`: spaCy parses a corpus once. An
    unreadable entry is rebuilt."""
    from st_debias.files import atomic_write_json
    from st_debias.paths import cache_root

    key = "\n".join(sentences)
    if antonyms is not None:
        key += "\0" + json.dumps(sorted(antonyms.items()))
    digest = hashlib.sha256(key.encode()).hexdigest()[:20]
    path = cache_root(cache_dir) / "negation-meaning" / f"{digest}-v{NEGATION_MEANING_VERSION}.json"
    if path.is_file():
        try:
            fields = json.loads(path.read_text(encoding="utf-8"))
            return Quadruples(**{**fields, "declined": Counter(fields["declined"])})
        except (ValueError, TypeError, KeyError):
            logger.warning("Negation-meaning cache entry %s is unreadable; rebuilding it.", path)
    built = negation_meaning_quadruples(sentences, antonyms=antonyms)
    atomic_write_json(path, {**dataclasses.asdict(built), "declined": dict(sorted(built.declined.items()))}, indent=None)
    return built


def _quadruple(
    doc: Any, negator: Negator, nlp: Any, antonyms: Mapping[str, str] | None
) -> tuple[str, str, str, str] | str:
    """The quadruple of one parsed sentence, or the reason it has none."""
    swapped = antonym_swap(doc, predicate_only=True, antonyms=antonyms)
    if swapped is None:
        return "no_adjective_complement"
    negated, negated_swap = negator.negate_doc(doc), negator.negate_doc(nlp(swapped))
    if not (negated.ok and negated_swap.ok) or negated.denegated or negated_swap.denegated:
        return "not_negatable"
    if negation_count(swapped) or negation_count(negated.text) != 1 or negation_count(negated_swap.text) != 1:
        return "polarity_check"
    return doc.text, negated.text, swapped, negated_swap.text
