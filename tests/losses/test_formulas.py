"""Each loss against a slow float64 loop written from its paper (tests/reference.py), and gradcheck."""

from __future__ import annotations

import itertools

import pytest
import torch
from torch import nn

from st_debias import core
from st_debias.losses import (
    DebiasInfoNCE,
    FocalInfoNCE,
    InstanceWeightedMNRL,
    MarginNegationLoss,
    RecallRegularizer,
)
from tests.reference import (
    dclr_noise_reference,
    dclr_reference,
    dclr_weights_reference,
    debcse_reference,
    focal_infonce_reference,
    osscse_reference,
    recall_reference,
)

TOL = 1e-10


# -- 1. Formula ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "seed, batch, dim, negatives, scale, margin",
    [
        (0, 4, 8, 0, 20.0, 0.3),
        (1, 5, 6, 1, 20.0, 0.3),
        (2, 3, 5, 2, 10.0, 0.0),
        (3, 6, 4, 1, 33.0, 0.7),
        (4, 2, 3, 3, 5.0, -0.2),
    ],
)
def test_focal_infonce_equals_paper_eq2(columns, seed, batch, dim, negatives, scale, margin):
    """Guards against a wrong modulation (s² vs s(s+m), m on the wrong side, positive dropped from
    the denominator, hard negatives left unmodulated, sum vs mean): any of them moves the value."""
    embeddings = columns(seed, batch, dim, 2 + negatives)
    loss = FocalInfoNCE(None, scale=scale, margin=margin).compute_loss_from_embeddings(embeddings)
    expected = focal_infonce_reference(embeddings[0], embeddings[1], embeddings[2:], tau=1 / scale, m=margin)
    assert loss.dtype == torch.float64
    assert abs(loss.item() - expected) < TOL


@pytest.mark.parametrize(
    "seed, batch, dim, negatives, scale, threshold, weighted",
    [
        (0, 4, 6, 0, 20.0, 0.6, False),
        (1, 5, 4, 1, 20.0, 0.5, True),
        (2, 3, 5, 2, 10.0, 0.3, True),
        (3, 6, 3, 1, 33.0, 0.8, False),
        (4, 4, 4, 0, 20.0, 1.0, True),
    ],
)
def test_instance_weighted_mnrl_equals_dclr_eq6(
    columns, guide_for, seed, batch, dim, negatives, scale, threshold, weighted
):
    """Guards against masking by zeroing logits (e⁰ left in the denominator, the reference code's
    behaviour, not eq. 6), against `>` instead of `≥` φ, a masked positive, or a wrong row weighting."""
    embeddings = columns(seed, batch, dim, 2 + negatives)
    guide = guide_for(embeddings, seed)
    weights = (
        torch.rand(batch, generator=torch.Generator().manual_seed(seed), dtype=torch.float64) * 2
        if weighted
        else None
    )

    alpha = dclr_weights_reference(guide[0], guide[1:], threshold)
    off_positive = [alpha[i][c] for i in range(batch) for c in range(len(alpha[i])) if c != i]
    if threshold < 1.0:  # sanity: the case really masks something, and not everything
        assert 0 < off_positive.count(0.0) < len(off_positive)

    loss_fn = InstanceWeightedMNRL(
        None, scale=scale, threshold=threshold, labels="weights" if weighted else "none"
    )
    loss = loss_fn.compute_loss_from_embeddings(embeddings, weights, guide_embeddings=guide)
    expected = dclr_reference(
        embeddings[0],
        embeddings[1],
        embeddings[2:],
        tau=1 / scale,
        guide=guide,
        threshold=threshold,
        row_weights=weights,
    )
    assert abs(loss.item() - expected) < TOL
    unmasked = dclr_reference(
        embeddings[0], embeddings[1], embeddings[2:], tau=1 / scale, row_weights=weights
    )
    if threshold < 1.0:
        assert abs(expected - unmasked) > 1e-3  # the mask changes the value: the comparison is not vacuous


@pytest.mark.parametrize("mode", ["guide_embeddings", "weights_and_guide_embeddings"])
def test_instance_weighted_mnrl_guide_from_label_column(columns, guide_for, mode):
    """Guards against mis-parsing the precomputed-guide label column (columns interleaved, weight
    taken from the wrong slot): the loss must equal eq. 6 with the guide that was packed."""
    batch, dim, negatives = 4, 5, 1
    embeddings = columns(7, batch, dim, 2 + negatives)
    guide = guide_for(embeddings, 7)
    weights = torch.tensor([0.5, 2.0, 1.0, 0.25], dtype=torch.float64)
    packed = torch.cat(guide, dim=1)  # per row: guide of anchor | positive | negative
    if mode == "weights_and_guide_embeddings":
        packed = torch.cat([weights.unsqueeze(1), packed], dim=1)
    loss = InstanceWeightedMNRL(None, threshold=0.5, labels=mode).compute_loss_from_embeddings(
        embeddings, packed
    )
    expected = dclr_reference(
        embeddings[0],
        embeddings[1],
        embeddings[2:],
        guide=guide,
        threshold=0.5,
        row_weights=weights if mode == "weights_and_guide_embeddings" else None,
    )
    assert abs(loss.item() - expected) < TOL


