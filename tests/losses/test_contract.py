"""One contract table over every exported loss (keyed by ``st_debias.losses.__all__``), then their named
failure modes."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass

import pytest
import torch
from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss
from torch import nn

import st_debias.losses
from st_debias.losses import (
    CachedDebiasInfoNCE,
    CachedFocalInfoNCE,
    CachedInstanceWeightedMNRL,
    CachedLoss,
    CachedMarginNegationLoss,
    DebiasInfoNCE,
    FocalInfoNCE,
    InstanceWeightedMNRL,
    MarginNegationLoss,
    RecallRegularizer,
    SimilarityPreservation,
)
from tests.losses.conftest import make_guide
from tests.reference import dclr_reference


def _no_labels(embeddings: list[torch.Tensor]) -> None:
    return None


@dataclass
class Case:
    """A loss and the inputs it needs: ``num_columns`` embedding columns, row-aligned labels and, for
    ``reference=True`` (SimilarityPreservation), the reference model's embeddings of the anchors."""

    name: str
    build: Callable[[], nn.Module]
    num_columns: int
    labels: Callable[[list[torch.Tensor]], torch.Tensor | None] = _no_labels
    reference: bool = False

    def inputs(
        self, embeddings: list[torch.Tensor], dtype: torch.dtype | None = None
    ) -> tuple[torch.Tensor | None, dict[str, torch.Tensor]]:
        """``(labels, keyword tensors)`` for ``compute_loss_from_embeddings``, cast to ``dtype`` if given."""
        labels = self.labels(embeddings)
        extra = {"reference": _reference_embeddings(embeddings)} if self.reference else {}
        if dtype is not None:
            labels = None if labels is None else labels.to(dtype)
            extra = {key: value.to(dtype) for key, value in extra.items()}
        return labels, extra


def _iw_labels(embeddings: list[torch.Tensor]) -> torch.Tensor:
    """Per row: a weight, then the guide embedding of every column (labels="weights_and_guide_embeddings")."""
    generator = torch.Generator().manual_seed(77)
    weights = 0.5 + torch.rand(embeddings[0].size(0), 1, generator=generator, dtype=torch.float64)
    guide = [e.detach() + 0.6 * torch.randn(e.shape, generator=generator, dtype=e.dtype) for e in embeddings]
    return torch.cat([weights, *guide], dim=1)


def _row_weights(embeddings: list[torch.Tensor]) -> torch.Tensor:
    """One importance weight per row (labels="weights")."""
    generator = torch.Generator().manual_seed(78)
    return 0.5 + torch.rand(embeddings[0].size(0), generator=generator, dtype=torch.float64)


def _reference_embeddings(embeddings: list[torch.Tensor]) -> torch.Tensor:
    """A frozen reference model's anchors: the anchors moved by noise, so the similarity drift is non-zero."""
    anchors = embeddings[0].detach()
    generator = torch.Generator().manual_seed(79)
    return anchors + 0.5 * torch.randn(anchors.shape, generator=generator, dtype=torch.float64).to(anchors.dtype)


def _recall_case(inner: nn.Module | None = None, return_parts: bool = False) -> nn.Module:
    parameter = nn.Parameter(torch.zeros(3, dtype=torch.float64))
    inner = inner if inner is not None else FocalInfoNCE(None, margin=0.5)
    regularizer = RecallRegularizer(None, inner, gamma=0.1, parameters=[parameter], return_parts=return_parts)
    with torch.no_grad():
        parameter.add_(1.0)  # recall term active
    return regularizer


def _preservation_case(inner: nn.Module, return_parts: bool = False) -> nn.Module:
    # compute_loss_from_embeddings takes the reference's embeddings; the reference model itself is unused.
    return SimilarityPreservation(None, inner, weight=2.0, reference=nn.Identity(), return_parts=return_parts)


