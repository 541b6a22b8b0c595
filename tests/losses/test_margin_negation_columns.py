"""MarginNegationLoss reads exactly three text columns; the anchor's dropout view is its own."""

from __future__ import annotations

import pytest
import torch

from st_debias.losses import CachedMarginNegationLoss, MarginNegationLoss


@pytest.mark.parametrize("cached", [False, True], ids=["uncached", "cached"])
@pytest.mark.parametrize("contrastive", ["dropout", "paraphrase"])
def test_a_fourth_text_column_is_refused(cached: bool, contrastive: str, tiny_model, wiki_sentences) -> None:
    """A fourth text column (an id, a second paraphrase) was silently taken as the anchor's dropout view."""
    loss = (
        CachedMarginNegationLoss(tiny_model, 2, contrastive=contrastive)
        if cached
        else MarginNegationLoss(tiny_model, contrastive=contrastive)
    )
    columns = [tiny_model.preprocess(wiki_sentences[i * 4 : (i + 1) * 4]) for i in range(4)]
    with pytest.raises(ValueError, match="expects 3 text columns .* got 4"):
        loss(columns, None)
    assert loss(columns[:3], None).isfinite()


def test_each_dropout_column_is_embedded_again_once_per_column_dict() -> None:
    features = [{"input_ids": torch.tensor([[i]])} for i in range(3)]
    loss = MarginNegationLoss(None, dropout_columns=("negation", "anchor"))
    columns = loss.input_columns(features)
    assert len(columns) == 5
    for view, source in zip(columns[3:], (features[2], features[0])):
        assert view is not source and torch.equal(view["input_ids"], source["input_ids"])
    # MatryoshkaLoss and AdaptiveLayerLoss call again with the same dicts and find their state in the views.
    assert all(a is b for a, b in zip(loss.input_columns(features)[3:], columns[3:]))
    assert loss.input_columns([dict(f) for f in features])[3] is not columns[3]
    assert MarginNegationLoss(None, contrastive="paraphrase").input_columns(features) == features


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"dropout_columns": ()}, "dropout_columns"),
        ({"dropout_columns": ("negation", "negation")}, "dropout_columns"),
        ({"dropout_columns": ("positive",)}, "dropout_columns"),
        ({"dropout_columns": ("negation",), "contrastive": "paraphrase"}, "needs contrastive='dropout'"),
        ({"dropout_columns": ("negation",), "contrastive": None}, "needs contrastive='dropout'"),
        ({"contrastive_weight": -0.5}, "contrastive_weight"),
        ({"contrastive_weight": 0.5, "contrastive": None}, "weighs nothing"),
    ],
)
def test_bad_dropout_columns_or_weight_are_refused(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        MarginNegationLoss(None, **kwargs)


def test_a_missing_view_column_is_named() -> None:
    loss = MarginNegationLoss(None, dropout_columns=("anchor", "negation"))
    with pytest.raises(ValueError, match="negation dropout view"):
        loss.compute_loss_from_embeddings([torch.randn(2, 4) for _ in range(4)])


def test_a_recipe_sets_the_views_and_the_config_round_trips(tiny_model) -> None:
    from datasets import Dataset

    from st_debias.recipes.losses import LossConfig, build_loss

    rows = Dataset.from_dict({"anchor": ["a b"], "positive": ["b a"], "negative": ["not a b"]})
    params = {"dropout_columns": ["negation"], "contrastive_weight": 0.5, "return_parts": True}
    loss, _ = build_loss(LossConfig(name="MarginNegationLoss", params=params, recall_gamma=1e-3), tiny_model, rows)
    config = loss.loss.get_config_dict()
    assert config["dropout_columns"] == ["negation"] and config["contrastive_weight"] == 0.5
    rebuilt = MarginNegationLoss(None, **{k: v for k, v in config.items() if k != "similarity_fct"})
    assert rebuilt.dropout_columns == ("negation",) and rebuilt.contrastive_weight == 0.5


def test_the_negation_view_is_a_second_dropout_sample(tiny_model) -> None:
    texts = ["the cat sat on the mat", "stocks fell sharply today", "rain is not expected"]
    loss = MarginNegationLoss(tiny_model, dropout_columns=("negation",))
    for training, differs in ((True, True), (False, False)):
        tiny_model.train(training)
        features = [tiny_model.tokenize(texts) for _ in range(3)]
        negation, view = loss.embed(loss.input_columns(features))[2:]
        assert (not torch.allclose(negation, view)) is differs
