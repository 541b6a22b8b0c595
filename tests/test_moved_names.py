"""Helpers moved to the module their name says; the old import paths keep working, with a DeprecationWarning."""

from __future__ import annotations

import importlib
import sys

import pytest

# old module, name, new module
MOVED = [
    ("st_debias.evaluation.bias", "training_pair_statistics", "st_debias.evaluation.pairs"),
    ("st_debias.evaluation.bias_data", "load_pair_rows", "st_debias.evaluation.pairs"),
    ("st_debias.evaluation.bias_data", "PAIR_METADATA_FIELDS", "st_debias.evaluation.pairs"),
    ("st_debias.data.parallel", "block_builder", "st_debias.data.kinds"),
    ("st_debias.data.parallel", "BlockWorker", "st_debias.data.kinds"),
    ("st_debias.data.io.nli", "evaluation_sentences", "st_debias.evaluation.sts_data"),
    ("st_debias.evaluation.report", "plot_scores", "st_debias.evaluation.plots"),
    ("st_debias.evaluation.report", "plot_cont_oppn", "st_debias.evaluation.plots"),
    ("st_debias.evaluation.report", "plot_probe_histograms", "st_debias.evaluation.plots"),
    ("st_debias.evaluation.report", "plot_negation_histograms", "st_debias.evaluation.plots"),
    ("st_debias.evaluation.report", "plot_word_order_histograms", "st_debias.evaluation.plots"),
    ("st_debias.evaluation.report", "CONT_OPPN_PARTS", "st_debias.evaluation.entries"),
    ("st_debias.evaluation.report", "cont_oppn_part", "st_debias.evaluation.entries"),
    ("st_debias.evaluation.report", "eligible_cont_oppn", "st_debias.evaluation.entries"),
]


@pytest.mark.parametrize(("old", "name", "new"), MOVED, ids=[f"{old}.{name}" for old, name, _ in MOVED])
def test_a_moved_name_warns_and_is_the_same_object(old: str, name: str, new: str) -> None:
    with pytest.warns(DeprecationWarning, match=f"moved to {new}.{name}"):
        value = getattr(importlib.import_module(old), name)
    assert value is getattr(importlib.import_module(new), name)


def test_the_old_neighbour_module_warns_and_reexports() -> None:
    sys.modules.pop("st_debias.data.ipw.neighbours", None)
    with pytest.warns(DeprecationWarning, match="moved to st_debias.data.neighbours"):
        old = importlib.import_module("st_debias.data.ipw.neighbours")
    from st_debias.data.neighbours import range_topk

    assert old.range_topk is range_topk


@pytest.mark.parametrize(
    ("module", "name", "home"),
    [
        ("st_debias.data.io.embeddings", "cache_root", "st_debias.paths"),
        ("st_debias.data.negation.negator", "resolve_spacy_model", "st_debias.data.spacy_pipeline"),
    ],
)
def test_reexported_names_are_their_homes_objects(module: str, name: str, home: str) -> None:
    assert getattr(importlib.import_module(module), name) is getattr(importlib.import_module(home), name)


def test_each_helper_is_defined_in_the_room_its_name_says() -> None:
    """cache_root with the other locations, spaCy loading in one data module, neighbour search in one, training-pair
    statistics outside the bias probes (they used to sit in embeddings, the negator, ipw/ and bias.py)."""
    from st_debias.data.neighbours import range_topk
    from st_debias.data.spacy_pipeline import resolve_spacy_model
    from st_debias.evaluation.pairs import training_pair_statistics
    from st_debias.paths import cache_root

    assert cache_root.__module__ == "st_debias.paths"
    assert resolve_spacy_model.__module__ == "st_debias.data.spacy_pipeline"
    assert range_topk.__module__ == "st_debias.data.neighbours"
    assert training_pair_statistics.__module__ == "st_debias.evaluation.pairs"


def test_lazy_exports_have_one_home() -> None:
    """The packages with lazy exports share one implementation instead of each copying it."""
    import st_debias.data
    import st_debias.recipes

    for package in (st_debias.data, st_debias.recipes):
        assert package.__getattr__.__module__ == "st_debias._exports"
        assert set(package.__all__) <= set(dir(package))
    assert st_debias.data.MinimalPairBuilder.__name__ == "MinimalPairBuilder"
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        st_debias.data.nope  # noqa: B018