#: Every exported loss -> its case. A loss exported without a case fails test_every_exported_loss_has_a_case.
LOSS_CASES: dict[str, Case] = {
    case.name: case
    for case in [
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
        Case(
            "SimilarityPreservation",
            lambda: _preservation_case(MarginNegationLoss(None, alpha=0.1, beta=0.1, margin_weight=1.0)),
            4,
            reference=True,
        ),
        Case("CachedFocalInfoNCE", lambda: CachedFocalInfoNCE(None, margin=0.3), 3),
        Case(
            "CachedInstanceWeightedMNRL",
            lambda: CachedInstanceWeightedMNRL(None, threshold=0.9, labels="weights_and_guide_embeddings"),
            3,
            _iw_labels,
        ),
        Case("CachedDebiasInfoNCE", lambda: CachedDebiasInfoNCE(None, in_batch_negatives="both"), 4),
        Case(
            "CachedMarginNegationLoss",
            lambda: CachedMarginNegationLoss(None, alpha=0.1, beta=0.1, margin_weight=1.0, return_parts=True),
            4,
        ),
        # The generic wrapper, around a loss none of the named cached classes covers: row weights as labels.
        Case("CachedLoss", lambda: CachedLoss(None, InstanceWeightedMNRL(None, labels="weights")), 2, _row_weights),
    ]
}
# Compositions: named parts (the trainer's per-part logging), and a multi-part loss inside the wrappers.
COMPOSITIONS = [
    Case(
        "MarginNegationLoss(return_parts)",
        lambda: MarginNegationLoss(None, alpha=0.1, beta=0.1, margin_weight=1.0, return_parts=True),
        4,
    ),
    Case(
        "RecallRegularizer(MarginNegationLoss, return_parts)",
        lambda: _recall_case(MarginNegationLoss(None, alpha=0.1, beta=0.1, return_parts=True), return_parts=True),
        4,
    ),
    Case(
        "SimilarityPreservation(FocalInfoNCE, return_parts)",
        lambda: _preservation_case(FocalInfoNCE(None, margin=0.3), return_parts=True),
        3,
        reference=True,
    ),
]
CASES = [*LOSS_CASES.values(), *COMPOSITIONS]
IDS = [case.name for case in CASES]
# Noise negatives score the anchors twice (against the candidates and against the noise).
NOISE_CASE = Case("InstanceWeightedMNRL-noise", lambda: InstanceWeightedMNRL(None, noise_ratio=1.0), 2)


def _total(output: torch.Tensor | dict[str, torch.Tensor]) -> torch.Tensor:
    return sum(output.values()) if isinstance(output, dict) else output


def _run(case: Case, embeddings: list[torch.Tensor], loss: nn.Module | None = None, dtype: torch.dtype | None = None):
    loss = loss if loss is not None else case.build()
    labels, extra = case.inputs(embeddings, dtype)
    return loss.compute_loss_from_embeddings(embeddings, labels, **extra)


def test_every_exported_loss_has_a_case():
    """Guards against a loss exported from st_debias.losses without passing the contract below."""
    assert sorted(LOSS_CASES) == sorted(st_debias.losses.__all__)
    for name, case in LOSS_CASES.items():
        assert type(case.build()).__name__ == name


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
    labels, extra = case.inputs(embeddings)
    permutation = torch.randperm(6, generator=torch.Generator().manual_seed(3))
    assert not torch.equal(permutation, torch.arange(6))
    loss = case.build()
    before = _total(loss.compute_loss_from_embeddings(embeddings, labels, **extra))
    shuffled = [e[permutation] for e in embeddings]
    after = _total(
        loss.compute_loss_from_embeddings(
            shuffled,
            None if labels is None else labels[permutation],
            **{key: value[permutation] for key, value in extra.items()},
        )
    )
    assert abs(before.item() - after.item()) < 1e-12
    # Sanity: shuffling one column alone breaks the pairing and does change the loss.
    broken = [embeddings[0], embeddings[1][permutation], *embeddings[2:]]
    assert abs(_total(loss.compute_loss_from_embeddings(broken, labels, **extra)).item() - before.item()) > 1e-6


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_float32_in_float32_out(columns, case):
    """Guards against a float64 constant or cached θ* silently upcasting (or a dtype error) in training."""
    embeddings = [e.float() for e in columns(4, 4, 5, case.num_columns)]
    assert _total(_run(case, embeddings, dtype=torch.float32)).dtype == torch.float32


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
    config = RecallRegularizer(None, FocalInfoNCE(None, margin=0.2), gamma=0.5, parameters=[]).get_config_dict()
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
        (lambda: RecallRegularizer(None, FocalInfoNCE(None), parameters=[]), 1),
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
        (lambda: MarginNegationLoss(None, contrastive="dropout", margin_weight=0.0), 4),
        (lambda: MarginNegationLoss(None, contrastive="paraphrase", margin_weight=0.0), 3),
    ],
)
def test_batch_of_one_without_negatives_is_zero_like_mnrl(columns, build, num_columns):
    """Guards against the crash at the end of an epoch whose last batch holds one row (the trainer keeps
    it by default): MNRL returns 0 there (the positive alone in its softmax) and trains on; so must these."""
    embeddings = columns(7, 1, 3, num_columns, requires_grad=True)
    loss = build().compute_loss_from_embeddings(embeddings)
    mnrl = MultipleNegativesRankingLoss(None).compute_loss_from_embeddings(embeddings[:2], None)
    assert loss.item() == mnrl.item() == 0.0
    loss.backward()  # still part of the graph, as MNRL's is
    assert all(torch.isfinite(e.grad).all() for e in embeddings if e.grad is not None)