OPTIONS = list(
    itertools.product(["counterpart", "same", "both"], [True, False], ["joint", "per_column"], [True, False])
)


@pytest.mark.parametrize("negatives", [0, 2])
@pytest.mark.parametrize("in_batch, positive_in_denominator, batch_norm, symmetric", OPTIONS)
def test_debias_infonce_equals_debcse_eq7_to_9(
    columns, in_batch, positive_in_denominator, batch_norm, symmetric, negatives
):
    """Guards against z and h swapped (BatchNorm on the target instead of the query), the wrong side
    as in-batch candidates, the own row left in as a negative, other rows' mined negatives leaking
    in, unbiased variance or per-column statistics where joint ones were asked, a missing mirror term."""
    seed = OPTIONS.index((in_batch, positive_in_denominator, batch_norm, symmetric)) + 10 * negatives
    embeddings = columns(seed, 5, 4, 2 + negatives)
    loss = DebiasInfoNCE(
        None,
        scale=20.0,
        in_batch_negatives=in_batch,
        positive_in_denominator=positive_in_denominator,
        batch_norm=batch_norm,
        symmetric=symmetric,
    ).compute_loss_from_embeddings(embeddings)
    expected = debcse_reference(
        embeddings[0],
        embeddings[1],
        embeddings[2:],
        tau=0.05,
        in_batch=in_batch,
        positive_in_denominator=positive_in_denominator,
        batch_norm=batch_norm,
        symmetric=symmetric,
    )
    assert abs(loss.item() - expected) < TOL


@pytest.mark.parametrize(
    "seed, contrastive, alpha, beta, margin_weight, scale",
    [
        (0, "dropout", 0.05, 0.2, 1e-3, 20.0),
        (1, "paraphrase", 0.05, 0.2, 1.0, 20.0),
        (2, None, 0.1, 0.1, 1.0, 20.0),
        (3, "dropout", 0.0, 0.5, 0.3, 10.0),
    ],
)
def test_margin_negation_equals_osscse_eq3(columns, seed, contrastive, alpha, beta, margin_weight, scale):
    """Guards against a one-sided hinge, α/β swapped, λ applied to the wrong part, or the negation
    slipping into the contrastive denominator as a hard negative."""
    embeddings = columns(seed, 6, 5, 4 if contrastive == "dropout" else 3)
    loss_fn = MarginNegationLoss(
        None,
        alpha=alpha,
        beta=beta,
        margin_weight=margin_weight,
        contrastive=contrastive,
        scale=scale,
        return_parts=True,
    )
    parts = loss_fn.compute_loss_from_embeddings(embeddings)
    expected = osscse_reference(
        *embeddings[:3],
        dropout_view=embeddings[3] if contrastive == "dropout" else None,
        alpha=alpha,
        beta=beta,
        margin_weight=margin_weight,
        contrastive=contrastive,
        tau=1 / scale,
    )
    assert set(parts) == set(expected)
    for key in expected:
        assert abs(parts[key].item() - expected[key]) < TOL, key
    assert expected["margin"] > 0  # sanity: at least one hinge is active in every case


@pytest.mark.parametrize(
    "seed, dropout_columns, contrastive_weight",
    [(5, ("negation",), 0.5), (6, ("anchor", "negation"), 0.3), (7, ("paraphrase",), 1.0), (8, ("anchor",), 0.0)],
)
def test_margin_negation_dropout_columns_equal_simcse_on_each_column(columns, seed, dropout_columns, contrastive_weight):
    """Guards against a view scored against the wrong column (e.g. always the anchor), negatives taken from
    another column, a weight applied to the margin, or parts summed under one name."""
    embeddings = columns(seed, 6, 5, 3 + len(dropout_columns))
    loss_fn = MarginNegationLoss(
        None,
        alpha=0.1,
        beta=0.3,
        margin_weight=0.7,
        scale=10.0,
        dropout_columns=dropout_columns,
        contrastive_weight=contrastive_weight,
        return_parts=True,
    )
    parts = loss_fn.compute_loss_from_embeddings(embeddings)
    expected = osscse_reference(
        *embeddings[:3],
        alpha=0.1,
        beta=0.3,
        margin_weight=0.7,
        tau=0.1,
        column_views=dict(zip(dropout_columns, embeddings[3:])),
        contrastive_weight=contrastive_weight,
    )
    if dropout_columns == ("anchor",):  # OssCSE's own term keeps its name
        expected["contrastive"] = expected.pop("contrastive_anchor")
    assert set(parts) == set(expected)
    for key in expected:
        assert abs(parts[key].item() - expected[key]) < TOL, key
    anchor_view = osscse_reference(*embeddings[:3], dropout_view=embeddings[3], margin_weight=0.7, tau=0.1)
    if dropout_columns != ("anchor",) and contrastive_weight > 0:
        # Sanity: the anchor's SimCSE term on the same fourth column would differ.
        assert abs(sum(parts[k].item() for k in parts if k != "margin") - anchor_view["contrastive"]) > 1e-3


