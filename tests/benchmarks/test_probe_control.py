"""The negation-meaning probe's control (benchmarks/negation_teacher/probe_control.py): "X is C" sentences built from
real corpus quadruples, the rule for C, and the figures against a pair-by-pair reference."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from benchmarks.negation_teacher.probe_control import (
    control_scores,
    replaced_word,
    unrelated,
    unrelated_sentences,
)
from st_debias.data.text import swapped_words
from st_debias.evaluation import EmbeddingCache
from st_debias.recipes.mix_sources import negation_meaning_quadruples
from tests.conftest import first_sentences
from tests.evaluation.conftest import FakeEncoder


def test_c_is_never_a_b_or_a_wordnet_antonym_or_synonym_of_either() -> None:
    assert not unrelated("large", "small", "large")
    assert not unrelated("large", "small", "small")
    assert not unrelated("large", "small", "little")  # a synonym of B
    assert not unrelated("large", "small", "big")  # a synonym of A
    assert not unrelated("good", "bad", "evil")  # another antonym of A
    assert not unrelated("bad", "good", "evil")  # another antonym of B
    assert unrelated("large", "small", "wooden")


def test_the_word_is_replaced_where_it_stands_once() -> None:
    assert replaced_word("The Road is narrow.", "road", "lane") == "The lane is narrow."
    assert replaced_word("It isn't narrow, it's wide.", "wide", "green") == "It isn't narrow, it's green."
    assert replaced_word("A small, small house.", "small", "green") is None  # twice: which one is ambiguous
    assert replaced_word("A smaller house.", "small", "green") is None  # a word, not a substring


@pytest.fixture(scope="module")
def quadruples(tmp_path_factory) -> list[tuple[str, str, str, str]]:
    rows, _ = negation_meaning_quadruples(first_sentences(4000), tmp_path_factory.mktemp("quadruples"))
    return rows


def test_each_control_changes_the_antonym_sentence_in_its_one_word(quadruples) -> None:
    affirmative, antonym = [q[0] for q in quadruples], [q[2] for q in quadruples]
    pool = [swapped_words(a, b)[1] for a, b in zip(affirmative, antonym, strict=True)]
    controls = unrelated_sentences(affirmative, antonym, pool, seed=0)
    assert len(controls) == len(quadruples)
    built = [(a, b, c) for a, b, c in zip(affirmative, antonym, controls, strict=True) if c is not None]
    # Real quadruples have a C for most items (a pool of several words).
    assert len(quadruples) >= 5 and len(built) >= 0.9 * len(quadruples)
    for first, second, control in built:
        a, b = swapped_words(first, second)
        old, new = swapped_words(second, control)
        assert old == b and new in set(pool) and unrelated(a, b, new)
    # Seeded per item: the same draw each time and in any subset, another with another seed.
    assert unrelated_sentences(affirmative, antonym, pool, seed=0) == controls
    assert unrelated_sentences(affirmative[1:], antonym[1:], pool, seed=0) == controls[1:]
    assert unrelated_sentences(affirmative, antonym, pool, seed=1) != controls


def test_the_figures_against_a_pair_by_pair_reference() -> None:
    rows = [(f"The thing {i} is big.", f"The thing {i} is not big.", f"The thing {i} is small.") for i in range(50)]
    # B twice in its sentence: no "X is C" with one word changed, so the item is left out.
    rows.append(("The small box is big.", "The small box is not big.", "The small box is small."))
    pool = ["small", "wooden", "green", "quick", "little", "large"]
    controls = unrelated_sentences([r[0] for r in rows], [r[2] for r in rows], pool, seed=3)
    assert controls[-1] is None and all(c is not None for c in controls[:-1])
    rng = np.random.default_rng(5)
    table = {text: rng.normal(size=6).tolist() for row in rows for text in row}
    table.update({text: rng.normal(size=6).tolist() for text in controls if text is not None})
    items = SimpleNamespace(affirmative=[r[0] for r in rows], negated=[r[1] for r in rows], antonym=[r[2] for r in rows])
    out = control_scores(EmbeddingCache(FakeEncoder(table)), items, pool, seed=3)

    def cos(x: str, y: str) -> float:
        u, v = np.asarray(table[x], dtype=np.float64), np.asarray(table[y], dtype=np.float64)
        return float(u @ v / np.linalg.norm(u) / np.linalg.norm(v))

    kept = [(a, n, b, c) for (a, n, b), c in zip(rows, controls, strict=True) if c is not None]
    assert out["items"] == 50
    assert out["b_over_a"] == pytest.approx(np.mean([cos(n, b) > cos(n, a) for a, n, b, _ in kept]))
    assert out["b_over_c"] == pytest.approx(np.mean([cos(n, b) > cos(n, c) for _, n, b, c in kept]))
    assert out["c_over_a"] == pytest.approx(np.mean([cos(n, c) > cos(n, a) for a, n, _, c in kept]))
    assert out["b_minus_c"] == pytest.approx(np.mean([cos(n, b) - cos(n, c) for _, n, b, c in kept]), abs=1e-6)
