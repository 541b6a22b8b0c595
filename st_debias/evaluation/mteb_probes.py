"""The bias probes as MTEB tasks, so ``mteb.evaluate``, MTEB's result cache and its tooling see them.

Each task is a :class:`mteb.TaskMetadata` and a ``load_data`` over the project's data (the mteb pattern for
local files), built by :func:`probe_task`:

* ``<set>-Cont`` / ``<set>-Oppn`` for STS13–16 and STSBenchmark (``AbsTaskSTS``): the OssCSE split of
  the set's test pairs (:func:`~st_debias.evaluation.bias.cont_oppn_split`), scored by MTEB's STS code
  (main score ``cosine_spearman``). STS12 and SICK-R have no such task: their median gold score (3.8,
  3.6) lies outside OssCSE's window [2, 3.5]. The pairs come from ``sts/*.jsonl`` of the data folder, or
  the hub copy MTEB uses (``data="hub"``; raw text, so slightly different splits).
* ``CANNOTNegationPC`` and ``WikiWordOrderPC`` (``AbsTaskPairClassification``, main score ``cosine_ap``):
  label 0 = a sentence and its negation (CANNOT, files sorted by name, first 3,000 pairs) or a sentence
  and its words shuffled (last 1,000 lines of the Wikipedia corpus, seeded shuffle); label 1 = the
  STS-B test pairs with gold score > 4 (human-judged near-paraphrases, as for alignment). Average
  precision 1.0 means every paraphrase is closer than every negation (shuffle); a model that ignores
  negation (word order) scores low. A random ranking scores the share of label-1 pairs (``chance_ap`` of
  the task's ``st_debias_source``; 231 of 3,231 pairs = 7.1 % for CANNOTNegationPC on the default data).
  These read the local data folder only.
* ``WikiNegationMeaningPC`` (``AbsTaskPairClassification``, main score ``cosine_ap``): the negation-meaning
  items (:func:`~st_debias.evaluation.bias_data.load_negation_meaning_items`, Wikipedia lines
  150,001–180,000). Label 1 = "X is not A" and its paraphrase "X is B" (B the antonym of A); label 0 = "X is
  not A" beside "X is A" and beside "X is not B". Average precision 1.0 when every paraphrase is closer
  than every wrong reading; chance level 1/3. A model that reads *not* as a feature ranks "X is not B" high.

The dataset revision of every task is a sha256 of the rows it evaluates, so a result cache never mixes
results of different data.
"""

from __future__ import annotations

import hashlib
import os
import re
from typing import Any

from st_debias.evaluation.bias import cont_oppn_split, shuffle_word_order
from st_debias.evaluation.bias_data import (
    CANNOT_DIR,
    DEFAULT_NEGATION_PAIRS,
    DEFAULT_WORD_ORDER_LINES,
    load_negation_meaning_items,
    load_negation_pairs,
    load_word_order_sentences,
)
from st_debias.evaluation.sts_data import STSData, load_sts

#: STS sets with an OssCSE Cont/Oppn task (median gold score in [2, 3.5] on the SentEval test data).
CONT_OPPN_SETS: tuple[str, ...] = ("STS13", "STS14", "STS15", "STS16", "STSBenchmark")

#: Gold score above which an STS-B test pair counts as a paraphrase (label 1) in the pair tasks.
PARAPHRASE_THRESHOLD = 4.0

PAIR_TASKS: tuple[str, ...] = ("CANNOTNegationPC", "WikiWordOrderPC", "WikiNegationMeaningPC")

#: Every probe task name, in report order.
PROBE_TASKS: tuple[str, ...] = (
    *(f"{name}-{part}" for name in CONT_OPPN_SETS for part in ("Cont", "Oppn")),
    *PAIR_TASKS,
)

OSSCSE_REFERENCE = "https://aclanthology.org/2023.emnlp-main.448"
OSSCSE_BIBTEX = r"""
@inproceedings{shi-etal-2023-osscse,
  author = {Shi, Zhan and Wang, Guoyin and Bai, Ke and Li, Jiwei and Li, Xiang and Cui, Qingjun and Zeng, Belinda and Chilimbi, Trishul and Zhu, Xiaodan},
  booktitle = {Proceedings of the 2023 Conference on Empirical Methods in Natural Language Processing},
  pages = {7242--7254},
  title = {{OssCSE}: Overcoming Surface Structure Bias in Contrastive Learning for Unsupervised Sentence Embedding},
  url = {https://aclanthology.org/2023.emnlp-main.448},
  year = {2023},
}
"""
CANNOT_REFERENCE = "https://github.com/dmlls/cannot-dataset"


