"""Shared by the benchmark script tests."""

from __future__ import annotations

from typing import Any


def recipe_built_lab_loss(name: str, params: dict[str, Any], model: Any) -> Any:
    """The lab loss ``name`` as a recipe builds it (inside the recall regulariser): the lab's entry points put it in
    the recipe loss registry beside, never among, st_debias's own losses."""
    from datasets import Dataset

    from st_debias.recipes.losses import LOSSES, LossConfig, build_loss

    assert name in LOSSES and name not in LOSSES.builtin()
    rows = Dataset.from_dict({"anchor": ["a b"], "positive": ["b a"], "negative": ["not a b"]})
    loss, _ = build_loss(LossConfig(name=name, params=params, recall_gamma=1e-3), model, rows)
    assert type(loss.loss).__name__ == name
    return loss.loss
