"""Offline candidate generators, the corpus-neighbour generator and the seq2seq plumbing."""

from __future__ import annotations

import numpy as np
import pytest

from st_debias.data.paraphrase.corpus import CorpusNeighbourGenerator
from st_debias.data.paraphrase.edits import (
    EditChain,
    FrequentWordInsertion,
    UnionGenerator,
    WordDeletion,
    WordNetSynonym,
    WordRepetition,
    default_edit_generators,
)
from st_debias.data.text import words


@pytest.mark.parametrize("generator", default_edit_generators() + [
    EditChain([WordNetSynonym(rate=0.3), WordDeletion()]), UnionGenerator([WordDeletion(), WordRepetition()])
], ids=lambda g: g.name)
def test_edit_generators_are_real_deterministic_and_never_identity(generator, wiki, data_root):
    sentences = wiki[:40]
    first = generator.generate(sentences, seed=1)
    again = generator.generate(sentences, seed=1)
    other = generator.generate(sentences, seed=2)
    assert first == again
    assert first != other
    assert generator.report.inputs == 40 and generator.report.with_candidates >= 30
    for sentence, cands in zip(sentences, first):
        for cand in cands:
            assert cand.text != sentence and cand.text.strip()
    # content-keyed: a sentence's candidates do not depend on its position in the batch
    assert generator.generate(sentences[5:6], seed=1)[0] == first[5]


def test_edit_semantics(wiki, data_root):
    s = wiki[2]
    deleted = WordDeletion(max_words=1, num_candidates=1).generate([s])[0][0].text
    assert len(words(deleted)) == len(words(s)) - 1
    inserted = FrequentWordInsertion(max_words=1, num_candidates=1).generate([s])[0][0].text
    assert len(words(inserted)) == len(words(s)) + 1
    repeated = WordRepetition(num_candidates=1).generate([s])[0][0].text
    assert len(words(repeated)) > len(words(s)) and set(words(repeated)) == set(words(s))


def test_wordnet_synonyms_are_wordnet_synonyms(data_root):
    gen = WordNetSynonym(rate=1.0, num_candidates=1)
    assert "film" in gen.synonyms("movie")
    assert gen.synonyms("the") == [] and gen.synonyms("movies") == []  # stopword / inflected
    out = gen.generate(["I watched a movie yesterday."])[0]
    assert out and "movie" not in out[0].text


def test_corpus_neighbour_generator(wiki):
    corpus = wiki[:6] + ["The cat sat on the mat.", "A cat was sitting on the mat."]
    rng = np.random.default_rng(0)
    emb = rng.normal(size=(8, 16)).astype(np.float32)
    emb[7] = emb[6] + 0.2 * rng.normal(size=16)
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    gen = CorpusNeighbourGenerator(corpus, embeddings=emb, cosine_range=(0.8, 0.999), min_mer=0.3)
    out = gen.generate(["The cat sat on the mat.", "Not in the corpus."])
    assert [c.text for c in out[0]] == ["A cat was sitting on the mat."]
    assert out[1] == [] and gen.report.declined["not_in_corpus"] == 1


def test_seq2seq_generator_plumbing_with_tiny_random_marian(tiny_bert_dir):
    """Back-translation plumbing (two hops, noise, beams) with a randomly initialised Marian model."""
    import torch
    from transformers import AutoTokenizer, MarianConfig, MarianMTModel

    from st_debias.data.paraphrase.seq2seq import Seq2SeqGenerator

    tokenizer = AutoTokenizer.from_pretrained(str(tiny_bert_dir))
    torch.manual_seed(0)
    config = MarianConfig(
        vocab_size=tokenizer.vocab_size, d_model=32, encoder_layers=1, decoder_layers=1,
        encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64,
        max_position_embeddings=64, pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.sep_token_id,
        decoder_start_token_id=tokenizer.pad_token_id, forced_eos_token_id=None,
    )
    model = MarianMTModel(config).eval()
    gen = Seq2SeqGenerator([(model, tokenizer), (model, tokenizer)], num_candidates=2, num_beams=2,
                           noise="insert", max_new_tokens=6, name="tiny_marian")
    out = gen.generate(["The cat sat on the mat.", "It rained all day."], seed=0)
    assert len(out) == 2 and gen.report.inputs == 2
    assert gen.report.candidates == sum(len(c) for c in out) > 0
    for sentence, cands in zip(["The cat sat on the mat.", "It rained all day."], out):
        assert all(c.text != sentence and c.source == "tiny_marian" for c in cands)
        assert all(c.transforms == ("noise_insert", "hop0", "hop1") for c in cands)
    with pytest.raises(ValueError, match="num_beams"):
        Seq2SeqGenerator([(model, tokenizer)], num_candidates=3, num_beams=2)
