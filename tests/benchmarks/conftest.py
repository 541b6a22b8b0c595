"""Shared by the benchmark script tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def loss_registry_as_found(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A lab script may add its own losses to the recipe loss registry (``select_dev.py`` does); each test gets a
    copy of the registry, so that nothing it adds reaches the library's tests."""
    from st_debias.recipes import losses

    monkeypatch.setattr(losses, "LOSSES", dict(losses.LOSSES))
    yield
