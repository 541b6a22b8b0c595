"""The lab loss ``DesharedMarginLoss`` (benchmarks/polarity_cluster/deshared_margin.py): the margin scored without the
batch's common difference direction, against a float64 reference written from the equation, with gradcheck, the
gradient's direction, and through the recipe registry."""

from __future__ import annotations

import math

import pytest
import torch

from benchmarks.polarity_cluster import deshared_margin
from benchmarks.polarity_cluster.column_views import ColumnViewsMarginLoss
from benchmarks.polarity_cluster.deshared_margin import DesharedColumnViewsLoss, DesharedMarginLoss
from st_debias.losses import MarginNegationLoss
from tests.benchmarks.conftest import recipe_built_lab_loss


def reference(columns: list[torch.Tensor], alpha: float, beta: float, weight: float, scale: float) -> float:
    """l_c + λ · mean_i [max(s(a,ñ) − s(a,p) + α, 0) + max(s(a,p) − s(a,ñ) − β, 0)], ñ_i = n_i − ((n_i − a_i)·u) u,
    u = mean_i (n_i − a_i) / ‖·‖, one row at a time in float64; l_c = InfoNCE(anchor, view) when a fourth column is given."""
    def cos(x: list[float], y: list[float]) -> float:
        return sum(a * b for a, b in zip(x, y)) / math.sqrt(sum(a * a for a in x) * sum(b * b for b in y))

    anchor, paraphrase, negation = ([[float(v) for v in row] for row in c.detach().double()] for c in columns[:3])
    rows, width = len(anchor), len(anchor[0])
    mean = [sum(negation[i][k] - anchor[i][k] for i in range(rows)) / rows for k in range(width)]
    length = math.sqrt(sum(m * m for m in mean))
    u = [m / length for m in mean]
    margin = 0.0
    for i in range(rows):
        along = sum((negation[i][k] - anchor[i][k]) * u[k] for k in range(width))
        deshared = [negation[i][k] - along * u[k] for k in range(width)]
        gap = cos(anchor[i], paraphrase[i]) - cos(anchor[i], deshared)
        margin += max(alpha - gap, 0.0) + max(gap - beta, 0.0)
    total = weight * margin / rows
    if len(columns) == 4:
        view = [[float(v) for v in row] for row in columns[3].detach().double()]
        for i in range(rows):
            logits = [scale * cos(anchor[i], view[j]) for j in range(rows)]
            total += (math.log(sum(math.exp(x) for x in logits)) - logits[i]) / rows
    return total


@pytest.mark.parametrize("contrastive", ["dropout", None])
def test_matches_the_float64_reference_and_passes_gradcheck(contrastive: str | None, monkeypatch) -> None:
    generator = torch.Generator().manual_seed(0)
    count = 4 if contrastive else 3
    columns = [torch.randn(6, 8, generator=generator, dtype=torch.float64, requires_grad=True) for _ in range(count)]
    loss = DesharedMarginLoss(None, alpha=0.1, beta=0.3, margin_weight=0.7, contrastive=contrastive, scale=5.0)
    value = loss.compute_loss_from_embeddings(columns)
    assert value.item() == pytest.approx(reference(columns, 0.1, 0.3, 0.7, 5.0), rel=1e-10)
    plain = MarginNegationLoss(None, alpha=0.1, beta=0.3, margin_weight=0.7, contrastive=contrastive, scale=5.0).compute_loss_from_embeddings(columns)
    assert value.item() != pytest.approx(plain.item(), rel=1e-6), "the reference tells the deshared margin from the plain one"
    # u carries no gradient: gradcheck holds it at its value for these inputs.
    direction = deshared_margin.common_direction(columns[0], columns[2])
    monkeypatch.setattr(deshared_margin, "common_direction", lambda anchor, negation: direction)
    assert torch.autograd.gradcheck(lambda *c: loss.compute_loss_from_embeddings(list(c)), tuple(columns))


