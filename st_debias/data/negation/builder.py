"""OssCSE augmentation rows (Shi et al., EMNLP 2023, §4 steps 1–2): (anchor, paraphrase, negation).

* negation: :class:`st_debias.data.negation.negator.Negator` (dependency-parse ROOT rules);
* paraphrase: candidates of pluggable generators (default: the recipes' choice,
  :class:`st_debias.data.paraphrase.syntactic.SyntacticParaphraser`; chained word edits via
  :func:`st_debias.data.paraphrase.edits.default_paraphrase_generators`; a back-translation model via
  :class:`st_debias.data.paraphrase.seq2seq.Seq2SeqGenerator` when you have a model hub), kept when the
  word-level MER to the anchor is in ``mer_range`` (paper: [0.15, 0.6]). Among the kept candidates one
  is chosen at random (seeded per anchor), as OssCSE keeps any back-translation passing the filter.

Rows feed MarginNegationLoss (columns ``anchor, paraphrase, negation``); :func:`to_input_examples`
gives ``InputExample(texts=[anchor, paraphrase, negation])`` for legacy ``model.fit``.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Literal

import numpy as np
from datasets import Dataset

from st_debias.data.generators import CandidateGenerator, candidate_pools
from st_debias.data.io.report import BuildReport
from st_debias.data.negation.negator import Negator
from st_debias.data.parallel import Block
from st_debias.data.text import MER_WINDOW, lexical_overlap, match_error_rate


class OssCSEBuilder:
    """Builds (anchor, paraphrase, negation) rows from plain sentences.

    Args:
        negator: a :class:`Negator` (default: ``Negator()`` with the default spaCy model setting).
        paraphrase_generators: paraphrase candidate generators (default: ``[SyntacticParaphraser]`` with the
            negator's spaCy model and ``mer_range`` as its window, as in the recipes; see
            :func:`st_debias.data.builders.candidate_generators` for the named alternatives).
        mer_range: admissible word-level MER between anchor and paraphrase (paper: [0.15, 0.6]).
        on_missing_paraphrase: ``"skip"`` (counted as ``no_paraphrase_in_mer_range``) or ``"anchor"``
            (the anchor stands in as its own paraphrase, i.e. the SimCSE dropout view; counted in
            ``statistics['paraphrase_fallbacks']``).
        seed: random seed.
        show_progress_bar: progress bar while parsing.

    After :meth:`build`, :attr:`report` holds the counts, skip reasons, the negation rules that fired and
    the mean MER / lexical overlap of the pairs.
    """

    name = "osscse"

    def __init__(
        self,
        negator: Negator | None = None,
        *,
        paraphrase_generators: Sequence[CandidateGenerator] | None = None,
        mer_range: tuple[float, float] = MER_WINDOW,
        on_missing_paraphrase: Literal["skip", "anchor"] = "skip",
        seed: int = 0,
        show_progress_bar: bool = False,
    ) -> None:
        if not 0.0 <= mer_range[0] <= mer_range[1] <= 1.0:
            raise ValueError(f"mer_range must satisfy 0 <= low <= high <= 1, got {mer_range}")
        if on_missing_paraphrase not in ("skip", "anchor"):
            raise ValueError(f"on_missing_paraphrase must be 'skip' or 'anchor', got {on_missing_paraphrase!r}")
        self.negator = negator or Negator()
        if paraphrase_generators is None:
            from st_debias.data.paraphrase.syntactic import SyntacticParaphraser

            paraphrase_generators = [SyntacticParaphraser(self.negator.model, mer_window=mer_range)]
        self.paraphrase_generators = list(paraphrase_generators)
        self.mer_range = mer_range
        self.on_missing_paraphrase = on_missing_paraphrase
        self.seed = seed
        self.show_progress_bar = show_progress_bar
        self.report = BuildReport(builder=self.name)

    def build(
        self,
        sentences: Iterable[object],
        *,
        column: str | None = None,
        num_proc: int | None = 1,
    ) -> Dataset:
        """Rows for every sentence that could be negated and paraphrased.

        Args:
            sentences: any iterable of strings (list, generator, ``dataset["text"]``) or a ``datasets.Dataset``.
            column: the sentence column when ``sentences`` is a ``Dataset`` (optional if it has one column).
            num_proc: processes (None: every usable core); any number gives the same rows and report.

        Raises:
            ValueError: a single string, non-string items, or no sentence at all.
        """
        from st_debias.data.parallel import run_blocks

        rows, self.report = run_blocks(self, sentences, column, num_proc=num_proc,
                                       show_progress_bar=self.show_progress_bar)
        return rows

    def prepare(self) -> None:
        """Load the negator's pipeline and the generators' resources once (workers inherit them)."""
        for generator in self.paraphrase_generators:
            generator.prepare()
        self.negator.negate(["The cat sat on the mat."])

    def build_block(self, block: Block) -> tuple[dict[str, list], BuildReport]:
        """One block's rows and counts (:class:`~st_debias.data.parallel.BlockBuilder`)."""
        report = BuildReport(builder=self.name)
        anchors = block.sentences
        t0 = time.perf_counter()
        negations = self.negator.negate(anchors)
        report.timings["negation"] = time.perf_counter() - t0
        report.rules.update(n.rule for n in negations)
        negated = [k for k, n in enumerate(negations) if n.ok]
        for n in negations:
            if not n.ok:
                report.skipped[f"negation_{n.rule}"] += 1
        t0 = time.perf_counter()
        candidates, reports = candidate_pools(self.paraphrase_generators, [anchors[k] for k in negated],
                                              seed=self.seed)
        report.generators.update(reports)
        report.timings["paraphrase"] = time.perf_counter() - t0
        low, high = self.mer_range
        rows: dict[str, list] = {"anchor": [], "paraphrase": [], "negation": []}
        fallbacks = candidates_total = candidates_kept = 0
        for pool, k in zip(candidates, negated):
            anchor = anchors[k]
            kept = [c.text for c in pool if low <= match_error_rate(anchor, c.text) <= high]
            candidates_total += len(pool)
            candidates_kept += len(kept)
            if kept:
                rng = np.random.default_rng([self.seed, 3, block.positions[k]])
                text = kept[int(rng.integers(len(kept)))]
            elif self.on_missing_paraphrase == "anchor":
                text = anchor
                fallbacks += 1
            else:
                report.skipped["no_paraphrase_in_mer_range"] += 1
                continue
            rows["anchor"].append(anchor)
            rows["paraphrase"].append(text)
            rows["negation"].append(negations[k].text)
        report.rows = report.anchors = len(rows["anchor"])
        report.statistics.update({
            "paraphrase_fallbacks": fallbacks,
            "paraphrase_candidates": candidates_total,
            "paraphrase_candidates_in_mer_range": candidates_kept,
        })
        return rows, report

    def finish(self, rows: dict[str, list], report: BuildReport) -> Dataset:
        """The rows as a dataset, and the statistics of them (:class:`~st_debias.data.parallel.BlockBuilder`)."""
        columns = {name: rows.get(name, []) for name in ("anchor", "paraphrase", "negation")}
        anchors, paraphrases, negations = columns["anchor"], columns["paraphrase"], columns["negation"]

        def mean(values: list[float]) -> float:
            return float(np.mean(values)) if values else float("nan")

        parsed = sum(report.rules.values())
        unnegated = sum(count for reason, count in report.skipped.items() if reason.startswith("negation_"))
        report.statistics.update({
            "paraphrase_mer": mean([match_error_rate(a, p) for a, p in zip(anchors, paraphrases)]),
            "negation_mer": mean([match_error_rate(a, n) for a, n in zip(anchors, negations)]),
            "paraphrase_lexical_overlap": mean([lexical_overlap(a, p) for a, p in zip(anchors, paraphrases)]),
            "negation_coverage": (parsed - unnegated) / parsed if parsed else 0.0,
        })
        report.skipped = Counter({k: v for k, v in report.skipped.items() if v})
        return Dataset.from_dict(columns)
