"""Minimal-pair edits and the cue-balanced builder, on real Wikipedia sentences and hand-made ones."""

from __future__ import annotations

import re
from collections import Counter

import numpy as np
import pytest

from st_debias.data.io.report import BuildReport
from st_debias.data.minimal_pairs.builder import MinimalPairBuilder, cue_statistics, row_cues
from st_debias.data.minimal_pairs.edits import (
    Declined,
    antonym,
    argument_swap,
    cohyponym,
    number,
    phrase_swap,
)
from st_debias.data.negation.negator import negation_count
from st_debias.data.text import words


def _parse(negator, text: str):
    return negator.nlp(text)


def _rng(k: int = 0) -> np.random.Generator:
    return np.random.default_rng([0, k])


def test_argument_swap_swaps_subject_and_object(negator):
    out = argument_swap(_parse(negator, "The committee approved the budget."), _rng())
    assert out == "The budget approved the committee."


@pytest.mark.parametrize(
    "sentence, reason",
    [
        ("The budget was approved by the committee.", "no_finite_active_root"),  # passive: VBN root
        ("She approved the budget.", "pronoun_or_other_head"),
        ("The committee approves the budgets.", "agreement"),
        ("The committee that met on Monday approved the budget.", "complex_argument"),
    ],
)
def test_argument_swap_declines_with_a_reason(negator, sentence, reason):
    """Silent failure guarded: a swap that would break case, agreement or a clause is declined and named."""
    out = argument_swap(_parse(negator, sentence), _rng())
    assert isinstance(out, Declined) and out.reason == reason


def test_argument_swap_keeps_the_bag_of_words_on_real_sentences(negator, wiki):
    """The negative has exactly the anchor's words (case aside) in another order: only order tells them apart."""
    swapped = 0
    for k, doc in enumerate(negator.nlp.pipe(wiki[:300])):
        out = argument_swap(doc, _rng(k))
        if isinstance(out, Declined):
            continue
        swapped += 1
        assert Counter(words(out)) == Counter(words(doc.text))
        assert words(out) != words(doc.text)
    assert swapped >= 10


def test_number_changes_exactly_one_number(negator, wiki):
    changed = 0
    for k, doc in enumerate(negator.nlp.pipe(wiki[:300])):
        out = number(doc, _rng(k))
        if isinstance(out, Declined):
            assert out.reason == "no_number"
            continue
        changed += 1
        before, after = re.findall(r"\d[\d,]*\d|\d", doc.text), re.findall(r"\d[\d,]*\d|\d", out)
        assert len(before) == len(after)
        diffs = [(a, b) for a, b in zip(before, after) if a != b]
        assert len(diffs) == 1
        old, new = (d.replace(",", "") for d in diffs[0])
        assert int(old) != int(new) and int(new) > 0
        assert re.sub(r"\d[\d,]*\d|\d", "#", out) == re.sub(r"\d[\d,]*\d|\d", "#", doc.text)
    assert changed >= 30


def test_number_skips_a_superscript_power(negator):
    """Wikipedia line 95,150: only the ASCII "7" can change; "10¹²" passes ``str.isdigit`` but not ``int``."""
    text = "It has been estimated that a large specimen of this fungus when mature will produce around 7 × 10¹² spores."
    out = number(_parse(negator, text), _rng())
    assert out != text and out.replace(re.search(r"around (\d+)", out).group(1), "7", 1) == text


def test_number_moves_a_year_by_at_most_nine_years(negator):
    out = number(_parse(negator, "The bridge opened in 1921."), _rng())
    year = int(words(out)[-1])
    assert 1912 <= year <= 1930 and year != 1921


