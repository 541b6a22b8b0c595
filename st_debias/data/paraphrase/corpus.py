"""Positive candidates from the corpus itself: sentences the guide finds very similar (cosine in
``cosine_range``, default [0.8, 0.98]) whose surface differs (word MER >= ``min_mer``, default 0.3).

These are natural paraphrase-like pairs (the same fact stated twice, templated sentences with one
entity changed are kept out by the MER floor only partly — a known limitation). The corpus is
embedded once with the guide model (cached) and searched exactly with
:func:`st_debias.data.neighbours.range_topk`. Sentences not in the corpus get no candidate
(``declined['not_in_corpus']``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from st_debias.data.generators import Candidate, CandidateGenerator
from st_debias.data.io.embeddings import encode_corpus
from st_debias.data.neighbours import range_topk
from st_debias.data.text import match_error_rate

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer


class CorpusNeighbourGenerator(CandidateGenerator):
    """Corpus neighbours with high guide cosine but different surface.

    Args:
        corpus: the sentences to search (typically the training corpus itself).
        model: guide SentenceTransformer / name / None for the default model.
        embeddings: precomputed L2-normalised corpus embeddings (skips encoding).
        cosine_range: admissible guide cosine.
        min_mer: lowest word MER to the query (surface must differ).
        num_candidates: most candidates per sentence.
        cache_dir: embedding cache folder.
        show_progress_bar: progress bars.
    """

    name = "corpus_neighbour"

    def __init__(
        self,
        corpus: Sequence[str],
        model: SentenceTransformer | str | None = None,
        *,
        embeddings: np.ndarray | None = None,
        cosine_range: tuple[float, float] = (0.8, 0.98),
        min_mer: float = 0.3,
        num_candidates: int = 2,
        cache_dir: str | os.PathLike[str] | None = None,
        show_progress_bar: bool = False,
    ) -> None:
        super().__init__()
        self.corpus = list(corpus)
        self.model = model
        self._embeddings = embeddings
        self.cosine_range = cosine_range
        self.min_mer = min_mer
        self.num_candidates = num_candidates
        self.cache_dir = cache_dir
        self.show_progress_bar = show_progress_bar
        self._table = None
        self._where = {text: i for i, text in enumerate(self.corpus)}

    def prepare(self) -> None:
        """Encode the corpus and search its neighbours now (:meth:`CandidateGenerator.prepare`)."""
        self._neighbours()

    def _neighbours(self):
        if self._table is None:
            if self._embeddings is None:
                self._embeddings = encode_corpus(self.corpus, self.model, cache_dir=self.cache_dir,
                                                 show_progress_bar=self.show_progress_bar)
            low, high = self.cosine_range
            self._table = range_topk(self._embeddings, max(4 * self.num_candidates, 8), low=low, high=high,
                                     show_progress_bar=self.show_progress_bar)
        return self._table

    def generate(self, sentences: Sequence[str], *, seed: int = 0) -> list[list[Candidate]]:
        self.report = type(self.report)()
        self.report.inputs = len(sentences)
        table = self._neighbours()
        results: list[list[Candidate]] = []
        for sentence in sentences:
            row = self._where.get(sentence)
            cands: list[Candidate] = []
            if row is None:
                self.report.declined["not_in_corpus"] += 1
                results.append(cands)
                continue
            for j in table.indices[row]:
                if j < 0 or len(cands) >= self.num_candidates:
                    break
                text = self.corpus[int(j)]
                if text != sentence and match_error_rate(sentence, text) >= self.min_mer:
                    cands.append(Candidate(text, self.name, ("corpus_neighbour",)))
            if cands:
                self.report.with_candidates += 1
                self.report.candidates += len(cands)
            else:
                self.report.declined["no_neighbour_in_range"] += 1
            results.append(cands)
        return results
