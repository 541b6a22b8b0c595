"""The builders' spaCy pipeline: an attribute ruler by table lookup (``PosRules``), exact on real text."""

from __future__ import annotations

import pickle
import subprocess
import sys

import pytest

from st_debias.data.spacy_pipeline import PosRules, load_pipeline, use_lookup_pos

from .conftest import SPACY_TEST_MODEL

# Spacing the ruler retags (_SP / SPACE / dep), "there is" (its one two-token rule on the part of speech) and
# the two-token lemma rules, two of them read by regular expression ("ai n't", "y' all").
ODD = [
    "There is a cat.", "There were many dogs  here.", "Hello \n world.", "Well,\t\tthere 's hope .",
    "I'm gonna go, y'all. Let's go! C'mon, it ain't so.", "He gets it; she got it.",
]


@pytest.fixture(scope="module")
def ruler_nlp():
    try:
        return load_pipeline(SPACY_TEST_MODEL)
    except OSError as error:  # pragma: no cover
        pytest.skip(str(error))


def _attributes(docs) -> list[list[tuple[str, ...]]]:
    return [[(t.pos_, t.tag_, t.dep_, str(t.morph), t.lemma_) for t in doc] for doc in docs]


def test_lookup_sets_what_the_ruler_sets(ruler_nlp, wiki):
    """Failure mode: a token's part of speech, tag, dependency, features or lemma differs from the model's own
    attribute ruler (a rule read in the wrong order, a two-token rule missed, a word treated as one no rule
    names when a rule names it or reads it by regular expression)."""
    ruler = ruler_nlp.get_pipe("attribute_ruler")
    lookup = PosRules(ruler.patterns)
    parsed = list(ruler_nlp.pipe([*wiki, *ODD], disable=["attribute_ruler"]))
    by_ruler = _attributes(ruler(doc.copy()) for doc in parsed)
    by_lookup = _attributes(lookup(doc.copy()) for doc in parsed)
    assert by_lookup == by_ruler
    odd = [a for doc in by_ruler[len(wiki):] for a in doc]
    assert ("VERB", "VBZ") in {a[:2] for a in odd}  # "There is": VERB, not AUX
    assert ("SPACE", "_SP", "dep") in {a[:3] for a in odd}
    assert {"be", "go", "to", "us", "come", "you"} <= {a[4] for a in odd}  # ai n't, gon na, let 's, c'm on, y' all
    assert len(lookup._cache) < sum(map(len, by_ruler)) / 50  # looked up, not matched token by token


def test_rule_order_index_and_operators_as_spacy_reads_them() -> None:
    """Against spaCy's own AttributeRuler on rules that exercise what the English model's do not: a later
    one-token rule over an earlier two-token one, a negative index, NOT_IN, a regular expression on the tag."""
    from spacy.lang.en import English
    from spacy.tokens import Doc

    rules = [
        {"patterns": [[{"DEP": "expl"}, {"LOWER": {"IN": ["is", "was"]}}]], "attrs": {"POS": "VERB"}, "index": -1},
        {"patterns": [[{"LOWER": "is"}]], "attrs": {"POS": "AUX", "LEMMA": "be"}, "index": 0},
        {"patterns": [[{"LOWER": {"REGEX": "^wat"}}, {"TAG": {"REGEX": "^V"}}]], "attrs": {"MORPH": "Number=Sing"},
         "index": 0},
        {"patterns": [[{"TAG": {"NOT_IN": ["VBZ", "VBD"]}}], [{"lower": "was"}]], "attrs": {"POS": "X"}, "index": 0},
        {"patterns": [[{"TAG": "DT"}, {"IS_SPACE": False}, {"DEP": "ROOT"}]], "attrs": {"TAG": "NN", "DEP": "nsubj"},
         "index": 1},
    ]
    nlp = English()
    ruler = nlp.add_pipe("attribute_ruler")
    ruler.add_patterns(rules)
    lookup = PosRules(ruler.patterns)

    def doc() -> Doc:
        return Doc(nlp.vocab, words=["there", "is", "water", "was", "the", "cold", "water", "is"],
                   tags=["EX", "VBZ", "NN", "VBD", "DT", "JJ", "NN", "VBZ"],
                   deps=["expl", "ROOT", "attr", "dep", "det", "amod", "ROOT", "dep"], heads=[1, 1, 1, 1, 6, 6, 6, 6])

    expected = _attributes([ruler(doc())])
    assert _attributes([lookup(doc())]) == expected
    assert [a[0] for a in expected[0][:4]] == ["X", "AUX", "X", "X"]  # the later rules win over "there is" VERB
    assert expected[0][5][1:3] == ("NN", "nsubj")


