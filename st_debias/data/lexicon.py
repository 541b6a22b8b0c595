"""Word lists and the WordNet reader shared by the rule-based generators.

WordNet is read offline through NLTK from ``$NLTK_DATA`` (never downloaded); the project's shared data
has a copy under ``$ST_DEBIAS_DATA/nltk_data``.
"""

from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=1)
def wordnet():
    """NLTK's WordNet reader, loaded once.

    Raises:
        LookupError: WordNet is not under ``$NLTK_DATA`` (the message says where to put it).
    """
    try:
        from nltk.corpus import wordnet as reader

        reader.ensure_loaded()
    except LookupError as error:
        raise LookupError(
            "WordNet is not available to NLTK. Set NLTK_DATA to a folder holding corpora/wordnet.zip "
            "(the project's shared data has one: $ST_DEBIAS_DATA/nltk_data)."
        ) from error
    return reader


@lru_cache(maxsize=1)
def wordnet_available() -> bool:
    """Whether NLTK finds WordNet offline (``NLTK_DATA``); without it the WordNet rules decline."""
    try:
        wordnet()
    except LookupError:
        return False
    return True


@lru_cache(maxsize=1)
def _sense_counts() -> dict[str, int]:
    """WordNet sense key -> tagged-corpus count, read once from ``cntlist.rev``."""
    counts: dict[str, int] = {}
    stream = wordnet().open("cntlist.rev")
    try:
        text = stream.read()
    finally:
        stream.close()
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 3:
            counts[parts[0]] = int(parts[2])
    return counts


def lemma_count(lemma) -> int:
    """How often WordNet's tagged corpus saw ``lemma`` (an NLTK ``Lemma``) in its sense: ``Lemma.count()``
    from a table read once, where NLTK binary-searches a file on every call."""
    return _sense_counts().get(lemma.key(), 0)


def load_lexicons() -> None:
    """Read WordNet (when ``NLTK_DATA`` has it), its sense counts and lemminflect's tables now rather than on
    first use. Builders call it before their worker processes fork, so that every worker inherits them
    (reading WordNet takes seconds) instead of reading them itself inside its first block."""
    from lemminflect import getInflection, getLemma

    getLemma("running", upos="VERB")
    getInflection("run", tag="VBD")
    getLemma("blorfing", upos="VERB")  # an unknown word: lemminflect's rules for those load too
    getInflection("blorf", tag="VBD")
    if wordnet_available():
        _sense_counts()


def close_wordnet_files() -> None:
    """Close the WordNet data files NLTK holds open (it reopens them on the next lookup).

    Called before worker processes fork: a forked worker shares its parent's open files and their read
    positions, so workers reading an unzipped WordNet through the same file could read each other's lines.
    """
    if wordnet.cache_info().currsize:  # WordNet was loaded
        files = wordnet()._data_file_map
        for stream in files.values():
            stream.close()
        files.clear()


# Gradable adjectives whose negated antonym keeps the meaning ("is large" ~ "is not small"). WordNet's
# antonym of a word's most frequent sense is not safe on its own (common -> individual, not uncommon).
SAFE_ANTONYMS: dict[str, str] = {
    a: b
    for x, y in (
        ("large", "small"),
        ("big", "small"),
        ("high", "low"),
        ("long", "short"),
        ("old", "young"),
        ("easy", "difficult"),
        ("possible", "impossible"),
        ("necessary", "unnecessary"),
        ("important", "unimportant"),
        ("strong", "weak"),
        ("rich", "poor"),
        ("early", "late"),
        ("fast", "slow"),
        ("wide", "narrow"),
        ("deep", "shallow"),
        ("heavy", "light"),
        ("hot", "cold"),
        ("happy", "unhappy"),
        ("safe", "dangerous"),
        ("present", "absent"),
        ("available", "unavailable"),
        ("visible", "invisible"),
        ("legal", "illegal"),
        ("successful", "unsuccessful"),
        ("popular", "unpopular"),
        ("active", "inactive"),
        ("complete", "incomplete"),
        ("correct", "incorrect"),
        ("likely", "unlikely"),
        ("similar", "different"),
        ("simple", "complex"),
        ("common", "uncommon"),
        ("usual", "unusual"),
        ("frequent", "infrequent"),
        ("significant", "insignificant"),
        ("effective", "ineffective"),
        ("sufficient", "insufficient"),
        ("accurate", "inaccurate"),
        ("consistent", "inconsistent"),
        ("relevant", "irrelevant"),
        ("stable", "unstable"),
        ("certain", "uncertain"),
        ("aware", "unaware"),
        ("able", "unable"),
        ("known", "unknown"),
        ("full", "empty"),
        ("cheap", "expensive"),
        ("thick", "thin"),
        ("wet", "dry"),
        ("clean", "dirty"),
        ("friendly", "hostile"),
        ("open", "closed"),
        ("true", "false"),
        ("rare", "common"),
    )
    for a, b in ((x, y), (y, x))
}


#: The prefixes that make an adjective's antonym from the adjective itself ("able"/"unable").
NEGATIVE_PREFIXES = ("un", "in", "im", "il", "ir")


def is_prefixed_antonym(word: str, antonym: str) -> bool:
    """Whether one of the two words is the other with a negative prefix ("able"/"unable", "legal"/"illegal"),
    rather than another word ("large"/"small"). A negation and a prefixed antonym share the word's stem, so a
    model can match "is not able" to "is unable" by its surface alone."""
    first, second = word.lower(), antonym.lower()
    return any(b == prefix + a for a, b in ((first, second), (second, first)) for prefix in NEGATIVE_PREFIXES)


def safe_antonym(word: str) -> str | None:
    """The antonym of a gradable adjective whose negation keeps the meaning (curated pairs), or None.

    The one source of "negated antonym" rewrites ("is large" -> "is not small"): the syntactic
    paraphraser's ``antonym_negation`` rule and :class:`~st_debias.data.negation.negator.NegatedAntonymGenerator`.
    """
    return SAFE_ANTONYMS.get(word.lower())