def _revision(*columns: list[Any]) -> str:
    """sha256 of the evaluated rows: the dataset revision MTEB's cache keys on."""
    digest = hashlib.sha256()
    for column in columns:
        digest.update("\x1e".join(map(str, column)).encode("utf-8"))
        digest.update(b"\x1d")
    return digest.hexdigest()


def _task_class(name: str, base: type, metadata: Any, rows: dict[str, list[Any]], **attributes: Any) -> type:
    """An MTEB task class whose ``load_data`` serves ``rows`` as the test split."""
    from datasets import Dataset, DatasetDict

    def load_data(self, num_proc: int | None = None, **kwargs: Any) -> None:
        if self.data_loaded:
            return
        self.dataset = DatasetDict({"test": Dataset.from_dict(rows)})
        self.data_loaded = True

    return type(
        re.sub(r"[^0-9A-Za-z]", "", name),
        (base,),
        {"metadata": metadata, "load_data": load_data, "evaluate": named_only(base, name),
         "__doc__": metadata.description, **attributes},
    )


def named_only(base: type, task: str) -> Any:
    """``base.evaluate`` behind :func:`require_model_name`: the ``evaluate`` of a task served from local files."""

    def evaluate(self: Any, model: Any, *args: Any, **kwargs: Any) -> Any:
        require_model_name(model, task)
        return base.evaluate(self, model, *args, **kwargs)

    return evaluate


def require_model_name(model: Any, task: str) -> None:
    """Refuse to score a task served from local files for a model without an MTEB name.

    ``mteb.evaluate`` files a model without a name (a plain ``SentenceTransformer`` loaded from a folder) under
    ``no_model_name_available/no_revision_available`` in its ``ResultCache`` (used by default), and hands those
    scores to the next unnamed model without a word. Refusing here, before anything is scored, means no such
    entry is ever written for a probe task or a local STS task. A named model is trusted: a hub model fine-tuned
    in memory keeps its hub name and revision, so only :func:`~st_debias.evaluation.mteb_tasks.mteb_model`
    (named by the weights' hash) is safe for weights that changed.

    Raises:
        ValueError: naming the task and the fix, :func:`~st_debias.evaluation.mteb_tasks.mteb_model`.
    """
    meta = getattr(model, "mteb_model_meta", None)
    name, revision = getattr(meta, "name", None), getattr(meta, "revision", None)
    if name in _UNNAMED or revision in _UNNAMED:
        raise ValueError(
            f"{task}: the model has no MTEB name and revision ({name}, {revision}), so MTEB's result cache would "
            "file its scores under that placeholder and give them to the next such model. Pass "
            "st_debias.evaluation.mteb_model(model) to mteb.evaluate: it names the model by the hash of its weights."
        )


#: The name and revision MTEB gives a model it cannot name (``ModelMeta.create_empty``).
_UNNAMED = (None, "no_model_name/available", "no_revision_available")


def _load_sts_set(name: str, data: str, data_dir: str | os.PathLike[str] | None) -> STSData:
    if data == "hub":
        from st_debias.evaluation.sts_data import _load_from_hub

        return _load_from_hub(name)
    return load_sts(name, data_dir)