def test_the_margin_pushes_no_negation_along_the_common_direction() -> None:
    generator = torch.Generator().manual_seed(1)
    anchor, paraphrase, negation = (torch.randn(16, 12, generator=generator, dtype=torch.float64) for _ in range(3))
    negation = (negation + 3.0 * torch.eye(12, dtype=torch.float64)[0]).requires_grad_(True)  # a shared direction
    loss = DesharedMarginLoss(None, alpha=0.5, beta=0.6, margin_weight=1.0, contrastive=None)
    loss.compute_loss_from_embeddings([anchor, paraphrase, negation]).backward()
    u = deshared_margin.common_direction(anchor, negation)
    assert negation.grad.abs().sum() > 0
    assert torch.allclose(negation.grad @ u, torch.zeros(16, dtype=torch.float64), atol=1e-12)
    plain_loss = MarginNegationLoss(None, alpha=0.5, beta=0.6, margin_weight=1.0, contrastive=None)
    plain = torch.autograd.grad(plain_loss.compute_loss_from_embeddings([anchor, paraphrase, negation]), negation)[0]
    assert (plain @ u).abs().max() > 1e-3, "the plain margin does push along it"


def test_wrong_columns_are_refused_and_a_recipe_names_it(tiny_model) -> None:
    with pytest.raises(ValueError, match="expects 4"):
        DesharedMarginLoss(None).compute_loss_from_embeddings([torch.randn(2, 4) for _ in range(3)])
    recipe_built_lab_loss("DesharedMarginLoss", {"margin_weight": 2e-3, "contrastive": "dropout"}, tiny_model)


def test_under_column_views_only_the_margin_is_deshared(monkeypatch) -> None:
    generator = torch.Generator().manual_seed(2)
    columns = [torch.randn(6, 8, generator=generator, dtype=torch.float64, requires_grad=True) for _ in range(4)]
    settings = {"alpha": 0.1, "beta": 0.3, "margin_weight": 0.7, "scale": 5.0}
    parts = DesharedColumnViewsLoss(None, view_columns=("negation",), view_weight=0.5, return_parts=True, **settings)
    got = parts.compute_loss_from_embeddings(columns)
    margin = DesharedMarginLoss(None, contrastive=None, **settings).compute_loss_from_embeddings(columns[:3])
    views = ColumnViewsMarginLoss(None, view_columns=("negation",), view_weight=0.5, return_parts=True, **settings)
    plain = views.compute_loss_from_embeddings(columns)
    assert got["margin"].item() == pytest.approx(margin.item(), rel=1e-12)
    assert got["margin"].item() != pytest.approx(plain["margin"].item(), rel=1e-6)
    assert got["contrastive_negation"].item() == pytest.approx(plain["contrastive_negation"].item(), rel=1e-12)
    summed = DesharedColumnViewsLoss(None, view_columns=("negation",), view_weight=0.5, **settings)
    direction = deshared_margin.common_direction(columns[0], columns[2])
    monkeypatch.setattr(deshared_margin, "common_direction", lambda anchor, negation: direction)
    assert torch.autograd.gradcheck(lambda *c: summed.compute_loss_from_embeddings(list(c)), tuple(columns))


