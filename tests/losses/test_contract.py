"""One contract table over all five losses, then their named failure modes."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass

import pytest
import torch
from torch import nn

from st_debias.losses import (
    CachedFocalInfoNCE,
    CachedMarginNegationLoss,
    DebiasInfoNCE,
    FocalInfoNCE,
    InstanceWeightedMNRL,
    MarginNegationLoss,
    RecallRegularizer,
)
from tests.reference import dclr_reference


@dataclass
class Case:
    """A loss and the inputs it needs: ``num_columns`` embedding columns and row-aligned labels."""

    name: str
    build: Callable[[], nn.Module]
    num_columns: int
    labels: Callable[[list[torch.Tensor]], torch.Tensor | None] = lambda embeddings: None


def _iw_labels(embeddings: list[torch.Tensor]) -> torch.Tensor:
    """Per row: a weight, then the guide embedding of every column (labels="weights_and_guide_embeddings")."""
    generator = torch.Generator().manual_seed(77)
    weights = 0.5 + torch.rand(embeddings[0].size(0), 1, generator=generator, dtype=torch.float64)
    guide = [e.detach() + 0.6 * torch.randn(e.shape, generator=generator, dtype=e.dtype) for e in embeddings]
    return torch.cat([weights, *guide], dim=1)


def _recall_case() -> nn.Module:
    parameter = nn.Parameter(torch.zeros(3, dtype=torch.float64))
    regularizer = RecallRegularizer(FocalInfoNCE(None, margin=0.5), gamma=0.1, parameters=[parameter])
    with torch.no_grad():
        parameter.add_(1.0)  # recall term active
    return regularizer


CASES = [
    Case("FocalInfoNCE", lambda: FocalInfoNCE(None, scale=20.0, margin=0.3), 3),
    Case(
        "InstanceWeightedMNRL",
        lambda: InstanceWeightedMNRL(None, threshold=0.9, labels="weights_and_guide_embeddings"),
        3,
        _iw_labels,
    ),
    Case("DebiasInfoNCE", lambda: DebiasInfoNCE(None, in_batch_negatives="both"), 4),
    Case("MarginNegationLoss", lambda: MarginNegationLoss(None, alpha=0.1, beta=0.1, margin_weight=1.0), 4),
    Case("RecallRegularizer", _recall_case, 2),
    Case("CachedFocalInfoNCE", lambda: CachedFocalInfoNCE(None, margin=0.3), 3),
    Case(
        "CachedMarginNegationLoss",
        lambda: CachedMarginNegationLoss(None, alpha=0.1, beta=0.1, margin_weight=1.0),
        4,
    ),
]
IDS = [case.name for case in CASES]


def _total(output: torch.Tensor | dict[str, torch.Tensor]) -> torch.Tensor:
    return sum(output.values()) if isinstance(output, dict) else output


def _run(case: Case, embeddings: list[torch.Tensor], loss: nn.Module | None = None):
    loss = loss if loss is not None else case.build()
    return loss.compute_loss_from_embeddings(embeddings, case.labels(embeddings))


# -- 4. Contract table -----------------------------------------------------------------------------------
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_output_is_a_finite_scalar(columns, case):
    """Guards against a per-row vector or a NaN/inf leaking out (the trainer would sum or log it silently)."""
    output = _run(case, columns(1, 6, 5, case.num_columns))
    parts = output.values() if isinstance(output, dict) else [output]
    for part in parts:
        assert part.dim() == 0 and torch.isfinite(part)
    assert _total(output).item() > 0


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_every_input_row_gets_a_gradient(columns, case):
    """Guards against a column (or some rows of it) silently detached from the loss, e.g. a negation
    only read under no_grad, or BatchNorm statistics computed on detached copies."""
    embeddings = columns(2, 6, 5, case.num_columns, requires_grad=True)
    _total(_run(case, embeddings)).backward()
    for index, embedding in enumerate(embeddings):
        assert embedding.grad is not None, f"column {index} got no gradient"
        assert torch.all(embedding.grad.norm(dim=1) > 0), f"column {index}: a row got a zero gradient"


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_shuffling_rows_together_keeps_the_loss(columns, case):
    """Guards against a loss that depends on row order (positive index off by one, labels not
    aligned with rows, the own-row mask on the wrong diagonal)."""
    embeddings = columns(3, 6, 5, case.num_columns)
    labels = case.labels(embeddings)
    permutation = torch.randperm(6, generator=torch.Generator().manual_seed(3))
    assert not torch.equal(permutation, torch.arange(6))
    loss = case.build()
    before = _total(loss.compute_loss_from_embeddings(embeddings, labels))
    shuffled = [e[permutation] for e in embeddings]
    after = _total(
        loss.compute_loss_from_embeddings(shuffled, None if labels is None else labels[permutation])
    )
    assert abs(before.item() - after.item()) < 1e-12
    # Sanity: shuffling one column alone breaks the pairing and does change the loss.
    broken = [embeddings[0], embeddings[1][permutation], *embeddings[2:]]
    assert abs(_total(loss.compute_loss_from_embeddings(broken, labels)).item() - before.item()) > 1e-6


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_float32_in_float32_out(columns, case):
    """Guards against a float64 constant or cached θ* silently upcasting (or a dtype error) in training."""
    embeddings = [e.float() for e in columns(4, 4, 5, case.num_columns)]
    labels = case.labels(embeddings)
    output = case.build().compute_loss_from_embeddings(embeddings, None if labels is None else labels.float())
    assert _total(output).dtype == torch.float32


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_config_is_json_serialisable(case):
    """Guards against a model card that cannot be written (tensors, modules or enums in the config)."""
    config = case.build().get_config_dict()
    assert isinstance(config, dict) and config
    assert json.loads(json.dumps(config)) == config


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_citation_is_bibtex(case):
    """Guards against an empty or plain-text citation in the generated model card."""
    citation = case.build().citation
    assert "@" in citation and "title" in citation and citation.count("{") == citation.count("}")


def test_config_records_non_default_arguments():
    """Guards against a config that reports defaults instead of what the loss was built with."""
    assert FocalInfoNCE(None, scale=7.0, margin=0.1).get_config_dict()["margin"] == 0.1
    assert InstanceWeightedMNRL(None, threshold=0.85, noise_ratio=2.5).get_config_dict()["threshold"] == 0.85
    assert DebiasInfoNCE(None, in_batch_negatives="same").get_config_dict()["in_batch_negatives"] == "same"
    assert MarginNegationLoss(None, beta=0.3).get_config_dict()["beta"] == 0.3
    config = RecallRegularizer(FocalInfoNCE(None, margin=0.2), gamma=0.5, parameters=[]).get_config_dict()
    assert config["gamma"] == 0.5 and config["loss.margin"] == 0.2


# -- 5. Failure modes ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "build, num_columns",
    [
        (lambda: FocalInfoNCE(None), 1),
        (lambda: InstanceWeightedMNRL(None), 1),
        (lambda: DebiasInfoNCE(None), 1),
        (lambda: MarginNegationLoss(None, contrastive="dropout"), 3),
        (lambda: MarginNegationLoss(None, contrastive="dropout"), 5),
        (lambda: MarginNegationLoss(None, contrastive="paraphrase"), 4),
        (lambda: MarginNegationLoss(None, contrastive=None), 2),
        (lambda: RecallRegularizer(FocalInfoNCE(None), parameters=[]), 1),
    ],
)
def test_wrong_number_of_columns_raises(columns, build, num_columns):
    """Guards against an extra id column read as a hard negative, or a missing column read as nothing."""
    with pytest.raises(ValueError, match="column"):
        build().compute_loss_from_embeddings(columns(5, 4, 3, num_columns))


def test_columns_of_different_lengths_raise(columns):
    """Guards against silently broadcasting or truncating misaligned columns."""
    anchors, positives = columns(5, 4, 3, 2)
    for loss in (FocalInfoNCE(None), InstanceWeightedMNRL(None), DebiasInfoNCE(None)):
        with pytest.raises(ValueError):
            loss.compute_loss_from_embeddings([anchors, positives[:3]])


@pytest.mark.parametrize("bad", [float("nan"), -0.5, float("inf")])
def test_invalid_row_weights_raise(columns, bad):
    """Guards against NaN weights turning the whole loss NaN, or negative weights rewarding a row's loss."""
    embeddings = columns(6, 4, 3, 2)
    weights = torch.tensor([1.0, bad, 1.0, 1.0], dtype=torch.float64)
    with pytest.raises(ValueError, match="weight"):
        InstanceWeightedMNRL(None, labels="weights").compute_loss_from_embeddings(embeddings, weights)


