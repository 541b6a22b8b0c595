"""Offline positive/paraphrase candidate generators made of word-level edits.

All work without any model download: random word deletion, insertion of high-frequency words
(DebCSE §4.2's noise injection), word repetition (ESimCSE, Wu et al. 2022), WordNet synonym
substitution (NLTK WordNet, ``$NLTK_DATA``), and :class:`EditChain`, which applies several of them in
sequence to reach the larger surface change OssCSE's MER filter asks for (MER ∈ [0.15, 0.6]).

Edits operate on whitespace tokens, so punctuation attached to a word moves with it. Every generator
is deterministic: the edits of a sentence come from
``numpy.random.default_rng([seed, crc32(name), crc32(sentence)])`` (content-keyed, so batching and
sharding do not change them). A candidate never equals its input.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Sequence

import numpy as np

from st_debias.data.generators import Candidate, CandidateGenerator, candidate_pools
from st_debias.data.lexicon import lemma_count, wordnet

# Most frequent English words (function words), as injected by DebCSE before back-translation.
FREQUENT_WORDS: tuple[str, ...] = (
    "the", "of", "and", "to", "a", "in", "is", "that", "for", "it", "as", "was", "with", "on", "at",
    "by", "this", "also", "then", "so", "just", "very", "still", "really",
)
_WORDLIKE = re.compile(r"^\W*([A-Za-z][A-Za-z'-]*)(\W*)$")
STOPWORDS = frozenset(
    "a an the of and or but to in on at by for with from as is are was were be been being it its this that "
    "these those he she they we you i his her their our your my not no do does did has have had will would "
    "can could should may might must shall there here which who whom whose what when where why how than then "
    "so also very just".split()
)


def _rng(name: str, seed: int, sentence: str) -> np.random.Generator:
    """Per-sentence stream keyed by content, so results do not depend on batching or sharding."""
    return np.random.default_rng([seed, zlib.crc32(name.encode()), zlib.crc32(sentence.encode("utf-8"))])


def _word_positions(tokens: Sequence[str]) -> list[int]:
    return [i for i, tok in enumerate(tokens) if any(ch.isalnum() for ch in tok)]


class _EditGenerator(CandidateGenerator):
    """Shared loop: ``num_candidates`` independent edits per sentence, duplicates and no-ops removed."""

    def __init__(self, num_candidates: int = 2) -> None:
        super().__init__()
        if num_candidates < 1:
            raise ValueError(f"num_candidates must be >= 1, got {num_candidates}")
        self.num_candidates = num_candidates

    def edit(self, tokens: list[str], rng: np.random.Generator) -> list[str] | None:  # pragma: no cover
        raise NotImplementedError

    def generate(self, sentences: Sequence[str], *, seed: int = 0) -> list[list[Candidate]]:
        self.report = type(self.report)()
        out: list[list[Candidate]] = []
        for sentence in sentences:
            self.report.inputs += 1
            rng = _rng(self.name, seed, sentence)
            tokens = sentence.split()
            seen: set[str] = set()
            cands: list[Candidate] = []
            reason = "no_change"
            for _ in range(self.num_candidates):
                edited = self.edit(list(tokens), rng)
                if edited is None:
                    reason = "not_applicable"
                    break
                text = " ".join(edited)
                if text and text != sentence and text not in seen:
                    seen.add(text)
                    cands.append(Candidate(text, self.name, (self.name,)))
            if cands:
                self.report.with_candidates += 1
                self.report.candidates += len(cands)
            else:
                self.report.declined[reason] += 1
            out.append(cands)
        return out


class WordDeletion(_EditGenerator):
    """Delete 1..``max_words`` random words (never all of them).

    Args:
        max_words: most words deleted per candidate.
        num_candidates: candidates per sentence.
    """

    name = "word_deletion"

    def __init__(self, max_words: int = 2, num_candidates: int = 2) -> None:
        super().__init__(num_candidates)
        self.max_words = max_words

    def edit(self, tokens, rng):
        positions = _word_positions(tokens)
        if len(positions) < 3:
            return None
        count = int(rng.integers(1, min(self.max_words, len(positions) - 2) + 1))
        drop = set(rng.choice(positions, size=count, replace=False).tolist())
        kept = [tok for i, tok in enumerate(tokens) if i not in drop]
        if drop and min(drop) == 0 and kept:
            kept[0] = kept[0][:1].upper() + kept[0][1:]
        return kept


class FrequentWordInsertion(_EditGenerator):
    """Insert 1..``max_words`` high-frequency words at random positions (DebCSE's noise injection).

    Args:
        max_words: most words inserted per candidate.
        vocabulary: the words to inject (default :data:`FREQUENT_WORDS`).
        num_candidates: candidates per sentence.
    """

    name = "frequent_word_insertion"

    def __init__(self, max_words: int = 2, vocabulary: Sequence[str] = FREQUENT_WORDS, num_candidates: int = 2):
        super().__init__(num_candidates)
        self.max_words = max_words
        self.vocabulary = tuple(vocabulary)

    def edit(self, tokens, rng):
        if not tokens:
            return None
        for _ in range(int(rng.integers(1, self.max_words + 1))):
            tokens.insert(int(rng.integers(1, len(tokens) + 1)) if len(tokens) > 1 else 1,
                          self.vocabulary[int(rng.integers(len(self.vocabulary)))])
        if tokens[-1] in self.vocabulary and len(tokens) > 1:  # keep the final punctuation last
            tokens[-1], tokens[-2] = tokens[-2], tokens[-1]
        return tokens


class WordRepetition(_EditGenerator):
    """ESimCSE word repetition: duplicate ``dup_len ~ U{0..max(2, ratio·L)}`` random words in place.

    Args:
        ratio: duplication rate (ESimCSE default 0.32).
        num_candidates: candidates per sentence.
    """

    name = "word_repetition"

    def __init__(self, ratio: float = 0.32, num_candidates: int = 2) -> None:
        super().__init__(num_candidates)
        self.ratio = ratio

    def edit(self, tokens, rng):
        positions = _word_positions(tokens)
        if not positions:
            return None
        dup_len = int(rng.integers(1, max(2, int(self.ratio * len(positions))) + 1))
        chosen = set(rng.choice(positions, size=min(dup_len, len(positions)), replace=False).tolist())
        out: list[str] = []
        for i, tok in enumerate(tokens):
            if i in chosen:
                match = _WORDLIKE.match(tok)
                out.append(match.group(1) if match else tok)
            out.append(tok)
        return out


class WordNetSynonym(_EditGenerator):
    """Replace content words by a WordNet synonym (single-word lemma of one of the word's synsets).

    Only uninflected, lower-case, non-stopword words are replaced (the word equals its WordNet base
    form), so no re-inflection is needed; names (capitalised) are left alone.

    Args:
        rate: share of eligible words replaced per candidate (at least one).
        max_senses: synsets looked at per word (most frequent first): fewer = safer synonyms.
        num_candidates: candidates per sentence.
    """

    name = "wordnet_synonym"

    def __init__(self, rate: float = 0.15, max_senses: int = 2, num_candidates: int = 2) -> None:
        super().__init__(num_candidates)
        self.rate = rate
        self.max_senses = max_senses
        self._cache: dict[str, list[str]] = {}

    def prepare(self) -> None:
        """Read WordNet and its sense counts now (:meth:`CandidateGenerator.prepare`)."""
        from st_debias.data.lexicon import load_lexicons

        load_lexicons()

    def synonyms(self, word: str) -> list[str]:
        """Synonyms of ``word`` (sorted, deterministic); empty when none or inflected."""
        hit = self._cache.get(word)
        if hit is not None:
            return hit
        wn = wordnet()
        found: set[str] = set()
        if word not in STOPWORDS and word.isalpha() and len(word) > 2:
            # senses ranked by how often `word` carries them in SemCor (lemma counts), across parts of
            # speech; only uninflected uses (morphy(word) == word) and synonyms seen in SemCor themselves
            senses = []
            for synset in wn.synsets(word):
                if wn.morphy(word, synset.pos()) != word:
                    continue
                own = [lemma_count(lemma) for lemma in synset.lemmas() if lemma.name().lower() == word]
                if own and own[0] > 0:
                    senses.append((-own[0], synset.name(), synset))
            for _, _, synset in sorted(senses)[: self.max_senses]:
                for lemma in synset.lemmas():
                    name = lemma.name()
                    if name.isalpha() and name.islower() and name != word and lemma_count(lemma) > 0:
                        found.add(name)
        self._cache[word] = sorted(found)
        return self._cache[word]

    def edit(self, tokens, rng):
        eligible = []
        for i, tok in enumerate(tokens):
            match = _WORDLIKE.match(tok)
            if match and match.group(1).islower() and self.synonyms(match.group(1)):
                eligible.append(i)
        if not eligible:
            return None
        count = max(1, int(round(self.rate * len(_word_positions(tokens)))))
        for i in rng.choice(eligible, size=min(count, len(eligible)), replace=False).tolist():
            match = _WORDLIKE.match(tokens[i])
            options = self.synonyms(match.group(1))
            tokens[i] = tokens[i].replace(match.group(1), options[int(rng.integers(len(options)))], 1)
        return tokens


class EditChain(CandidateGenerator):
    """Apply several generators in sequence (each to the previous one's first candidate).

    Args:
        generators: the steps, e.g. ``[WordNetSynonym(rate=0.3), WordDeletion(), WordRepetition()]``.
        num_candidates: chains run per sentence (different random edits each).
    """

    name = "edit_chain"

    def __init__(self, generators: Sequence[CandidateGenerator], num_candidates: int = 2) -> None:
        super().__init__()
        if not generators:
            raise ValueError("EditChain needs at least one generator")
        self.generators = list(generators)
        self.num_candidates = num_candidates

    def generate(self, sentences: Sequence[str], *, seed: int = 0) -> list[list[Candidate]]:
        self.report = type(self.report)()
        self.report.inputs = len(sentences)
        results: list[list[Candidate]] = [[] for _ in sentences]
        for run in range(self.num_candidates):
            current = list(sentences)
            transforms: list[list[str]] = [[] for _ in sentences]
            for step, generator in enumerate(self.generators):
                outs = generator.generate(current, seed=seed * 7919 + run * 131 + step)
                for k, cands in enumerate(outs):
                    if cands:
                        current[k] = cands[0].text
                        transforms[k].extend(cands[0].transforms or (cands[0].source,))
            for k, text in enumerate(current):
                if text != sentences[k] and all(c.text != text for c in results[k]):
                    results[k].append(Candidate(text, self.name, tuple(transforms[k])))
        for cands in results:
            if cands:
                self.report.with_candidates += 1
                self.report.candidates += len(cands)
            else:
                self.report.declined["no_change"] += 1
        return results


class UnionGenerator(CandidateGenerator):
    """All candidates of several generators, deduplicated, in generator order."""

    name = "union"

    def __init__(self, generators: Sequence[CandidateGenerator]) -> None:
        super().__init__()
        self.generators = list(generators)

    def generate(self, sentences: Sequence[str], *, seed: int = 0) -> list[list[Candidate]]:
        self.report = type(self.report)()
        self.report.inputs = len(sentences)
        results, _ = candidate_pools(self.generators, sentences, seed=seed)
        for cands in results:
            if cands:
                self.report.with_candidates += 1
                self.report.candidates += len(cands)
            else:
                self.report.declined["no_candidate"] += 1
        return results


def default_edit_generators() -> list[CandidateGenerator]:
    """DebCSE positive pool without a translation model: deletion, frequent-word insertion, ESimCSE
    repetition and WordNet synonyms (2 candidates each)."""
    return [WordDeletion(), FrequentWordInsertion(), WordRepetition(), WordNetSynonym()]


def default_paraphrase_generators() -> list[CandidateGenerator]:
    """OssCSE paraphrase pool without a translation model: chained edits strong enough to pass the
    MER ∈ [0.15, 0.6] filter (synonyms on ~30% of words, then deletion, then repetition)."""
    return [
        EditChain([WordNetSynonym(rate=0.3, max_senses=1), WordDeletion(max_words=2)], num_candidates=2),
        EditChain([WordNetSynonym(rate=0.2, max_senses=1), WordRepetition(ratio=0.2)], num_candidates=1),
    ]
