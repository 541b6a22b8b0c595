"""Surface-structure bias probes: OssCSE Cont/Oppn splits, negation probe, alignment/uniformity, pair statistics.

* Cont/Oppn (OssCSE §3.3, docs/evaluation.md): on a dataset whose median gold score lies in [2, 3.5], a pair is
  *Cont* (surface and meaning agree) when (score > median score and MER < median MER) or (score <
  median score and MER > median MER), otherwise *Oppn*. Pairs exactly on a median go to Oppn, as the
  rule is written. MER is :func:`st_debias.data.text.match_error_rate` (lower-cased words, punctuation
  removed). A model that leans on lexical overlap does well on Cont and badly on Oppn.
* Negation probe: cosine of a sentence with its human-written negation (CANNOT); a model that ignores
  negation puts them close. Mean cosine, share above 0.8 and, where a paraphrase column exists, how
  often the negation outranks the paraphrase.
* Alignment and uniformity (Wang & Isola 2020) on STS-B test, as in Focal-InfoNCE Table 3 and DebCSE
  Table 5.
* Training-pair statistics (DebCSE Tables 1 and 4): lexical overlap and guide-model cosine of
  anchor–positive and anchor–negative pairs of a training set.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from st_debias.data.text import lexical_overlap, match_error_rate
from st_debias.evaluation.embeddings import EmbeddingCache
from st_debias.evaluation.sts import spearman_x100
from st_debias.evaluation.sts_data import STSData
from st_debias.paths import DATA_ENV, DataNotFoundError, data_file

#: OssCSE's eligibility window for the median gold score of a dataset.
MEDIAN_SCORE_RANGE: tuple[float, float] = (2.0, 3.5)

#: The CANNOT probe files in the default order: sorted by file name. With the first 3,000 pairs this is
#: glue_diagnostic (154), nan_nli (117), wikifactcheck_english_0 (904), and the first 1,825 of
#: wikifactcheck_english_1 — the order that reproduces docs/evaluation.md (mean cosine 0.86, 75.5 % > 0.8).
CANNOT_DIR = "probes/cannot"
DEFAULT_NEGATION_PAIRS = 3000

#: Fixed histogram edges for negation cosines (width 0.02 over [-1, 1]), stored in results.json.
HISTOGRAM_EDGES = np.round(np.linspace(-1.0, 1.0, 101), 6)


# --------------------------------------------------------------------------------------------------
# Cont / Oppn
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ContOppnSplit:
    """OssCSE's Cont/Oppn partition of one dataset.

    Attributes:
        median_score: median gold score.
        median_mer: median word-level MER of the pairs.
        eligible: median score inside :data:`MEDIAN_SCORE_RANGE`.
        cont: indices of Cont pairs.
        oppn: indices of Oppn pairs.
    """

    median_score: float
    median_mer: float
    eligible: bool
    cont: np.ndarray = field(repr=False)
    oppn: np.ndarray = field(repr=False)


def cont_oppn_split(
    sentences1: Sequence[str],
    sentences2: Sequence[str],
    scores: Sequence[float],
    score_range: tuple[float, float] = MEDIAN_SCORE_RANGE,
) -> ContOppnSplit:
    """Split pairs into OssCSE's Cont and Oppn sets (module docstring has the rule).

    Raises:
        ValueError: lengths differ or there are no pairs.
    """
    if not (len(sentences1) == len(sentences2) == len(scores)) or not scores:
        raise ValueError("cont_oppn_split needs equal-length, non-empty sentences1, sentences2 and scores")
    gold = np.asarray(scores, dtype=np.float64)
    mer = np.array([match_error_rate(a, b) for a, b in zip(sentences1, sentences2, strict=True)])
    median_score = float(np.median(gold))
    median_mer = float(np.median(mer))
    cont_mask = ((gold > median_score) & (mer < median_mer)) | ((gold < median_score) & (mer > median_mer))
    return ContOppnSplit(
        median_score=median_score,
        median_mer=median_mer,
        eligible=score_range[0] <= median_score <= score_range[1],
        cont=np.flatnonzero(cont_mask),
        oppn=np.flatnonzero(~cont_mask),
    )


def cont_oppn_scores(
    data: STSData, cosines: np.ndarray, split: ContOppnSplit | None = None
) -> dict[str, Any]:
    """Spearman ×100 on the Cont and Oppn pairs of one dataset (null scores when it is not eligible)."""
    split = split or cont_oppn_split(data.sentences1, data.sentences2, data.scores)
    gold = np.asarray(data.scores, dtype=np.float64)
    out: dict[str, Any] = {
        "median_score": split.median_score,
        "median_mer": round(split.median_mer, 6),
        "eligible": split.eligible,
        "cont": {"pairs": int(split.cont.size), "spearman": None},
        "oppn": {"pairs": int(split.oppn.size), "spearman": None},
    }
    if split.eligible:
        for key, index in (("cont", split.cont), ("oppn", split.oppn)):
            if index.size >= 2:
                out[key]["spearman"] = spearman_x100(cosines[index], gold[index])
    return out


# --------------------------------------------------------------------------------------------------
# Negation probe
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NegationPairs:
    """Sentence / negation pairs (and optional paraphrases) with their provenance."""

    sentences: list[str]
    negations: list[str]
    paraphrases: list[str | None]
    source: str
    files: dict[str, int]

    def __len__(self) -> int:
        return len(self.sentences)

    def describe(self) -> dict[str, Any]:
        """JSON-ready provenance: folder, pairs taken from each file (in order), total."""
        return {
            "source": self.source,
            "order": "files sorted by name, rows in file order, first N pairs",
            "files": self.files,
            "pairs": len(self),
            "paraphrase_pairs": sum(p is not None for p in self.paraphrases),
        }


def read_negation_tsv(path: str | os.PathLike[str]) -> list[tuple[str, str, str | None]]:
    """Rows ``(sentence, negated, paraphrase|None)`` of a CANNOT-style TSV with a header.

    Read with ``csv.QUOTE_NONE`` (sentences contain bare double quotes). Columns by header name:
    ``sentence``, ``negated``, and optionally ``paraphrase``.

    Raises:
        ValueError: the header lacks ``sentence`` or ``negated``.
    """
    with open(path, encoding="utf-8", newline="") as handle:
        reader = csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
        header = next(reader, None)
        if header is None or "sentence" not in header or "negated" not in header:
            raise ValueError(f"{path}: header must name 'sentence' and 'negated' columns, got {header}")
        i_s, i_n = header.index("sentence"), header.index("negated")
        i_p = header.index("paraphrase") if "paraphrase" in header else None
        rows = []
        for row in reader:
            if len(row) <= max(i_s, i_n) or not row[i_s] or not row[i_n]:
                continue
            para = row[i_p] if i_p is not None and len(row) > i_p and row[i_p] else None
            rows.append((row[i_s], row[i_n], para))
    return rows


def load_negation_pairs(
    data_dir: str | os.PathLike[str] | None = None,
    limit: int | None = DEFAULT_NEGATION_PAIRS,
    folder: str | os.PathLike[str] | None = None,
) -> NegationPairs:
    """The CANNOT negation probe: ``*.tsv`` files of ``probes/cannot`` sorted by name, first ``limit`` pairs.

    Args:
        data_dir: data folder (default ``$ST_DEBIAS_DATA``).
        limit: number of pairs (None = all 15,241). The default 3,000 is the probe of docs/evaluation.md.
        folder: a folder of TSV files to use instead of ``<data_dir>/probes/cannot``.

    Raises:
        DataNotFoundError: the folder is missing or holds no ``.tsv`` file.
    """
    root = Path(folder) if folder is not None else data_file(CANNOT_DIR, data_dir)
    files = sorted(root.glob("*.tsv"))
    if not files:
        raise DataNotFoundError(
            f"No .tsv negation files in {root.resolve()}. Set {DATA_ENV} to a folder holding {CANNOT_DIR}/."
        )
    sentences: list[str] = []
    negations: list[str] = []
    paraphrases: list[str | None] = []
    taken: dict[str, int] = {}
    for path in files:
        if limit is not None and len(sentences) >= limit:
            break
        rows = read_negation_tsv(path)
        if limit is not None:
            rows = rows[: limit - len(sentences)]
        taken[path.name] = len(rows)
        for sentence, negation, paraphrase in rows:
            sentences.append(sentence)
            negations.append(negation)
            paraphrases.append(paraphrase)
    return NegationPairs(sentences, negations, paraphrases, str(root.resolve()), taken)


def negation_probe(cache: EmbeddingCache, pairs: NegationPairs, threshold: float = 0.8) -> dict[str, Any]:
    """Cosine of each sentence with its negation: mean, share above ``threshold``, histogram.

    Where paraphrases exist, ``negation_outranks_paraphrase`` is the share of those rows in which
    cos(sentence, negation) > cos(sentence, paraphrase); otherwise it is null.
    """
    if len(pairs) == 0:
        raise ValueError("negation_probe got no pairs")
    cos = cache.cosine(pairs.sentences, pairs.negations)
    counts, _ = np.histogram(np.clip(cos, -1.0, 1.0), bins=HISTOGRAM_EDGES)
    out: dict[str, Any] = {
        "pairs": len(pairs),
        "mean_cosine": float(cos.mean()),
        "threshold": threshold,
        "share_above": float((cos > threshold).mean()),
        "histogram": {"edges": HISTOGRAM_EDGES.tolist(), "counts": counts.tolist()},
        "paraphrase_pairs": 0,
        "negation_outranks_paraphrase": None,
    }
    with_para = [i for i, p in enumerate(pairs.paraphrases) if p is not None]
    if with_para:
        para_cos = cache.cosine(
            [pairs.sentences[i] for i in with_para], [pairs.paraphrases[i] for i in with_para]
        )
        out["paraphrase_pairs"] = len(with_para)
        out["negation_outranks_paraphrase"] = float((cos[with_para] > para_cos).mean())
    return out


# --------------------------------------------------------------------------------------------------
# Alignment and uniformity
# --------------------------------------------------------------------------------------------------


def alignment_uniformity(
    cache: EmbeddingCache, data: STSData, positive_threshold: float = 4.0, t: float = 2.0, alpha: float = 2.0
) -> dict[str, Any]:
    """Wang & Isola's alignment and uniformity on an STS set (STS-B test by convention).

    alignment = E ‖f(x) − f(x⁺)‖₂^α over pairs with gold score > ``positive_threshold``;
    uniformity = log E exp(−t ‖f(x) − f(y)‖²) over all distinct pairs of the set's unique sentences.
    Embeddings are L2-normalised. Lower is better for both.
    """
    gold = np.asarray(data.scores)
    positive = np.flatnonzero(gold > positive_threshold)
    if positive.size == 0:
        raise ValueError(f"{data.name}: no pair with score > {positive_threshold} for alignment")
    a = cache.embed([data.sentences1[i] for i in positive]).astype(np.float64)
    b = cache.embed([data.sentences2[i] for i in positive]).astype(np.float64)
    alignment = float((np.linalg.norm(a - b, axis=1) ** alpha).mean())
    unique = list(dict.fromkeys(data.sentences()))
    x = cache.embed(unique).astype(np.float64)
    squared = np.maximum(2.0 - 2.0 * (x @ x.T), 0.0)
    upper = squared[np.triu_indices(len(unique), k=1)]
    values = -t * upper
    uniformity = float(np.log(np.mean(np.exp(values - values.max()))) + values.max())
    return {
        "alignment": alignment,
        "uniformity": uniformity,
        "positive_pairs": int(positive.size),
        "sentences": len(unique),
        "dataset": data.name,
    }


# --------------------------------------------------------------------------------------------------
# Training-pair statistics
# --------------------------------------------------------------------------------------------------


#: Fields of a .jsonl training-pair file that are bookkeeping, not text columns.
PAIR_METADATA_FIELDS = frozenset(
    {"dataset", "split", "subset", "genre", "source", "id", "pair_id", "label", "year"}
)


def load_pair_rows(
    path: str | os.PathLike[str], limit: int | None = None, columns: Sequence[str] | None = None
) -> list[list[str]]:
    """Rows of a training-pair file: ``.jsonl``, ``.csv`` (quoted, header) or ``.tsv`` (header, ``QUOTE_NONE``).

    Column 0 is the anchor, 1 the positive, the rest negatives. ``columns`` names them explicitly (header or
    JSON field names); otherwise a ``.jsonl`` row uses its string fields in order minus
    :data:`PAIR_METADATA_FIELDS` (so ``{"dataset", "split", "sent0", "sent1", "hard_neg"}`` gives
    sent0/sent1/hard_neg) and a ``.csv``/``.tsv`` row uses every column.

    Raises:
        DataNotFoundError: the file does not exist.
        ValueError: unknown extension, or a named column is missing.
    """
    import json

    path = Path(path)
    if not path.is_file():
        raise DataNotFoundError(f"Training-pair file {path.resolve()} does not exist")
    rows: list[list[str]] = []
    with path.open(encoding="utf-8", newline="") as handle:
        if path.suffix == ".jsonl":
            for line_number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                record = json.loads(line)
                if columns is not None:
                    missing = [c for c in columns if c not in record]
                    if missing:
                        raise ValueError(f"{path}:{line_number}: no field(s) {missing}")
                    rows.append([record[c] for c in columns])
                else:
                    rows.append(
                        [v for k, v in record.items() if isinstance(v, str) and k not in PAIR_METADATA_FIELDS]
                    )
        elif path.suffix in (".csv", ".tsv"):
            if path.suffix == ".csv":
                reader = csv.reader(handle)
            else:
                reader = csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
            header = next(reader, None) or []
            index = list(range(len(header)))
            if columns is not None:
                missing = [c for c in columns if c not in header]
                if missing:
                    raise ValueError(f"{path}: header {header} has no column(s) {missing}")
                index = [header.index(c) for c in columns]
            rows = [[row[i] for i in index if i < len(row)] for row in reader if row]
        else:
            raise ValueError(f"{path}: training-pair files must be .jsonl, .csv or .tsv")
        if limit is not None:
            rows = rows[:limit]
    return rows


def _rows(dataset: Any) -> list[list[str]]:
    if hasattr(dataset, "column_names"):  # datasets.Dataset: columns in order
        columns = [dataset[name] for name in dataset.column_names]
        return [list(row) for row in zip(*columns, strict=True)]
    rows = []
    for row in dataset:
        rows.append(list(row.values()) if isinstance(row, dict) else list(row))
    return rows


def training_pair_statistics(
    dataset: Iterable[Any], guide: Any | None = None, batch_size: int = 64, show_progress_bar: bool = False
) -> dict[str, Any]:
    """Lexical overlap and guide cosine of a training set's (anchor, positive, negative…) rows.

    DebCSE Tables 1 and 4 report, for anchor–positive and anchor–negative pairs, the mean lexical
    overlap (shared words / longer length) and the mean cosine under a guide model. Column 0 is the
    anchor, column 1 the positive, further string columns are negatives. When a dataset has no negative
    column, the *in-batch* negative of row i is the positive of row i+1 (a fixed shift), which is what
    an in-batch contrastive loss sees.

    Args:
        dataset: a ``datasets.Dataset`` or an iterable of tuples/lists/dicts (column order = field order).
        guide: optional SentenceTransformer (or :class:`EmbeddingCache`) for the cosine statistics.
        batch_size: encode batch size for the guide.
        show_progress_bar: progress bar while the guide encodes.

    Raises:
        ValueError: fewer than two rows, or a row with fewer than two text columns.
    """
    rows = [[c for c in row if isinstance(c, str)] for row in _rows(dataset)]
    if len(rows) < 2 or any(len(r) < 2 for r in rows):
        raise ValueError(
            "training_pair_statistics needs ≥ 2 rows of (anchor, positive[, negatives…]) strings"
        )
    positive_pairs = [(r[0], r[1]) for r in rows]
    explicit = [(r[0], n) for r in rows for n in r[2:]]
    negative_pairs = explicit or [(rows[i][0], rows[(i + 1) % len(rows)][1]) for i in range(len(rows))]
    out: dict[str, Any] = {
        "rows": len(rows),
        "negative_kind": "explicit" if explicit else "in-batch (positive of the next row)",
        "negative_pairs": len(negative_pairs),
        "lexical_overlap": {
            "positive": float(np.mean([lexical_overlap(a, b) for a, b in positive_pairs])),
            "negative": float(np.mean([lexical_overlap(a, b) for a, b in negative_pairs])),
        },
        "guide_cosine": None,
    }
    if guide is not None:
        cache = (
            guide
            if isinstance(guide, EmbeddingCache)
            else EmbeddingCache(guide, batch_size, show_progress_bar)
        )
        cache.prefetch([s for pair in positive_pairs + negative_pairs for s in pair])
        out["guide_cosine"] = {
            "positive": float(cache.cosine(*zip(*positive_pairs, strict=True)).mean()),
            "negative": float(cache.cosine(*zip(*negative_pairs, strict=True)).mean()),
        }
    return out
