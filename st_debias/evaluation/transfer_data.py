"""SentEval's seven transfer tasks (MR, CR, SUBJ, MPQA, SST-2, TREC, MRPC), read from the data folder.

The files are SentEval's own (``$ST_DEBIAS_DATA/transfer/<task>/…``, byte for byte). Each reader checks
every line and raises a :class:`~st_debias.datafiles.DataFileError` naming file and line for anything it
cannot use. Text is fed to the encoder as SentEval feeds it: the line split on whitespace and joined by
one space. Blank lines (two in each CR file, three in MPQA) are skipped and counted; SentEval keeps them
as empty sentences.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from st_debias.datafiles import DataFileError, file_sha256, require_text, text_lines, tsv_records
from st_debias.paths import data_dir, data_file, portable_path

#: The seven tasks, in the order SentEval and SimCSE report them.
TRANSFER_TASKS: tuple[str, ...] = ("MR", "CR", "SUBJ", "MPQA", "SST2", "TREC", "MRPC")

#: SST-2 in the quick subset: trained (regularisation by cross-validation) on its 872-phrase dev split
#: instead of its 67,349 training phrases, scored on the same test split. Not SentEval's SST-2 figure.
SST2_QUICK = "SST2-quick"

#: How each task is scored (see :mod:`st_debias.evaluation.transfer`).
Protocol = Literal["cv", "split", "train_cv"]

#: The six coarse TREC question classes.
TREC_CLASSES: tuple[str, ...] = ("ABBR", "DESC", "ENTY", "HUM", "LOC", "NUM")

#: Files of the binary tasks: (positive file, negative file), relative to the data folder.
_BINARY_FILES: dict[str, tuple[str, str]] = {
    "MR": ("transfer/MR/rt-polarity.pos", "transfer/MR/rt-polarity.neg"),
    "CR": ("transfer/CR/custrev.pos", "transfer/CR/custrev.neg"),
    "SUBJ": ("transfer/SUBJ/subj.objective", "transfer/SUBJ/subj.subjective"),
    "MPQA": ("transfer/MPQA/mpqa.pos", "transfer/MPQA/mpqa.neg"),
}


@dataclass(frozen=True)
class Split:
    """One split of a task: inputs and integer labels.

    Attributes:
        texts: one sentence per example; for a pair task (MRPC) the first sentence of each pair.
        labels: integer class of each example.
        second: the second sentence of each pair (pair tasks only, else empty).
    """

    texts: list[str]
    labels: list[int]
    second: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if len(self.texts) != len(self.labels) or (self.second and len(self.second) != len(self.texts)):
            raise ValueError(
                f"{len(self.texts)} texts, {len(self.second)} second texts and {len(self.labels)} labels"
            )

    def __len__(self) -> int:
        return len(self.labels)

    def sentences(self) -> list[str]:
        """Every sentence the split needs embedded (both sides of a pair)."""
        return [*self.texts, *self.second]


@dataclass(frozen=True)
class TransferTask:
    """One transfer task: its splits, its protocol and the files they came from.

    Attributes:
        name: ``MR`` … ``MRPC``.
        protocol: ``cv`` (stratified 10-fold cross-validation over ``train``, the only split), ``split``
            (fit on ``train``, choose the regularisation on ``dev``, report ``test``) or ``train_cv``
            (choose the regularisation by cross-validation on ``train``, report ``test``).
        train: the training examples (all examples for ``cv``).
        dev: the selection split (``split`` protocol only).
        test: the test split (``split`` and ``train_cv``).
        classes: class names, indexed by label.
        pairs: whether examples are sentence pairs (features ``[u, v, |u−v|, u·v]``).
        files: ``{portable path: sha256}`` of every file read.
        skipped_blank: blank lines skipped, per file.
    """

    name: str
    protocol: Protocol
    train: Split
    classes: tuple[str, ...]
    dev: Split | None = None
    test: Split | None = None
    pairs: bool = False
    files: dict[str, str] = field(default_factory=dict)
    skipped_blank: dict[str, int] = field(default_factory=dict)

    def splits(self) -> dict[str, Split]:
        """The splits present, by name."""
        named = {"train": self.train, "dev": self.dev, "test": self.test}
        return {name: split for name, split in named.items() if split is not None}

    def describe(self) -> dict[str, object]:
        """JSON-ready provenance: protocol, sizes, files with checksums, blank lines skipped."""
        out: dict[str, object] = {
            "protocol": self.protocol,
            "sizes": {name: len(split) for name, split in self.splits().items()},
            "classes": list(self.classes),
            "files": self.files,
        }
        if any(self.skipped_blank.values()):
            out["skipped_blank_lines"] = {k: v for k, v in self.skipped_blank.items() if v}
        return out



def _joined(text: str) -> str:
    return " ".join(text.split())


def read_sentence_file(path: str | Path) -> tuple[list[str], int]:
    """The sentences of a one-sentence-a-line Latin-1 file (MR, CR, SUBJ, MPQA) and its blank-line count.

    Raises:
        DataFileError: the file holds no sentence.
    """
    sentences: list[str] = []
    blank = 0
    for _, line in text_lines(path, encoding="latin-1"):
        if line.strip():
            sentences.append(_joined(line))
        else:
            blank += 1
    if not sentences:
        raise DataFileError(path, None, "holds no sentence; expected one sentence a line.")
    return sentences, blank


def read_sst_file(path: str | Path) -> Split:
    """An SST-2 file: ``sentence<TAB>label`` lines with label 0 or 1 (UTF-8).

    Raises:
        DataFileError: a line without exactly one tab, an empty sentence, a label other than 0 or 1, or
            no line at all. The message names file and line.
    """
    texts: list[str] = []
    labels: list[int] = []
    for line_number, line in text_lines(path):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != 2:
            raise DataFileError(
                path, line_number, f"has {len(fields)} tab-separated fields; expected 'sentence<TAB>label'."
            )
        texts.append(_joined(require_text(fields[0], path, line_number, "sentence")))
        labels.append(_label(fields[1], ("0", "1"), path, line_number, "label"))
    if not texts:
        raise DataFileError(path, None, "holds no example; expected 'sentence<TAB>label' lines.")
    return Split(texts, labels)


def read_trec_file(path: str | Path) -> Split:
    """A TREC file: ``COARSE:fine question`` lines (Latin-1), labelled by the coarse class.

    Raises:
        DataFileError: a line without ``COARSE:fine`` and a question, or an unknown coarse class.
    """
    texts: list[str] = []
    labels: list[int] = []
    for line_number, line in text_lines(path, encoding="latin-1"):
        if not line.strip():
            continue
        head, _, question = line.strip().partition(" ")
        coarse, colon, fine = head.partition(":")
        if not colon or not fine or not question.strip():
            raise DataFileError(
                path, line_number, f"expected 'COARSE:fine question', got {line.strip()!r:.60}."
            )
        labels.append(_label(coarse, TREC_CLASSES, path, line_number, "class"))
        texts.append(_joined(question))
    if not texts:
        raise DataFileError(path, None, "holds no question; expected 'COARSE:fine question' lines.")
    return Split(texts, labels)


def read_mrpc_file(path: str | Path) -> Split:
    """An MRPC file: a headed TSV (UTF-8 with BOM) of ``Quality``, two ids and two strings.

    Raises:
        DataFileError: a missing column, a row with another field count, an empty string, a quality
            other than 0 or 1, or no row at all.
    """
    first: list[str] = []
    second: list[str] = []
    labels: list[int] = []
    columns = ("Quality", "#1 String", "#2 String")
    for line_number, row in tsv_records(path, columns, encoding="utf-8-sig"):
        labels.append(_label(row["Quality"], ("0", "1"), path, line_number, "Quality"))
        first.append(_joined(row["#1 String"]))
        second.append(_joined(row["#2 String"]))
    if not labels:
        raise DataFileError(path, None, "holds no sentence pair after its header.")
    return Split(first, labels, second)


def _label(value: str, allowed: tuple[str, ...], path: str | Path, line_number: int, name: str) -> int:
    value = value.strip()
    if value not in allowed:
        raise DataFileError(path, line_number, f"must be one of {list(allowed)}, got {value!r:.30}.", name)
    return allowed.index(value)


def load_transfer_task(name: str, root: str | Path | None = None) -> TransferTask:
    """Read one task from the data folder (``root``, default ``$ST_DEBIAS_DATA``), checking every line.

    ``SST2-quick`` (:data:`SST2_QUICK`) reads only SST-2's dev and test files.

    Raises:
        ValueError: ``name`` is not one of :data:`TRANSFER_TASKS`.
        DataNotFoundError: a file is missing (the message names it).
        DataFileError: a line cannot be used (the message names file and line).
    """
    if name not in (*TRANSFER_TASKS, SST2_QUICK):
        raise ValueError(f"Unknown transfer task {name!r}; choose from {list(TRANSFER_TASKS)}")
    folder = data_dir(root)
    files: dict[str, str] = {}

    def path_of(relative: str) -> Path:
        path = data_file(relative, folder)
        files[portable_path(path)] = file_sha256(path)
        return path

    if name in _BINARY_FILES:
        texts: list[str] = []
        labels: list[int] = []
        skipped: dict[str, int] = {}
        # SentEval's labels: 1 for the first file (positive; objective for SUBJ), 0 for the second.
        for label, relative in zip((1, 0), _BINARY_FILES[name], strict=True):
            path = path_of(relative)
            sentences, skipped[portable_path(path)] = read_sentence_file(path)
            texts += sentences
            labels += [label] * len(sentences)
        classes = ("subjective", "objective") if name == "SUBJ" else ("negative", "positive")
        return TransferTask(name, "cv", Split(texts, labels), classes, files=files, skipped_blank=skipped)
    if name == SST2_QUICK:
        dev, test = (read_sst_file(path_of(f"transfer/SST2/sentiment-{s}")) for s in ("dev", "test"))
        return TransferTask(name, "train_cv", dev, ("negative", "positive"), test=test, files=files)
    if name == "SST2":
        train, dev, test = (read_sst_file(path_of(f"transfer/SST2/sentiment-{s}")) for s in ("train", "dev", "test"))
        return TransferTask(name, "split", train, ("negative", "positive"), dev=dev, test=test, files=files)
    if name == "TREC":
        train = read_trec_file(path_of("transfer/TREC/train_5500.label"))
        test = read_trec_file(path_of("transfer/TREC/TREC_10.label"))
        return TransferTask(name, "train_cv", train, TREC_CLASSES, test=test, files=files)
    train = read_mrpc_file(path_of("transfer/MRPC/msr_paraphrase_train.txt"))
    test = read_mrpc_file(path_of("transfer/MRPC/msr_paraphrase_test.txt"))
    return TransferTask(
        name, "train_cv", train, ("not paraphrase", "paraphrase"), test=test, pairs=True, files=files
    )
