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

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from st_debias.paths import DATA_ENV, DataNotFoundError, data_file, offline

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
        subsets: per-pair SemEval subset where the file has it (STS12–16), else empty.
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
        out: dict[str, object] = {"source": self.source, "pairs": len(self), "text_field": self.text_field}
        if self.sha256:
            out["sha256"] = self.sha256
        if self.name == "SICK-R":
            kinds = {
                4927: "SentEval SICK-R test (4,927 pairs)",
                9927: "MTEB hub SICK-R (9,927 pairs: train+trial+test)",
            }
            out["note"] = kinds.get(len(self), f"SICK-R variant with {len(self)} pairs")
        return out


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def load_sts_file(
    path: str | os.PathLike[str], name: str | None = None, text: TextField = "processed"
) -> STSData:
    """Read one ``sts/*.jsonl`` file of the shared data layout.

    Args:
        path: the JSONL file.
        name: task name to record (default: the file stem).
        text: ``processed`` uses ``sentence1``/``sentence2`` (SentEval's text, the protocol of docs/evaluation.md);
            ``raw`` uses ``sentence1_raw``/``sentence2_raw`` (original release text).

    Raises:
        DataNotFoundError: the file does not exist.
        ValueError: a record lacks a needed field, or ``text`` is unknown.
    """
    if text not in ("processed", "raw"):
        raise ValueError(f"text must be 'processed' or 'raw', got {text!r}")
    path = Path(path)
    if not path.is_file():
        raise DataNotFoundError(f"Missing STS file {path.resolve()}. Set {DATA_ENV} or pass data_dir=...")
    suffix = "" if text == "processed" else "_raw"
    s1: list[str] = []
    s2: list[str] = []
    scores: list[float] = []
    subsets: list[str] = []
    with path.open(encoding="utf-8") as handle:
        for line_number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            record = json.loads(line)
            try:
                s1.append(record["sentence1" + suffix])
                s2.append(record["sentence2" + suffix])
                scores.append(float(record["score"]))
            except KeyError as error:
                raise ValueError(f"{path}:{line_number}: record has no field {error.args[0]!r}") from error
            subsets.append(str(record.get("subset", "")))
    return STSData(
        name=name or path.stem,
        sentences1=s1,
        sentences2=s2,
        scores=scores,
        source=str(path.resolve()),
        text_field=text,
        sha256=_sha256(path),
        subsets=subsets if any(subsets) else [],
    )


def _load_from_hub(name: str) -> STSData:
    from datasets import load_dataset

    dataset_id, split = HUB_SOURCES[name]
    dataset = load_dataset(dataset_id, split=split)
    return STSData(
        name=name,
        sentences1=list(dataset["sentence1"]),
        sentences2=list(dataset["sentence2"]),
        scores=[float(s) for s in dataset["score"]],
        source=f"hub:{dataset_id}:{split}",
        text_field="raw",
    )


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
        except Exception as hub_error:  # any hub failure means "data not found"
            raise DataNotFoundError(
                f"{error} The hub fallback {dataset_id}:{split} also failed: {hub_error}"
            ) from hub_error
    return load_sts_file(path, name=name, text=text)
