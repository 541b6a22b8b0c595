"""The lab name ``ColumnViewsMarginLoss`` (benchmarks/polarity_cluster/column_views.py) is MarginNegationLoss with SimCSE's
term on chosen columns (tested against its float64 reference in tests/losses), under the lab recipes' names."""

from __future__ import annotations

import pytest
import torch

from benchmarks.polarity_cluster.column_views import ColumnViewsMarginLoss
from st_debias.losses import MarginNegationLoss
from tests.benchmarks.conftest import recipe_built_lab_loss


@pytest.mark.parametrize(("view_columns", "view_weight"), [(("negation",), 0.5), (("anchor", "negation"), 0.3)])
def test_it_is_the_library_loss_with_the_lab_names(view_columns: tuple[str, ...], view_weight: float) -> None:
    generator = torch.Generator().manual_seed(0)
    columns = [torch.randn(5, 8, generator=generator, dtype=torch.float64) for _ in range(3 + len(view_columns))]
    settings = {"alpha": 0.1, "beta": 0.3, "margin_weight": 0.5, "scale": 5.0, "return_parts": True}
    lab = ColumnViewsMarginLoss(None, view_columns=view_columns, view_weight=view_weight, **settings)
    library = MarginNegationLoss(None, dropout_columns=view_columns, contrastive_weight=view_weight, **settings)
    got, expected = lab.compute_loss_from_embeddings(columns), library.compute_loss_from_embeddings(columns)
    assert got.keys() == expected.keys() == {"margin", *(f"contrastive_{c}" for c in view_columns)}
    assert all(torch.equal(got[k], expected[k]) for k in got)
    assert lab.view_columns == view_columns and lab.view_weight == view_weight
    config = lab.get_config_dict()
    assert config["view_columns"] == list(view_columns) and config["view_weight"] == view_weight
    assert "contrastive" not in config and "dropout_columns" not in config
    with pytest.raises(ValueError, match="dropout_columns"):
        ColumnViewsMarginLoss(None, view_columns=["positive"])


def test_a_recipe_names_it_through_the_registry(tiny_model) -> None:
    loss = recipe_built_lab_loss("ColumnViewsMarginLoss", {"view_columns": ["negation"], "margin_weight": 2e-3}, tiny_model)
    assert loss.view_columns == ("negation",)