def test_cohyponym_replaces_one_noun_with_a_wordnet_sibling(negator, wiki, data_root):
    from lemminflect import getLemma

    from st_debias.data.lexicon import wordnet

    wn = wordnet()
    checked = 0
    for k, doc in enumerate(negator.nlp.pipe(wiki[:120])):
        out = cohyponym(doc, _rng(k))
        if isinstance(out, Declined):
            continue
        before, after = words(doc.text), words(out)
        diffs = [(a, b) for a, b in zip(before, after) if a != b and a not in ("a", "an")]
        assert len(before) == len(after) and len(diffs) == 1
        old, new = diffs[0]
        old_sense = wn.synsets(getLemma(old, upos="NOUN")[0], pos="n")[0]
        # The sibling may be a WordNet lemma that looks plural ("the left" -> "the polls", polls.n.01):
        # look the replacement up as written as well as by its lemma.
        new_senses = wn.synsets(new, pos="n") + wn.synsets(getLemma(new, upos="NOUN")[0], pos="n")
        assert any(set(s.hypernyms()) & set(old_sense.hypernyms()) for s in new_senses), (old, new)
        checked += 1
    assert checked >= 50


def test_antonym_replaces_an_adjective_with_its_antonym(negator):
    assert antonym(_parse(negator, "The house is large."), _rng()) == "The house is small."
    assert isinstance(antonym(_parse(negator, "It was a radically different flag."), _rng()), Declined)


def test_builder_is_deterministic_and_balances_cues(negator, wiki):
    sentences = wiki[:200]
    first = MinimalPairBuilder(negator=negator, seed=3)
    rows = first.build(sentences)
    again = MinimalPairBuilder(negator=negator, seed=3).build(sentences)
    assert rows.to_dict() == again.to_dict()
    report = first.report.as_dict()
    assert report["rows"] == len(rows) > 120
    assert report["statistics"]["cues"]["all"]["positive_is_anchor"] == 0.0  # the default leaves such rows out
    assert report["inputs"] == report["anchors"] + sum(report["skipped"].values())
    assert set(first.families) <= {"negation", "antonym", "argument_swap", "number", "cohyponym"}
    assert len(set(first.families)) == 5
    for family in ("negation", "antonym", "argument_swap", "number", "cohyponym"):
        assert "declined" in report["generators"][family]
    # Every negation row's negative changes the negation count; some positives carry a negation too.
    cues = report["statistics"]["cues"]
    assert cues["negation"]["negative_changes_negation"] == 1.0
    assert cues["antonym"]["negative_changes_negation"] == 0.0
    for anchor, negative, family in zip(rows["anchor"], rows["negative"], first.families):
        assert negative != anchor
        if family == "negation":
            assert negation_count(negative) != negation_count(anchor)
    # The blocks compute each row's cue figures where they build it; the report equals them computed afresh.
    assert cues == cue_statistics(rows["anchor"], rows["positive"], rows["negative"], first.families)["cues"]


def test_finish_computes_the_cues_that_older_parts_lack(negator, wiki):
    """Parts saved before the blocks computed each row's cue figures hold no ``_cues``: a resumed build that
    joins them with newer parts has cue figures for some rows only, and must compute them all afresh."""
    builder = MinimalPairBuilder(negator=negator, seed=3)
    rows = builder.build(wiki[:120]).to_dict()
    half = len(rows["anchor"]) // 2
    joined = {
        **rows,
        "_family": list(builder.families),
        "_source": [builder.positive_sources.get(row) for row in range(len(rows["anchor"]))],
        "_cues": [row_cues(*row) for row in zip(rows["anchor"][:half], rows["positive"][:half], rows["negative"][:half])],
    }
    report = BuildReport("minimal_pairs")
    MinimalPairBuilder(negator=negator, seed=3).finish(joined, report)
    assert report.statistics["cues"] == builder.report.statistics["cues"]


def test_builder_shares_are_met_where_available(negator, wiki):
    builder = MinimalPairBuilder({"negation": 0.5, "cohyponym": 0.5}, negator=negator, seed=0)
    builder.build(wiki[:200])
    counts = Counter(builder.families)
    assert set(counts) == {"negation", "cohyponym"}
    assert abs(counts["negation"] - counts["cohyponym"]) <= 0.1 * sum(counts.values())


def test_builder_skip_mode_never_uses_the_anchor_as_positive(negator, wiki):
    builder = MinimalPairBuilder({"number": 1.0}, negator=negator, on_missing_positive="skip", seed=0)
    rows = builder.build(wiki[:200])
    assert all(p != a for a, p in zip(rows["anchor"], rows["positive"]))
    assert builder.report.skipped["no_negative_edit"] > 0


