"""(anchor, positive) rows: each corpus sentence beside one of its syntactic paraphrases.

The ``paraphrase`` data kind: ``st-debias build paraphrase --input corpus.txt --output rows/ --num-proc N``
paraphrases a corpus on every core, or as job-array shards (:mod:`st_debias.data.parallel`). The rows train
any (anchor, positive) loss, e.g. ``MultipleNegativesRankingLoss`` with structural rather than dropout
positives.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from st_debias.data.io.report import BuildReport
from st_debias.data.text import MER_WINDOW, match_error_rate

if TYPE_CHECKING:
    from datasets import Dataset

    from st_debias.data.negation.negator import Negator
    from st_debias.data.parallel import Block

__all__ = ["ParaphrasePairBuilder"]


class ParaphrasePairBuilder:
    """Pairs each sentence with one of its :class:`~st_debias.data.paraphrase.syntactic.SyntacticParaphraser`
    candidates; sentences without a candidate are skipped and counted (``no_paraphrase``).

    Args:
        transforms: the paraphraser's rules (default: all).
        mer_window: the word-level match error rate a candidate must have against its sentence.
        max_candidates: candidates drawn per sentence, one of which is kept.
        seed: random seed (the paraphraser's draws and the kept candidate, keyed by each sentence's position).
        negator: a :class:`~st_debias.data.negation.negator.Negator`, whose spaCy model the paraphraser loads
            (None: the default model).
        show_progress_bar: show progress.

    Example:
        ::

            from st_debias.data.paraphrase.pairs import ParaphrasePairBuilder

            rows = ParaphrasePairBuilder(seed=0).build(["The committee approved the budget."], num_proc=1)
            # Dataset({features: ['anchor', 'positive'], num_rows: 1})
    """

    name = "paraphrase"

    def __init__(
        self,
        transforms: Sequence[str] | None = None,
        mer_window: tuple[float, float] = MER_WINDOW,
        max_candidates: int = 4,
        *,
        seed: int = 0,
        negator: Negator | None = None,
        show_progress_bar: bool = False,
    ) -> None:
        from st_debias.data.paraphrase.syntactic import SyntacticParaphraser

        self.paraphraser = SyntacticParaphraser(
            spacy_model=negator.model if negator is not None else None, transforms=transforms,
            mer_window=mer_window, max_candidates=max_candidates,
        )  # fmt: skip
        self.seed = seed
        self.show_progress_bar = show_progress_bar

    def prepare(self) -> None:
        """Load spaCy, WordNet and lemminflect before the blocks (workers forked afterwards share them)."""
        self.paraphraser.prepare()

    def build_block(self, block: Block) -> tuple[dict[str, list], BuildReport]:
        """One block's rows and counts (:class:`~st_debias.data.parallel.BlockBuilder`)."""
        report = BuildReport(builder=self.name)
        start = time.perf_counter()
        candidates = self.paraphraser.generate(block.sentences, seed=self.seed)
        report.timings["paraphrase"] = time.perf_counter() - start
        report.generators["syntactic"] = self.paraphraser.report.as_dict()
        rows: dict[str, list] = {"anchor": [], "positive": []}
        for anchor, position, pool in zip(block.sentences, block.positions, candidates, strict=True):
            if not pool:
                report.skipped["no_paraphrase"] += 1
                continue
            rng = np.random.default_rng([self.seed, 21, position])
            rows["anchor"].append(anchor)
            rows["positive"].append(pool[int(rng.integers(len(pool)))].text)
        report.rows = report.anchors = len(rows["anchor"])
        return rows, report

    def finish(self, rows: dict[str, list], report: BuildReport) -> Dataset:
        """The rows as a dataset, with the mean match error rate of the positives in the report."""
        from datasets import Dataset

        columns = {name: rows.get(name, []) for name in ("anchor", "positive")}
        rates = [match_error_rate(a, p) for a, p in zip(columns["anchor"], columns["positive"], strict=True)]
        report.statistics["positive_mer"] = float(np.mean(rates)) if rates else float("nan")
        return Dataset.from_dict(columns)

    def build(self, sentences: Any, column: str | None = None, *, num_proc: int | None = 1) -> Dataset:
        """The rows of ``sentences`` (any iterable of strings, or a ``Dataset`` and its ``column``), built in
        blocks on ``num_proc`` processes (None: every usable core)."""
        from st_debias.data.parallel import run_blocks

        rows, self.report = run_blocks(
            self, sentences, column, num_proc=num_proc, show_progress_bar=self.show_progress_bar
        )
        return rows