def test_margin_negation_batch_of_one_keeps_its_margin_term(columns):
    """Guards against a one-row batch dropping the hinge along with the (empty) contrastive part."""
    embeddings = columns(7, 1, 3, 3)
    loss = MarginNegationLoss(None, contrastive="paraphrase", alpha=0.5, beta=0.5, margin_weight=1.0, return_parts=True)
    parts = loss.compute_loss_from_embeddings(embeddings)
    assert parts["contrastive"].item() == 0.0 and parts["margin"].item() > 0


@pytest.mark.parametrize("num_columns", [2, 3])
def test_debias_batch_of_one_says_how_to_avoid_it(columns, num_columns):
    """Guards against a bare crash on a one-row last batch: BatchNorm over one row is 0/0, so the error
    must name the remedy (dataloader_drop_last)."""
    with pytest.raises(ValueError, match="dataloader_drop_last=True"):
        DebiasInfoNCE(None).compute_loss_from_embeddings(columns(7, 1, 3, num_columns))


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


# -- 6. Half precision (issue 11) --------------------------------------------------------------------------
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_float16_zero_embedding_gives_a_finite_loss(columns, case):
    """Guards against NaN from a zero embedding in float16: a normaliser eps of 1e-8 rounds to 0 in
    float16, so 0/0; MNRL (cos_sim upcasts to float32) stays finite."""
    embeddings = [e.half() for e in columns(11, 4, 5, case.num_columns)]
    embeddings[0][0] = 0.0
    assert torch.isfinite(_total(_run(case, embeddings, dtype=torch.float16)))


@pytest.mark.parametrize("zero_column", [0, 1], ids=["zero-anchor", "zero-positive"])
@pytest.mark.parametrize("case", CASES + [NOISE_CASE], ids=IDS + [NOISE_CASE.name])
def test_float16_zero_embedding_gives_finite_gradients(columns, case, zero_column):
    """Guards against a NaN/inf gradient from finite float16 input: a zero row's float32 cosine gradient (about
    1/eps = 1e12) overflowed when cast back to float16 (seen with noise negatives, which score the anchors twice,
    and with SimilarityPreservation, whose two terms each upcast the anchors)."""
    embeddings = [e.half().requires_grad_() for e in columns(11, 4, 5, case.num_columns)]
    with torch.no_grad():
        embeddings[zero_column][0] = 0.0
    torch.manual_seed(0)
    _total(_run(case, embeddings, dtype=torch.float16)).backward()
    for column, embedding in enumerate(embeddings):
        assert torch.isfinite(embedding.grad).all(), f"non-finite gradient in column {column}"


@pytest.mark.parametrize("case", CASES + [NOISE_CASE], ids=IDS + [NOISE_CASE.name])
def test_similarities_are_float32_under_autocast(columns, case):
    """Guards against similarities computed in bfloat16 under mixed-precision training (`bf16=True`): autocast
    runs the matmul in bfloat16 even on float32 inputs, 1e-2 off the float32 loss."""
    embeddings = [e.float() for e in columns(12, 6, 5, case.num_columns)]
    torch.manual_seed(0)
    plain = _total(_run(case, embeddings, dtype=torch.float32))
    torch.manual_seed(0)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        mixed = _total(_run(case, embeddings, dtype=torch.float32))
    assert mixed.dtype == torch.float32
    assert abs(mixed.item() - plain.item()) < 1e-5


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_an_empty_batch_is_a_clear_error(columns, case):
    """Guards against an empty batch giving NaN (the mean over no row), as MNRL does."""
    embeddings = columns(1, 0, 5, case.num_columns)
    with pytest.raises(ValueError, match=r"empty batch \(0 rows\)"):
        _run(case, embeddings)


