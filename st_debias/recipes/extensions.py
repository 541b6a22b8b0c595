"""Recipe extensions: keys an installed package adds to a recipe's sections, with what they do to a run.

st_debias's own recipe keys are the fields of :class:`~st_debias.recipes.config.DataConfig`,
:class:`~st_debias.recipes.losses.LossConfig` and :class:`~st_debias.recipes.config.TrainingConfig`. A package that
wants more (a research setting that freezes layers, wraps the loss, or adds a trainer callback) registers a
:class:`RecipeExtension` through the ``st_debias.recipe_extensions`` entry-point group (or
:func:`~st_debias.registry.register_recipe_extension`); a recipe then sets its keys in their section like any
other key, and ``load_recipe`` refuses a key that nothing registered.

Example:
    >>> from st_debias.recipes.extensions import RecipeExtension
    >>> class Warmer(RecipeExtension):
    ...     section = "training"
    ...     defaults = {"warmth": 0.0}
    ...     def check(self, recipe):
    ...         if self.values["warmth"] < 0:
    ...             raise ValueError(f"training.warmth must be >= 0, got {self.values['warmth']!r}.")
    >>> Warmer(warmth=2.0).values
    {'warmth': 2.0}
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from st_debias.registry import RECIPE_EXTENSION_GROUP, Registry, check_recipe_extension

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

    from .config import Recipe

#: The sections a recipe extension may add keys to.
SECTIONS = ("data", "loss", "training")


class RecipeExtension:
    """Keys of one recipe section that an installed package adds, and the hooks that apply them to a run.

    A subclass sets :attr:`section` and :attr:`defaults` and overrides the hooks it needs; each hook's default
    does nothing. A recipe that sets none of its keys never builds it.

    Args:
        **values: the keys the recipe sets (the others take their :attr:`defaults`).

    Raises:
        ValueError: a key outside :attr:`defaults`.
    """

    #: The recipe section the keys sit in: ``data``, ``loss`` or ``training``.
    section: ClassVar[str] = "training"
    #: The keys, each with its default.
    defaults: ClassVar[dict[str, Any]] = {}

    def __init__(self, **values: Any) -> None:
        unknown = sorted(set(values) - set(self.defaults))
        if unknown:
            raise ValueError(f"{type(self).__name__} takes {sorted(self.defaults)}, not {unknown}.")
        self.values: dict[str, Any] = {**self.defaults, **values}

    def check(self, recipe: Recipe) -> None:
        """Refuse values this extension cannot apply to ``recipe``, before any model loads.

        Raises:
            ValueError: naming the key as ``section.key``.
        """

    def prepare_model(self, model: SentenceTransformer) -> None:
        """Change the start model before training (after it loads, before any row is built)."""

    def wrap_loss(self, loss: Any, model: SentenceTransformer) -> Any:
        """The loss to train with, given the recipe's loss (before ``loss.recall_gamma`` wraps it)."""
        return loss

    def callbacks(self) -> list[Any]:
        """Trainer callbacks to add to the run."""
        return []

    def mix_corpus_sentences(self) -> int | None:
        """Corpus sentences (from the first line) that the ``data.mix`` sources reading the corpus are built
        from; None: the sentences the run's own rows are built from."""
        return None


#: Every recipe extension: name → class; those of installed packages' entry points and
#: :func:`~st_debias.registry.register_recipe_extension` (st_debias itself has none).
RECIPE_EXTENSIONS: Registry[type[RecipeExtension]] = Registry(
    "recipe extension", RECIPE_EXTENSION_GROUP, {}, check_recipe_extension
)


def extension_keys(section: str, without: str | None = None) -> dict[str, str]:
    """``key → extension name`` for the keys the registered extensions (but ``without``) add to ``section``."""
    return {
        key: name
        for name, extension in RECIPE_EXTENSIONS.items()
        if name != without and extension.section == section
        for key in extension.defaults
    }


def split_extension_values(section: str, values: dict[str, Any]) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """``values`` of a recipe section split into st_debias's own keys and ``{extension name: {key: value}}``."""
    owners = extension_keys(section)
    own = {key: value for key, value in values.items() if key not in owners}
    extensions: dict[str, dict[str, Any]] = {}
    for key, value in values.items():
        if key in owners:
            extensions.setdefault(owners[key], {})[key] = value
    return own, extensions


def recipe_extensions(recipe: Recipe) -> list[RecipeExtension]:
    """The extensions ``recipe`` sets keys of, built with its values, in the order of ``recipe.extensions`` (its
    sections' order, data, loss, training, then each section's key order): the order their hooks run in."""
    return [RECIPE_EXTENSIONS[name](**values) for name, values in recipe.extensions.items()]
