"""Morphology and lexicon helpers: lemmas and inflections (lemminflect), agreement, WordNet lookups.

All lookups are cached; WordNet is loaded on first use from ``NLTK_DATA`` (no download).
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from st_debias.data.lexicon import lemma_count, wordnet, wordnet_available

if TYPE_CHECKING:  # spaCy is imported where a model is loaded, not for the type names
    from spacy.tokens import Token

# Case of personal pronouns when a subject becomes a ``by`` agent / an object becomes the subject.
SUBJECT_TO_OBJECT = {
    "i": "me",
    "he": "him",
    "she": "her",
    "we": "us",
    "they": "them",
    "it": "it",
    "you": "you",
}
OBJECT_TO_SUBJECT = {
    "me": "I",
    "him": "he",
    "her": "she",
    "us": "we",
    "them": "they",
    "it": "it",
    "you": "you",
}
_PLURAL_WORDS = frozenset({"we", "they", "you", "these", "those", "both", "many", "several", "us", "them"})

_UPOS_OF_TAG = {"N": "NOUN", "V": "VERB", "J": "ADJ", "R": "ADV"}
_INFLECTION_TAGS = frozenset("VB VBD VBG VBN VBP VBZ NN NNS JJ JJR JJS RB RBR RBS".split())
_WN_POS = {"NOUN": "n", "VERB": "v", "ADJ": "a", "ADV": "r"}


@lru_cache(maxsize=65536)
def _lemmas(word: str, upos: str) -> tuple[str, ...]:
    from lemminflect import getLemma  # imported on first use: the package imports without it

    return getLemma(word, upos=upos)


@lru_cache(maxsize=65536)
def _inflections(lemma: str, tag: str) -> tuple[str, ...]:
    from lemminflect import getInflection  # deep-copies its tables on every call: cache the answers

    if not lemma:  # lemminflect gives "" as the lemma of some words and then fails to inflect it
        return ()
    return getInflection(lemma, tag=tag)


@lru_cache(maxsize=65536)
def lemma_of(word: str, tag: str) -> str:
    """Lemma of ``word`` (lower-cased) with Penn ``tag``, choosing the lemma that inflects back to it.

    ``found``/VBD gives ``find`` (not ``found``) because ``find`` + VBD = ``found``.
    """
    word = word.lower()
    if tag not in _INFLECTION_TAGS:
        return word
    upos = _UPOS_OF_TAG[tag[:1]]
    lemmas = [lemma for lemma in _lemmas(word, upos) if lemma]  # lemminflect gives "" for some punctuation
    if not lemmas:
        return word
    for lemma in lemmas:
        if word in _inflections(lemma, tag):
            return lemma
    return lemmas[0]


@lru_cache(maxsize=65536)
def inflect(lemma: str, tag: str) -> str | None:
    """``lemma`` inflected for Penn ``tag`` (first form lemminflect gives), or None if unknown."""
    forms = _inflections(lemma, tag)
    return forms[0] if forms else None


def person_number(head: Token, text: str | None = None) -> str:
    """Agreement class of a noun phrase: ``"1sg"``, ``"3sg"`` or ``"pl"`` (``you`` counts as plural).

    Args:
        head: head token of the phrase.
        text: the head's text when it is being replaced (e.g. a pronoun changing case).
    """
    word = (text or head.text).lower()
    if word == "i":
        return "1sg"
    if word in _PLURAL_WORDS or head.tag_ in ("NNS", "NNPS"):
        return "pl"
    if any(c.dep_ == "conj" for c in head.children) and any(
        c.dep_ == "cc" and c.lower_ == "and" for c in head.children
    ):
        return "pl"
    return "3sg"


def be_form(past: bool, agreement: str) -> str:
    """``be`` for a subject of the given agreement class (am/is/are, was/were)."""
    if past:
        was, were = _inflections("be", "VBD")
        return were if agreement == "pl" else was
    if agreement == "1sg":
        return _inflections("be", "VBP")[0]  # am
    return inflect("be", "VBZ") if agreement == "3sg" else _inflections("be", "VBP")[-1]  # is / are


def finite_form(lemma: str, past: bool, agreement: str) -> str | None:
    """A finite verb form (past, or present agreeing with the subject)."""
    if lemma == "be":
        return be_form(past, agreement)
    if past:
        return inflect(lemma, "VBD")
    return inflect(lemma, "VBZ" if agreement == "3sg" else "VBP")


def is_past(token: Token) -> bool:
    """Whether a finite verb or auxiliary is in the past tense."""
    return token.tag_ == "VBD"


# ---------------------------------------------------------------- WordNet


def _first_offset(lemma: str, pos: str) -> int | None:
    offsets = wordnet()._lemma_pos_offset_map.get(lemma, {}).get(pos)
    return offsets[0] if offsets else None


@lru_cache(maxsize=65536)
def _first_sense(lemma: str, pos: str):
    """The most frequent synset of ``lemma`` for WordNet ``pos`` and the lemma's count in it."""
    offset = _first_offset(lemma, pos)
    if offset is None:
        return None, 0
    synset = wordnet().synset_from_pos_and_offset(pos, offset)
    count = max((lemma_count(lm) for lm in synset.lemmas() if lm.name().lower() == lemma), default=0)
    return synset, count


