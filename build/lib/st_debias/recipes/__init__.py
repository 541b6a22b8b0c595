"""Recipes: versioned configs that turn a start model and plain sentences into a debiased model."""

from __future__ import annotations

from .config import Recipe, available_recipes, load_recipe, override
from .train import TrainResult, train_recipe

__all__ = ["Recipe", "TrainResult", "available_recipes", "load_recipe", "override", "train_recipe"]
