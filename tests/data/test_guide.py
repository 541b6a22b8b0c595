"""The precomputed-guide mode gives the same loss as running the guide live.

Guards against a column-order or reshape mix-up between ``attach_guide_embeddings`` and the loss, which
would mask the wrong candidates without any error.
"""

from __future__ import annotations

import pytest
import torch
from datasets import Dataset

from st_debias.data.guide import attach_guide_embeddings
from st_debias.losses import InstanceWeightedMNRL


@pytest.mark.parametrize("with_weights", [False, True])
def test_precomputed_equals_live_guide(tiny_model, tiny_bert_dir, wiki_sentences, with_weights: bool) -> None:
    from tests.conftest import load_tiny_model

    torch.manual_seed(3)
    guide = load_tiny_model(tiny_bert_dir)
    texts = wiki_sentences[:12]
    rows = {"anchor": texts, "positive": texts, "negative_1": wiki_sentences[12:24]}
    if with_weights:
        rows["weight"] = [float(i % 3) for i in range(12)]
    dataset = attach_guide_embeddings(
        Dataset.from_dict(rows), guide, weight_column="weight" if with_weights else None, show_progress_bar=False
    )
    assert dataset.column_names == ["anchor", "positive", "negative_1", "label"]

    embeddings = guide.encode(texts, convert_to_tensor=True)
    similarity = torch.nn.functional.cosine_similarity(embeddings[:, None], embeddings[None], dim=-1)
    threshold = float(similarity[~torch.eye(12, dtype=torch.bool)].median())
    live = InstanceWeightedMNRL(tiny_model, guide=guide, threshold=threshold, labels="weights" if with_weights else "none")
    mode = "weights_and_guide_embeddings" if with_weights else "guide_embeddings"
    precomputed = InstanceWeightedMNRL(tiny_model, threshold=threshold, labels=mode)
    unmasked = InstanceWeightedMNRL(tiny_model, labels="weights" if with_weights else "none")

    tiny_model.eval()
    features = [tiny_model.preprocess(dataset[c]) for c in ("anchor", "positive", "negative_1")]
    label_tensor = torch.tensor(dataset["label"])
    weights = torch.tensor(rows["weight"]) if with_weights else None
    with torch.no_grad():
        live_value = live([dict(f) for f in features], weights)
        precomputed_value = precomputed([dict(f) for f in features], label_tensor)
        unmasked_value = unmasked([dict(f) for f in features], weights)
    torch.testing.assert_close(precomputed_value, live_value, rtol=0, atol=1e-5)
    assert not torch.isclose(precomputed_value, unmasked_value, atol=1e-5), "nothing was masked: the test is vacuous"


def test_attach_guide_embeddings_rejects_bad_columns(tiny_model) -> None:
    with pytest.raises(ValueError, match="not in the dataset"):
        attach_guide_embeddings(Dataset.from_dict({"anchor": ["a b"]}), tiny_model, text_columns=["anchor", "positive"])
    with pytest.raises(ValueError, match="empty or non-string"):
        attach_guide_embeddings(Dataset.from_dict({"anchor": ["a b", " "]}), tiny_model, show_progress_bar=False)
