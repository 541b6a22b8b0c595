"""train_recipe is a short pipeline of named phases, with checkpoint selection in its own module."""

from __future__ import annotations

import ast
import inspect
import re

from st_debias.recipes import selection, train


def _body_lines(function) -> int:
    """Lines of a function's body, its docstring left out."""
    tree = ast.parse(inspect.getsource(function))
    node = tree.body[0]
    body = node.body[1:] if isinstance(node.body[0], ast.Expr) else node.body
    return body[-1].end_lineno - body[0].lineno + 1


def test_train_recipe_reads_as_its_phases() -> None:
    """It was one 231-line function mixing rank-0 branches, evaluation, selection, model-card edits and saving."""
    function = inspect.unwrap(train.train_recipe)
    source = inspect.getsource(function)
    assert _body_lines(function) <= 20
    for phase in ("_prepare(", "_rows_and_loss(", "_train(", "_publish("):
        assert phase in source, phase


def test_selection_lives_in_its_own_module() -> None:
    assert selection.BEST_METRIC == "eval_sts-dev_spearman_cosine"
    for function in (selection.StartCandidate, selection.held_dev_score, selection.select_weights):
        assert function.__module__ == "st_debias.recipes.selection"
    assert not hasattr(train, "_StartCandidate") and not hasattr(train, "_held_dev_score")


def test_the_training_length_is_set_in_one_place() -> None:
    """max_seq_length was set three times on the start model; now one context sets and restores it."""
    source = inspect.getsource(train)
    assignments = [m.start() for m in re.finditer(r"\bmodel\.max_seq_length\s*=", source)]
    home = inspect.getsource(train.training_length)
    assert len(assignments) == home.count("model.max_seq_length =") == 2  # set, then restore


def test_the_corpus_oversample_comes_from_the_data_kind_registry() -> None:
    assert not hasattr(train, "CORPUS_OVERSAMPLE")
    assert "DATA_KINDS[recipe.data.kind].oversample" in inspect.getsource(train._prepare)
