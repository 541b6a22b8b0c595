"""OssCSEBuilder rows on real Wikipedia sentences and on hand-computed paraphrase pools.

The MER filter (OssCSE §4 step 2) is checked against :func:`tests.reference.mer_bounds_reference`, a word
alignment table that never imports ``st_debias``, and against pools whose MERs are computed by hand.
"""

from __future__ import annotations

import pytest

from st_debias.data.generators import Candidate, CandidateGenerator
from st_debias.data.ipw.builder import to_input_examples
from st_debias.data.negation.builder import OssCSEBuilder
from tests.reference import mer_bounds_reference, reference_words

ANCHOR = "The old man walks his dog in the park every morning."  # 11 words
HAND_POOL = {
    "The man walks his dog in the park every morning.": 1 / 11,  # one deletion: below 0.15
    "The man walks his dog in the park.": 3 / 11,  # three deletions: the only one in [0.15, 0.6]
    "The young woman walks her cat in a garden each evening.": 8 / 11,  # eight substitutions: above 0.6
    "A cat sleeps.": 1.0,  # no shared word
}
TWO_IN_RANGE = "She wrote three long novels before the war began."  # 9 words
TWO_POOL = {
    "She wrote novels before the war.": 3 / 9,  # three deletions
    "She wrote novels before the war began.": 2 / 9,  # two deletions
    "She wrote three long novels before the war began in earnest.": 2 / 11,  # two insertions: (2)/(9+2)
    "She wrote.": 7 / 9,  # seven deletions: out
}


def _negators(words: list[str]) -> int:
    return sum(w in {"not", "never", "no", "cannot"} or w.endswith(("n't", "n’t")) for w in words)


class _HandParaphrases(CandidateGenerator):
    """Serves the hand-computed pools above (nothing for other sentences)."""

    name = "hand"

    def generate(self, sentences, *, seed=0):
        pools = {ANCHOR: HAND_POOL, TWO_IN_RANGE: TWO_POOL}
        return [[Candidate(text, self.name) for text in pools.get(s, {})] for s in sentences]


def test_hand_pools_have_the_stated_mer():
    """The hand figures themselves, checked once with the oracle (every alignment agrees on them)."""
    for anchor, pool in ((ANCHOR, HAND_POOL), (TWO_IN_RANGE, TWO_POOL)):
        for text, mer in pool.items():
            assert mer_bounds_reference(anchor, text) == pytest.approx((mer, mer)), text


def test_mer_filter_on_hand_pools(negator):
    """Only candidates with MER in [0.15, 0.6] become paraphrases: ANCHOR has exactly one, TWO_IN_RANGE
    three (the random pick varies with the seed but never leaves them), an unserved sentence is skipped."""
    unserved = "The committee approved the new budget."
    picks = set()
    for seed in range(24):
        builder = OssCSEBuilder(negator, paraphrase_generators=[_HandParaphrases()], seed=seed)
        rows = builder.build([ANCHOR, TWO_IN_RANGE, unserved])
        assert rows["anchor"] == [ANCHOR, TWO_IN_RANGE]
        assert rows["paraphrase"][0] == "The man walks his dog in the park."
        assert rows["negation"][0] == "The old man does not walk his dog in the park every morning."
        assert rows["negation"][1] == "She did not write three long novels before the war began."
        picks.add(rows["paraphrase"][1])
        assert builder.report.skipped["no_paraphrase_in_mer_range"] == 1
        stats = builder.report.statistics
        assert stats["paraphrase_candidates"] == 8 and stats["paraphrase_candidates_in_mer_range"] == 4
    assert picks == {t for t, mer in TWO_POOL.items() if 0.15 <= mer <= 0.6}
    narrow = OssCSEBuilder(negator, paraphrase_generators=[_HandParaphrases()], mer_range=(0.25, 0.3))
    assert narrow.build([ANCHOR, TWO_IN_RANGE])["paraphrase"] == ["The man walks his dog in the park."]
    assert narrow.report.skipped["no_paraphrase_in_mer_range"] == 1


@pytest.fixture(scope="module")
def built(negator, wiki):
    builder = OssCSEBuilder(negator, seed=0)
    return builder, builder.build(wiki[:120] + ["", "A list of rivers in France.", wiki[0]])


def test_rows_respect_mer_range_and_negation(built):
    builder, dataset = built
    assert dataset.column_names == ["anchor", "paraphrase", "negation"]
    assert len(dataset) > 40
    for row in dataset:
        low, high = mer_bounds_reference(row["anchor"], row["paraphrase"])
        assert low <= 0.6 and high >= 0.15, row  # some minimum-edit alignment puts it in range
        anchor_words, negation_words = reference_words(row["anchor"]), reference_words(row["negation"])
        assert negation_words != anchor_words
        # the negation adds or removes exactly one negator word (not, never, n't...)
        assert abs(_negators(negation_words) - _negators(anchor_words)) == 1, row


def test_report_accounts_for_every_input(built):
    builder, dataset = built
    report = builder.report
    assert report.inputs == 123
    assert report.skipped["empty"] == 1 and report.skipped["duplicate"] == 1
    assert report.skipped["negation_no_verb"] >= 1
    assert report.anchors + sum(report.skipped.values()) == 123
    assert sum(report.rules.values()) == 121  # every non-empty distinct sentence got a rule or a reason
    bounds = [mer_bounds_reference(r["anchor"], r["paraphrase"]) for r in dataset]
    low, high = (sum(b[k] for b in bounds) / len(bounds) for k in (0, 1))
    assert low - 1e-12 <= report.statistics["paraphrase_mer"] <= high + 1e-12


def test_deterministic_and_input_examples(built, negator, wiki):
    _, dataset = built
    again = OssCSEBuilder(negator, seed=0).build(wiki[:120] + ["", "A list of rivers in France.", wiki[0]])
    assert again.to_dict() == dataset.to_dict()
    examples = to_input_examples(dataset)
    assert examples[0].texts == [dataset[0]["anchor"], dataset[0]["paraphrase"], dataset[0]["negation"]]


def test_fallback_and_bad_arguments(negator, wiki):
    builder = OssCSEBuilder(negator, mer_range=(0.99, 1.0), on_missing_paraphrase="anchor")
    rows = builder.build(wiki[:20])
    assert len(rows) > 0 and all(r["anchor"] == r["paraphrase"] for r in rows)
    assert builder.report.statistics["paraphrase_fallbacks"] == len(rows)
    with pytest.raises(ValueError, match="mer_range"):
        OssCSEBuilder(negator, mer_range=(0.7, 0.2))
    with pytest.raises(ValueError, match="not str"):
        OssCSEBuilder(negator).build(["A sentence.", b"bytes"])