@pytest.mark.parametrize("shares", [{"negation": -1.0}, {"negation": float("nan")}, {"negation": 0.0}, {"typo": 1.0}])
def test_builder_rejects_bad_shares(shares):
    """Failure mode: NaN/negative/all-zero/unknown family shares would silently build nothing."""
    with pytest.raises(ValueError, match="shares"):
        MinimalPairBuilder(shares)


def test_cue_statistics_by_hand():
    stats = cue_statistics(
        ["a b c d", "x y z w"], ["a b c d", "x y z w"], ["a b not c d", "w y z x"], ["negation", "argument_swap"]
    )["cues"]
    assert stats["negation"]["negative_changes_negation"] == 1.0
    assert stats["negation"]["positive_is_anchor"] == 1.0
    assert stats["argument_swap"]["negative_overlap"] == 1.0
    assert stats["all"]["rows"] == 2


@pytest.fixture(scope="module")
def pos_nlp(negator):
    """The builder's parsing pipeline: the negator's model with coarse part-of-speech tags."""
    return MinimalPairBuilder(negator=negator).nlp


def test_builder_parses_with_part_of_speech_tags(negator, pos_nlp):
    """Failure mode (found in the v3 rows): the negator's fast pipeline has no attribute_ruler, so ``pos_`` was
    empty, the voice rule declined every sentence (0 of 625 argument swaps got a voice positive) and noun
    chunks were missing. The builder now parses with a pipeline that sets ``pos_``."""
    assert "attribute_ruler" not in negator.nlp.pipe_names
    assert "pos_rules" in pos_nlp.pipe_names  # the attribute ruler's tags, looked up
    assert pos_nlp("The committee approved the budget.")[2].pos_ == "VERB"


def test_syntactic_paraphraser_refuses_a_pipeline_without_pos_tags(negator):
    from st_debias.data.paraphrase.syntactic import SyntacticParaphraser

    with pytest.raises(ValueError, match="attribute_ruler"):
        SyntacticParaphraser(nlp=negator.nlp)


def test_argument_swap_rows_get_voice_positives_on_real_sentences(negator, wiki):
    """The cue is balanced: the negative reorders the arguments, and so does the (passive) positive."""
    builder = MinimalPairBuilder({"argument_swap": 1.0}, negator=negator, on_missing_positive="skip", seed=0)
    rows = builder.build(wiki[:1000])
    voiced = [k for k, source in builder.positive_sources.items() if source == "voice"]
    assert len(voiced) >= 5
    by_voice = [p for a, p in zip(rows["anchor"], rows["positive"]) if " by " in p and " by " not in a]
    assert len(by_voice) >= 5


def test_phrase_swap_by_hand(pos_nlp):
    out = phrase_swap(pos_nlp("The firm sold the farm to the bank."), _rng(1))
    assert out in ("The firm sold the bank to the farm.", "The bank sold the farm to the firm.",
                   "The farm sold the firm to the bank.")


@pytest.mark.parametrize(
    "sentence, reason",
    [
        ("Cats and dogs sleep.", "fewer_than_two_phrases"),  # conjuncts: a swap keeps the meaning
        ("The town lies between the river and the hills.", "symmetric_or_coordinated"),
        ("The king married the queen.", "symmetric_or_coordinated"),
        ("The dogs chased the cat.", "no_swappable_pair"),  # plural vs singular: agreement would break
    ],
)
def test_phrase_swap_declines_with_a_reason(pos_nlp, sentence, reason):
    out = phrase_swap(pos_nlp(sentence), _rng())
    assert isinstance(out, Declined) and out.reason == reason


def test_phrase_swap_keeps_the_bag_of_words_on_real_sentences(pos_nlp, wiki):
    """Only the order of two noun phrases changes: same words (case aside), different sequence, and never a
    swap of two conjuncts."""
    swapped = 0
    for k, doc in enumerate(pos_nlp.pipe(wiki[:300])):
        out = phrase_swap(doc, _rng(k))
        if isinstance(out, Declined):
            continue
        swapped += 1
        assert Counter(w.lower() for w in words(out)) == Counter(w.lower() for w in words(doc.text))
        assert [w.lower() for w in words(out)] != [w.lower() for w in words(doc.text)]
    assert swapped >= 100