@pytest.mark.parametrize("margin", [math.inf, -math.inf, math.nan])
def test_a_non_finite_margin_is_refused(margin):
    """Guards against FocalInfoNCE(margin=±inf) training on an infinite loss."""
    with pytest.raises(ValueError, match="margin must be a finite number"):
        FocalInfoNCE(None, margin=margin)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_bfloat16_embeddings_are_scored_in_float32(columns, case):
    """Guards against similarities rounded to bfloat16 (3 significant digits, 2.5e-2 off MNRL in loss):
    a bfloat16 batch must give the float32 loss of the same (rounded) values."""
    embeddings = [e.to(torch.bfloat16) for e in columns(12, 6, 5, case.num_columns)]
    labels, extra = case.inputs(embeddings, torch.bfloat16)
    loss = case.build()
    low = _total(loss.compute_loss_from_embeddings(embeddings, labels, **extra))
    high = _total(
        loss.compute_loss_from_embeddings(
            [e.float() for e in embeddings],
            None if labels is None else labels.float(),
            **{key: value.float() for key, value in extra.items()},
        )
    )
    assert low.dtype == torch.float32
    assert abs(low.item() - high.item()) < 1e-5


def test_bfloat16_unit_weights_match_mnrl(columns):
    """Guards against the reduction to MNRL holding in float32 only (bf16 maths was 2.5e-2 off)."""
    embeddings = [e.to(torch.bfloat16) for e in columns(13, 8, 16, 3)]
    ours = InstanceWeightedMNRL(None).compute_loss_from_embeddings(embeddings)
    theirs = MultipleNegativesRankingLoss(None).compute_loss_from_embeddings(embeddings, None)
    assert abs(ours.item() - theirs.item()) < 1e-6


def test_float16_noise_negatives_are_finite(columns):
    """Guards against all-NaN noise negatives in float16 (``clamp_min(1e-12)`` is 0 there)."""
    torch.manual_seed(0)
    embeddings = [e.half() for e in columns(14, 4, 5, 2)]
    loss = InstanceWeightedMNRL(None, noise_ratio=1.0).compute_loss_from_embeddings(embeddings)
    assert torch.isfinite(loss)


# -- 7. Guide, BatchNorm and scorer edges (issue 11, 12) ---------------------------------------------------
@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_non_finite_guide_embeddings_raise(columns, bad):
    """Guards against a NaN/inf guide embedding masking every candidate (NaN ≥ φ is False, but the
    cosine of an inf row is NaN everywhere): loss 0, gradient 0 and no message."""
    embeddings = columns(15, 4, 5, 2)
    guide = make_guide(embeddings, 15)
    guide[1][2, 0] = bad
    with pytest.raises(ValueError, match=r"guide embeddings contain NaN or inf \(column 1, rows \[2\]\)"):
        InstanceWeightedMNRL(None).compute_loss_from_embeddings(embeddings, guide_embeddings=guide)
    labels = torch.cat(guide, dim=1)
    with pytest.raises(ValueError, match="guide embeddings contain NaN or inf"):
        InstanceWeightedMNRL(None, labels="guide_embeddings").compute_loss_from_embeddings(embeddings, labels)


def test_masked_share_is_recorded_and_a_guide_masking_most_candidates_warns(columns, caplog):
    """Guards against a bad guide (e.g. one embedding everything alike) silently masking every
    candidate: the share is kept on the loss and a warning names it."""
    embeddings = columns(16, 4, 5, 2)
    loss = InstanceWeightedMNRL(None, threshold=0.9)
    assert loss.last_masked_share is None
    basis = torch.eye(5, dtype=torch.float64)[:4]
    loss.compute_loss_from_embeddings(embeddings, guide_embeddings=[basis, basis])
    assert loss.last_masked_share == 0.0
    same = torch.ones(4, 5, dtype=torch.float64)
    with caplog.at_level("WARNING", logger="st_debias.losses.instance_weighted_mnrl"):
        loss.compute_loss_from_embeddings(embeddings, guide_embeddings=[same, same])
    assert loss.last_masked_share == 1.0
    assert "masked 100% of the in-batch negatives" in caplog.text


