"""Full-model reproduction of the docs/evaluation.md figures through the CLI (slow: minutes on 2 CPU cores).

One ``st-debias eval default`` run feeds every assertion, so the CLI and the library are checked together.
"""

from __future__ import annotations

import json

import pytest

from st_debias.cli import main
from st_debias.evaluation.reuse import packaged_dir

pytestmark = pytest.mark.slow

#: The packaged evaluation of the default model holds the reference figures; this file copies none of them.
PACKAGED = packaged_dir() / "all-MiniLM-L6-v2.json"
STS_TASKS = ["STS12", "STS13", "STS14", "STS15", "STS16", "STSBenchmark", "SICK-R", "avg"]


@pytest.fixture(scope="module")
def expected() -> dict:
    """The packaged entry's result: what ``st-debias eval default`` must reproduce from scratch."""
    return json.loads(PACKAGED.read_text(encoding="utf-8"))["result"]


@pytest.fixture(scope="module")
def default_entry(shared_data, tmp_path_factory):
    out = tmp_path_factory.mktemp("eval_default")
    code = main(
        [
            "eval",
            "default",
            "--tasks",
            "sts,bias",
            "--output",
            str(out),
            "--data-dir",
            str(shared_data),
            "--no-progress",
        ]
    )
    assert code == 0
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert (out / "report.md").exists()
    return results[0]


@pytest.mark.parametrize("task", STS_TASKS)
def test_sts7_figures(default_entry, expected, task):
    assert default_entry["sts"][task] == pytest.approx(expected["sts"][task], abs=0.006)


def test_stsb_cont_oppn(default_entry, expected):
    block = default_entry["bias"]["cont_oppn"]["STSBenchmark"]
    reference = expected["bias"]["cont_oppn"]["STSBenchmark"]
    for side in ("cont", "oppn"):
        assert block[side]["pairs"] == reference[side]["pairs"]
        assert block[side]["spearman"] == pytest.approx(reference[side]["spearman"], abs=0.006)


def test_cannot_negation_probe(default_entry, expected):
    negation, reference = default_entry["bias"]["negation"], expected["bias"]["negation"]
    assert negation["pairs"] == reference["pairs"] == 3000
    assert negation["mean_cosine"] == pytest.approx(reference["mean_cosine"], abs=0.005)
    assert negation["share_above"] == pytest.approx(reference["share_above"], abs=0.0005)


def test_model_label_and_sources(default_entry, expected):
    assert default_entry["model"] == expected["model"] == "all-MiniLM-L6-v2"
    assert default_entry["sources"]["sts"]["SICK-R"]["pairs"] == expected["sources"]["sts"]["SICK-R"]["pairs"]


def test_stsb_oppn_sides(default_entry, expected):
    """The two sides of the STS-B Oppn split (high overlap/low score, low overlap/high score) and the pairs on a median."""
    sides = default_entry["bias"]["cont_oppn"]["STSBenchmark"]["oppn_sides"]
    reference = expected["bias"]["cont_oppn"]["STSBenchmark"]["oppn_sides"]
    assert sides["on_median"] == reference["on_median"]
    for side in ("high_overlap_low_score", "low_overlap_high_score"):
        assert sides[side]["pairs"] == reference[side]["pairs"]
        assert sides[side]["spearman"] == pytest.approx(reference[side]["spearman"], abs=0.01)


def test_word_order_probe(default_entry, expected):
    """Last 1,000 corpus lines, seed 0."""
    word_order, reference = default_entry["bias"]["word_order"], expected["bias"]["word_order"]
    assert word_order["pairs"] == reference["pairs"] and word_order["skipped_short"] == reference["skipped_short"]
    assert word_order["mean_cosine"] == pytest.approx(reference["mean_cosine"], abs=0.001)
    assert word_order["share_above"] == pytest.approx(reference["share_above"], abs=0.0005)
