"""Helpers live in the module their name says, and only there."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

# old module, name, new module: st_debias was never released with the old paths, so none is kept
MOVED = [
    ("st_debias.evaluation.bias", "training_pair_statistics", "st_debias.evaluation.pairs"),
    ("st_debias.evaluation.bias_data", "load_pair_rows", "st_debias.evaluation.pairs"),
    ("st_debias.data.parallel", "block_builder", "st_debias.data.kinds"),
    ("st_debias.data.io.nli", "evaluation_sentences", "st_debias.evaluation.sts_data"),
    ("st_debias.evaluation.report", "plot_scores", "st_debias.evaluation.plots"),
    ("st_debias.evaluation.report", "cont_oppn_part", "st_debias.evaluation.entries"),
    ("st_debias.recipes.run_folder", "hold_run_folder", "st_debias.files"),
]


@pytest.mark.parametrize(("old", "name", "new"), MOVED, ids=[f"{old}.{name}" for old, name, _ in MOVED])
def test_a_moved_name_lives_in_its_home_only(old: str, name: str, new: str) -> None:
    """No deprecation shim: the old path fails; the name is read from its home."""
    with pytest.raises(AttributeError):
        getattr(importlib.import_module(old), name)
    assert hasattr(importlib.import_module(new), name if name != "hold_run_folder" else "hold_output_folder")


def test_the_old_neighbour_module_is_gone() -> None:
    sys.modules.pop("st_debias.data.ipw.neighbours", None)
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("st_debias.data.ipw.neighbours")


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


def test_every_package_exports_one_way() -> None:
    """One ``__init__`` style: a package that exports names does it lazily through ``st_debias._exports`` (three
    styles used to live side by side: eager with a ``__module__`` rewrite, lazy, plain eager)."""
    root = Path(importlib.import_module("st_debias").__file__).parent
    exporting = []
    for init in sorted(root.rglob("__init__.py")):
        name = ".".join(init.relative_to(root.parent).parent.parts)
        package = importlib.import_module(name)
        if getattr(package, "__all__", None):
            exporting.append(name)
            assert package.__getattr__.__module__ == "st_debias._exports", name
            assert set(package.__all__) == set(package._EXPORTS) <= set(dir(package)), name
    assert len(exporting) >= 6, exporting
    import st_debias.data

    assert st_debias.data.MinimalPairBuilder.__name__ == "MinimalPairBuilder"
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        st_debias.data.nope  # noqa: B018
