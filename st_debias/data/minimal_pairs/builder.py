"""(anchor, positive, negative) rows whose negative differs from the anchor by a small meaning-changing edit
and whose positive carries the same kind of surface change without changing the meaning.

Why: a model that reads sentences as bags of words scores "The cat chased the dog." and "The dog chased the
cat." as the same sentence, and a model trained only on negations learns "contains *not* ⇒ different".
Each row here pairs a negative edit with a positive that shows the same cue — a negated antonym ("is not
small") beside a negation, a voice change beside an argument swap, a synonym beside a co-hyponym or a changed
number — so no surface cue tells the positive from the negative. The builder reports, per family, how often
the cue is balanced and the word overlap of both sides, so a shortcut in the data is visible before training.

Families (``shares`` keys) and the positive each one prefers, in order:

=================  ===========================================  ==========================================
negative family    edit                                         positives, in order of preference
=================  ===========================================  ==========================================
``negation``       insert or remove the main verb's negation    negated antonym, syntactic, synonym
``antonym``        adjective → WordNet antonym                   negated antonym, synonym, syntactic
``argument_swap``  swap subject and object                       voice change, syntactic
``phrase_swap``    swap two noun phrases in different roles     syntactic, voice change, synonym
``number``         change a number                               synonym, syntactic
``cohyponym``      noun → WordNet sibling                        synonym, syntactic
=================  ===========================================  ==========================================

A row needs a positive from its family's list: where none of them applies to the sentence (no adjective with
an antonym, no synonym WordNet knows, no constituent to move), the row is skipped and counted per family
(``statistics["missing_positive"]``). With ``on_missing_positive="anchor"`` the anchor itself stands in as the
positive instead (the dropout view of SimCSE, not a pair a reader would call a paraphrase): about half the rows
of a Wikipedia sample, which the ``st-debias`` recipe keeps on purpose for its contrastive term.
"""

from __future__ import annotations

import functools
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

import numpy as np
from datasets import Dataset

from st_debias.data.io.report import BuildReport
from st_debias.data.minimal_pairs.edits import NEGATIVE_EDITS, Declined
from st_debias.data.negation.negator import Negator, negation_count
from st_debias.data.parallel import Block
from st_debias.data.text import lexical_overlap, match_error_rate

NEGATIVE_FAMILIES = ("negation", "antonym", "argument_swap", "phrase_swap", "number", "cohyponym")
POSITIVE_PREFERENCES: dict[str, tuple[str, ...]] = {
    "negation": ("negated_antonym", "syntactic", "synonym"),
    "antonym": ("negated_antonym", "synonym", "syntactic"),
    "argument_swap": ("voice", "syntactic"),
    "phrase_swap": ("syntactic", "voice", "synonym"),
    "number": ("synonym", "syntactic"),
    "cohyponym": ("synonym", "syntactic"),
}
DEFAULT_SHARES: dict[str, float] = {
    "negation": 0.3, "antonym": 0.2, "argument_swap": 0.15, "number": 0.1, "cohyponym": 0.25,
}


def _positive_generator(name: str, negator: Negator, nlp):
    from st_debias.data.negation.negator import NegatedAntonymGenerator
    from st_debias.data.paraphrase.syntactic import SyntacticParaphraser

    if name == "negated_antonym":
        return NegatedAntonymGenerator(negator)
    if name == "voice":
        return SyntacticParaphraser(transforms=["passive", "active"], mer_window=(0.0, 1.0), nlp=nlp)
    if name == "synonym":
        return SyntacticParaphraser(transforms=["synonym"], mer_window=(0.01, 0.4), nlp=nlp)
    if name == "syntactic":
        return SyntacticParaphraser(nlp=nlp)
    raise ValueError(f"Unknown positive family {name!r}.")


