"""SimilarityPreservation: the wrapped loss plus the drift term, reductions, one real training step (the drift
itself: tests/core/test_preservation.py)."""

from __future__ import annotations

import pytest
import torch
from datasets import Dataset

from st_debias import core
from st_debias.losses import MarginNegationLoss, SimilarityPreservation


def test_weight_zero_leaves_the_wrapped_loss_unchanged():
    g = torch.Generator().manual_seed(0)
    embeddings = [torch.randn(4, 8, generator=g, dtype=torch.float64) for _ in range(4)]
    inner = MarginNegationLoss(None, margin_weight=1.0, return_parts=True)
    wrapped = SimilarityPreservation(None, inner, weight=0.0, reference=torch.nn.Identity(), return_parts=True)
    parts = wrapped.compute_loss_from_embeddings(embeddings, reference=torch.randn(4, 8, dtype=torch.float64))
    expected = inner.compute_loss_from_embeddings(embeddings)
    assert parts["preservation"].item() == 0.0
    for name, value in expected.items():
        assert torch.equal(parts[name], value)


def test_rejects_a_loss_without_embed():
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss

    with pytest.raises(TypeError, match="st_debias losses"):
        SimilarityPreservation(None, MultipleNegativesRankingLoss.__new__(MultipleNegativesRankingLoss))


def test_trains_through_the_trainer_and_the_reference_stays_frozen_and_unsaved(tiny_model, tmp_path):
    from sentence_transformers import SentenceTransformerTrainer, SentenceTransformerTrainingArguments

    rows = Dataset.from_dict({
        "anchor": ["the cat sat on the mat", "stocks fell sharply today", "a man plays a guitar", "rain is expected"],
        "positive": ["the mat had a cat on it", "shares dropped steeply today", "a guitar is played by a man",
                     "rain is forecast"],
        "negative": ["the cat did not sit on the mat", "stocks rose sharply today", "a guitar plays a man",
                     "rain is not expected"],
    })
    inner = MarginNegationLoss(tiny_model, margin_weight=1.0, return_parts=True)
    loss = SimilarityPreservation(tiny_model, inner, weight=10.0, return_parts=True)
    reference_before = [p.detach().clone() for p in loss.reference.parameters()]
    assert not any(name.startswith("_reference") for name, _ in loss.named_parameters())
    args = SentenceTransformerTrainingArguments(
        output_dir=str(tmp_path), max_steps=2, per_device_train_batch_size=4, learning_rate=1e-3,
        report_to="none", logging_steps=1, save_strategy="no", disable_tqdm=True,
    )
    trainer = SentenceTransformerTrainer(model=tiny_model, args=args, train_dataset=rows, loss=loss)
    trainer.train()
    logged = [entry for entry in trainer.state.log_history if "preservation" in entry]
    assert logged, trainer.state.log_history
    for before, after in zip(reference_before, loss.reference.parameters()):
        assert torch.equal(before, after)
    assert any(not torch.equal(a, b) for a, b in zip(reference_before, tiny_model.parameters()))
    assert len(tiny_model.state_dict()) == len(loss.reference.state_dict())


def test_default_output_is_one_tensor_for_st_wrappers(tiny_model):
    """Composition: MatryoshkaLoss multiplies the loss by a weight, which a dict of parts would break."""
    from sentence_transformers.sentence_transformer.losses import MatryoshkaLoss

    features = [tiny_model.tokenize(["a cat sat", "dogs bark loudly", "rain today"]) for _ in range(3)]
    loss = SimilarityPreservation(tiny_model, MarginNegationLoss(tiny_model, margin_weight=1.0), weight=1.0)
    value = MatryoshkaLoss(tiny_model, loss, matryoshka_dims=[128, 64])(features, None)
    assert value.dim() == 0 and torch.isfinite(value)
    value.backward()


def _anchor_batch(model):
    sentences = ["the cat sat on the mat", "stocks fell sharply today", "a man plays a guitar", "rain is expected"]
    return [model.tokenize(sentences) for _ in range(3)]


