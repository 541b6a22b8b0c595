"""The lab's research settings for recipes, added through st_debias's recipe-extension seam
(``st_debias.recipe_extensions`` entry points in ``benchmarks/pyproject.toml``): no packaged recipe uses them.

* ``training.frozen_layers`` / ``training.freeze_embeddings`` (:class:`FrozenLayers`): the embedding layer and
  the first N transformer layers keep their start weights;
* ``training.decay_to_start`` (:class:`DecayToStartSetting`): ``benchmarks.harness.decay_to_start.DecayToStart``
  pulls every weight back toward its start value after each step;
* ``loss.preservation_weight`` / ``loss.preservation_without_dropout`` (:class:`Preservation`): the loss is
  wrapped in :class:`~st_debias.losses.SimilarityPreservation` (inside the recall term);
* ``data.mix_sentences`` (:class:`MixSentences`): the corpus sentences the ``data.mix`` sources that read the
  corpus are built from.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from st_debias.recipes.extensions import RecipeExtension
from st_debias.recipes.losses import uncached_name
from st_debias.recipes.mix_sources import MIX_SOURCES

if TYPE_CHECKING:
    from st_debias.recipes import Recipe

# Recipes load this module to learn its keys, so it imports no torch: what needs it is imported where it is used.


def freeze_lower_layers(model: Any, count: int, embeddings_alone: bool = False) -> None:
    """Keep the embedding layer and the first ``count`` transformer layers at their current weights; with
    ``count`` 0, the embedding layer alone when ``embeddings_alone``, else nothing.

    Raises:
        ValueError: the model's first module has no ``embeddings`` and ``encoder.layer`` (BERT-style encoders
            such as MiniLM and MPNet have them), or ``count`` would leave no layer to train.
    """
    if count == 0 and not embeddings_alone:
        return
    encoder = getattr(model[0], "auto_model", None)
    embeddings = getattr(encoder, "embeddings", None)
    layers = getattr(getattr(encoder, "encoder", None), "layer", None)
    if embeddings is None or layers is None:
        raise ValueError(
            f"training.frozen_layers / freeze_embeddings: {type(encoder).__name__} has no embeddings and "
            "encoder.layer to freeze; leave both off for this model."
        )
    if count >= len(layers):
        raise ValueError(f"training.frozen_layers is {count}, but the model has {len(layers)} layers: none would train.")
    embeddings.requires_grad_(False)
    for layer in layers[:count]:
        layer.requires_grad_(False)


class FrozenLayers(RecipeExtension):
    """``training.frozen_layers`` (layers kept at their start weights, counted from the input, with the embedding
    layer; 0: every weight trains) and ``training.freeze_embeddings`` (the embedding layer alone)."""

    section = "training"
    defaults = {"frozen_layers": 0, "freeze_embeddings": False}

    def check(self, recipe: Recipe) -> None:
        count, alone = self.values["frozen_layers"], self.values["freeze_embeddings"]
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise ValueError(f"training.frozen_layers must be an integer >= 0, got {count!r}.")
        if not isinstance(alone, bool):
            raise ValueError(f"training.freeze_embeddings must be true or false, got {alone!r}.")

    def prepare_model(self, model: Any) -> None:
        freeze_lower_layers(model, self.values["frozen_layers"], embeddings_alone=self.values["freeze_embeddings"])


class DecayToStartSetting(RecipeExtension):
    """``training.decay_to_start``: the strength of the pull toward the start weights after each step (0: off)."""

    section = "training"
    defaults = {"decay_to_start": 0.0}

    def check(self, recipe: Recipe) -> None:
        value = self.values["decay_to_start"]
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
            raise ValueError(f"training.decay_to_start must be >= 0 (0: off), got {value!r}.")

    def callbacks(self) -> list[Any]:
        from benchmarks.harness.decay_to_start import DecayToStart

        strength = self.values["decay_to_start"]
        return [DecayToStart(strength)] if strength else []


class Preservation(RecipeExtension):
    """``loss.preservation_weight`` (the weight of :class:`~st_debias.losses.SimilarityPreservation` around the
    loss) and ``loss.preservation_without_dropout`` (its ``without_dropout``)."""

    section = "loss"
    defaults = {"preservation_weight": None, "preservation_without_dropout": False}

    def check(self, recipe: Recipe) -> None:
        weight, without_dropout = self.values["preservation_weight"], self.values["preservation_without_dropout"]
        if not isinstance(without_dropout, bool):
            raise ValueError(f"loss.preservation_without_dropout must be true or false, got {without_dropout!r}.")
        if weight is None:
            if without_dropout:
                raise ValueError("loss.preservation_without_dropout needs loss.preservation_weight.")
            return
        if isinstance(weight, bool) or not isinstance(weight, int | float) or not math.isfinite(weight) or weight < 0:
            raise ValueError(f"loss.preservation_weight must be a finite number >= 0, got {weight!r}.")
        inner = uncached_name(recipe.loss.name)
        if inner:
            raise ValueError(
                f"loss.preservation_weight cannot wrap the cached {recipe.loss.name} (SimilarityPreservation needs "
                f"the anchors' embeddings with gradients, which a cached loss never holds); use {inner}, or drop "
                "loss.preservation_weight."
            )

    def wrap_loss(self, loss: Any, model: Any) -> Any:
        from st_debias.losses import SimilarityPreservation

        weight = self.values["preservation_weight"]
        if weight is None:
            return loss
        return SimilarityPreservation(
            model, loss, weight=weight, return_parts=True, without_dropout=self.values["preservation_without_dropout"]
        )


class MixSentences(RecipeExtension):
    """``data.mix_sentences``: corpus sentences (from the first line) the ``data.mix`` sources that read the corpus
    are built from; more sentences give more distinct rows, so fewer are repeated."""

    section = "data"
    defaults = {"mix_sentences": None}

    def check(self, recipe: Recipe) -> None:
        count = self.values["mix_sentences"]
        if count is None:
            return
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise ValueError(f"data.mix_sentences must be a whole number ≥ 1, got {count!r}.")
        if not any(MIX_SOURCES[source].reads_corpus for source in recipe.data.mix):
            corpus_sources = [name for name, source in MIX_SOURCES.items() if source.reads_corpus]
            raise ValueError(
                f"data.mix_sentences sets the corpus sentences of the mix sources built from them "
                f"({', '.join(corpus_sources)}), but data.mix has no share of one."
            )

    def mix_corpus_sentences(self) -> int | None:
        return self.values["mix_sentences"]


def knob(recipe: Recipe, key: str) -> Any:
    """The value ``recipe`` gives a lab key (any extension's, in any section), else the key's default.

    Raises:
        KeyError: no registered extension has ``key``.
    """
    from st_debias.recipes.extensions import RECIPE_EXTENSIONS

    for name, extension in RECIPE_EXTENSIONS.items():
        if key in extension.defaults:
            return recipe.extensions.get(name, {}).get(key, extension.defaults[key])
    raise KeyError(f"No recipe extension has the key {key!r}.")