class MinimalPairBuilder:
    """Builds cue-balanced minimal-pair rows ``(anchor, positive, negative)`` from plain sentences.

    Args:
        shares: negative family → share of rows (normalised; families left out or at 0 are not used).
            Families: ``negation``, ``antonym``, ``argument_swap``, ``phrase_swap``, ``number``,
            ``cohyponym`` (``phrase_swap`` is off by default).
        negator: the :class:`~st_debias.data.negation.negator.Negator` (its spaCy pipeline parses every
            sentence once for all negative edits).
        on_missing_positive: ``"skip"`` (default: a row without a positive is left out, counted) or ``"anchor"``
            (the anchor stands in as its positive, the dropout view; counted).
        strict_cohyponyms: the ``cohyponym`` family swaps no unit of measure (yard → inch) and no part of
            another whole (wheel → pulley); the declines are counted under ``generators["cohyponym"]``.
        seed: random seed (edits and the assignment of sentences to families).
        show_progress_bar: progress bar while parsing.

    After :meth:`build`, :attr:`report` counts rows and skips, each edit's decline reasons
    (``generators``), the realised family shares and, per family, the cue statistics: word overlap of the
    positive and the negative with the anchor, and how often each side changes the number of negation words.
    :attr:`families` lists the negative family of each row.

    Example:
        >>> builder = MinimalPairBuilder(shares={"argument_swap": 1.0}, seed=0)  # doctest: +SKIP
        >>> builder.build(["The committee approved the budget."])[0]  # doctest: +SKIP
        {'anchor': 'The committee approved the budget.', 'positive': 'The budget was approved by the committee.',
         'negative': 'The budget approved the committee.'}
    """

    name = "minimal_pairs"
    version = 4  # raised whenever the same sentences give other rows (the row cache keys on it)

    def __init__(
        self,
        shares: Mapping[str, float] | None = None,
        *,
        negator: Negator | None = None,
        on_missing_positive: Literal["anchor", "skip"] = "skip",
        strict_cohyponyms: bool = True,
        seed: int = 0,
        show_progress_bar: bool = False,
    ) -> None:
        shares = dict(DEFAULT_SHARES if shares is None else shares)
        unknown = sorted(set(shares) - set(NEGATIVE_FAMILIES))
        if unknown:
            raise ValueError(f"shares: unknown families {unknown}; choose from {list(NEGATIVE_FAMILIES)}.")
        values = np.array(list(shares.values()), dtype=float)
        if not np.all(np.isfinite(values)) or np.any(values < 0) or values.sum() <= 0:
            raise ValueError(f"shares must be finite, non-negative and not all zero, got {shares}.")
        if on_missing_positive not in ("anchor", "skip"):
            raise ValueError(f"on_missing_positive must be 'anchor' or 'skip', got {on_missing_positive!r}.")
        total = float(values.sum())
        self.shares = {k: v / total for k, v in shares.items() if v > 0}
        self.negator = negator or Negator(pos_tags=True)
        self._nlp = None
        self.on_missing_positive = on_missing_positive
        if not isinstance(strict_cohyponyms, bool):
            raise ValueError(f"strict_cohyponyms must be true or false, got {strict_cohyponyms!r}.")
        self.edits = {**NEGATIVE_EDITS, "cohyponym": functools.partial(NEGATIVE_EDITS["cohyponym"], strict=strict_cohyponyms)}
        self.seed = seed
        self.show_progress_bar = show_progress_bar
        self.report = BuildReport(builder=self.name)
        self.families: list[str] = []
        self.positive_sources: dict[int, str] = {}
        self._generators: dict[str, object] = {}

    @property
    def nlp(self):
        """The spaCy pipeline that parses every anchor: the negator's when it sets coarse part-of-speech tags
        (the default negator does, ``pos_tags=True``), else the same model loaded with them (noun chunks and
        the syntactic positives read ``pos_``; a negator's fast pipeline leaves it empty)."""
        if self._nlp is None:
            from st_debias.data.paraphrase.syntactic import SyntacticParaphraser

            nlp = self.negator.nlp
            if SyntacticParaphraser.missing_pipes(nlp):
                nlp = SyntacticParaphraser(self.negator.model, blas=self.negator.blas).nlp
            self._nlp = nlp
        return self._nlp

    def _negatives(self, block: Block, report: BuildReport) -> tuple[list[dict[str, str]], list[Any]]:
        """Every applicable negative edit of every anchor of the block (family → edited text), and the parses
        (the positive generators reuse them)."""
        anchors = block.sentences
        declined: dict[str, Counter[str]] = {family: Counter() for family in self.shares}
        out: list[dict[str, str]] = []
        docs = list(self.nlp.pipe(anchors, batch_size=self.negator.batch_size))
        for j, doc in enumerate(docs):
            options: dict[str, str] = {}
            for family in self.shares:
                if family == "negation":
                    result = self.negator.negate_doc(doc)
                    text: str | Declined = result.text if result.ok else Declined(result.rule)
                else:
                    text = self.edits[family](doc, np.random.default_rng([self.seed, 11, block.first + j]))
                if isinstance(text, Declined) or text is None or text == anchors[j]:
                    declined[family][text.reason if isinstance(text, Declined) else "unchanged"] += 1
                else:
                    options[family] = text
            out.append(options)
        for family, counts in declined.items():
            report.generators[family] = {
                "inputs": len(anchors),
                "with_candidates": len(anchors) - sum(counts.values()),
                "declined": dict(counts),
            }
        return out, docs

    def _assign(self, options: list[dict[str, str]], block: int) -> list[str | None]:
        """A family for each anchor of a block, meeting the shares as closely as availability allows.

        Rarest family first, each takes up to its quota of the anchors that have it; anchors left over
        go to the available family furthest below its quota (so nothing usable is wasted).
        """
        usable = [k for k, o in enumerate(options) if o]
        quotas = {f: share * len(usable) for f, share in self.shares.items()}
        rng = np.random.default_rng([self.seed, 12, block])
        order = list(rng.permutation(usable))
        assigned: dict[int, str] = {}
        counts: Counter[str] = Counter()
        availability = {f: sum(1 for k in usable if f in options[k]) for f in self.shares}
        for family in sorted(self.shares, key=lambda f: (availability[f], f)):
            for k in order:
                if counts[family] >= quotas[family]:
                    break
                if k not in assigned and family in options[k]:
                    assigned[k] = family
                    counts[family] += 1
        for k in order:
            if k in assigned:
                continue
            family = min(options[k], key=lambda f: (counts[f] / max(quotas.get(f, 0), 1e-9), f))
            assigned[k] = family
            counts[family] += 1
        return [assigned.get(k) for k in range(len(options))]

    def _positives(
        self, block: Block, families: list[str | None], report: BuildReport, docs: list[Any]
    ) -> tuple[list[str | None], list[str | None]]:
        """The first available preferred positive of each assigned anchor, and its source (generators run only
        where needed, on the anchors' parses from :meth:`_negatives` when they come from their pipeline)."""
        anchors = block.sentences
        positives: list[str | None] = [None] * len(anchors)
        sources: list[str | None] = [None] * len(anchors)
        pending = {k: list(POSITIVE_PREFERENCES[f]) for k, f in enumerate(families) if f is not None}
        for _round in range(max(len(p) for p in POSITIVE_PREFERENCES.values())):
            by_source: dict[str, list[int]] = {}
            for k, prefs in pending.items():
                if positives[k] is None and prefs:
                    by_source.setdefault(prefs.pop(0), []).append(k)
            for source, ks in sorted(by_source.items()):
                generator = self._generator(source)
                texts = [anchors[k] for k in ks]
                parsed = self.nlp is (generator.negator.nlp if source == "negated_antonym" else generator.nlp)
                reused = {"docs": [docs[k] for k in ks]} if parsed else {}
                for k, candidates in zip(ks, generator.generate(texts, seed=self.seed, **reused)):
                    kept = [c.text for c in candidates if c.text != anchors[k]]
                    if kept:
                        rng = np.random.default_rng([self.seed, 13, block.first + k])
                        positives[k] = kept[int(rng.integers(len(kept)))]
                        sources[k] = source
                entry = report.generators.setdefault(f"positive:{source}", {"inputs": 0, "with_candidates": 0})
                entry["inputs"] = int(entry["inputs"]) + len(ks)  # type: ignore[call-overload]
                entry["with_candidates"] = int(entry["with_candidates"]) + sum(  # type: ignore[call-overload]
                    1 for k in ks if sources[k] == source
                )
        return positives, sources

    def _generator(self, source: str):
        """The positive generator of ``source``, made once per builder."""
        if source not in self._generators:
            self._generators[source] = _positive_generator(source, self.negator, self.nlp)
        return self._generators[source]

    def build(
        self,
        sentences: Iterable[object],
        column: str | None = None,
        *,
        num_proc: int | None = 1,
    ) -> Dataset:
        """Rows ``anchor, positive, negative`` (one per usable sentence, in input order).

        Families are assigned within each block of :data:`~st_debias.data.parallel.BLOCK_SIZE` sentences, so
        that blocks build independently: any ``num_proc`` gives the same rows.

        Args:
            sentences: any iterable of strings, a ``datasets`` column, or a ``Dataset`` (with ``column``).
            column: the text column when ``sentences`` is a ``Dataset``.
            num_proc: processes (None: every usable core).

        Raises:
            ValueError: non-string input or no sentence at all.
        """
        from st_debias.data.parallel import run_blocks

        rows, self.report = run_blocks(self, sentences, column, num_proc=num_proc,
                                       show_progress_bar=self.show_progress_bar)
        return rows

    def prepare(self) -> None:
        """Load the parser, WordNet and every positive generator once (worker processes inherit them)."""
        for source in {source for preferences in POSITIVE_PREFERENCES.values() for source in preferences}:
            self._generator(source).prepare()
        self.build_block(Block(0, ["The small cat did not chase the two dogs."], [0], 0))

    def build_block(self, block: Block) -> tuple[dict[str, list], BuildReport]:
        """One block's rows, with each row's family, positive source and :func:`row_cues` as side columns, and
        its counts."""
        from st_debias.data.spacy_pipeline import one_blas_thread

        report = BuildReport(builder=self.name)
        anchors = block.sentences
        t0 = time.perf_counter()
        with one_blas_thread():  # the negator's pipeline multiplies with numpy's BLAS: one core per process
            options, docs = self._negatives(block, report)
        report.timings["negatives"] = time.perf_counter() - t0
        families = self._assign(options, block.index)
        report.skipped["no_negative_edit"] += sum(1 for f in families if f is None)
        t0 = time.perf_counter()
        positives, sources = self._positives(block, families, report, docs)
        report.timings["positives"] = time.perf_counter() - t0
        rows: dict[str, list] = {
            "anchor": [], "positive": [], "negative": [], "_family": [], "_source": [], "_cues": [],
        }
        for k, family in enumerate(families):
            if family is None:
                continue
            positive = positives[k]
            if positive is None:
                report.statistics.setdefault("missing_positive", {})  # type: ignore[arg-type]
                missing = report.statistics["missing_positive"]
                missing[family] = missing.get(family, 0) + 1  # type: ignore[index, union-attr]
                if self.on_missing_positive == "skip":
                    report.skipped["no_positive"] += 1
                    continue
                positive = anchors[k]
            negative = options[k][family]
            for name, value in (("anchor", anchors[k]), ("positive", positive), ("negative", negative),
                                ("_family", family), ("_source", sources[k]),
                                ("_cues", row_cues(anchors[k], positive, negative))):
                rows[name].append(value)
        report.rows = report.anchors = len(rows["anchor"])
        return rows, report

    def finish(self, rows: dict[str, list], report: BuildReport) -> Dataset:
        """The rows as a dataset; :attr:`families`, :attr:`positive_sources` and the cue statistics of them."""
        self.families = rows.pop("_family", [])
        sources = rows.pop("_source", [])
        cues = rows.pop("_cues", None)
        if cues is not None and len(cues) != len(rows.get("anchor", [])):
            cues = None  # some parts hold none (saved by an older st_debias): compute every row's afresh
        self.positive_sources = {row: source for row, source in enumerate(sources) if source is not None}
        columns = {name: rows.get(name, []) for name in ("anchor", "positive", "negative")}
        report.statistics.update(
            cue_statistics(columns["anchor"], columns["positive"], columns["negative"], self.families, cues)
        )
        report.statistics["positive_fallbacks"] = dict(  # type: ignore[assignment]
            Counter(family for family, source in zip(self.families, sources) if source is None)
        )
        report.rules = Counter(self.families)
        report.skipped = Counter({k: v for k, v in report.skipped.items() if v})
        return Dataset.from_dict(columns)


