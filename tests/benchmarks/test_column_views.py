"""The lab loss ``ColumnViewsMarginLoss`` (benchmarks/selection/column_views.py): the margin plus SimCSE on chosen
columns, against a float64 reference written from the equations, and through the recipe registry."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "selection"))
from column_views import ColumnViewsMarginLoss  # noqa: E402


def reference(
    columns: list[torch.Tensor], views: dict[str, torch.Tensor], alpha: float, beta: float, weight: float, scale: float, view_weight: float
) -> float:
    """λ · mean_i [max(s(a,n) − s(a,p) + α, 0) + max(s(a,p) − s(a,n) − β, 0)] + w · Σ_c mean_i −log softmax_j(scale·s(c_i, c'_j))_i,
    one row at a time in float64."""
    def cos(u: torch.Tensor, v: torch.Tensor) -> float:
        return float(u @ v / (u.norm() * v.norm()))

    anchor, paraphrase, negation = (c.detach().double() for c in columns)
    rows = anchor.size(0)
    margin = 0.0
    for i in range(rows):
        gap = cos(anchor[i], paraphrase[i]) - cos(anchor[i], negation[i])
        margin += max(alpha - gap, 0.0) + max(gap - beta, 0.0)
    total = weight * margin / rows
    named = dict(zip(("anchor", "paraphrase", "negation"), (anchor, paraphrase, negation)))
    for column, view in views.items():
        source, view = named[column], view.detach().double()
        for i in range(rows):
            logits = [scale * cos(source[i], view[j]) for j in range(rows)]
            total += view_weight * (math.log(sum(math.exp(x) for x in logits)) - logits[i]) / rows
    return total


@pytest.mark.parametrize(("view_columns", "view_weight"), [(("negation",), 1.0), (("anchor", "negation"), 0.3)])
def test_column_views_match_the_float64_reference_and_pass_gradcheck(view_columns: tuple[str, ...], view_weight: float) -> None:
    generator = torch.Generator().manual_seed(0)
    columns = [torch.randn(5, 8, generator=generator, dtype=torch.float64, requires_grad=True) for _ in range(3 + len(view_columns))]
    loss = ColumnViewsMarginLoss(None, view_columns=view_columns, view_weight=view_weight, alpha=0.1, beta=0.3, margin_weight=0.5, scale=5.0)
    value = loss.compute_loss_from_embeddings(columns)
    expected = reference(columns[:3], dict(zip(view_columns, columns[3:])), 0.1, 0.3, 0.5, 5.0, view_weight)
    assert value.item() == pytest.approx(expected, rel=1e-10)
    assert torch.autograd.gradcheck(lambda *c: loss.compute_loss_from_embeddings(list(c)), tuple(columns))

    parts = ColumnViewsMarginLoss(None, view_columns=view_columns, return_parts=True).compute_loss_from_embeddings(columns)
    assert set(parts) == {"margin", *(f"contrastive_{c}" for c in view_columns)}


def test_each_named_column_is_embedded_again_and_wrong_columns_are_refused() -> None:
    features = [{"input_ids": torch.tensor([[i]])} for i in range(3)]
    columns = ColumnViewsMarginLoss(None, view_columns=("negation",)).input_columns(features)
    assert len(columns) == 4 and columns[3] is not features[2] and torch.equal(columns[3]["input_ids"], features[2]["input_ids"])
    loss = ColumnViewsMarginLoss(None, view_columns=("negation",))
    first = loss.input_columns(features)[3]
    assert loss.input_columns(features)[3] is first, "one copy per column dict, for wrappers that call again"
    assert loss.input_columns([dict(f) for f in features])[3] is not first
    with pytest.raises(ValueError, match="expects 4"):
        ColumnViewsMarginLoss(None).compute_loss_from_embeddings([torch.randn(2, 4) for _ in range(3)])
    for bad in ([], ["negation", "negation"], ["positive"]):
        with pytest.raises(ValueError, match="view_columns"):
            ColumnViewsMarginLoss(None, view_columns=bad)
    with pytest.raises(ValueError, match="view_weight"):
        ColumnViewsMarginLoss(None, view_weight=-0.5)


def test_a_recipe_names_it_through_the_registry(tiny_model) -> None:
    from column_views import register
    from datasets import Dataset

    from st_debias.recipes import losses
    from st_debias.recipes.losses import LossConfig, build_loss

    assert "ColumnViewsMarginLoss" not in losses.LOSSES  # put back after each test (conftest.py)
    register()

    rows = Dataset.from_dict({"anchor": ["a b"], "positive": ["b a"], "negative": ["not a b"]})
    spec = LossConfig(name="ColumnViewsMarginLoss", params={"view_columns": ["negation"], "margin_weight": 2e-3}, recall_gamma=1e-3)
    loss, _ = build_loss(spec, tiny_model, rows)
    assert type(loss.loss).__name__ == "ColumnViewsMarginLoss" and loss.loss.view_columns == ("negation",)


def test_the_view_is_a_second_dropout_sample_of_its_column(tiny_model) -> None:
    texts = ["the cat sat on the mat", "stocks fell sharply today", "rain is not expected"]
    loss = ColumnViewsMarginLoss(tiny_model, view_columns=("negation",))
    for training, differs in ((True, True), (False, False)):
        tiny_model.train(training)
        features = [tiny_model.tokenize(texts) for _ in range(3)]
        negation, view = loss.embed(loss.input_columns(features))[2:]
        assert (not torch.allclose(negation, view)) is differs
