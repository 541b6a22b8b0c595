"""The WordNet helpers shared by the rule-based generators, on the shared WordNet."""

from __future__ import annotations

import itertools

from st_debias.data.lexicon import lemma_count, wordnet


def test_lemma_count_is_nltks_count_from_a_table() -> None:
    """Failure mode: three generators asked NLTK for ``Lemma.count()``, a binary search of a WordNet file per
    call, and one kept its own copy of the table. The table must give NLTK's count for every lemma."""
    reader = wordnet()
    lemmas = [lemma for synset in itertools.islice(reader.all_synsets(), 0, None, 40) for lemma in synset.lemmas()]
    assert len(lemmas) > 2000
    assert [lemma_count(lemma) for lemma in lemmas] == [lemma.count() for lemma in lemmas]
    assert sum(lemma_count(lemma) > 0 for lemma in lemmas) > 100  # the table is not empty
    assert lemma_count(reader.lemma("dog.n.01.dog")) == reader.lemma("dog.n.01.dog").count() > 0