def test_row_weights_of_the_wrong_length_raise(columns):
    """Guards against a label column misaligned with the batch being reshaped into garbage (or a bare
    RuntimeError from reshape that does not say what is wrong)."""
    embeddings = columns(6, 4, 3, 2)
    for count in (3, 8):
        with pytest.raises(ValueError, match="weight|label"):
            InstanceWeightedMNRL(None, labels="weights").compute_loss_from_embeddings(
                embeddings, torch.ones(count)
            )


@pytest.mark.parametrize("threshold", [-1.0, -1.5, 1.0 + 1e-9, 2.0, float("nan"), float("inf")])
def test_threshold_outside_range_raises(threshold):
    """Guards against a φ that masks everything (φ ≤ −1) or nothing by accident (φ > 1, NaN)."""
    with pytest.raises(ValueError, match="threshold"):
        InstanceWeightedMNRL(None, threshold=threshold)


def test_threshold_range_is_half_open():
    """Guards against rejecting the documented end point φ = 1 or values just inside −1."""
    InstanceWeightedMNRL(None, threshold=1.0)
    InstanceWeightedMNRL(None, threshold=-0.999)


@pytest.mark.parametrize(
    "build, num_columns",
    [
        (lambda: FocalInfoNCE(None), 2),
        (lambda: InstanceWeightedMNRL(None), 2),
        (lambda: DebiasInfoNCE(None), 2),
        (lambda: DebiasInfoNCE(None), 3),  # a mined negative, but BatchNorm over one row is undefined
        (lambda: MarginNegationLoss(None, contrastive="dropout"), 4),
        (lambda: MarginNegationLoss(None, contrastive="paraphrase"), 3),
    ],
)
def test_batch_of_one_without_negatives_raises(columns, build, num_columns):
    """Guards against a loss of exactly 0 (softmax over the positive alone) that trains nothing."""
    with pytest.raises(ValueError):
        build().compute_loss_from_embeddings(columns(7, 1, 3, num_columns))