def cont_oppn_task(name: str, part: str, data: str = "local", data_dir: str | os.PathLike[str] | None = None):
    """The ``<name>-<part>`` STS task: the Cont or Oppn pairs of an STS set, MTEB metadata kept.

    Args:
        name: one of :data:`CONT_OPPN_SETS`.
        part: ``Cont`` or ``Oppn``.
        data: ``local`` (``sts/*.jsonl`` of the data folder) or ``hub`` (MTEB's hub copy, raw text).
        data_dir: data folder (default ``$ST_DEBIAS_DATA``).

    Raises:
        ValueError: unknown set or part.
        DataNotFoundError: the data is missing (the message names the path).
    """
    import mteb
    from mteb.abstasks.sts import AbsTaskSTS

    if name not in CONT_OPPN_SETS or part not in ("Cont", "Oppn"):
        raise ValueError(
            f"No Cont/Oppn task {name}-{part}: sets {list(CONT_OPPN_SETS)} (median gold score in OssCSE's "
            "[2, 3.5]), parts Cont and Oppn"
        )
    sts = _load_sts_set(name, data, data_dir)
    split = cont_oppn_split(sts.sentences1, sts.sentences2, sts.scores)
    index = split.cont if part == "Cont" else split.oppn
    rows = {
        "sentence1": [sts.sentences1[i] for i in index],
        "sentence2": [sts.sentences2[i] for i in index],
        "score": [sts.scores[i] for i in index],
    }
    upstream = mteb.get_task(name)
    meaning = (
        "word overlap agrees with the gold score"
        if part == "Cont"
        else "word overlap disagrees with the gold score (a model that trusts shared words fails here)"
    )
    metadata = upstream.metadata.model_copy(
        update={
            "name": f"{name}-{part}",
            "dataset": {"path": sts.source, "revision": _revision(*rows.values())},
            "description": (
                f"OssCSE {part} split of {name}: the {len(index)} of {len(sts)} pairs whose {meaning}. Rule: "
                f"Cont when (score > median {split.median_score:g} and MER < median {split.median_mer:.4f}) or "
                f"(score < median and MER > median), otherwise Oppn. Source: {sts.source}."
            ),
            "reference": OSSCSE_REFERENCE,
            "bibtex_citation": (upstream.metadata.bibtex_citation or "") + OSSCSE_BIBTEX,
            "adapted_from": [name],
            "superseded_by": None,
        }
    )
    cls = _task_class(
        f"{name}{part}",
        AbsTaskSTS,
        metadata,
        rows,
        min_score=upstream.min_score,
        max_score=upstream.max_score,
    )
    task = cls()
    task.st_debias_source = {
        **sts.describe(),
        "pairs": len(index),
        "split": part,
        "of_pairs": len(sts),
        "median_score": split.median_score,
        "eligible": split.eligible,
    }
    return task


def _paraphrase_pairs(data_dir: str | os.PathLike[str] | None) -> tuple[list[str], list[str], str]:
    stsb = load_sts("STSBenchmark", data_dir)
    keep = [i for i, score in enumerate(stsb.scores) if score > PARAPHRASE_THRESHOLD]
    return [stsb.sentences1[i] for i in keep], [stsb.sentences2[i] for i in keep], stsb.source


def pair_task(
    name: str,
    data_dir: str | os.PathLike[str] | None = None,
    negation_pairs: int | None = DEFAULT_NEGATION_PAIRS,
    word_order_lines: int = DEFAULT_WORD_ORDER_LINES,
):
    """``CANNOTNegationPC`` or ``WikiWordOrderPC``: probe pairs (label 0) against STS-B paraphrases (label 1).

    Raises:
        ValueError: unknown task.
        DataNotFoundError: a probe file or STS-B test is missing (the message names the path).
    """
    from mteb.abstasks.pair_classification import AbsTaskPairClassification

    if name not in PAIR_TASKS:
        raise ValueError(f"Unknown probe pair task {name!r}; choose from {list(PAIR_TASKS)}")
    if name == "WikiNegationMeaningPC":
        return _negation_meaning_task(data_dir)
    para1, para2, para_source = _paraphrase_pairs(data_dir)
    if name == "CANNOTNegationPC":
        negations = load_negation_pairs(data_dir, limit=negation_pairs)
        first, second, source = negations.sentences, negations.negations, negations.describe()
        what = f"a sentence and its human-written negation ({len(first)} CANNOT pairs, {CANNOT_DIR})"
        extra = {
            "license": "cc-by-sa-4.0",
            "reference": CANNOT_REFERENCE,
            "domains": ["Encyclopaedic", "Written"],
            "sample_creation": "found",
            "annotations_creators": "human-annotated",
            "bibtex_citation": OSSCSE_BIBTEX,
        }
    else:
        corpus = load_word_order_sentences(data_dir, count=word_order_lines)
        shuffled = shuffle_word_order(corpus.sentences)
        first, second = shuffled.sentences, shuffled.shuffled
        source = {**corpus.describe(), **shuffled.describe()}
        what = (
            f"a sentence and its words in a seeded random order ({len(first)} sentences, lines "
            f"{corpus.first_line}–{corpus.last_line} of {corpus.source})"
        )
        extra = {
            "license": "cc-by-sa-3.0",
            "reference": OSSCSE_REFERENCE,
            "domains": ["Encyclopaedic", "Written"],
            "sample_creation": "created",
            "annotations_creators": "derived",
            "bibtex_citation": OSSCSE_BIBTEX,
        }
    rows = {
        "sentence1": [*first, *para1],
        "sentence2": [*second, *para2],
        "labels": [0] * len(first) + [1] * len(para1),
    }
    metadata = _pair_metadata(
        name,
        source.get("source", "local"),
        rows,
        f"Label 0: {what}. Label 1: the {len(para1)} STS-B test pairs with gold score > "
        f"{PARAPHRASE_THRESHOLD:g} ({para_source}). Average precision of cosine similarity: 1.0 when every "
        f"paraphrase is closer than every probe pair; chance level (a random ranking) "
        f"{len(para1) / len(rows['labels']):.4f}, the share of label-1 pairs.",
        **extra,
    )
    task = _task_class(name, AbsTaskPairClassification, metadata, rows)()
    task.st_debias_source = {
        **source,
        "pairs": len(rows["labels"]),
        "paraphrase_pairs": len(para1),
        "chance_ap": len(para1) / len(rows["labels"]),
    }
    return task


