"""Shared by the benchmark script tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def registries_as_found() -> Iterator[None]:
    """A lab script may add its own losses and mix sources to the recipe registries (``select_dev.py`` does); each
    registry is put back as it was after each test, so that nothing a test adds reaches the library's tests."""
    from st_debias.recipes.losses import LOSSES
    from st_debias.recipes.mix_sources import MIX_SOURCES

    found = [(registry, dict(registry)) for registry in (LOSSES, MIX_SOURCES)]
    yield
    for registry, entries in found:
        registry.clear()
        registry.update(entries)