@pytest.mark.parametrize(
    "build, num_columns",
    [
        (lambda: FocalInfoNCE(None), 3),
        (lambda: InstanceWeightedMNRL(None), 3),
        (lambda: InstanceWeightedMNRL(None, noise_ratio=1.0), 2),
    ],
)
def test_batch_of_one_with_negatives_is_valid(columns, build, num_columns):
    """Guards against the batch-of-one check rejecting rows that do have negatives (hard or noise)."""
    torch.manual_seed(0)  # the noise negatives
    loss = build().compute_loss_from_embeddings(columns(7, 1, 3, num_columns))
    assert torch.isfinite(loss) and loss.item() >= 0


def _guide_masking_row_zero(batch: int, dim: int, num_columns: int) -> list[torch.Tensor]:
    """Guide in which anchor 0 is ≈ every candidate (cos ≈ 0.995 ≥ φ) and the other anchors are not."""
    e0 = torch.zeros(dim, dtype=torch.float64)
    e0[0] = 1.0
    candidates = []
    for column in range(num_columns - 1):
        block = e0.repeat(batch, 1)
        block[torch.arange(batch), 1 + (torch.arange(batch) + column) % (dim - 1)] = 0.1
        candidates.append(block)
    anchors = -e0.repeat(batch, 1)
    anchors[0] = e0
    return [anchors, *candidates]


def test_row_with_every_candidate_masked_contributes_exactly_zero(columns):
    """Guards against an all-masked row producing NaN/inf (logsumexp over nothing) or a spurious
    non-zero loss/gradient: it keeps only its positive, so its loss is exactly 0 (log 1)."""
    batch, dim = 4, 5
    embeddings = columns(8, batch, dim, 3, requires_grad=True)
    guide = _guide_masking_row_zero(batch, dim, 3)
    loss = InstanceWeightedMNRL(None, threshold=0.9).compute_loss_from_embeddings(
        embeddings, guide_embeddings=guide
    )
    per_row = dclr_reference(
        embeddings[0], embeddings[1], embeddings[2:], guide=guide, threshold=0.9, reduction="none"
    )
    assert torch.isfinite(loss)
    assert per_row[0] == 0.0 and all(value > 0 for value in per_row[1:])  # sanity: only row 0 is fully masked
    assert abs(loss.item() - math.fsum(per_row) / batch) < 1e-10
    loss.backward()
    assert torch.all(embeddings[0].grad[0] == 0)  # anchor 0 appears only in its own (empty) row
    assert torch.all(embeddings[0].grad[1:].norm(dim=1) > 0)


def test_positive_is_never_masked_even_above_threshold(columns):
    """Guards against the guide masking a row's own positive (in unsupervised SimCSE the guide sees
    anchor = positive, cos ≈ 1 ≥ φ): that would leave nothing in the numerator's term of the denominator."""
    batch, dim = 4, 5
    embeddings = columns(9, batch, dim, 2)
    # Guide: anchor i = positive i = e_i (cos 1 ≥ φ), every other pair orthogonal (cos 0 < φ).
    basis = torch.eye(dim, dtype=torch.float64)[:batch]
    loss = InstanceWeightedMNRL(None, threshold=0.9).compute_loss_from_embeddings(
        embeddings, guide_embeddings=[basis, basis]
    )
    assert abs(loss.item() - dclr_reference(*embeddings)) < 1e-10  # = plain eq. 6, positive kept
    # Every candidate (positive included) at guide cos ≈ 1 ≥ φ: all negatives leave, the positive stays, each row → 0.
    same = torch.ones(batch, dim, dtype=torch.float64)
    everything = InstanceWeightedMNRL(None, threshold=0.9).compute_loss_from_embeddings(
        embeddings, guide_embeddings=[same, same]
    )
    assert everything.item() == 0.0


def test_threshold_masks_at_equality(columns):
    """Guards against `>` instead of eq. 5's `≥`: a candidate whose guide similarity equals φ is masked."""
    batch, dim = 3, 4
    embeddings = columns(10, batch, dim, 2)
    basis = torch.eye(dim, dtype=torch.float64)[:batch]
    guide_positives = basis[[1, 0, 2]]  # anchor 0 ~ positive 1 and anchor 1 ~ positive 0 at cos exactly 1.0
    loss = InstanceWeightedMNRL(None, threshold=1.0).compute_loss_from_embeddings(
        embeddings, guide_embeddings=[basis, guide_positives]
    )
    guide = [basis, guide_positives]
    expected = dclr_reference(*embeddings, guide=guide, threshold=1.0)
    assert abs(loss.item() - expected) < 1e-10
    assert abs(expected - dclr_reference(*embeddings)) > 1e-3  # sanity: the two equal-φ entries were masked