def _pair_metadata(name: str, path: str, rows: dict[str, list[Any]], description: str, **extra: Any):
    """MTEB metadata of a local pair-classification probe (cosine average precision on its test rows)."""
    from mteb import TaskMetadata

    return TaskMetadata(
        name=name,
        dataset={"path": path, "revision": _revision(*rows.values())},
        description=description,
        type="PairClassification",
        category="t2t",
        modalities=["text"],
        eval_splits=["test"],
        eval_langs=["eng-Latn"],
        main_score="cosine_ap",
        date=("2015-01-01", "2023-12-31"),
        task_subtypes=[],
        dialect=[],
        **extra,
    )


def _negation_meaning_task(data_dir: str | os.PathLike[str] | None):
    """``WikiNegationMeaningPC``: "not A" beside its paraphrase "B" (label 1), "A" and "not B" (label 0)."""
    from mteb.abstasks.pair_classification import AbsTaskPairClassification

    items = load_negation_meaning_items(data_dir)
    count = len(items)
    rows = {
        "sentence1": items.negated * 3,
        "sentence2": [*items.antonym, *items.affirmative, *items.negated_antonym],
        "labels": [1] * count + [0] * (2 * count),
    }
    source = items.describe()
    metadata = _pair_metadata(
        "WikiNegationMeaningPC",
        source["source"],
        rows,
        f"{count} Wikipedia sentences 'X is A' (lines {source['lines'][0]}–{source['lines'][1]}) with a "
        "gradable adjective A and its antonym B. Label 1: 'X is not A' and its paraphrase 'X is B'. Label 0: "
        "'X is not A' and 'X is A', and 'X is not A' and 'X is not B'. Average precision of cosine "
        "similarity: 1.0 when every paraphrase is closer than every wrong reading; chance level 1/3.",
        license="cc-by-sa-3.0",
        reference=OSSCSE_REFERENCE,
        domains=["Encyclopaedic", "Written"],
        sample_creation="created",
        annotations_creators="derived",
        bibtex_citation=OSSCSE_BIBTEX,
    )
    task = _task_class("WikiNegationMeaningPC", AbsTaskPairClassification, metadata, rows)()
    task.st_debias_source = {**source, "pairs": len(rows["labels"]), "paraphrase_pairs": count, "chance_ap": 1 / 3}
    return task


def probe_task(name: str, data: str = "local", data_dir: str | os.PathLike[str] | None = None):
    """Any task of :data:`PROBE_TASKS` by name.

    Raises:
        ValueError: ``name`` is not a probe task, or ``data="hub"`` for a pair task (local data only).
    """
    if name in PAIR_TASKS:
        if data == "hub":
            raise ValueError(
                f"{name} reads the local data folder only ({CANNOT_DIR}, corpus/); use data='local'"
            )
        return pair_task(name, data_dir)
    set_name, _, part = name.rpartition("-")
    if part not in ("Cont", "Oppn"):
        raise ValueError(f"Unknown probe task {name!r}; choose from {list(PROBE_TASKS)}")
    return cont_oppn_task(set_name, part, data, data_dir)


__all__ = [
    "CONT_OPPN_SETS",
    "PAIR_TASKS",
    "PROBE_TASKS",
    "cont_oppn_task",
    "pair_task",
    "probe_task",
]
