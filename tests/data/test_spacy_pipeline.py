"""The builders' spaCy pipeline: the attribute ruler's tags by table lookup (``PosRules``), exact on real text."""

from __future__ import annotations

import pytest

from st_debias.data.spacy_pipeline import PosRules, load_pipeline, use_lookup_pos

from .conftest import SPACY_TEST_MODEL

# Spacing the ruler retags (_SP / SPACE / dep) and "there is", its one rule over two tokens.
ODD = ["There is a cat.", "There were many dogs  here.", "Hello \n world.", "Well,\t\tthere 's hope ."]


@pytest.fixture(scope="module")
def ruler_nlp():
    try:
        return load_pipeline(SPACY_TEST_MODEL)
    except OSError as error:  # pragma: no cover
        pytest.skip(str(error))


def _attributes(docs) -> list[list[tuple[str, str, str]]]:
    return [[(t.pos_, t.tag_, t.dep_) for t in doc] for doc in docs]


def test_lookup_sets_what_the_ruler_sets(ruler_nlp, wiki):
    """Failure mode: a token's part of speech differs from the model's own attribute ruler (a rule read in
    the wrong order, a two-token rule missed, a word treated as unmentioned when a rule names it)."""
    ruler = ruler_nlp.get_pipe("attribute_ruler")
    lookup = PosRules(ruler.patterns)
    parsed = list(ruler_nlp.pipe([*wiki, *ODD], disable=["attribute_ruler"]))
    by_ruler = _attributes(ruler(doc.copy()) for doc in parsed)
    by_lookup = _attributes(lookup(doc.copy()) for doc in parsed)
    assert by_lookup == by_ruler
    assert ("VERB", "VBZ") in {(pos, tag) for pos, tag, _ in by_ruler[len(wiki)]}  # "There is": VERB, not AUX
    assert ("SPACE", "_SP", "dep") in {a for doc in by_ruler[len(wiki):] for a in doc}
    assert len(lookup._cache) < sum(map(len, by_ruler)) / 10  # looked up, not matched token by token


def test_later_rules_win_and_unknown_patterns_are_refused() -> None:
    from spacy.lang.en import English

    nlp = English()
    doc = nlp("there is water")
    doc[0].dep_, doc[1].tag_ = "expl", "VBZ"
    rules = PosRules([
        {"patterns": [[{"LOWER": "is"}]], "attrs": {"POS": "AUX"}, "index": 0},
        {"patterns": [[{"DEP": "expl"}, {"LOWER": {"IN": ["is"]}}]], "attrs": {"POS": "VERB"}, "index": -1},
        {"patterns": [[{"LOWER": {"REGEX": "^wat"}}]], "attrs": {"POS": "NOUN", "LEMMA": "w"}, "index": 0},
        {"patterns": [[{"TAG": {"NOT_IN": ["VBZ"]}}]], "attrs": {"POS": "X"}, "index": 0},
        {"patterns": [[{"LOWER": "water"}]], "attrs": {"MORPH": "Number=Sing"}, "index": 0},  # not copied
    ])
    assert [t.pos_ for t in rules(doc)] == ["X", "VERB", "X"]
    assert not doc[2].lemma_ and not str(doc[2].morph)  # lemmas and features are not set
    with pytest.raises(ValueError, match="ORTH"):
        PosRules([{"patterns": [[{"ORTH": "is"}]], "attrs": {"POS": "AUX"}, "index": 0}])
    with pytest.raises(ValueError, match="FUZZY"):
        PosRules([{"patterns": [[{"LOWER": {"FUZZY": "is"}}]], "attrs": {"POS": "AUX"}, "index": 0}])


def test_use_lookup_pos_takes_the_rulers_place(ruler_nlp) -> None:
    nlp = load_pipeline(SPACY_TEST_MODEL)
    names = nlp.pipe_names
    assert use_lookup_pos(nlp) is nlp
    assert nlp.pipe_names == [("pos_rules" if name == "attribute_ruler" else name) for name in names]
    assert _attributes([nlp(sentence) for sentence in ODD]) == _attributes([ruler_nlp(s) for s in ODD])
    assert use_lookup_pos(nlp).pipe_names == nlp.pipe_names  # no ruler left: unchanged
    unusual = load_pipeline(SPACY_TEST_MODEL)
    unusual.get_pipe("attribute_ruler").add([[{"ORTH": "Cat"}]], {"POS": "PROPN"})
    assert "attribute_ruler" in use_lookup_pos(unusual).pipe_names  # a pattern it cannot read: ruler kept


def test_paraphraser_pipeline_gives_the_candidates_of_ruler_and_blis(wiki) -> None:
    """The paraphraser's own pipeline (tags looked up, numpy's BLAS) proposes what the model's attribute ruler
    and blis arithmetic proposed."""
    from st_debias.data.paraphrase.syntactic import SyntacticParaphraser

    fast = SyntacticParaphraser(SPACY_TEST_MODEL)
    assert "pos_rules" in fast.nlp.pipe_names
    plain = load_pipeline(SPACY_TEST_MODEL)
    assert all(node.ops.use_blis for node in plain.get_pipe("tok2vec").model.walk())
    assert not any(node.ops.use_blis for node in fast.nlp.get_pipe("tok2vec").model.walk())
    slow = SyntacticParaphraser(nlp=plain)
    sentences = wiki[:300]
    assert fast.generate(sentences, seed=3) == slow.generate(sentences, seed=3)
    with pytest.raises(ValueError, match="attribute_ruler"):
        SyntacticParaphraser(nlp=load_pipeline(SPACY_TEST_MODEL, exclude=("ner", "lemmatizer", "attribute_ruler")))
    with pytest.raises(ValueError, match="blas"):
        SyntacticParaphraser(blas="mkl")  # type: ignore[arg-type]