@pytest.mark.parametrize("batch_norm", ["per_column", "joint"])
def test_debias_constant_column_has_bounded_gradients(columns, batch_norm):
    """Guards against gradients of 1e10 when a column is constant over the batch (the same negative text
    in every row): BatchNorm's 1/√eps times the cosine normaliser's 1/‖z‖ on a near-zero z."""
    embeddings = columns(17, 6, 8, 3, requires_grad=True)
    constant = embeddings[2][0].detach().repeat(6, 1).float()
    inputs = [embeddings[0].float(), embeddings[1].float(), constant.requires_grad_(True)]
    if batch_norm == "joint":  # joint statistics: every column constant in the same features
        inputs = [inputs[0][:1].repeat(6, 1), inputs[1][:1].repeat(6, 1), inputs[2]]
    for tensor in inputs:
        tensor.retain_grad()
    loss = DebiasInfoNCE(None, batch_norm=batch_norm).compute_loss_from_embeddings(inputs)
    loss.backward()
    assert torch.isfinite(loss)
    for tensor in inputs:
        assert torch.isfinite(tensor.grad).all() and tensor.grad.abs().max() < 1e3


def test_dot_product_scorer_reduces_to_mnrl_with_dot_product(columns):
    """Guards against similarity_fct being stored but ignored (cosine used regardless)."""
    from sentence_transformers.util import dot_score

    embeddings = columns(18, 6, 5, 3)
    ours = InstanceWeightedMNRL(None, scale=1.0, similarity_fct=dot_score).compute_loss_from_embeddings(embeddings)
    theirs = MultipleNegativesRankingLoss(None, scale=1.0, similarity_fct=dot_score)
    assert abs(ours.item() - theirs.compute_loss_from_embeddings(embeddings, None).item()) < 1e-12
    cosine = InstanceWeightedMNRL(None, scale=1.0).compute_loss_from_embeddings(embeddings)
    assert abs(ours.item() - cosine.item()) > 1e-3  # sanity: the scorers differ on these vectors


@pytest.mark.parametrize(
    "build, num_columns, scores_raw_inputs",
    [
        (lambda fct: FocalInfoNCE(None, similarity_fct=fct), 3, True),
        (lambda fct: MarginNegationLoss(None, contrastive="paraphrase", similarity_fct=fct), 3, True),
    ],
)
def test_similarity_fct_is_used_and_recorded(columns, build, num_columns, scores_raw_inputs):
    """Guards against similarity_fct being ignored: on unit-norm inputs the dot product is the cosine,
    on others it is not; the config names the scorer."""
    from sentence_transformers.util import cos_sim, dot_score

    embeddings = columns(19, 6, 5, num_columns)
    dot, cosine = build(dot_score), build(cos_sim)
    if scores_raw_inputs:
        unit = [torch.nn.functional.normalize(e, dim=-1) for e in embeddings]
        difference = dot.compute_loss_from_embeddings(unit) - cosine.compute_loss_from_embeddings(unit)
        assert abs(difference.item()) < 1e-10
    assert abs(dot.compute_loss_from_embeddings(embeddings).item() - cosine.compute_loss_from_embeddings(embeddings).item()) > 1e-3
    assert dot.get_config_dict()["similarity_fct"] == "dot_score"
    assert cosine.get_config_dict()["similarity_fct"] == "cos_sim"


@pytest.mark.parametrize("name", ["dot_score", "euclidean_sim", "manhattan_sim"])
def test_debias_infonce_refuses_a_similarity_that_reads_the_norm(columns, name):
    """DebiasInfoNCE(similarity_fct=dot_score) scored batch-standardised vectors (norm ≈ √dim): a loss of
    552.8 where the cosine gives 3e-6, with no word from the loss or the recipe check. It is refused, naming
    the reason; the cosine is accepted."""
    import sentence_transformers.util

    from st_debias.recipes.losses import check_loss_params

    with pytest.raises(ValueError, match="batch-standardised"):
        DebiasInfoNCE(None, similarity_fct=getattr(sentence_transformers.util, name))
    with pytest.raises(ValueError, match="must be cos_sim"):
        check_loss_params("DebiasInfoNCE", {"similarity_fct": name})
    check_loss_params("DebiasInfoNCE", {"similarity_fct": "cos_sim"})
    assert DebiasInfoNCE(None).get_config_dict()["similarity_fct"] == "cos_sim"