def _is_plain_word(name: str) -> bool:
    return name.isalpha() and name.islower()


SYNONYM_MIN_COUNT = 1
"""Least tagged-corpus count (SemCor) of a word and of its synonym in the shared sense."""
SYNONYM_MIN_RATIO = 0.1
"""Least count of the synonym relative to the word's own count in that sense."""
SYNONYM_OWN_FIRST_SENSE = True
"""Also require the shared sense to be the synonym's own most frequent sense (stricter)."""


@lru_cache(maxsize=65536)
def synonyms(lemma: str, upos: str) -> tuple[str, ...]:
    """Frequent-sense synonyms of ``lemma``: same first synset, single words, frequent enough.

    A WordNet lemma ``s`` qualifies when the first (most frequent) synset of ``lemma`` is also the first
    synset of ``s``, ``s`` is one lower-case word, and its sense count is at least ``max(3, 0.2 * count
    of lemma)``. ``film`` gives ``movie``; ``picture`` is excluded (its first sense is an image).
    """
    pos = _WN_POS.get(upos)
    if pos is None:
        return ()
    synset, count = _first_sense(lemma, pos)
    if synset is None or count < SYNONYM_MIN_COUNT:
        return ()
    out = []
    for lm in synset.lemmas():
        name = lm.name()
        if name == lemma or not _is_plain_word(name) or name in BAD_SYNONYMS:
            continue
        if lemma_count(lm) < max(SYNONYM_MIN_COUNT, SYNONYM_MIN_RATIO * count):
            continue
        if SYNONYM_OWN_FIRST_SENSE and _first_offset(name, pos) != synset.offset():
            continue
        out.append(name)
    return tuple(out)


# Lemmas whose WordNet synonyms are too context-dependent to swap (light verbs, function-like words).
SYNONYM_STOPLIST = frozenset(
    """be have do get make take give go come say use include become know see let put set find play
    hold keep leave run turn show call bring follow lead move work serve form mean seem feel look
    tell think want need try live die born name base locate own other same
    such more most less least much many few very also only just even still then now so as there here
    well however thus not never again too rather quite almost first last next new old good great
    high long part number time year way people member group state world area type kind form line
    apply appear allow plane particular launch result figure refer tour percent vote level little
    central hour rely
    point place case end side top head order term record fact lot deal""".split()
)
# Synonyms WordNet offers in a frequent sense that read wrongly in running text.
BAD_SYNONYMS = frozenset(
    {
        "fig",
        "use",
        "let",
        "earlier",
        "pic",
        "flick",
        "nigh",
        "hokey",
        "cocksure",
        "chief",
        "boss",
        "lady",
        "dame",
    }
)


@lru_cache(maxsize=65536)
def noun_kind(lemma: str) -> str:
    """``"person"`` or ``"thing"`` for a common noun by the lexicographer file of its most frequent
    WordNet sense (``noun.person`` -> person), ``""`` when WordNet does not know it (or is missing)."""
    if not wordnet_available():
        return ""
    synset, _ = _first_sense(lemma, "n")
    if synset is None:
        return ""
    return "person" if synset.lexname() == "noun.person" else "thing"
