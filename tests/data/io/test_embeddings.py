"""Encoding in batches of equal token length: the rows of ``model.encode``, in the given order, with less padding."""

from __future__ import annotations

import numpy as np

from st_debias.data.io.embeddings import encode_by_token_length, encode_corpus


class _Spy:
    """A model that records the sentences of every ``encode`` call and delegates to a real one."""

    def __init__(self, model, tokenizer: bool = True) -> None:
        self.model = model
        self.calls: list[list[str]] = []
        self.max_seq_length = model.max_seq_length
        if tokenizer:
            self.tokenizer = model.tokenizer

    def encode(self, sentences, **kwargs):
        self.calls.append(list(sentences))
        return self.model.encode(sentences, **kwargs)


def test_rows_equal_model_encode_in_the_given_order(session_tiny_model, wiki):
    sentences = [*wiki[:40], "Short.", "A somewhat longer sentence than the short one."]
    spy = _Spy(session_tiny_model)
    vectors = encode_by_token_length(spy, sentences, batch_size=8, show_progress_bar=False)
    expected = session_tiny_model.encode(sentences, batch_size=8, convert_to_numpy=True)
    np.testing.assert_allclose(vectors, expected, rtol=1e-4, atol=1e-5)
    ids = session_tiny_model.tokenizer(sentences, truncation=True, max_length=session_tiny_model.max_seq_length)
    lengths = {s: len(row) for s, row in zip(sentences, ids["input_ids"])}
    longest = [max(lengths[s] for s in call) for call in spy.calls]
    shortest = [min(lengths[s] for s in call) for call in spy.calls]
    assert [len(call) for call in spy.calls] == [8] * 5 + [2]
    assert longest == sorted(longest, reverse=True)  # batches go from the longest texts to the shortest
    assert all(low >= high for low, high in zip(shortest, longest[1:]))  # no batch overlaps the next one's lengths


def test_a_model_without_a_tokenizer_keeps_its_own_order(session_tiny_model, wiki):
    spy = _Spy(session_tiny_model, tokenizer=False)
    vectors = encode_by_token_length(spy, wiki[:10], batch_size=4, normalize=True, show_progress_bar=False)
    assert spy.calls == [wiki[:10]]
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)


def test_token_length_batches_are_cached_under_their_own_key(session_tiny_model, wiki, tmp_path):
    plain = encode_corpus(wiki[:20], session_tiny_model, cache_dir=tmp_path, show_progress_bar=False)
    by_tokens = encode_corpus(
        wiki[:20], session_tiny_model, cache_dir=tmp_path, show_progress_bar=False, by_token_length=True
    )
    assert len(list((tmp_path / "embeddings").glob("*.npy"))) == 2
    np.testing.assert_allclose(by_tokens, plain, rtol=1e-4, atol=1e-5)
