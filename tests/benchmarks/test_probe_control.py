"""The negation-meaning probe's control (benchmarks/negation_teacher/probe_control.py): "X is C" sentences built from
real corpus quadruples, the rule for C, and the three shares against a pair-by-pair reference."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
from benchmarks.negation_teacher.probe_control import control_scores, unrelated, unrelated_sentences  # noqa: E402
from st_debias.data.text import swapped_words  # noqa: E402
from st_debias.evaluation import EmbeddingCache  # noqa: E402
from st_debias.recipes.mix_sources import negation_meaning_quadruples  # noqa: E402
from tests.conftest import first_sentences  # noqa: E402
from tests.evaluation.conftest import FakeEncoder  # noqa: E402


def test_c_is_never_a_b_an_antonym_of_a_or_a_synonym_of_b() -> None:
    assert not unrelated("large", "small", "large")
    assert not unrelated("large", "small", "small")
    assert not unrelated("large", "small", "little")  # WordNet: a synonym of "small"
    assert not unrelated("good", "bad", "evil")  # WordNet: another antonym of "good"
    assert unrelated("large", "small", "wooden")


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
    assert len(built) >= 0.9 * len(quadruples) and len(quadruples) >= 5
    for first, second, control in built:
        a, b = swapped_words(first, second)
        old, new = swapped_words(second, control)
        assert old == b and new in set(pool) and unrelated(a, b, new)
    # Seeded: the same draw each time, another with another seed.
    assert unrelated_sentences(affirmative, antonym, pool, seed=0) == controls
    assert unrelated_sentences(affirmative, antonym, pool, seed=1) != controls


def test_the_shares_against_a_pair_by_pair_reference() -> None:
    rows = [(f"The thing {i} is big.", f"The thing {i} is not big.", f"The thing {i} is small.") for i in range(9)]
    pool = ["small", "wooden", "green", "quick"]
    controls = unrelated_sentences([r[0] for r in rows], [r[2] for r in rows], pool, seed=3)
    rng = np.random.default_rng(5)
    table = {text: rng.normal(size=6).tolist() for row in rows for text in row}
    table.update({text: rng.normal(size=6).tolist() for text in controls})

    @dataclasses.dataclass
    class Items:
        affirmative: list[str]
        negated: list[str]
        antonym: list[str]

    items = Items(*map(list, zip(*rows, strict=True)))
    out = control_scores(EmbeddingCache(FakeEncoder(table)), items, pool, seed=3)

    def cos(x: str, y: str) -> float:
        u, v = np.asarray(table[x], dtype=np.float64), np.asarray(table[y], dtype=np.float64)
        return float(u @ v / np.linalg.norm(u) / np.linalg.norm(v))

    assert out["items"] == 9
    assert out["b_over_a"] == pytest.approx(np.mean([cos(n, b) > cos(n, a) for a, n, b in rows]))
    assert out["b_over_c"] == pytest.approx(np.mean([cos(n, b) > cos(n, c) for (_, n, b), c in zip(rows, controls, strict=True)]))
    assert out["c_over_a"] == pytest.approx(np.mean([cos(n, c) > cos(n, a) for (a, n, _), c in zip(rows, controls, strict=True)]))
