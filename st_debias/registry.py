"""The extension points: the losses a recipe may name, the kinds of training rows, the ``data.mix`` sources, and
the keys a package adds to recipes.

Each is one :class:`Registry`. st_debias fills them with its own entries; any installed package adds more through
Python entry points, the way pytest and MTEB plugins are found, without touching st_debias:

.. code-block:: toml

    # the other package's pyproject.toml
    [project.entry-points."st_debias.losses"]
    MyLoss = "my_package.losses:MyLoss"              # a loss class
    [project.entry-points."st_debias.data_kinds"]
    my_rows = "my_package.rows:MY_ROWS"               # a st_debias.data.kinds.DataKind
    [project.entry-points."st_debias.mix_sources"]
    my_source = "my_package.rows:MY_SOURCE"           # a st_debias.recipes.mix_sources.MixSource
    [project.entry-points."st_debias.recipe_extensions"]
    my_knob = "my_package.knobs:MyKnob"               # a st_debias.recipes.extensions.RecipeExtension

After ``pip install`` of that package, a recipe YAML names ``MyLoss`` like any st_debias loss and
``st-debias train --recipe my.yaml`` trains with it. Code that builds its entries at run time (a notebook, a
test) calls :func:`register_loss`, :func:`register_data_kind`, :func:`register_mix_source` or
:func:`register_recipe_extension` instead.

A loss class tells the recipe machinery what it needs through class attributes, so that nothing branches on its
name (each is read with a default, so any sentence-transformers loss registers as it is):

* ``text_columns``: ``(fewest, most)`` text columns per row (``most`` None: no limit); default ``(2, None)``.
* ``logs_parts``: the loss returns its terms as a dict when built with ``return_parts=True``, and a recipe asks
  for them so that the trainer logs each term; default False.
* ``from_recipe``: a classmethod ``(model, rows, params, guide=..., guide_mode=..., show_progress_bar=...) ->
  (loss, rows)`` for a loss that reads a guide model or the rows' ``label`` column (per-row weights); without
  it a recipe drops a ``label`` column, with a warning, and refuses ``loss.guide``.
* ``takes_guide``: the loss reads ``loss.guide`` (given to ``from_recipe``); default: it has ``from_recipe``. A loss
  whose ``from_recipe`` only fills the ``label`` column sets it False, and a recipe naming a guide is refused.
* a loss whose class name is ``Cached`` + the name of another registered loss is that loss's GradCache form.

The registries themselves live beside what they hold: :data:`st_debias.recipes.losses.LOSSES`,
:data:`st_debias.data.kinds.DATA_KINDS`, :data:`st_debias.recipes.mix_sources.MIX_SOURCES` and
:data:`st_debias.recipes.extensions.RECIPE_EXTENSIONS`.

Example:
    >>> from st_debias.recipes.losses import LOSSES
    >>> "MarginNegationLoss" in LOSSES
    True
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable, Iterator, Mapping
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from st_debias.data.kinds import DataKind
    from st_debias.recipes.extensions import RecipeExtension
    from st_debias.recipes.mix_sources import MixSource

logger = logging.getLogger(__name__)

T = TypeVar("T")

#: The entry-point group of each registry.
LOSS_GROUP = "st_debias.losses"
DATA_KIND_GROUP = "st_debias.data_kinds"
MIX_SOURCE_GROUP = "st_debias.mix_sources"
RECIPE_EXTENSION_GROUP = "st_debias.recipe_extensions"


class Registry(Mapping[str, T], Generic[T]):
    """Name → entry, read-only as a mapping; entries are st_debias's own, those added by :meth:`register`, and
    those of installed packages' entry points in :attr:`group` (read on the first lookup that needs them).

    An entry given as ``"module:attribute"`` is imported on first use, so that listing names stays light.

    Args:
        what: what an entry is, for messages ("loss").
        group: the entry-point group.
        builtin: st_debias's own entries.
        check: called on every entry when it is loaded; raises ``TypeError`` for an entry of the wrong sort.
    """

    def __init__(
        self, what: str, group: str, builtin: Mapping[str, T | str], check: Callable[[str, Any], None] | None = None
    ) -> None:
        self.what = what
        self.group = group
        self._entries: dict[str, T | str] = dict(builtin)
        self._builtin = frozenset(builtin)
        self._check = check
        self._plugins_read = False

    def register(self, name: str, entry: T | str, *, replace: bool = False) -> None:
        """Add ``entry`` under ``name``.

        Raises:
            ValueError: ``name`` is taken (a st_debias entry can never be replaced; another only with
                ``replace=True``).
        """
        if name in self._builtin or (name in self._entries and not replace):
            raise ValueError(f"A {self.what} named {name!r} is already registered; choose another name.")
        self._entries[name] = entry

    def unregister(self, name: str) -> None:
        """Remove an entry added by :meth:`register` or an entry point (st_debias's own stay).

        Raises:
            ValueError: ``name`` is one of st_debias's own.
            KeyError: ``name`` is not registered.
        """
        if name in self._builtin:
            raise ValueError(f"The {self.what} {name!r} is st_debias's own and cannot be removed.")
        del self._entries[name]

    def __setitem__(self, name: str, entry: T | str) -> None:
        """Set an entry without the checks of :meth:`register` (tests patch entries with ``monkeypatch.setitem``)."""
        self._entries[name] = entry

    def __delitem__(self, name: str) -> None:
        del self._entries[name]

    def builtin(self) -> list[str]:
        """The names of st_debias's own entries, in registration order."""
        return [name for name in self._entries if name in self._builtin]

    def _read_plugins(self) -> None:
        if self._plugins_read:
            return
        self._plugins_read = True
        for point in entry_points(group=self.group):
            if point.name in self._builtin:
                logger.warning("Ignoring the %s entry point %r of %s: st_debias has its own %s of that name.",
                               self.group, point.name, point.value, self.what)
            elif point.name not in self._entries:
                self._entries[point.name] = point.value

    def __getitem__(self, name: str) -> T:
        if name not in self._entries:
            self._read_plugins()
        entry = self._entries[name]
        if isinstance(entry, str):
            module, _, attribute = entry.partition(":")
            try:
                loaded = getattr(importlib.import_module(module), attribute or name)
            except (ImportError, AttributeError) as error:
                raise ImportError(f"The {self.what} {name!r} ({entry}) cannot be loaded: {error}") from error
            if self._check is not None:
                self._check(name, loaded)
            self._entries[name] = entry = loaded
        return entry

    def __contains__(self, name: object) -> bool:
        if name not in self._entries:
            self._read_plugins()
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        self._read_plugins()
        return iter(list(self._entries))

    def __len__(self) -> int:
        self._read_plugins()
        return len(self._entries)

    def __repr__(self) -> str:
        return f"Registry({self.what!r}, {list(self)})"


def check_loss(name: str, entry: Any) -> None:
    """Refuse a loss entry that is not a ``torch.nn.Module`` subclass (``TypeError``)."""
    import torch

    if not (isinstance(entry, type) and issubclass(entry, torch.nn.Module)):
        raise TypeError(f"The loss {name!r} must be a torch.nn.Module subclass, got {entry!r}.")


def check_data_kind(name: str, entry: Any) -> None:
    """Refuse a data-kind entry that is not a ``DataKind`` of that name (``TypeError``)."""
    from st_debias.data.kinds import DataKind

    if not isinstance(entry, DataKind) or entry.name != name:
        raise TypeError(f"The data kind {name!r} must be a DataKind named {name!r}, got {entry!r}.")


def check_mix_source(name: str, entry: Any) -> None:
    """Refuse a ``data.mix`` entry that is not a ``MixSource`` (``TypeError``)."""
    from st_debias.recipes.mix_sources import MixSource

    if not isinstance(entry, MixSource):
        raise TypeError(f"The data.mix source {name!r} must be a MixSource, got {entry!r}.")


def check_recipe_extension(name: str, entry: Any) -> None:
    """Refuse a recipe-extension entry that is not a ``RecipeExtension`` subclass with keys in one of its
    sections (``TypeError``)."""
    from st_debias.recipes.extensions import SECTIONS, RecipeExtension

    if not (isinstance(entry, type) and issubclass(entry, RecipeExtension)):
        raise TypeError(f"The recipe extension {name!r} must be a RecipeExtension subclass, got {entry!r}.")
    if entry.section not in SECTIONS or not entry.defaults:
        raise TypeError(
            f"The recipe extension {name!r} must name a section among {SECTIONS} and at least one key with its "
            f"default, got section {entry.section!r} and keys {sorted(entry.defaults)}."
        )


def register_loss(loss: type, name: str | None = None, *, replace: bool = False) -> None:
    """Let recipes name ``loss`` (a loss class) as ``name`` (default: the class name).

    Raises:
        TypeError: ``loss`` is not a ``torch.nn.Module`` subclass.
        ValueError: the name is taken.
    """
    from st_debias.recipes.losses import LOSSES

    name = name or loss.__name__
    check_loss(name, loss)
    LOSSES.register(name, loss, replace=replace)


def register_data_kind(kind: DataKind, *, replace: bool = False) -> None:
    """Let recipes and ``st-debias build`` make rows of ``kind`` (under ``kind.name``).

    Raises:
        TypeError: ``kind`` is not a :class:`~st_debias.data.kinds.DataKind`.
        ValueError: the name is taken.
    """
    from st_debias.data.kinds import DATA_KINDS

    check_data_kind(getattr(kind, "name", ""), kind)
    DATA_KINDS.register(kind.name, kind, replace=replace)


def register_mix_source(name: str, source: MixSource, *, replace: bool = False) -> None:
    """Let a recipe's ``data.mix`` take rows from ``source`` under ``name``.

    Raises:
        TypeError: ``source`` is not a :class:`~st_debias.recipes.mix_sources.MixSource`.
        ValueError: the name is taken.
    """
    from st_debias.recipes.mix_sources import MIX_SOURCES

    check_mix_source(name, source)
    MIX_SOURCES.register(name, source, replace=replace)


def register_recipe_extension(name: str, extension: type[RecipeExtension], *, replace: bool = False) -> None:
    """Let recipes set the keys of ``extension`` (a :class:`~st_debias.recipes.extensions.RecipeExtension`
    subclass) in its section.

    Raises:
        TypeError: ``extension`` is not a ``RecipeExtension`` subclass with a section and keys.
        ValueError: the name is taken, or one of its keys is already a key of its section.
    """
    from st_debias.recipes.config import section_keys
    from st_debias.recipes.extensions import RECIPE_EXTENSIONS

    check_recipe_extension(name, extension)
    taken = sorted(set(extension.defaults) & section_keys(extension.section, without=name))
    if taken:
        raise ValueError(f"The recipe extension {name!r} adds {extension.section} keys {taken}, which are already keys.")
    RECIPE_EXTENSIONS.register(name, extension, replace=replace)
