"""Settings under which a loss must collapse to a known one (sentence-transformers' MNRL, the wrapped loss)."""

from __future__ import annotations

import pytest
import torch
from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss
from torch import nn

from st_debias.losses import FocalInfoNCE, InstanceWeightedMNRL, MarginNegationLoss, RecallRegularizer

TOL = 1e-12


def _mnrl(embeddings: list[torch.Tensor], scale: float = 20.0) -> torch.Tensor:
    return MultipleNegativesRankingLoss(None, scale=scale).compute_loss_from_embeddings(embeddings, None)


@pytest.mark.parametrize("negatives", [0, 1, 3])
@pytest.mark.parametrize("scale", [20.0, 7.0])
def test_instance_weighted_mnrl_without_mask_weights_or_noise_is_mnrl(columns, negatives, scale):
    """Guards against a candidate layout that drifts from MNRL's (own hard negatives only, positive
    index off by a block, other rows' hard negatives dropped): pairs and n-tuples must match exactly."""
    embeddings = columns(negatives, 5, 6, 2 + negatives)
    loss = InstanceWeightedMNRL(None, scale=scale).compute_loss_from_embeddings(embeddings)
    assert abs(loss.item() - _mnrl(embeddings, scale).item()) < TOL


@pytest.mark.parametrize("negatives", [0, 1])
def test_instance_weighted_mnrl_with_unit_weights_and_inactive_guide_is_mnrl(columns, negatives):
    """Guards against unit weights or a guide that masks nothing still changing the loss (e.g. masked
    entries zeroed instead of removed, or weights normalised by their sum in the wrong place)."""
    embeddings = columns(20 + negatives, 4, 5, 2 + negatives)
    # Guide in which every candidate is far from every anchor: nothing reaches φ = 0.9 ...
    guide = [torch.eye(5, dtype=torch.float64)[:4]] + [
        -torch.eye(5, dtype=torch.float64)[:4] for _ in embeddings[1:]
    ]
    # ... and unit weights in the labels.
    labels = torch.cat([torch.ones(4, 1, dtype=torch.float64), *guide], dim=1)
    loss_fn = InstanceWeightedMNRL(None, threshold=0.9, labels="weights_and_guide_embeddings")
    loss = loss_fn.compute_loss_from_embeddings(embeddings, labels)
    assert abs(loss.item() - _mnrl(embeddings).item()) < TOL
    unit = InstanceWeightedMNRL(None, labels="weights").compute_loss_from_embeddings(
        embeddings, torch.ones(4)
    )
    assert abs(unit.item() - _mnrl(embeddings).item()) < TOL


def test_instance_weighted_mnrl_gradients_equal_mnrl_gradients(columns):
    """Guards against a forward value that matches MNRL while the backward path differs (e.g. a
    detached positive logit)."""
    ours = columns(30, 4, 5, 3, requires_grad=True)
    theirs = [e.detach().clone().requires_grad_(True) for e in ours]
    InstanceWeightedMNRL(None).compute_loss_from_embeddings(ours).backward()
    _mnrl(theirs).backward()
    for a, b in zip(ours, theirs):
        assert torch.allclose(a.grad, b.grad, rtol=0, atol=1e-12)


@pytest.mark.parametrize("contrastive, columns_count", [("paraphrase", 3), ("dropout", 4)])
def test_margin_negation_without_margin_is_mnrl(columns, contrastive, columns_count):
    """Guards against the negation leaking into the contrastive part as a hard negative, or the margin
    term surviving margin_weight=0: the contrastive part must equal MNRL on (anchor, paraphrase) or
    (anchor, dropout view), and the margin part must be exactly 0."""
    embeddings = columns(40, 6, 5, columns_count)
    parts = MarginNegationLoss(
        None, margin_weight=0.0, contrastive=contrastive, return_parts=True
    ).compute_loss_from_embeddings(
        embeddings
    )
    positives = embeddings[1] if contrastive == "paraphrase" else embeddings[3]
    assert abs(parts["contrastive"].item() - _mnrl([embeddings[0], positives]).item()) < TOL
    assert parts["margin"].item() == 0.0
    with_negation = _mnrl([embeddings[0], positives, embeddings[2]]).item()
    # Sanity: with the negation as a hard negative the value would differ.
    assert abs(parts["contrastive"].item() - with_negation) > 1e-3


def test_margin_negation_on_the_negation_column_without_margin_is_simcse_on_negations(columns):
    """Guards against the anchor slipping into the negation column's view term: with margin_weight=0 and
    dropout_columns=("negation",), the loss is MNRL on (negation, its dropout view), scaled by the weight."""
    embeddings = columns(41, 6, 5, 4)
    loss = MarginNegationLoss(None, margin_weight=0.0, dropout_columns=("negation",), contrastive_weight=0.5)
    value = loss.compute_loss_from_embeddings(embeddings).item()
    assert abs(value - 0.5 * _mnrl([embeddings[2], embeddings[3]]).item()) < TOL
    assert abs(value - 0.5 * _mnrl([embeddings[0], embeddings[3]]).item()) > 1e-3


@pytest.mark.parametrize("wrapped", ["focal", "margin"])
def test_recall_regularizer_with_zero_gamma_is_the_wrapped_loss(columns, wrapped):
    """Guards against the wrapper altering, renaming or dropping the wrapped loss's parts, or adding a
    non-zero recall term when γ = 0 (parameters moved away from θ*)."""
    model = nn.Linear(3, 3).double()
    inner = FocalInfoNCE(model) if wrapped == "focal" else MarginNegationLoss(model, margin_weight=1.0, return_parts=True)
    embeddings = columns(50, 4, 5, 2 if wrapped == "focal" else 4)
    regularizer = RecallRegularizer(model, inner, gamma=0.0, return_parts=True)
    with torch.no_grad():
        model.weight.add_(1.0)  # far from θ*: only γ = 0 can make the recall term vanish
    parts = regularizer.compute_loss_from_embeddings(embeddings)
    expected = inner.compute_loss_from_embeddings(embeddings)
    expected = expected if isinstance(expected, dict) else {"FocalInfoNCE": expected}
    assert set(parts) == set(expected) | {"recall"}
    for key, value in expected.items():
        assert torch.equal(parts[key], value), key
    assert parts["recall"].item() == 0.0
