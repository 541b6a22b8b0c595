"""The WordNet helpers shared by the rule-based generators, on the shared WordNet."""

from __future__ import annotations

import itertools

from st_debias.data.lexicon import SAFE_ANTONYMS, is_prefixed_antonym, lemma_count, wordnet


def test_lemma_count_is_nltks_count_from_a_table() -> None:
    """Failure mode: three generators asked NLTK for ``Lemma.count()``, a binary search of a WordNet file per
    call, and one kept its own copy of the table. The table must give NLTK's count for every lemma."""
    reader = wordnet()
    lemmas = [lemma for synset in itertools.islice(reader.all_synsets(), 0, None, 40) for lemma in synset.lemmas()]
    assert len(lemmas) > 2000
    assert [lemma_count(lemma) for lemma in lemmas] == [lemma.count() for lemma in lemmas]
    assert sum(lemma_count(lemma) > 0 for lemma in lemmas) > 100  # the table is not empty
    assert lemma_count(reader.lemma("dog.n.01.dog")) == reader.lemma("dog.n.01.dog").count() > 0


def test_prefixed_antonyms_are_a_word_and_its_negative_prefix_form() -> None:
    assert is_prefixed_antonym("able", "unable") and is_prefixed_antonym("Impossible", "possible")
    assert is_prefixed_antonym("legal", "illegal") and is_prefixed_antonym("irrelevant", "relevant")
    assert not is_prefixed_antonym("narrow", "wide") and not is_prefixed_antonym("common", "rare")
    assert not is_prefixed_antonym("able", "able")
    # A shared start is not a prefix: "invisible" is "in" + "visible", not "in" + "visual".
    assert not is_prefixed_antonym("invisible", "visual")
    # The curated lexicon holds both kinds.
    kinds = {is_prefixed_antonym(word, antonym) for word, antonym in SAFE_ANTONYMS.items()}
    assert kinds == {True, False}
