"""NLI triplets as training rows: checked lines, evaluation overlap and the negation cue dropped, detokenised."""

from __future__ import annotations

import json

import pytest

from st_debias.data.io.nli import detokenize, load_nli_triplets
from st_debias.data.negation.negator import negation_count
from st_debias.data.text import word_key
from st_debias.datafiles import DataFileError
from st_debias.evaluation.sts_data import evaluation_sentences
from st_debias.paths import data_file


def test_shared_snli_triplets_are_filtered_and_counted():
    held_out = evaluation_sentences()
    triplets = load_nli_triplets(exclude=held_out)
    described = triplets.describe()
    assert described["read"] == 5883
    assert described["kept"] + sum(described["dropped"].values()) == 5883
    assert set(described["dropped"]) == {"in_an_sts_or_sick_file", "negation_cue"}
    for anchor, positive, negative in zip(triplets.anchors, triplets.positives, triplets.negatives, strict=True):
        assert not {word_key(anchor), word_key(positive), word_key(negative)} & held_out
        assert not (negation_count(negative) and not negation_count(positive))
        assert " ." not in anchor + positive + negative and " n't" not in anchor + positive + negative
    # The cue is gone: negatives carry a negation word no more often than positives.
    share = lambda texts: sum(negation_count(t) > 0 for t in texts) / len(texts)  # noqa: E731
    assert share(triplets.negatives) <= share(triplets.positives) + 0.01


def test_shared_snli_contradictions_carry_the_negation_cue():
    """The cue the filter removes, as docs/recipes.md quotes it: in the raw file a contradiction carries a
    negation word six times as often as an entailment."""
    negated = {"sent1": 0, "hard_neg": 0}
    with open(data_file("nli/snli_devtest_triplets.jsonl"), encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            for field in negated:
                negated[field] += negation_count(detokenize(record[field])) > 0
    assert negated == {"sent1": 42, "hard_neg": 253}


def test_detokenize():
    assert detokenize("Two women are embracing .") == "Two women are embracing."
    assert detokenize("He do n't like it , ( really ) .") == "He don't like it, (really)."
    assert detokenize("The dog 's bone costs $ 5 .") == "The dog's bone costs $5."


def test_bad_line_is_named(tmp_path):
    path = tmp_path / "nli.jsonl"
    good = {"sent0": "A man sleeps .", "sent1": "A person sleeps .", "hard_neg": "A man runs ."}
    path.write_text(json.dumps(good) + "\n" + json.dumps({**good, "sent1": " "}) + "\n", encoding="utf-8")
    with pytest.raises(DataFileError, match=r"nli.jsonl:2.*sent1"):
        load_nli_triplets(path, exclude=set())
    path.write_text(json.dumps(good) + "\n", encoding="utf-8")
    assert len(load_nli_triplets(path, exclude=set())) == 1
    assert len(load_nli_triplets(path, exclude={"a person sleeps"})) == 0
