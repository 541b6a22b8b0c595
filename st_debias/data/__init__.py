"""Data builders: DebCSE inverse-propensity-weighted rows and OssCSE negation/paraphrase rows.

Public API (imported lazily, so ``from st_debias.data.text import words`` stays light):

* :func:`build_ipw_dataset` / :class:`IPWBuilder`: (anchor, positive, negative_1..m[, label]) rows.
* :func:`build_negation_dataset` / :class:`OssCSEBuilder`: (anchor, paraphrase, negation) rows.
* :class:`MinimalPairBuilder`: cue-balanced (anchor, positive, negative) minimal pairs.
* :class:`ParaphrasePairBuilder`: (anchor, positive) pairs of syntactic paraphrases.
* :data:`DATA_KINDS` (:class:`DataKind`): the registry of the row kinds recipes and ``st-debias build`` make.
* :func:`build_blocks`, :func:`finish_blocks`, :func:`plan_blocks`, :func:`build_block_batch`
  (:func:`usable_cores`): building in blocks, on every core, as shards or under Ray Data,
  with the rows of one process.
  Builders take any iterable of strings, a ``datasets`` column (``dataset["text"]``) or a ``Dataset`` with
  ``column="text"``.
* :func:`candidate_generators`: the named paraphrase/positive choices (``syntactic``, the recipes' and the
  negation builder's default; ``syntactic+edits``; ``edits``; ``dropout``).
* :class:`Negator`, :class:`NegatedAntonymGenerator`: rule negation with spaCy.
* candidate generators: :class:`WordDeletion`, :class:`FrequentWordInsertion`, :class:`WordRepetition`,
  :class:`WordNetSynonym`, :class:`EditChain`, :class:`UnionGenerator`, :class:`CorpusNeighbourGenerator`,
  :class:`Seq2SeqGenerator` (plus :class:`CandidateGenerator`, :class:`Candidate` to write your own).
* :func:`encode_corpus` (embeddings, cached),
  :func:`range_topk` (exact range neighbour search), :func:`merge_builds` (row shards and their reports),
  :func:`to_input_examples` (legacy ``model.fit``), :class:`BuildReport`.
"""

from __future__ import annotations

from st_debias._exports import lazy_exports

_EXPORTS = {
    "build_ipw_dataset": "st_debias.data.builders",
    "build_negation_dataset": "st_debias.data.builders",
    "IPWBuilder": "st_debias.data.ipw.builder",
    "sample_negatives": "st_debias.data.ipw.builder",
    "to_input_examples": "st_debias.data.ipw.builder",
    "merge_builds": "st_debias.data.builders",
    "candidate_generators": "st_debias.data.builders",
    "OssCSEBuilder": "st_debias.data.negation.builder",
    "MinimalPairBuilder": "st_debias.data.minimal_pairs.builder",
    "ParaphrasePairBuilder": "st_debias.data.paraphrase.pairs",
    "DATA_KINDS": "st_debias.data.kinds",
    "DataKind": "st_debias.data.kinds",
    "build_blocks": "st_debias.data.parallel",
    "finish_blocks": "st_debias.data.parallel",
    "plan_blocks": "st_debias.data.parallel",
    "build_block_batch": "st_debias.data.parallel",
    "usable_cores": "st_debias.progress",
    "Negator": "st_debias.data.negation.negator",
    "NegationResult": "st_debias.data.negation.negator",
    "NegatedAntonymGenerator": "st_debias.data.negation.negator",
    "Candidate": "st_debias.data.generators",
    "CandidateGenerator": "st_debias.data.generators",
    "GenerationReport": "st_debias.data.generators",
    "WordDeletion": "st_debias.data.paraphrase.edits",
    "FrequentWordInsertion": "st_debias.data.paraphrase.edits",
    "WordRepetition": "st_debias.data.paraphrase.edits",
    "WordNetSynonym": "st_debias.data.paraphrase.edits",
    "EditChain": "st_debias.data.paraphrase.edits",
    "UnionGenerator": "st_debias.data.paraphrase.edits",
    "default_edit_generators": "st_debias.data.paraphrase.edits",
    "default_paraphrase_generators": "st_debias.data.paraphrase.edits",
    "CorpusNeighbourGenerator": "st_debias.data.paraphrase.corpus",
    "Seq2SeqGenerator": "st_debias.data.paraphrase.seq2seq",
    "encode_corpus": "st_debias.data.io.embeddings",
    "range_topk": "st_debias.data.neighbours",
    "BuildReport": "st_debias.data.io.report",
    "SyntacticParaphraser": "st_debias.data.paraphrase.syntactic",
    "read_sentences": "st_debias.data.io.corpus",
    "read_rows": "st_debias.data.io.rows",
    "clean_sentences": "st_debias.data.io.corpus",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
