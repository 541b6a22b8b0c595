"""STS evaluation data: the seven SentEval/SimCSE test sets and STS-B dev, from a local folder or the hub.

Local files (``$ST_DEBIAS_DATA/sts/*.jsonl``, layout of the project's shared data folder) are the
first choice: they hold SentEval's pre-processed text in ``sentence1``/``sentence2`` (what SimCSE
feeds the encoder) and the official text in ``sentence1_raw``/``sentence2_raw``. When no data folder
is configured at all and the process is online, the loader falls back to the Hugging Face Hub copies
that MTEB and sentence-transformers use. Those are *not* the same data: the hub text is the raw
release text and the hub SICK-R has 9,927 pairs (train + trial + test) where SentEval's has 4,927.
Every :class:`STSData` records where it came from, so a score can always be traced to its data.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from st_debias.datafiles import (
    DataFileError,
    file_sha256,
    parse_json_line,
    require_score,
    require_text,
    text_lines,
)
from st_debias.paths import DATA_ENV, DataNotFoundError, data_file, offline, portable_path

#: The STS-7 tasks in the order SimCSE reports them; names follow MTEB.
STS_TASKS: tuple[str, ...] = ("STS12", "STS13", "STS14", "STS15", "STS16", "STSBenchmark", "SICK-R")

#: Local file (relative to the data folder) of each task.
LOCAL_FILES: dict[str, str] = {
    "STS12": "sts/sts12.jsonl",
    "STS13": "sts/sts13.jsonl",
    "STS14": "sts/sts14.jsonl",
    "STS15": "sts/sts15.jsonl",
    "STS16": "sts/sts16.jsonl",
    "STSBenchmark": "sts/stsb_test.jsonl",
    "SICK-R": "sts/sick_test.jsonl",
    "STSBenchmark-dev": "sts/stsb_dev.jsonl",
    "STSBenchmark-train": "sts/stsb_train.jsonl",
}

#: Hub fallback (dataset id, split) of each task: the datasets MTEB / sentence-transformers load.
HUB_SOURCES: dict[str, tuple[str, str]] = {
    "STS12": ("mteb/sts12-sts", "test"),
    "STS13": ("mteb/sts13-sts", "test"),
    "STS14": ("mteb/sts14-sts", "test"),
    "STS15": ("mteb/sts15-sts", "test"),
    "STS16": ("mteb/sts16-sts", "test"),
    "STSBenchmark": ("mteb/stsbenchmark-sts", "test"),
    "SICK-R": ("mteb/sickr-sts", "test"),
    "STSBenchmark-dev": ("mteb/stsbenchmark-sts", "validation"),
    "STSBenchmark-train": ("mteb/stsbenchmark-sts", "train"),
}

TextField = Literal["processed", "raw"]

#: Gold score scale of each dataset family: SICK is rated 1–5, the SemEval STS sets and STS-B 0–5.
STS_SCORE_RANGE: tuple[float, float] = (0.0, 5.0)
SICK_SCORE_RANGE: tuple[float, float] = (1.0, 5.0)


def score_range(name: str) -> tuple[float, float]:
    """The gold score scale of a task or file name (``SICK-R``, ``sick_test`` → 1–5; others 0–5)."""
    return SICK_SCORE_RANGE if "sick" in name.lower() else STS_SCORE_RANGE


@dataclass(frozen=True)
class STSData:
    """One STS dataset: sentence pairs with gold scores, and where they came from.

    Attributes:
        name: task name (``STS12`` … ``SICK-R``, ``STSBenchmark-dev``).
        sentences1: first sentence of each pair, as fed to the encoder.
        sentences2: second sentence of each pair.
        scores: gold scores on the original scale (0–5; SICK 1–5).
        source: local file path or ``hub:<dataset id>:<split>``.
        text_field: ``processed`` (SentEval text, ``sentence1``) or ``raw`` (``sentence1_raw``).
        sha256: checksum of the local file (None for hub data).
        subsets: per-pair subset where the file has it (STS12–16's SemEval sources, STS-B's genres), else empty.
    """

    name: str
    sentences1: list[str]
    sentences2: list[str]
    scores: list[float]
    source: str
    text_field: str = "processed"
    sha256: str | None = None
    subsets: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not (len(self.sentences1) == len(self.sentences2) == len(self.scores)):
            raise ValueError(
                f"{self.name}: {len(self.sentences1)} first sentences, {len(self.sentences2)} second "
                f"sentences and {len(self.scores)} scores; they must be equal"
            )
        if not self.scores:
            raise ValueError(f"{self.name}: no sentence pairs in {self.source}")

    def __len__(self) -> int:
        return len(self.scores)

    def sentences(self) -> list[str]:
        """Both columns, in pair order (duplicates kept)."""
        return [*self.sentences1, *self.sentences2]

    def describe(self) -> dict[str, object]:
        """JSON-ready provenance: source, pair count, text field and checksum."""
        out: dict[str, object] = {"source": portable_path(self.source), "pairs": len(self), "text_field": self.text_field}
        if self.sha256:
            out["sha256"] = self.sha256
        if self.name == "SICK-R":
            kinds = {
                4927: "SentEval SICK-R test (4,927 pairs)",
                9927: "MTEB hub SICK-R (9,927 pairs: train+trial+test)",
            }
            out["note"] = kinds.get(len(self), f"SICK-R variant with {len(self)} pairs")
        return out



def load_sts_file(
    path: str | os.PathLike[str],
    name: str | None = None,
    text: TextField = "processed",
    scores_range: tuple[float, float] | None = None,
) -> STSData:
    """Read one ``sts/*.jsonl`` file of the shared data layout, validating every record.

    Args:
        path: the JSONL file.
        name: task name to record (default: the file stem).
        text: ``processed`` uses ``sentence1``/``sentence2`` (SentEval's text, the protocol of docs/evaluation.md);
            ``raw`` uses ``sentence1_raw``/``sentence2_raw`` (original release text).
        scores_range: admissible gold scores (default :func:`score_range` of the name: SICK 1–5, else 0–5).

    Raises:
        DataNotFoundError: the file does not exist.
        DataFileError: (a ``ValueError``) a line that is not UTF-8 or not a JSON object, a missing field, a
            sentence that is not a non-empty string, a score that is not a finite number in range. The
            message starts with ``file:line`` and names the field.
        ValueError: ``text`` is unknown.
    """
    if text not in ("processed", "raw"):
        raise ValueError(f"text must be 'processed' or 'raw', got {text!r}")
    path = Path(path)
    if not path.is_file():
        raise DataNotFoundError(f"Missing STS file {path.resolve()}. Set {DATA_ENV} or pass data_dir=...")
    name = name or path.stem
    low_high = scores_range or score_range(name)
    suffix = "" if text == "processed" else "_raw"
    fields = ("sentence1" + suffix, "sentence2" + suffix)
    s1: list[str] = []
    s2: list[str] = []
    scores: list[float] = []
    subsets: list[str] = []
    for line_number, line in text_lines(path):
        if not line.strip():
            continue
        record = parse_json_line(path, line_number, line)
        for field_name in (*fields, "score"):
            if field_name not in record:
                raise DataFileError(path, line_number, f"record has no field {field_name!r}")
        s1.append(require_text(record[fields[0]], path, line_number, fields[0]))
        s2.append(require_text(record[fields[1]], path, line_number, fields[1]))
        scores.append(require_score(record["score"], path, line_number, "score", low_high))
        subsets.append(str(record.get("subset", "")))
    return STSData(
        name=name,
        sentences1=s1,
        sentences2=s2,
        scores=scores,
        source=str(path.resolve()),
        text_field=text,
        sha256=file_sha256(path),
        subsets=subsets if any(subsets) else [],
    )


def _load_from_hub(name: str) -> STSData:
    from datasets import load_dataset

    dataset_id, split = HUB_SOURCES[name]
    dataset = load_dataset(dataset_id, split=split)
    source = f"hub:{dataset_id}:{split}"
    rows = zip(dataset["sentence1"], dataset["sentence2"], dataset["score"], strict=True)
    s1: list[str] = []
    s2: list[str] = []
    scores: list[float] = []
    for row, (first, second, score) in enumerate(rows, start=1):
        s1.append(require_text(first, source, row, "sentence1"))
        s2.append(require_text(second, source, row, "sentence2"))
        scores.append(require_score(score, source, row, "score", score_range(name)))
    return STSData(name=name, sentences1=s1, sentences2=s2, scores=scores, source=source, text_field="raw")


def load_sts(
    name: str, data_dir: str | os.PathLike[str] | None = None, text: TextField = "processed"
) -> STSData:
    """Load one STS task by name from the local data folder, else (online, no folder configured) the hub.

    Args:
        name: one of :data:`STS_TASKS`, or ``STSBenchmark-dev`` / ``STSBenchmark-train``.
        data_dir: data folder; default ``$ST_DEBIAS_DATA``.
        text: which text field of the local files to use (see :func:`load_sts_file`).

    Raises:
        ValueError: unknown task name.
        DataNotFoundError: the local file is missing (the message names the path looked at) and the hub
            fallback is not allowed (a data folder was configured, or offline mode is on) or failed.
    """
    if name not in LOCAL_FILES:
        raise ValueError(f"Unknown STS task {name!r}; choose from {sorted(LOCAL_FILES)}")
    relative = LOCAL_FILES[name]
    try:
        path = data_file(relative, data_dir)
    except DataNotFoundError as error:
        configured = data_dir is not None or bool(os.environ.get(DATA_ENV))
        dataset_id, split = HUB_SOURCES[name]
        if configured or offline():
            why = (
                "a data folder was configured"
                if configured
                else "offline mode is on (HF_HUB_OFFLINE/ST_DEBIAS_OFFLINE)"
            )
            raise DataNotFoundError(
                f"{error} Hub fallback {dataset_id}:{split} not tried because {why}."
            ) from error
        try:
            return _load_from_hub(name)
        except DataFileError:  # the hub data was found but is bad: say so, not "not found"
            raise
        except Exception as hub_error:  # any hub failure means "data not found"
            raise DataNotFoundError(
                f"{error} The hub fallback {dataset_id}:{split} also failed: {hub_error}"
            ) from hub_error
    return load_sts_file(path, name=name, text=text)


def evaluation_sentences(data_dir: str | os.PathLike[str] | None = None) -> set[str]:
    """Every sentence of every ``sts/*.jsonl`` file (STS12–16, STS-B and SICK, all splits), as
    :func:`~st_debias.data.text.word_key` keys: what training data must not contain.

    Raises:
        DataNotFoundError: the folder has no ``sts/*.jsonl`` file.
    """
    from st_debias.data.text import word_key

    folder = data_file("sts", data_dir)
    files = sorted(Path(folder).glob("*.jsonl"))
    if not files:
        raise DataNotFoundError(f"No STS file in {Path(folder).resolve()}; set {DATA_ENV} or pass data_dir=...")
    keys: set[str] = set()
    for path in files:
        data = load_sts_file(path, scores_range=(float("-inf"), float("inf")))
        keys.update(word_key(s) for s in data.sentences())
    return keys