def test_recall_regularizer_equals_half_gamma_squared_distance(columns):
    """Guards against a θ* that aliases the live parameters (recall stuck at 0 after in-place optimizer
    steps), a missing ½, frozen parameters counted, or the wrapped loss dropped from the output."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 2)).double()
    model[1].bias.requires_grad_(False)
    start = [p.detach().clone() for p in model.parameters()]
    regularizer = RecallRegularizer(model, FocalInfoNCE(model), gamma=0.37, return_parts=True)
    embeddings = columns(5, 3, 4, 2)

    assert regularizer.compute_loss_from_embeddings(embeddings)["recall"].item() == 0.0
    generator = torch.Generator().manual_seed(1)
    with torch.no_grad():  # in place, as an optimizer step does
        for p in model.parameters():
            p.add_(torch.randn(p.shape, generator=generator, dtype=p.dtype))
    parts = regularizer.compute_loss_from_embeddings(embeddings)
    trainable = [(p, s) for p, s in zip(model.parameters(), start) if p.requires_grad]
    expected = recall_reference([p for p, _ in trainable], [s for _, s in trainable], gamma=0.37)
    assert expected > 0
    assert abs(parts["recall"].item() - expected) < TOL
    assert abs(parts["FocalInfoNCE"].item() - focal_infonce_reference(embeddings[0], embeddings[1])) < TOL


# -- noise-based negatives (DCLR §4.1) ------------------------------------------------------------------
@pytest.mark.parametrize(
    "seed, batch, num_vectors, steps, step_size", [(0, 4, 4, 4, 1e-3), (1, 3, 5, 3, 0.5), (2, 5, 2, 1, 2.0)]
)
def test_adversarial_noise_equals_normalised_gradient_ascent(
    columns, seed, batch, num_vectors, steps, step_size
):
    """Guards against descent instead of ascent, an unnormalised (or globally normalised) step, a
    gradient through the wrong candidate set, or a generator that is ignored (noise not reproducible)."""
    anchors, positives = columns(seed, batch, 4, 2)
    scale = 20.0
    noise = core.adversarial_noise(
        anchors,
        positives,
        torch.arange(batch),
        num_vectors,
        steps,
        step_size,
        scale,
        std=1.0,
        generator=torch.Generator().manual_seed(99),
    )
    initial = torch.randn(num_vectors, 4, generator=torch.Generator().manual_seed(99), dtype=torch.float64)
    expected = torch.tensor(
        dclr_noise_reference(anchors, positives, initial, steps, step_size, 1 / scale), dtype=torch.float64
    )
    assert not noise.requires_grad
    assert torch.allclose(noise, expected, rtol=0, atol=TOL)
    moved = (noise - initial).norm(dim=1)  # each vector moved by exactly β·steps in the same direction chain
    assert torch.all(moved > 0) and torch.all(moved <= step_size * steps + TOL)


@pytest.mark.parametrize("noise_ratio, batch", [(1.0, 4), (1.5, 4), (2.0, 3)])
def test_instance_weighted_mnrl_noise_negatives_equal_eq6_with_refined_noise(
    columns, guide_for, noise_ratio, batch
):
    """Guards against the wrong number of noise negatives (k·B), noise masked by the guide or given a
    weight ≠ 1, noise refined with another τ, or noise not appended to the denominator at all."""
    embeddings = columns(3, batch, 5, 3)
    guide = guide_for(embeddings, 3)
    loss_fn = InstanceWeightedMNRL(
        None, threshold=0.5, noise_ratio=noise_ratio, noise_steps=4, noise_step_size=0.1
    )
    torch.manual_seed(1234)
    loss = loss_fn.compute_loss_from_embeddings(embeddings, guide_embeddings=guide)

    num_vectors = round(noise_ratio * batch)
    torch.manual_seed(1234)
    initial = torch.randn(num_vectors, 5, dtype=torch.float64)
    noise = dclr_noise_reference(embeddings[0], embeddings[1], initial, 4, 0.1, 0.05)
    expected = dclr_reference(
        embeddings[0], embeddings[1], embeddings[2:], guide=guide, threshold=0.5, noise=noise
    )
    assert abs(loss.item() - expected) < TOL
    without = dclr_reference(embeddings[0], embeddings[1], embeddings[2:], guide=guide, threshold=0.5)
    assert expected > without  # extra negatives can only raise every row's loss


# -- 2. Gradient -----------------------------------------------------------------------------------------
def _gradcheck(function, inputs):
    assert torch.autograd.gradcheck(function, tuple(inputs), eps=1e-6, atol=1e-6, rtol=1e-4)


def test_gradcheck_focal_infonce(columns):
    """Guards against a hand-written or detached piece of the focal modulation breaking backprop."""
    loss_fn = FocalInfoNCE(None, scale=5.0, margin=0.3)
    _gradcheck(
        lambda *x: loss_fn.compute_loss_from_embeddings(list(x)), columns(0, 3, 3, 3, requires_grad=True)
    )


def test_gradcheck_instance_weighted_mnrl_with_mask_weights_and_noise(columns, guide_for):
    """Guards against gradients leaking through -inf masked logits (NaN) or through the row weights
    path; noise with 0 ascent steps is a fixed input, so the check stays exact."""
    embeddings = columns(1, 3, 3, 3, requires_grad=True)
    guide = guide_for(embeddings, 1)
    weights = torch.tensor([0.5, 1.5, 1.0], dtype=torch.float64)
    loss_fn = InstanceWeightedMNRL(
        None, scale=5.0, threshold=0.5, labels="weights", noise_ratio=1.0, noise_steps=0
    )

    def function(*x):
        torch.manual_seed(0)
        return loss_fn.compute_loss_from_embeddings(list(x), weights, guide_embeddings=guide)

    keep = torch.tensor(dclr_weights_reference(guide[0], guide[1:], 0.5))
    assert (keep == 0).any()  # sanity: the mask is exercised
    _gradcheck(function, embeddings)


@pytest.mark.parametrize("in_batch, batch_norm", [("counterpart", "joint"), ("both", "per_column")])
def test_gradcheck_debias_infonce(columns, in_batch, batch_norm):
    """Guards against BatchNorm statistics detached from the graph (a silent biased gradient)."""
    loss_fn = DebiasInfoNCE(None, scale=5.0, in_batch_negatives=in_batch, batch_norm=batch_norm)
    _gradcheck(
        lambda *x: loss_fn.compute_loss_from_embeddings(list(x)), columns(2, 3, 3, 3, requires_grad=True)
    )


def test_gradcheck_margin_negation(columns):
    """Guards against a detached hinge or contrastive part."""
    loss_fn = MarginNegationLoss(
        None, alpha=0.1, beta=0.1, margin_weight=1.0, contrastive="dropout", scale=5.0
    )
    _gradcheck(
        lambda *x: loss_fn.compute_loss_from_embeddings(list(x)),
        columns(3, 3, 3, 4, requires_grad=True),
    )


def test_gradcheck_margin_negation_on_negation_views(columns):
    """Guards against a detached view or source column when SimCSE's term is taken on other columns."""
    loss_fn = MarginNegationLoss(
        None, alpha=0.1, beta=0.1, margin_weight=1.0, scale=5.0, dropout_columns=("anchor", "negation"), contrastive_weight=0.5
    )
    _gradcheck(
        lambda *x: loss_fn.compute_loss_from_embeddings(list(x)),
        columns(4, 3, 3, 5, requires_grad=True),
    )


def test_gradcheck_recall_regularizer(columns):
    """Guards against a recall term whose gradient is not γ(θ − θ*) (e.g. θ* not detached)."""
    theta = nn.Parameter(torch.randn(2, 3, generator=torch.Generator().manual_seed(4), dtype=torch.float64))
    regularizer = RecallRegularizer(None, FocalInfoNCE(None, scale=5.0), gamma=0.5, parameters=[theta])
    with torch.no_grad():
        theta.add_(0.3)
    embeddings = columns(4, 3, 3, 2, requires_grad=True)
    _gradcheck(
        lambda a, p, _theta: regularizer.compute_loss_from_embeddings([a, p]),
        [*embeddings, theta],
    )
    theta.grad = None
    regularizer.recall().backward()
    assert torch.allclose(theta.grad, 0.5 * torch.full_like(theta, 0.3), atol=1e-12)
