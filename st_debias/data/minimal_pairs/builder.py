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

A row whose preferred positives are all unavailable uses the anchor itself (the dropout view) when
``on_missing_positive="anchor"`` and is skipped otherwise; both are counted.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Literal

import numpy as np
from datasets import Dataset

from st_debias.data.io.report import BuildReport, start_build
from st_debias.data.minimal_pairs.edits import NEGATIVE_EDITS, Declined
from st_debias.data.negation.negator import Negator, negation_count
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
        on_missing_positive: ``"anchor"`` (the anchor stands in as its positive; counted) or ``"skip"``.
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
    version = 2  # 2: parse with part-of-speech tags (voice and syntactic positives); phrase_swap

    def __init__(
        self,
        shares: Mapping[str, float] | None = None,
        *,
        negator: Negator | None = None,
        on_missing_positive: Literal["anchor", "skip"] = "anchor",
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
        self.seed = seed
        self.show_progress_bar = show_progress_bar
        self.report = BuildReport(builder=self.name)
        self.families: list[str] = []

    @property
    def nlp(self):
        """The spaCy pipeline that parses every anchor: the negator's when it sets coarse part-of-speech tags
        (the default negator does, ``pos_tags=True``), else the same model loaded with them (noun chunks and
        the syntactic positives read ``pos_``; a negator's fast pipeline leaves it empty)."""
        if self._nlp is None:
            from st_debias.data.paraphrase.syntactic import SyntacticParaphraser

            nlp = self.negator.nlp
            if any(pipe not in nlp.pipe_names for pipe in SyntacticParaphraser.PIPES):
                nlp = SyntacticParaphraser(self.negator.model).nlp
            self._nlp = nlp
        return self._nlp

    def _negatives(self, anchors: list[str], report: BuildReport) -> list[dict[str, str]]:
        """Every applicable negative edit of every anchor: family → edited text."""
        nlp = self.nlp
        docs = nlp.pipe(anchors, batch_size=self.negator.batch_size)
        if self.show_progress_bar:
            from tqdm.auto import tqdm

            docs = tqdm(docs, total=len(anchors), desc="minimal pairs: parsing")
        declined: dict[str, Counter[str]] = {family: Counter() for family in self.shares}
        out: list[dict[str, str]] = []
        for k, doc in enumerate(docs):
            options: dict[str, str] = {}
            for family in self.shares:
                if family == "negation":
                    result = self.negator.negate_doc(doc)
                    text: str | Declined = result.text if result.ok else Declined(result.rule)
                else:
                    text = NEGATIVE_EDITS[family](doc, np.random.default_rng([self.seed, 11, k]))
                if isinstance(text, Declined) or text is None or text == anchors[k]:
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
        return out

    def _assign(self, options: list[dict[str, str]]) -> list[str | None]:
        """A family for each anchor, meeting the shares as closely as availability allows.

        Rarest family first, each takes up to its quota of the anchors that have it; anchors left over
        go to the available family furthest below its quota (so nothing usable is wasted).
        """
        usable = [k for k, o in enumerate(options) if o]
        quotas = {f: share * len(usable) for f, share in self.shares.items()}
        rng = np.random.default_rng([self.seed, 12])
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

    def _positives(self, anchors: list[str], families: list[str | None], report: BuildReport) -> list[str | None]:
        """The first available preferred positive of each assigned anchor (generators run only where needed)."""
        positives: list[str | None] = [None] * len(anchors)
        wanted: dict[str, list[int]] = {}
        for k, family in enumerate(families):
            if family is not None:
                wanted.setdefault(POSITIVE_PREFERENCES[family][0], []).append(k)
        pending = {k: list(POSITIVE_PREFERENCES[f]) for k, f in enumerate(families) if f is not None}
        generators: dict[str, object] = {}
        self.positive_sources: dict[int, str] = {}
        for _round in range(max(len(p) for p in POSITIVE_PREFERENCES.values())):
            by_source: dict[str, list[int]] = {}
            for k, prefs in pending.items():
                if positives[k] is None and prefs:
                    by_source.setdefault(prefs.pop(0), []).append(k)
            for source, ks in sorted(by_source.items()):
                generator = generators.setdefault(source, _positive_generator(source, self.negator, self.nlp))
                texts = [anchors[k] for k in ks]
                for k, candidates in zip(ks, generator.generate(texts, seed=self.seed)):  # type: ignore[attr-defined]
                    kept = [c.text for c in candidates if c.text != anchors[k]]
                    if kept:
                        rng = np.random.default_rng([self.seed, 13, k])
                        positives[k] = kept[int(rng.integers(len(kept)))]
                        self.positive_sources[k] = source
                report.generators.setdefault(f"positive:{source}", {"inputs": 0, "with_candidates": 0})
                entry = report.generators[f"positive:{source}"]
                entry["inputs"] = int(entry["inputs"]) + len(ks)  # type: ignore[call-overload]
                entry["with_candidates"] = int(entry["with_candidates"]) + sum(  # type: ignore[call-overload]
                    1 for k in ks if positives[k] is not None and self.positive_sources.get(k) == source
                )
        return positives

    def build(self, sentences: Iterable[object], column: str | None = None) -> Dataset:
        """Rows ``anchor, positive, negative`` (one per usable sentence, in input order).

        Args:
            sentences: any iterable of strings, a ``datasets`` column, or a ``Dataset`` (with ``column``).
            column: the text column when ``sentences`` is a ``Dataset``.

        Raises:
            ValueError: non-string input or no sentence at all.
        """
        t_start = time.perf_counter()
        cleaned, report = start_build(self.name, sentences, column)
        anchors = cleaned.sentences
        t0 = time.perf_counter()
        options = self._negatives(anchors, report)
        report.timings["negatives"] = time.perf_counter() - t0
        families = self._assign(options)
        report.skipped["no_negative_edit"] += sum(1 for f in families if f is None)
        t0 = time.perf_counter()
        positives = self._positives(anchors, families, report)
        report.timings["positives"] = time.perf_counter() - t0
        rows: dict[str, list[str]] = {"anchor": [], "positive": [], "negative": []}
        self.families = []
        fallbacks: Counter[str] = Counter()
        for k, family in enumerate(families):
            if family is None:
                continue
            positive = positives[k]
            if positive is None:
                if self.on_missing_positive == "skip":
                    report.skipped["no_positive"] += 1
                    continue
                positive = anchors[k]
                fallbacks[family] += 1
            rows["anchor"].append(anchors[k])
            rows["positive"].append(positive)
            rows["negative"].append(options[k][family])
            self.families.append(family)
        report.rows = report.anchors = len(rows["anchor"])
        report.statistics.update(cue_statistics(rows["anchor"], rows["positive"], rows["negative"], self.families))
        report.statistics["positive_fallbacks"] = dict(fallbacks)  # type: ignore[assignment]
        report.rules.update(self.families)
        report.skipped = Counter({k: v for k, v in report.skipped.items() if v})
        report.timings["total"] = time.perf_counter() - t_start
        report.check_accounting()
        self.report = report
        return Dataset.from_dict(rows)


def cue_statistics(
    anchors: Sequence[str], positives: Sequence[str], negatives: Sequence[str], families: Sequence[str]
) -> dict[str, object]:
    """Per family and overall: row share, mean word overlap and MER of each side with the anchor, and the
    share of rows where each side changes the count of negation words (a cue the loss must not key on)."""

    def summary(idx: list[int]) -> dict[str, float]:
        def mean(values) -> float:
            values = list(values)
            return float(np.mean(values)) if values else float("nan")

        return {
            "rows": len(idx),
            "positive_overlap": mean(lexical_overlap(anchors[i], positives[i]) for i in idx),
            "negative_overlap": mean(lexical_overlap(anchors[i], negatives[i]) for i in idx),
            "positive_mer": mean(match_error_rate(anchors[i], positives[i]) for i in idx),
            "negative_mer": mean(match_error_rate(anchors[i], negatives[i]) for i in idx),
            "positive_changes_negation": mean(
                negation_count(positives[i]) != negation_count(anchors[i]) for i in idx
            ),
            "negative_changes_negation": mean(
                negation_count(negatives[i]) != negation_count(anchors[i]) for i in idx
            ),
            "positive_is_anchor": mean(positives[i] == anchors[i] for i in idx),
        }

    out: dict[str, object] = {"all": summary(list(range(len(anchors))))}
    for family in sorted(set(families)):
        out[family] = summary([i for i, f in enumerate(families) if f == family])
    return {"cues": out}
