"""OssCSEBuilder rows on real Wikipedia sentences."""

from __future__ import annotations

import pytest

from st_debias.data.ipw.builder import to_input_examples
from st_debias.data.negation.builder import OssCSEBuilder
from st_debias.data.negation.negator import negation_count
from st_debias.data.text import match_error_rate


@pytest.fixture(scope="module")
def built(negator, wiki):
    builder = OssCSEBuilder(negator, seed=0)
    return builder, builder.build(wiki[:120] + ["", "A list of rivers in France.", wiki[0]])


def test_rows_respect_mer_range_and_negation(built):
    builder, dataset = built
    assert dataset.column_names == ["anchor", "paraphrase", "negation"]
    assert len(dataset) > 40
    for row in dataset:
        assert 0.15 <= match_error_rate(row["anchor"], row["paraphrase"]) <= 0.6
        assert row["negation"] != row["anchor"]
        assert abs(negation_count(row["negation"]) - negation_count(row["anchor"])) == 1


def test_report_accounts_for_every_input(built):
    builder, dataset = built
    report = builder.report
    assert report.inputs == 123
    assert report.skipped["empty"] == 1 and report.skipped["duplicate"] == 1
    assert report.skipped["negation_no_verb"] >= 1
    assert report.anchors + sum(report.skipped.values()) == 123
    assert sum(report.rules.values()) == 121  # every non-empty distinct sentence got a rule or a reason
    assert 0.15 <= report.statistics["paraphrase_mer"] <= 0.6


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
