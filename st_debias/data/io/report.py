"""The statistics report every builder fills: counts, skips with reasons, pair statistics, timings."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from st_debias.data.text import lexical_overlap


class AccountingError(RuntimeError):
    """A build report's counts do not add up: some input is neither an anchor nor a counted skip."""


@dataclass
class BuildReport:
    """What a builder did.

    Attributes:
        builder: builder name.
        inputs: sentences given (before validation).
        rows: rows produced.
        skipped: reason -> number of input sentences that produced no row (``empty``, ``duplicate``,
            ``no_negative_candidates``, ``no_positive_candidates``, ``no_verb``, ...). ``inputs ==
            rows_anchors + sum(skipped)`` always holds, so nothing disappears silently.
        anchors: distinct anchors that produced rows.
        statistics: pair statistics (DebCSE Tables 1 and 4: mean lexical overlap and mean guide cosine
            of positive and negative pairs) and other figures.
        rules: negation rule -> count (OssCSE builder).
        generators: generator name -> its :class:`GenerationReport` as a dict.
        timings: step -> seconds.
    """

    builder: str
    inputs: int = 0
    rows: int = 0
    anchors: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    statistics: dict[str, float] = field(default_factory=dict)
    rules: Counter[str] = field(default_factory=Counter)
    generators: dict[str, dict[str, object]] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, object]:
        return {
            "builder": self.builder,
            "inputs": self.inputs,
            "rows": self.rows,
            "anchors": self.anchors,
            "skipped": dict(self.skipped),
            "statistics": self.statistics,
            "rules": dict(self.rules),
            "generators": self.generators,
            "timings": self.timings,
        }

    def to_json(self, **kwargs) -> str:
        return json.dumps(self.as_dict(), indent=2, sort_keys=True, **kwargs)

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> BuildReport:
        """The report :meth:`as_dict` (or a saved ``report.json``) describes."""
        fields = {key: value for key, value in data.items() if key not in ("skipped", "rules")}
        return cls(**fields, skipped=Counter(data.get("skipped", {})), rules=Counter(data.get("rules", {})))

    @classmethod
    def from_json(cls, text: str) -> BuildReport:
        return cls.from_dict(json.loads(text))

    def check_accounting(self) -> None:
        """Check that every input is either an anchor or a counted skip.

        Raises:
            AccountingError: the counts do not add up (the report would misstate what was built).
        """
        total = self.anchors + sum(self.skipped.values())
        if total != self.inputs:
            raise AccountingError(f"{self.builder}: {self.inputs} inputs but {self.anchors} anchors + "
                                  f"{sum(self.skipped.values())} skipped")


def merge_reports(reports: Sequence[BuildReport]) -> BuildReport:
    """Combine shard reports: counts add up, pair statistics are averaged weighted by their pair counts."""
    if not reports:
        raise ValueError("No reports to merge.")
    merged = BuildReport(builder=reports[0].builder)
    weighted: dict[str, list[tuple[float, float]]] = {}
    for report in reports:
        merged.inputs += report.inputs
        merged.rows += report.rows
        merged.anchors += report.anchors
        merged.skipped.update(report.skipped)
        merged.rules.update(report.rules)
        for step, seconds in report.timings.items():
            merged.timings[step] = merged.timings.get(step, 0.0) + seconds
        for name, gen in report.generators.items():
            into = merged.generators.setdefault(name, {"inputs": 0, "with_candidates": 0, "candidates": 0,
                                                       "declined": {}})
            for key in ("inputs", "with_candidates", "candidates"):
                into[key] += gen.get(key, 0)  # type: ignore[operator]
            declined = Counter(into["declined"]) + Counter(gen.get("declined", {}))  # type: ignore[arg-type]
            into["declined"] = dict(declined)
        for key, value in report.statistics.items():
            if isinstance(value, dict):  # counts by a name (a family's rows without a positive): add up
                merged.statistics[key] = dict(Counter(merged.statistics.get(key, {})) + Counter(value))  # type: ignore[arg-type]
            elif key.endswith(("_pairs", "_fallbacks", "_candidates", "_in_mer_range")):
                merged.statistics[key] = merged.statistics.get(key, 0) + value
            elif key.startswith(("positive_", "negative_")):
                weight = report.statistics.get(key.split("_", 1)[0] + "_pairs", 0)
                weighted.setdefault(key, []).append((value, weight))
            else:  # per-anchor means (pool sizes, coverage): weight by inputs
                weighted.setdefault(key, []).append((value, report.inputs))
    for key, pairs in weighted.items():
        pairs = [(v, w) for v, w in pairs if w]
        total = sum(w for _, w in pairs)
        merged.statistics[key] = float(sum(v * w for v, w in pairs) / total) if total else float("nan")
    return merged


def pair_statistics(prefix: str, anchors: Iterable[str], others: Iterable[str], cosines: Iterable[float]) -> dict[str, float]:
    """``{prefix}_lexical_overlap``, ``{prefix}_cosine`` (means) and ``{prefix}_pairs`` for a set of pairs."""
    anchors, others = list(anchors), list(others)
    cos = np.asarray(list(cosines), dtype=np.float64)
    if not anchors:
        return {f"{prefix}_pairs": 0}
    overlap = np.array([lexical_overlap(a, b) for a, b in zip(anchors, others)], dtype=np.float64)
    return {
        f"{prefix}_pairs": len(anchors),
        f"{prefix}_lexical_overlap": float(overlap.mean()),
        f"{prefix}_cosine": float(cos.mean()) if len(cos) else float("nan"),
    }


def start_build(name: str, sentences: object, column: str | None = None):
    """A builder's cleaned input (``.sentences`` and their ``.positions`` in the input) and its report, with
    the inputs and the cleaning skips already counted.

    ``sentences`` is what ``build`` accepts: any iterable of strings, a ``datasets`` column, or a ``Dataset``
    with ``column``.
    """
    from st_debias.data.io.corpus import clean_sentences, sentence_list

    sentences = sentence_list(sentences, column)  # type: ignore[arg-type]
    report = BuildReport(builder=name, inputs=len(sentences))
    cleaned = clean_sentences(sentences)
    report.skipped.update(cleaned.skipped)
    return cleaned, report
