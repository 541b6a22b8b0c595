"""A package's exports, resolved on first use."""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    module_name: str, exports: Mapping[str, str], present_as_package: bool = False
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for module ``module_name``.

    Args:
        module_name: the module's ``__name__``.
        exports: public name -> the module that defines it, imported on first use (so that importing the package
            stays light) and then kept in the module's namespace.
        present_as_package: give each exported class the package as its ``__module__`` once read, so that it
            shows as ``package.Name`` (sentence-transformers' model cards name a loss by its class's module).

    Example:
        >>> __getattr__, __dir__ = lazy_exports(__name__, {"train_recipe": "st_debias.recipes.train"})  # doctest: +SKIP
    """

    def __getattr__(name: str) -> Any:
        home = exports.get(name)
        if home is None:
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        if present_as_package and isinstance(value, type):
            value.__module__ = module_name
        setattr(sys.modules[module_name], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[module_name])) | set(exports))

    _keep_exports_over_submodules(module_name, exports)
    return __getattr__, __dir__


def _keep_exports_over_submodules(module_name: str, exports: Mapping[str, str]) -> None:
    """Keep an export named like the submodule that defines it (``mteb_tasks`` in ``….mteb_tasks``) the export.

    Importing a submodule binds it on its package under its own name, which would hide the lazy export of that
    name from then on; an eager ``from .mteb_tasks import mteb_tasks`` rebinds it, and this does the same.
    """
    shadowed = {name for name, home in exports.items() if home == f"{module_name}.{name}"}
    if not shadowed:
        return

    class _Package(types.ModuleType):
        def __setattr__(self, name: str, value: Any) -> None:
            if name in shadowed and isinstance(value, types.ModuleType):
                return
            super().__setattr__(name, value)

    sys.modules[module_name].__class__ = _Package