# -- 8. sentence-transformers conventions (issue 12) -------------------------------------------------------
def test_recall_regularizer_takes_the_model_first(columns):
    """Guards against the wrapper breaking ST's wrapper shape ``Wrapper(model, loss, ...)``, and against the
    former ``RecallRegularizer(loss, gamma)`` failing without notice instead of a DeprecationWarning."""
    model = nn.Linear(3, 3).double()
    new = RecallRegularizer(model, FocalInfoNCE(model), gamma=0.3)
    assert new.model is model and new.gamma == 0.3
    with pytest.warns(DeprecationWarning, match="model first"):
        old = RecallRegularizer(FocalInfoNCE(model), 0.3)
    assert old.model is model and old.gamma == 0.3
    with pytest.warns(DeprecationWarning):
        assert RecallRegularizer(FocalInfoNCE(model), gamma=0.4).gamma == 0.4
    embeddings = columns(20, 4, 5, 2)
    assert new.compute_loss_from_embeddings(embeddings).item() == old.compute_loss_from_embeddings(embeddings).item()
    with pytest.raises(ValueError, match="loss.model"):
        RecallRegularizer(nn.Linear(3, 3), FocalInfoNCE(model))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_loss_is_named_by_its_public_path(case):
    """Guards against model cards naming ``st_debias.losses.focal_infonce.FocalInfoNCE`` (a private module)
    instead of the documented ``st_debias.losses.FocalInfoNCE``."""
    from sentence_transformers.util import fullname

    import st_debias.losses

    loss = case.build()
    path = fullname(loss)
    assert path == f"st_debias.losses.{type(loss).__name__}"
    assert getattr(st_debias.losses, type(loss).__name__) is type(loss)


def test_recall_regularizer_config_names_the_wrapped_loss_by_its_public_path():
    """Guards against the wrapped loss appearing by bare class name (ambiguous with ST's own losses)."""
    config = RecallRegularizer(None, FocalInfoNCE(None), parameters=[]).get_config_dict()
    assert config["loss"] == "st_debias.losses.FocalInfoNCE"


def test_config_names_the_guide_model(tiny_model, tiny_bert_dir):
    """Guards against the model card writing ``"guide": "SentenceTransformer"`` (the class, not which model)."""
    from tests.conftest import load_tiny_model

    guide = load_tiny_model(tiny_bert_dir)
    name = InstanceWeightedMNRL(tiny_model, guide=guide).get_config_dict()["guide"]
    assert name == str(tiny_bert_dir)
    guide.model_card_data.base_model = "sentence-transformers/all-MiniLM-L6-v2"
    name = InstanceWeightedMNRL(tiny_model, guide=guide).get_config_dict()["guide"]
    assert name == "sentence-transformers/all-MiniLM-L6-v2"


# -- 9. Inside sentence-transformers' wrappers and legacy loop (issue 12) ----------------------------------
MODEL_BATCH = 6

MODEL_CASES: dict[str, tuple[int, Callable]] = {
    "FocalInfoNCE": (2, lambda model, guide: FocalInfoNCE(model)),
    "InstanceWeightedMNRL": (2, lambda model, guide: InstanceWeightedMNRL(model, guide=guide, threshold=0.5)),
    "DebiasInfoNCE": (3, lambda model, guide: DebiasInfoNCE(model)),
    "MarginNegationLoss": (3, lambda model, guide: MarginNegationLoss(model, margin_weight=1.0)),
    "MarginNegationLoss(dropout_columns)": (
        3,
        lambda model, guide: MarginNegationLoss(model, dropout_columns=("anchor", "negation"), contrastive_weight=0.5),
    ),
    "RecallRegularizer(MarginNegationLoss)": (
        3,
        lambda model, guide: RecallRegularizer(model, MarginNegationLoss(model, margin_weight=1.0), gamma=0.1),
    ),
}
#: The same losses returning their named parts, as the recipes build them for the trainer's logging.
PARTS_CASES: dict[str, tuple[int, Callable]] = {
    "MarginNegationLoss(return_parts)": (
        3, lambda model, guide: MarginNegationLoss(model, margin_weight=1.0, return_parts=True),
    ),
    "RecallRegularizer(return_parts)": (
        3,
        lambda model, guide: RecallRegularizer(
            model, MarginNegationLoss(model, margin_weight=1.0, return_parts=True), gamma=0.1, return_parts=True
        ),
    ),
    "SimilarityPreservation(return_parts)": (
        2, lambda model, guide: SimilarityPreservation(model, FocalInfoNCE(model), weight=1.0, return_parts=True),
    ),
}


