"""Shared by the benchmark script tests."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest


@pytest.fixture(autouse=True)
def registries_as_found() -> Iterator[None]:
    """A lab script may add its own losses and mix sources to the recipe registries (``select_dev.py`` does); each
    registry is put back as it was after each test, so that nothing a test adds reaches the library's tests."""
    from st_debias.recipes.losses import LOSSES
    from st_debias.recipes.mix_sources import MIX_SOURCES

    found = [(registry, set(registry)) for registry in (LOSSES, MIX_SOURCES)]
    yield
    for registry, names in found:
        for name in set(registry) - names:
            registry.unregister(name)


def recipe_built_lab_loss(register: Callable[[], None], name: str, params: dict, model):
    """The lab loss ``name`` as a recipe builds it (inside the recall regulariser), after ``register`` adds it to the
    recipe loss registry, where it must not be before (the registries are put back after each test)."""
    from datasets import Dataset

    from st_debias.recipes import losses
    from st_debias.recipes.losses import LossConfig, build_loss

    assert name not in losses.LOSSES
    register()
    rows = Dataset.from_dict({"anchor": ["a b"], "positive": ["b a"], "negative": ["not a b"]})
    loss, _ = build_loss(LossConfig(name=name, params=params, recall_gamma=1e-3), model, rows)
    assert type(loss.loss).__name__ == name
    return loss.loss
