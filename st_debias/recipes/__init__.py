"""Recipes: versioned configs that turn a start model and plain sentences into a debiased model.

Exports are imported lazily, so ``st-debias --help`` and ``st-debias recipes`` never load torch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from st_debias._exports import lazy_exports

if TYPE_CHECKING:
    from .config import Recipe, available_recipes, load_recipe, override
    from .extensions import RecipeExtension
    from .train import TrainResult, train_recipe

_EXPORTS = {
    "Recipe": "st_debias.recipes.config",
    "available_recipes": "st_debias.recipes.config",
    "load_recipe": "st_debias.recipes.config",
    "override": "st_debias.recipes.config",
    "RecipeExtension": "st_debias.recipes.extensions",
    "TrainResult": "st_debias.recipes.train",
    "train_recipe": "st_debias.recipes.train",
}

__all__ = ["Recipe", "RecipeExtension", "TrainResult", "available_recipes", "load_recipe", "override", "train_recipe"]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