@pytest.mark.parametrize(
    ("rule", "problem"),
    [
        ({"patterns": [[{"ORTH": "is"}]], "attrs": {"POS": "AUX"}}, "ORTH"),
        ({"patterns": [[{"LOWER": {"FUZZY": "is"}}]], "attrs": {"POS": "AUX"}}, "FUZZY"),
        ({"patterns": [[{"LOWER": {"REGEX": {"IN": ["is"]}}}]], "attrs": {"POS": "AUX"}}, "value"),
        ({"patterns": [[{"LOWER": "is", "OP": "+"}]], "attrs": {"POS": "AUX"}}, "OP"),
        ({"patterns": [[{"IS_SPACE": "yes"}]], "attrs": {"POS": "SPACE"}}, "value"),
        ({"patterns": [[{"LOWER": "a"}, {"LOWER": "b"}]], "attrs": {"POS": "X"}, "index": 2}, "index"),
        ({"patterns": [[{"LOWER": "a"}, {"LOWER": "b"}]], "attrs": {"POS": "X"}, "index": -3}, "index"),
        ({"patterns": [[{"LOWER": "a"}]], "attrs": {"_": {"flag": True}}}, "extension"),
    ],
)
def test_rules_the_lookup_cannot_stand_in_for_are_refused(rule: dict, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        PosRules([{"index": 0, **rule}])


def test_use_lookup_pos_takes_the_rulers_place(ruler_nlp, tmp_path) -> None:
    """Same place and same attributes; a ruler it cannot read is kept; the lookup pickles (processes that are
    not forked) and a saved pipeline loads in a fresh process (spaCy finds the factory by its entry point)."""
    nlp = load_pipeline(SPACY_TEST_MODEL)
    names, components = list(nlp.pipe_names), list(nlp.component_names)
    assert use_lookup_pos(nlp) is nlp
    assert nlp.pipe_names == [("pos_rules" if name == "attribute_ruler" else name) for name in names]
    assert nlp.component_names == [("pos_rules" if name == "attribute_ruler" else name) for name in components]
    assert _attributes(nlp.pipe(ODD)) == _attributes(ruler_nlp.pipe(ODD))
    copy = pickle.loads(pickle.dumps(nlp.get_pipe("pos_rules")))
    assert _attributes([copy(doc) for doc in nlp.pipe(ODD, disable=["pos_rules"])]) == _attributes(nlp.pipe(ODD))
    nlp.to_disk(tmp_path / "saved")
    script = (f"import spacy; nlp = spacy.load({str(tmp_path / 'saved')!r}); "
              "print(nlp.pipe_names[-1], [t.pos_ for t in nlp('There is a cat.')])")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["pos_rules", "['PRON',", "'VERB',", "'DET',", "'NOUN',", "'PUNCT']"]
    unusual = load_pipeline(SPACY_TEST_MODEL)
    unusual.get_pipe("attribute_ruler").add([[{"ORTH": "Cat"}]], {"POS": "PROPN"})
    assert "attribute_ruler" in use_lookup_pos(unusual).pipe_names  # a pattern it cannot read: ruler kept


def test_paraphraser_pipeline_gives_the_candidates_of_ruler_and_blis(wiki) -> None:
    """The paraphraser's own pipeline (the ruler looked up, numpy's BLAS) proposes what the model's attribute
    ruler and blis arithmetic proposed."""
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
