"""The candidate-generator interface shared by the positive samplers and the augmentation builders.

A generator turns sentences into candidate rewrites (paraphrase/positive candidates). Builders only
depend on this interface, so word-level edits, corpus neighbours, a Hugging Face seq2seq model and the
syntactic paraphraser are interchangeable.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

#: Named generator choices shared by the recipes (``generator:``), ``st-debias build --generator`` and the
#: one-call builders; :func:`st_debias.data.builders.candidate_generators` turns a name into generators.
GENERATOR_CHOICES = ("syntactic", "syntactic+edits", "edits", "dropout")
#: The default choice for paraphrases (the negation rows) and for positives (the ipw rows).
DEFAULT_PARAPHRASES = "syntactic"
DEFAULT_POSITIVES = "edits"


@dataclass(frozen=True)
class Candidate:
    """One rewrite of a sentence.

    Attributes:
        text: the rewritten sentence (never equal to the input).
        source: name of the generator that made it.
        transforms: the transforms applied, in order (e.g. ``("passive", "front_adverbial")``).
    """

    text: str
    source: str
    transforms: tuple[str, ...] = ()


@dataclass
class GenerationReport:
    """What a generator did on its last call: how many inputs got candidates and why others did not."""

    inputs: int = 0
    with_candidates: int = 0
    candidates: int = 0
    declined: Counter[str] = field(default_factory=Counter)

    def as_dict(self) -> dict[str, object]:
        return {
            "inputs": self.inputs,
            "with_candidates": self.with_candidates,
            "candidates": self.candidates,
            "declined": dict(self.declined),
        }


class CandidateGenerator(ABC):
    """Produces rewrites of sentences; deterministic for a given ``seed``.

    Subclasses implement :meth:`generate` and set :attr:`name`. They record why an input got no
    candidate in ``self.report.declined`` (reason -> count) so that callers can report it.
    """

    name: str = "generator"

    def __init__(self) -> None:
        self.report = GenerationReport()

    @abstractmethod
    def generate(self, sentences: Sequence[str], *, seed: int = 0) -> list[list[Candidate]]:
        """Return one list of candidates per input sentence (possibly empty), in input order."""

    def __call__(self, sentences: Sequence[str], *, seed: int = 0) -> list[list[Candidate]]:
        return self.generate(sentences, seed=seed)

    def prepare(self) -> None:
        """Load what :meth:`generate` needs (a parser, word lists) now, once, rather than on first use: builders
        call it before worker processes fork, so that the workers inherit it. By default it prepares the
        generators a composite one holds in ``self.generators``, if any."""
        for generator in getattr(self, "generators", ()):
            generator.prepare()


def candidate_pools(
    generators: Sequence[CandidateGenerator], sentences: Sequence[str], *, seed: int = 0
) -> tuple[list[list[Candidate]], dict[str, dict[str, object]]]:
    """Each sentence's candidates from all ``generators``, in generator order, without the sentence itself
    and without repeated texts; and each generator's report (by name) after its run.

    The one pooling loop behind :class:`~st_debias.data.paraphrase.edits.UnionGenerator` and the IPW and
    OssCSE builders.
    """
    pools: list[list[Candidate]] = [[] for _ in sentences]
    seen: list[set[str]] = [{s} for s in sentences]
    reports: dict[str, dict[str, object]] = {}
    for generator in generators:
        for pool, texts, candidates in zip(pools, seen, generator.generate(sentences, seed=seed)):
            for candidate in candidates:
                if candidate.text not in texts:
                    texts.add(candidate.text)
                    pool.append(candidate)
        reports[generator.name] = generator.report.as_dict()
    return pools, reports


class FirstAvailable(CandidateGenerator):
    """Take each sentence's candidates from the first generator that has an acceptable one.

    E.g. ``FirstAvailable([SyntacticParaphraser(), EditChain(...)], accept=in_mer_window)``: syntactic
    paraphrases where the parse allows one, word edits for the rest. Generators after the first only see
    the sentences still without a candidate. ``report.declined`` counts sentences no generator served.
    """

    name = "first-available"

    def __init__(self, generators: Sequence[CandidateGenerator], accept=None) -> None:
        super().__init__()
        if not generators:
            raise ValueError("FirstAvailable needs at least one generator")
        self.generators = list(generators)
        self.accept = accept or (lambda sentence, candidate: True)

    def generate(self, sentences: Sequence[str], *, seed: int = 0) -> list[list[Candidate]]:
        self.report = GenerationReport(inputs=len(sentences))
        results: list[list[Candidate]] = [[] for _ in sentences]
        pending = list(range(len(sentences)))
        for generator in self.generators:
            if not pending:
                break
            produced = generator.generate([sentences[i] for i in pending], seed=seed)
            still = []
            for index, candidates in zip(pending, produced):
                kept = [c for c in candidates if self.accept(sentences[index], c)]
                if kept:
                    results[index] = kept
                else:
                    still.append(index)
            pending = still
        self.report.with_candidates = len(sentences) - len(pending)
        self.report.candidates = sum(len(r) for r in results)
        if pending:
            self.report.declined["no_generator_served"] = len(pending)
        return results