@pytest.mark.parametrize("without_dropout", [False, True])
def test_without_dropout_is_zero_at_the_start_weights_and_the_default_is_not(tiny_model, without_dropout):
    """Failure mode: with dropout on, the anchors never match the eval-mode reference, so the term had a
    noise floor at the start weights and part of its gradient fought dropout instead of drift."""
    tiny_model.train()
    loss = SimilarityPreservation(
        tiny_model, MarginNegationLoss(tiny_model, margin_weight=1.0, return_parts=True), weight=1.0,
        return_parts=True, without_dropout=without_dropout,
    )
    preservation = loss(_anchor_batch(tiny_model))["preservation"].item()
    if without_dropout:
        assert preservation == pytest.approx(0.0, abs=1e-10)
    else:
        assert preservation > 1e-5
    assert tiny_model.training  # the mode is restored for the trainer


def test_without_dropout_drift_has_gradients_and_matches_the_eval_mode_formula(tiny_model):
    tiny_model.train()
    loss = SimilarityPreservation(
        tiny_model, MarginNegationLoss(tiny_model, margin_weight=1.0, return_parts=True), weight=3.0,
        return_parts=True, without_dropout=True,
    )
    with torch.no_grad():  # move the trained model away from its frozen reference
        for parameter in tiny_model.parameters():
            parameter.add_(0.05 * torch.randn_like(parameter))
    features = _anchor_batch(tiny_model)
    preservation = loss(features)["preservation"]
    preservation.backward()
    assert any(p.grad is not None and p.grad.abs().sum() > 0 for p in tiny_model.parameters())
    tiny_model.eval()
    with torch.no_grad():
        anchors = tiny_model(dict(_anchor_batch(tiny_model)[0]))["sentence_embedding"]
        reference = loss.reference_embeddings(dict(_anchor_batch(tiny_model)[0]))
    expected = 3.0 * core.similarity_drift(anchors, reference).item()
    assert expected > 1e-6
    assert preservation.item() == pytest.approx(expected, rel=1e-5)


def test_without_dropout_needs_the_model_and_is_in_the_config(tiny_model):
    inner = MarginNegationLoss(None, margin_weight=1.0)
    with pytest.raises(ValueError, match="without_dropout=True re-embeds the anchors"):
        SimilarityPreservation(None, inner, reference=torch.nn.Identity(), without_dropout=True)
    loss = SimilarityPreservation(tiny_model, MarginNegationLoss(tiny_model), without_dropout=True)
    assert loss.get_config_dict()["without_dropout"] is True


def test_a_reference_with_another_tokenizer_is_refused(tiny_model):
    """Guards against a reference silently reading the trained model's token ids as other words."""

    class OtherTokenizer:
        def get_vocab(self) -> dict[str, int]:
            return {"[PAD]": 0, "hello": 1}

    class OtherModel(torch.nn.Module):
        tokenizer = OtherTokenizer()

    with pytest.raises(ValueError, match="same tokenizer"):
        SimilarityPreservation(tiny_model, MarginNegationLoss(tiny_model), reference=OtherModel())


def test_a_reference_of_another_width_is_compared_whole(tiny_model, tmp_path):
    """Guards against cutting another model's embeddings to the trained model's width (the prefix is right only
    for the trained model's own untruncated output, under MatryoshkaLoss)."""
    from tests.conftest import build_tiny_model_dir, load_tiny_model

    wider = load_tiny_model(build_tiny_model_dir(tmp_path / "wide", seed=2, hidden=192))
    wider.eval()
    tiny_model.eval()
    loss = SimilarityPreservation(tiny_model, MarginNegationLoss(tiny_model, return_parts=True), reference=wider,
                                  return_parts=True)
    texts = ["A man plays a guitar.", "Stocks fell sharply.", "The cat sleeps on the sofa."]
    features = [tiny_model.tokenize(texts) for _ in range(3)]
    with torch.no_grad():
        parts = loss(features)
        anchors = tiny_model(tiny_model.tokenize(texts))["sentence_embedding"]
        reference = wider(wider.tokenize(texts))["sentence_embedding"]
    assert reference.size(-1) == 192 > anchors.size(-1)
    assert parts["preservation"].item() == pytest.approx(core.similarity_drift(anchors, reference).item(), rel=1e-5)
    cut = core.similarity_drift(anchors, reference[:, : anchors.size(-1)]).item()
    assert parts["preservation"].item() != pytest.approx(cut, rel=1e-3)