#: The per-row cue figures :func:`cue_statistics` averages, in the order :func:`row_cues` gives them.
CUE_FIGURES = (
    "positive_overlap", "negative_overlap", "positive_mer", "negative_mer",
    "positive_changes_negation", "negative_changes_negation", "positive_is_anchor",
)


def row_cues(anchor: str, positive: str, negative: str) -> list[float]:
    """One row's :data:`CUE_FIGURES`: word overlap and MER of each side with the anchor, whether each side
    changes the count of negation words, and whether the positive is the anchor itself."""
    negations = negation_count(anchor)
    return [
        lexical_overlap(anchor, positive), lexical_overlap(anchor, negative),
        match_error_rate(anchor, positive), match_error_rate(anchor, negative),
        float(negation_count(positive) != negations), float(negation_count(negative) != negations),
        float(positive == anchor),
    ]


def cue_statistics(
    anchors: Sequence[str], positives: Sequence[str], negatives: Sequence[str], families: Sequence[str],
    cues: Sequence[Sequence[float]] | None = None,
) -> dict[str, object]:
    """Per family and overall: row share, mean word overlap and MER of each side with the anchor, and the
    share of rows where each side changes the count of negation words (a cue the loss must not key on).
    ``cues``: each row's :func:`row_cues`, when already computed (by the blocks, in their processes)."""
    if cues is None:
        cues = [row_cues(a, p, n) for a, p, n in zip(anchors, positives, negatives, strict=True)]
    # One contiguous row per figure: each mean sums its values in the same (pairwise) order as np.mean of a list.
    table = np.ascontiguousarray(np.asarray(cues, dtype=np.float64).reshape(len(anchors), len(CUE_FIGURES)).T)

    def summary(idx: list[int]) -> dict[str, float]:
        means = [float(np.mean(values[idx])) if idx else float("nan") for values in table]
        return {"rows": len(idx), **dict(zip(CUE_FIGURES, means, strict=True))}

    out: dict[str, object] = {"all": summary(list(range(len(anchors))))}
    for family in sorted(set(families)):
        out[family] = summary([i for i, f in enumerate(families) if f == family])
    return {"cues": out}