def test_beside_the_cluster_hold_only_the_margin_is_deshared(monkeypatch, tiny_model) -> None:
    from benchmarks.polarity_cluster import cluster_cap
    from benchmarks.polarity_cluster.cluster_cap import ClusterCapMarginLoss
    from benchmarks.polarity_cluster.deshared_margin import DesharedClusterCapLoss

    generator = torch.Generator().manual_seed(3)
    columns = [torch.randn(6, 8, generator=generator, dtype=torch.float64, requires_grad=True) for _ in range(4)]
    columns[2].data += 2.0 * torch.eye(8, dtype=torch.float64)[0]  # a shared direction, so the hold is active
    settings = {"alpha": 0.1, "beta": 0.3, "margin_weight": 0.7, "scale": 5.0, "cap_weight": 0.9, "cap_shape": "hold"}
    got = DesharedClusterCapLoss(None, return_parts=True, **settings).compute_loss_from_embeddings(columns, reference_excess=0.05)
    plain = ClusterCapMarginLoss(None, return_parts=True, **settings).compute_loss_from_embeddings(columns, reference_excess=0.05)
    margin = DesharedMarginLoss(None, contrastive=None, alpha=0.1, beta=0.3, margin_weight=0.7).compute_loss_from_embeddings(columns[:3])
    assert got["margin"].item() == pytest.approx(margin.item(), rel=1e-12)
    assert got["margin"].item() != pytest.approx(plain["margin"].item(), rel=1e-6)
    assert got["cluster_cap"].item() == pytest.approx(plain["cluster_cap"].item(), rel=1e-12)
    assert got["cluster_cap"].item() > 0
    assert got["contrastive"].item() == pytest.approx(plain["contrastive"].item(), rel=1e-12)
    summed = DesharedClusterCapLoss(None, **settings)
    expected = reference(columns, 0.1, 0.3, 0.7, 5.0) + got["cluster_cap"].item()
    assert summed.compute_loss_from_embeddings(columns, reference_excess=0.05).item() == pytest.approx(expected, rel=1e-10)
    direction = deshared_margin.common_direction(columns[0], columns[2])
    held = cluster_cap.mean_pairwise_cosine(columns[0]).detach()
    monkeypatch.setattr(deshared_margin, "common_direction", lambda anchor, negation: direction)
    monkeypatch.setattr(cluster_cap, "cluster_excess", lambda anchor, negation: cluster_cap.mean_pairwise_cosine(negation) - held)
    assert torch.autograd.gradcheck(
        lambda *c: summed.compute_loss_from_embeddings(list(c), reference_excess=0.05), tuple(columns)
    )
    built = recipe_built_lab_loss(
        "DesharedClusterCapLoss",
        {"cap_weight": 0.5, "cap_rows": "negated", "cap_shape": "hold", "margin_weight": 2e-3}, tiny_model,
    )
    assert isinstance(built, DesharedClusterCapLoss) and built.get_config_dict()["cap_shape"] == "hold"


def test_early_views_weigh_for_their_steps_then_nothing(tiny_model) -> None:
    from benchmarks.polarity_cluster.deshared_margin import EarlyViewsDesharedLoss

    settings = {"view_columns": ("negation",), "view_weight": 0.5, "alpha": 0.1, "beta": 0.3, "margin_weight": 0.7,
                "return_parts": True}
    loss = EarlyViewsDesharedLoss(tiny_model, view_steps=2, **settings)
    features = [tiny_model.tokenize(texts) for texts in (["a b c", "d e f"], ["b a c", "e d f"], ["not a b c", "not d e f"])]
    with torch.no_grad():  # an evaluation call is not a training step
        loss([dict(f) for f in features])
    tiny_model.eval()  # no dropout: every call embeds the same, so the parts compare exactly
    views = [loss([dict(f) for f in features])["contrastive_negation"].item() for _ in range(4)]
    assert views[0] == views[1] > 0 and views[2] == views[3] == 0.0
    plain = DesharedColumnViewsLoss(tiny_model, **settings)([dict(f) for f in features])
    assert views[0] == pytest.approx(plain["contrastive_negation"].item(), rel=1e-6)
    assert loss.get_config_dict()["view_weight"] == 0.5 and loss.get_config_dict()["view_steps"] == 2
    fading = EarlyViewsDesharedLoss(tiny_model, view_steps=4, view_fade=True, **settings)
    faded = [fading([dict(f) for f in features])["contrastive_negation"].item() for _ in range(5)]
    assert faded == pytest.approx([views[0] * share for share in (1.0, 0.75, 0.5, 0.25, 0.0)], rel=1e-6)
    with pytest.raises(ValueError, match="view_steps"):
        EarlyViewsDesharedLoss(None, view_steps=-1)
    built = recipe_built_lab_loss("EarlyViewsDesharedLoss", {"view_steps": 150, "view_weight": 0.5}, tiny_model)
    assert built.view_steps == 150
