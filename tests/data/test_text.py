"""Word-level helpers against hand-computed cases."""

from __future__ import annotations

import pytest

from st_debias.data.text import is_ascii_integer, lexical_overlap, match_error_rate, swapped_words


def test_swapped_words_is_the_one_differing_word_in_order() -> None:
    assert swapped_words("The road is narrow.", "The road is WIDE.") == ("narrow", "wide")
    assert swapped_words("The road is wide.", "the road is narrow") == ("wide", "narrow")
    for first, second in (
        ("The road is narrow.", "The street is wide."),  # two words differ
        ("The road is narrow.", "The road is narrow."),  # none differs
        ("The road is narrow.", "The road is not wide."),  # not the same length
    ):
        with pytest.raises(ValueError, match="Not one swapped word"):
            swapped_words(first, second)


@pytest.mark.parametrize(
    ("reference", "hypothesis", "expected"),
    [
        # one substitution (the -> a), five hits: (S+D+I)/(S+D+I+C) = 1/6
        ("the cat sat on the mat", "the cat sat on a mat", 1 / 6),
        # delete "b", insert "e" (2 edits) beats three substitutions; hits a, c, d: 2/5
        ("a b c d", "a c d e", 2 / 5),
        # case and punctuation are not words: one insertion ("loudly"), three hits: 1/4
        ("the dog barked", "The dog, barked loudly!", 1 / 4),
        # nothing in common: two substitutions, one insertion, no hit: 3/3
        ("red car", "blue bus stops", 1.0),
        ("", "", 0.0),
    ],
)
def test_match_error_rate_hand_computed(reference: str, hypothesis: str, expected: float) -> None:
    assert match_error_rate(reference, hypothesis) == pytest.approx(expected)


def test_lexical_overlap_hand_computed() -> None:
    # shared words {the, cat, sat} = 3 over the longer sentence (5 words)
    assert lexical_overlap("The cat sat.", "the cat sat down quietly") == pytest.approx(3 / 5)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("1921", True), ("7", True), ("10¹²", False), ("²", False), ("1,000", False), ("", False), ("١٩", False)],
)
def test_is_ascii_integer_accepts_what_int_reads_in_ascii_digits(text: str, expected: bool) -> None:
    assert is_ascii_integer(text) is expected
    if expected:
        int(text)
