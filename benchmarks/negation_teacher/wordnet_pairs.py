"""WordNet's adjective antonyms as negation-meaning pairs, beside the curated list, with a held-out half.

The library builds its negation-meaning rows and probe from 53 curated gradable pairs
(:data:`st_debias.data.lexicon.SAFE_ANTONYMS`). WordNet links about 3,400 adjectives to a direct antonym. Only a
pair whose negation means the other word can teach "X is not A" = "X is B", so a pair is kept when both words are
one token and each is the other's only direct antonym in every adjective sense (``old`` has ``young`` and ``new``:
dropped; ``wet``/``dry`` kept only if ``dry`` has no other). The curated pairs are added on top (they win where a
word has both). Indirect antonyms, through a satellite's similar-to link, are counted but not used: a satellite
is the far end of a scale ("huge" under "large"), and "X is not huge" does not mean "X is small".

Every pair falls in one half of a fixed split, the same one the curated pairs use in
``benchmarks/negation_meaning/held_out_pairs.py`` (a hash of the sorted pair): the mix source
``negation_meaning_wordnet_half`` keeps the quadruples of the training half only, so that the probe's items whose
pair is in the other half measure what carries over to pairs no training row used.

    python benchmarks/negation_teacher/wordnet_pairs.py --out benchmarks/negation_teacher/results/wordnet_pairs.json
"""

from __future__ import annotations

import argparse
import os
from collections import defaultdict
from functools import lru_cache
from pathlib import Path
from typing import Any

from benchmarks.harness.provenance import write_stamped_json
from benchmarks.negation_meaning.held_out_pairs import antonym_pair, in_training_half
from st_debias.data.lexicon import SAFE_ANTONYMS, is_prefixed_antonym
from st_debias.recipes.mix_sources import MixSource, SourceRows, meaning_rows, negation_meaning_quadruples

SOURCE = "negation_meaning_wordnet_half"


@lru_cache(maxsize=1)
def direct_adjective_antonyms() -> dict[str, set[str]]:
    """Adjective → its WordNet direct antonyms, lower-cased (read only: the dict is shared)."""
    from nltk.corpus import wordnet

    direct: dict[str, set[str]] = defaultdict(set)
    for synset in wordnet.all_synsets("a"):  # heads and satellites
        for lemma in synset.lemmas():
            for antonym in lemma.antonyms():
                direct[lemma.name().lower()].add(antonym.name().lower())
    return dict(direct)


def _indirect_adjective_antonyms() -> dict[str, set[str]]:
    """A satellite's antonyms through its head: "huge" (similar to "large") → "small" (counted, not used)."""
    from nltk.corpus import wordnet

    indirect: dict[str, set[str]] = defaultdict(set)
    for synset in wordnet.all_synsets("s"):
        for head in synset.similar_tos():
            opposites = {a.name().lower() for lemma in head.lemmas() for a in lemma.antonyms()}
            for lemma in synset.lemmas():
                indirect[lemma.name().lower()] |= opposites
    return indirect


def _single_word(word: str) -> bool:
    return word.isalpha() and word.islower()


@lru_cache(maxsize=1)
def wordnet_antonyms() -> dict[str, str]:
    """Word → antonym for the curated pairs and WordNet's one-to-one direct adjective antonyms (module docstring),
    both directions."""
    direct = direct_adjective_antonyms()
    pairs = {
        word: next(iter(antonyms)) for word, antonyms in direct.items()
        if len(antonyms) == 1 and _single_word(word) and _single_word(next(iter(antonyms)))
    }
    symmetric = {word: antonym for word, antonym in pairs.items() if pairs.get(antonym) == word}
    curated_words = set(SAFE_ANTONYMS) | set(SAFE_ANTONYMS.values())
    merged = {word: antonym for word, antonym in symmetric.items() if word not in curated_words and antonym not in curated_words}
    return {**merged, **SAFE_ANTONYMS}


def sorted_pair(word: str, antonym: str) -> tuple[str, str]:
    first, second = sorted((word.lower(), antonym.lower()))
    return first, second


def describe() -> dict[str, Any]:
    """Counts of the pair list: pairs by source and kind, by half, and what the indirect links would add."""
    antonyms = wordnet_antonyms()
    pairs = {sorted_pair(a, b) for a, b in antonyms.items()}
    curated = {sorted_pair(a, b) for a, b in SAFE_ANTONYMS.items()}
    direct = direct_adjective_antonyms()
    indirect = _indirect_adjective_antonyms()
    indirect_only = {
        sorted_pair(word, antonym) for word, antonyms in indirect.items() for antonym in antonyms
        if _single_word(word) and _single_word(antonym) and antonym not in direct.get(word, set())
    }
    return {
        "pairs": len(pairs),
        "curated_pairs": len(curated),
        "wordnet_only_pairs": len(pairs - curated),
        "prefixed_pairs": sum(is_prefixed_antonym(*p) for p in pairs),
        "other_word_pairs": sum(not is_prefixed_antonym(*p) for p in pairs),
        "training_half_pairs": sum(in_training_half(p) for p in pairs),
        "held_out_half_pairs": sum(not in_training_half(p) for p in pairs),
        "wordnet_adjectives_with_direct_antonym": len(direct),
        "wordnet_adjectives_with_several_direct_antonyms": sum(len(v) > 1 for v in direct.values()),
        "indirect_only_pairs_not_used": len(indirect_only),
    }


def wordnet_half_rows(
    *, data_dir: str | os.PathLike[str] | None = None, sentences: list[str] | None = None, cache_dir: Any = None
) -> SourceRows:
    """The negation-meaning rows of the quadruples built with :func:`wordnet_antonyms` whose pair is in the
    training half of the split.

    Raises:
        ValueError: no corpus sentences.
    """
    quadruples, described = negation_meaning_quadruples(sentences, cache_dir, wordnet_antonyms())
    kept = [q for q in quadruples if in_training_half(_quadruple_pair(q))]
    pairs = {_quadruple_pair(q) for q in kept}
    curated = {sorted_pair(a, b) for a, b in SAFE_ANTONYMS.items()}
    return meaning_rows(kept), {
        **described, "kept_quadruples": len(kept), "kept_pairs": len(pairs),
        "kept_curated_pairs": len(pairs & curated), "kept_other_word_pairs": sum(not is_prefixed_antonym(*p) for p in pairs),
    }


#: The ``negation_meaning_wordnet_half`` source (an entry point of the lab).
WORDNET_HALF = MixSource(wordnet_half_rows, reads_corpus=True)


def _quadruple_pair(quadruple: tuple[str, str, str, str]) -> tuple[str, str]:
    return antonym_pair(quadruple[0], quadruple[2])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    counts = describe()
    write_stamped_json(args.out, {"counts": counts})
    print(counts)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
