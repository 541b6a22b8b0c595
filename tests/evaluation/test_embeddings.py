"""The per-model embedding table: each unique sentence encoded once, rows unit-norm; weight fingerprints."""

from __future__ import annotations

import copy

import numpy as np
import torch

from st_debias.evaluation.embeddings import EmbeddingCache, model_fingerprint


def test_each_unique_sentence_encoded_once(fake_encoder_cls):
    """Guards against re-encoding the sentences STS files share (the speed requirement)."""
    encoder = fake_encoder_cls()
    cache = EmbeddingCache(encoder)
    assert cache.prefetch(["a", "b", "a", "c"]) == 3
    cache.embed(["b", "c", "d", "d"])
    cache.cosine(["a", "b"], ["c", "d"])
    assert encoder.calls == [["a", "b", "c"], ["d"]]
    assert cache.encoded == 4 and len(cache) == 4


def test_rows_follow_request_order_and_are_unit_norm(fake_encoder_cls):
    encoder = fake_encoder_cls({"x": [3.0, 0, 0, 4.0], "y": [0, 2.0, 0, 0]})
    cache = EmbeddingCache(encoder)
    rows = cache.embed(["y", "x", "y"])
    np.testing.assert_allclose(rows, [[0, 1, 0, 0], [0.6, 0, 0, 0.8], [0, 1, 0, 0]], atol=1e-7)
    np.testing.assert_allclose(cache.cosine(["x", "x"], ["x", "y"]), [1.0, 0.0], atol=1e-7)


def test_cosine_length_mismatch(fake_encoder_cls):
    cache = EmbeddingCache(fake_encoder_cls())
    try:
        cache.cosine(["a"], ["b", "c"])
    except ValueError as error:
        assert "1 first sentences but 2" in str(error)
    else:
        raise AssertionError("expected ValueError")


def test_fingerprint_tells_checkpoints_apart(tiny_model):
    """Two checkpoints of one base must not look identical (MTEB cache key)."""
    same = copy.deepcopy(tiny_model)
    assert model_fingerprint(same) == model_fingerprint(tiny_model)
    with torch.no_grad():
        next(same.parameters()).view(-1)[0] += 1e-3
    assert model_fingerprint(same) != model_fingerprint(tiny_model)
