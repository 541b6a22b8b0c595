"""The lab mix sources ``negation_meaning_half_pairs`` and ``negation_meaning_lexical_pairs``
(benchmarks/negation_meaning/held_out_pairs.py) on real corpus sentences, and the paired comparison and the training-row
items of ``benchmarks/negation_meaning/probe_cosines.py``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
from benchmarks.negation_meaning.held_out_pairs import (  # noqa: E402
    HALF_PAIRS,
    LEXICAL_PAIRS,
    LEXICAL_SOURCE,
    SOURCE,
    antonym_pair,
    half_pair_rows,
    in_training_half,
    lexical_pair_rows,
)
from benchmarks.negation_meaning.probe_cosines import main as probe_cosines_main  # noqa: E402
from benchmarks.negation_meaning.probe_cosines import paired_change, training_row_items  # noqa: E402
from st_debias.data.lexicon import is_prefixed_antonym, safe_antonym  # noqa: E402
from st_debias.recipes.mix_sources import MIX_SOURCES, meaning_rows  # noqa: E402
from st_debias.recipes.mix_sources import negation_meaning_quadruples as library_quadruples  # noqa: E402
from tests.conftest import first_sentences  # noqa: E402


def test_the_pair_is_the_one_swapped_word_in_either_order() -> None:
    assert antonym_pair("The road is narrow.", "The road is wide.") == ("narrow", "wide")
    assert antonym_pair("The road is wide.", "The road is narrow.") == ("narrow", "wide")
    with pytest.raises(ValueError, match="Not one swapped word"):
        antonym_pair("The road is narrow.", "The street is wide.")


def test_rows_keep_the_training_half_of_the_pairs_only(tmp_path) -> None:
    sentences = first_sentences(6000)
    rows, described = half_pair_rows(sentences=sentences, cache_dir=tmp_path)
    quadruples, _ = library_quadruples(sentences, tmp_path)
    pairs = [antonym_pair(a, b) for a, _, b, _ in quadruples]
    assert all(safe_antonym(first) == second or safe_antonym(second) == first for first, second in pairs)
    kept = [quadruple for quadruple, pair in zip(quadruples, pairs, strict=True) if in_training_half(pair)]
    # Both halves occur in real sentences, so the split drops something and keeps something.
    assert 0 < len(kept) < len(quadruples)
    assert described["kept_quadruples"] == len(kept) and len(rows) == 2 * len(kept)
    # The library's rows of the kept quadruples, in their order.
    assert rows == meaning_rows(kept)
    # The same sentences always give the same rows.
    assert half_pair_rows(sentences=sentences, cache_dir=tmp_path)[0] == rows


def test_lexical_rows_drop_the_prefixed_pairs_only(tmp_path) -> None:
    sentences = first_sentences(6000)
    rows, described = lexical_pair_rows(sentences=sentences, cache_dir=tmp_path)
    quadruples, _ = library_quadruples(sentences, tmp_path)
    prefixed = [is_prefixed_antonym(*antonym_pair(a, b)) for a, _, b, _ in quadruples]
    # Real sentences hold both kinds, so the filter drops something and keeps something.
    assert 0 < sum(prefixed) < len(quadruples)
    kept = [quadruple for quadruple, drop in zip(quadruples, prefixed, strict=True) if not drop]
    assert rows == meaning_rows(kept) and described["kept_quadruples"] == len(kept)
    assert lexical_pair_rows(sentences=sentences, cache_dir=tmp_path)[0] == rows


def test_the_sources_are_named_through_the_lab_entry_points() -> None:
    assert MIX_SOURCES[SOURCE] is HALF_PAIRS and MIX_SOURCES[LEXICAL_SOURCE] is LEXICAL_PAIRS
    assert HALF_PAIRS.rows is half_pair_rows and HALF_PAIRS.reads_corpus
    assert LEXICAL_PAIRS.rows is lexical_pair_rows and LEXICAL_PAIRS.reads_corpus
    assert not {SOURCE, LEXICAL_SOURCE} & set(MIX_SOURCES.builtin())


def test_the_paired_change_counts_items_and_brackets_the_change() -> None:
    before = np.array([0.1, 0.1, -0.1, -0.1, -0.2, 0.3] * 10)
    after = np.array([0.1, -0.1, 0.2, 0.3, -0.2, 0.3] * 10)
    change = paired_change(before, after)
    assert (change["gained"], change["lost"]) == (20, 10)
    assert change["share_change"] == pytest.approx(10 / 60)
    assert change["share_change_ci"][0] < change["share_change"] < change["share_change_ci"][1]
    assert change["gap_change"] == pytest.approx((after - before).mean())
    assert change["mcnemar_p"] == pytest.approx(0.0987, abs=1e-3)  # two-sided binomial, 20 of 30
    same = paired_change(before, before)
    assert (same["gained"], same["lost"], same["mcnemar_p"]) == (0, 0, 1.0)


def test_the_training_row_items_are_the_rows_quadruples_on_their_corpus_lines(tmp_path) -> None:
    from st_debias.data.negation.negator import negation_count

    sentences = first_sentences(4000)
    items = training_row_items(4000, tmp_path)
    quadruples, _ = library_quadruples(sentences, tmp_path)
    assert len(items) == len(quadruples) >= 20
    assert list(zip(items.affirmative, items.negated, items.antonym, items.negated_antonym, strict=True)) == quadruples
    for line, affirmative, negated, negated_antonym in zip(
        items.lines, items.affirmative, items.negated, items.negated_antonym, strict=True
    ):
        assert sentences[line - 1].strip() == affirmative
        assert negation_count(affirmative) == 0 and negation_count(negated) == negation_count(negated_antonym) == 1
    assert 0 < sum(items.prefixed_antonyms()) < len(items)


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["--items-from-lines", "-1"], "--items-from-lines must be >= 0"),
        (["--items-from-lines", "100", "--pair-halves"], "replaces the probe's items"),
        (["--items-from-lines", "100", "--rows-from-lines", "100"], "replaces the probe's items"),
    ],
)
def test_bad_item_arguments_exit_2_before_any_model_loads(arguments, message, tmp_path, capsys) -> None:
    with pytest.raises(SystemExit) as stop:
        probe_cosines_main([str(tmp_path), "--out", str(tmp_path / "t.md"), *arguments])
    assert stop.value.code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "t.md").exists()
