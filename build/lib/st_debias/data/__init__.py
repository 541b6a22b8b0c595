"""Data builders: DebCSE inverse-propensity-weighted rows and OssCSE negation/paraphrase rows.

Public API (imported lazily, so ``from st_debias.data.text import words`` stays light):

* :func:`build_ipw_dataset` / :class:`IPWBuilder`: (anchor, positive, negative_1..m[, label]) rows.
* :func:`build_negation_dataset` / :class:`OssCSEBuilder`: (anchor, paraphrase, negation) rows.
* :class:`Negator`, :class:`NegatedAntonymGenerator`: rule negation with spaCy.
* candidate generators: :class:`WordDeletion`, :class:`FrequentWordInsertion`, :class:`WordRepetition`,
  :class:`WordNetSynonym`, :class:`EditChain`, :class:`UnionGenerator`, :class:`CorpusNeighbourGenerator`,
  :class:`Seq2SeqGenerator` (plus :class:`CandidateGenerator`, :class:`Candidate` to write your own).
* :func:`encode_corpus`, :func:`encode_shard`, :func:`merge_shards` (embeddings, cached),
  :func:`range_topk` (exact range neighbour search), :func:`merge_builds` (shard outputs),
  :func:`to_input_examples` (legacy ``model.fit``), :class:`BuildReport`.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "build_ipw_dataset": "st_debias.data.builders",
    "build_negation_dataset": "st_debias.data.builders",
    "IPWBuilder": "st_debias.data.ipw",
    "sample_negatives": "st_debias.data.ipw",
    "to_input_examples": "st_debias.data.ipw",
    "merge_builds": "st_debias.data.builders",
    "OssCSEBuilder": "st_debias.data.osscse",
    "Negator": "st_debias.data.negation",
    "NegationResult": "st_debias.data.negation",
    "NegatedAntonymGenerator": "st_debias.data.negation",
    "Candidate": "st_debias.data.generators",
    "CandidateGenerator": "st_debias.data.generators",
    "GenerationReport": "st_debias.data.generators",
    "WordDeletion": "st_debias.data.paraphrase_edits",
    "FrequentWordInsertion": "st_debias.data.paraphrase_edits",
    "WordRepetition": "st_debias.data.paraphrase_edits",
    "WordNetSynonym": "st_debias.data.paraphrase_edits",
    "EditChain": "st_debias.data.paraphrase_edits",
    "UnionGenerator": "st_debias.data.paraphrase_edits",
    "default_edit_generators": "st_debias.data.paraphrase_edits",
    "default_paraphrase_generators": "st_debias.data.paraphrase_edits",
    "CorpusNeighbourGenerator": "st_debias.data.paraphrase_corpus",
    "Seq2SeqGenerator": "st_debias.data.paraphrase_seq2seq",
    "encode_corpus": "st_debias.data.embeddings",
    "encode_shard": "st_debias.data.embeddings",
    "merge_shards": "st_debias.data.embeddings",
    "range_topk": "st_debias.data.neighbours",
    "BuildReport": "st_debias.data.report",
    "read_sentences": "st_debias.data.corpus",
    "clean_sentences": "st_debias.data.corpus",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'st_debias.data' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