def test_default_builder_parses_once_with_one_pipeline(data_root):
    """The default negator keeps POS tags, so the builder reuses its pipeline instead of loading a second."""
    builder = MinimalPairBuilder(seed=0)
    assert "pos_rules" in builder.negator.nlp.pipe_names
    assert builder.nlp is builder.negator.nlp


def test_builder_parses_each_anchor_once(negator, wiki, monkeypatch):
    """The syntactic positive generators read the parses of the negative edits instead of parsing the anchors
    again (the negated-antonym positives parse with the negator's own pipeline when it is another one)."""
    from spacy.language import Language

    parsed: dict[int, list[str]] = {}
    original = Language.pipe

    def counting(self, texts, **kwargs):
        texts = list(texts)
        parsed.setdefault(id(self), []).extend(texts)
        return original(self, texts, **kwargs)

    monkeypatch.setattr(Language, "pipe", counting)
    builder = MinimalPairBuilder(seed=0, negator=negator)
    rows = builder.build(wiki[:120], num_proc=1)
    assert len(rows) > 0 and set(builder.positive_sources.values()) >= {"syntactic", "synonym"}
    anchors = [s.strip() for s in dict.fromkeys(wiki[:120]) if s.strip()]
    counts = Counter(parsed.pop(id(builder.nlp)))  # besides the anchors, a few fixed sentences check the pipeline
    assert [counts[anchor] for anchor in anchors] == [1] * len(anchors)
    assert set(parsed) <= {id(negator.nlp)}


def test_rows_without_a_positive_are_left_out_by_default_and_counted_by_family(negator, wiki):
    """51 % of a 200-sentence build had positive = anchor (``positive_is_anchor`` 0.51), a pair no reader would
    call one, with no word on why. By default such rows are left out; either way they are counted per family,
    and with ``on_missing_positive="anchor"`` (the recipe's setting) exactly those rows use the anchor."""
    skip = MinimalPairBuilder(negator=negator, seed=3)
    kept = skip.build(wiki[:200])
    anchor = MinimalPairBuilder(negator=negator, seed=3, on_missing_positive="anchor")
    every = anchor.build(wiki[:200])
    missing = skip.report.statistics["missing_positive"]
    assert missing == anchor.report.statistics["missing_positive"] and sum(missing.values()) > 0
    assert skip.report.skipped["no_positive"] == sum(missing.values()) == len(every) - len(kept)
    assert sum(p == a for a, p in zip(every["anchor"], every["positive"])) == sum(missing.values())
    assert all(p != a for a, p in zip(kept["anchor"], kept["positive"]))


def test_strict_cohyponyms_swap_no_unit_and_no_part_of_another_whole(negator):
    """WordNet files yard beside inch (units of measure) and wheel beside pulley (parts of a vehicle and of a
    block and tackle): swaps a reader would not accept as co-hyponyms. The default declines them, counted."""
    from st_debias.data.minimal_pairs.edits import _siblings, cohyponym

    assert "inch" in _siblings("yard", False) and _siblings("yard", True) == ()
    assert "pulley" in _siblings("wheel", False) and "pulley" not in _siblings("wheel", True)
    assert "beer" in _siblings("wine", True) or _siblings("wine", True) == _siblings("wine", False)
    doc = _parse(negator, "It measured one yard.")
    declined = cohyponym(doc, _rng())
    assert isinstance(declined, Declined) and declined.reason == "unit_of_measure"
    assert not isinstance(cohyponym(doc, _rng(), strict=False), Declined)
    wheel = _parse(negator, "The wheel broke.")
    assert cohyponym(wheel, _rng(), strict=False) == "The pulley broke."
    assert cohyponym(wheel, _rng()) == Declined("part_of_another_whole")
    builder = MinimalPairBuilder({"cohyponym": 1.0}, negator=negator, seed=0)
    builder.build(["It measured one yard.", "The wheel broke."])
    declined = builder.report.generators["cohyponym"]["declined"]
    assert declined.get("unit_of_measure") == 1 and declined.get("part_of_another_whole") == 1