def _text_columns(sentences: list[str], count: int) -> list[list[str]]:
    return [sentences[index * MODEL_BATCH : (index + 1) * MODEL_BATCH] for index in range(count)]


@pytest.mark.parametrize("wrapper", ["MatryoshkaLoss", "AdaptiveLayerLoss"])
@pytest.mark.parametrize("name", list(MODEL_CASES))
def test_composes_with_sentence_transformers_wrappers(name, wrapper, tiny_model, tiny_bert_dir, wiki_sentences):
    """Guards against ``unsupported operand type(s) for *: 'int' and 'dict'``: MatryoshkaLoss and
    AdaptiveLayerLoss multiply and add the wrapped loss's output, so it must be a tensor by default."""
    from sentence_transformers.sentence_transformer.losses import AdaptiveLayerLoss, MatryoshkaLoss

    from tests.conftest import load_tiny_model

    num_columns, build = MODEL_CASES[name]
    loss = build(tiny_model, load_tiny_model(tiny_bert_dir))
    if wrapper == "MatryoshkaLoss":
        wrapped = MatryoshkaLoss(tiny_model, loss, matryoshka_dims=[128, 32])
    else:
        wrapped = AdaptiveLayerLoss(tiny_model, loss)
    features = [tiny_model.preprocess(column) for column in _text_columns(wiki_sentences, num_columns)]
    value = wrapped(features, torch.zeros(MODEL_BATCH))
    assert isinstance(value, torch.Tensor) and value.dim() == 0 and torch.isfinite(value)
    value.backward()
    gradients = [p.grad for p in tiny_model.parameters() if p.grad is not None]
    assert gradients and all(torch.isfinite(g).all() for g in gradients)


@pytest.mark.parametrize("name", [*MODEL_CASES, *PARTS_CASES])
def test_trains_with_legacy_old_fit(name, tiny_model, tiny_bert_dir, wiki_sentences, tmp_path, monkeypatch):
    """Guards against ``'dict' object has no attribute 'backward'`` in ``model.old_fit``, which calls
    ``loss(features, labels).backward()`` directly: by default, and with ``return_parts=True`` (the recipes'
    setting), whose parts backpropagate as their sum."""
    from sentence_transformers.sentence_transformer.datasets import NoDuplicatesDataLoader
    from sentence_transformers.sentence_transformer.readers import InputExample

    from tests.conftest import load_tiny_model

    monkeypatch.chdir(tmp_path)
    num_columns, build = {**MODEL_CASES, **PARTS_CASES}[name]
    loss = build(tiny_model, load_tiny_model(tiny_bert_dir))
    examples = [InputExample(texts=list(texts)) for texts in zip(*_text_columns(wiki_sentences, num_columns))]
    before = [p.detach().clone() for p in tiny_model.parameters()]
    tiny_model.old_fit(
        train_objectives=[(NoDuplicatesDataLoader(examples, batch_size=MODEL_BATCH), loss)],
        epochs=1,
        warmup_steps=0,
        show_progress_bar=False,
    )
    assert any(not torch.equal(b, p) for b, p in zip(before, tiny_model.parameters()))


def test_recall_regularizer_outside_matryoshka_adds_the_recall_term_once(tiny_model, wiki_sentences):
    """Guards against the documented outermost composition failing (the wrapped MatryoshkaLoss has no
    ``compute_loss_from_embeddings``) or counting l_r once per Matryoshka dimension."""
    from sentence_transformers.sentence_transformer.losses import MatryoshkaLoss

    matryoshka = MatryoshkaLoss(tiny_model, MarginNegationLoss(tiny_model), matryoshka_dims=[128, 32])
    regularizer = RecallRegularizer(tiny_model, matryoshka, gamma=0.5, return_parts=True)
    with torch.no_grad():
        next(tiny_model.parameters()).add_(0.1)
    features = [tiny_model.preprocess(column) for column in _text_columns(wiki_sentences, 3)]
    parts = regularizer(features, torch.zeros(MODEL_BATCH))
    assert set(parts) == {"MatryoshkaLoss", "recall"}
    torch.testing.assert_close(parts["recall"], regularizer.recall())
    assert parts["recall"].item() > 0 and torch.isfinite(parts["MatryoshkaLoss"])
