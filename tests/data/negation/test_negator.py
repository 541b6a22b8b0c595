"""Rule negation on hand-checked cases, real Wikipedia sentences and the CANNOT human pairs."""

from __future__ import annotations

import pytest

from st_debias.data.negation.negator import NegatedAntonymGenerator, Negator, negation_count
from st_debias.data.text import words

CASES = [
    ("My dog likes eating sausage.", "My dog does not like eating sausage.", "do_vbz"),
    ("The cat sat on the mat.", "The cat did not sit on the mat.", "do_vbd"),
    ("They play football every week.", "They do not play football every week.", "do_vbp"),
    ("The man was arrested.", "The man was not arrested.", "aux_not"),
    ("He will win the race.", "He will not win the race.", "aux_not"),
    ("There are many cats.", "There are not many cats.", "copula_not"),
    ("Go home.", "Do not go home.", "imperative"),
    ("Is he happy?", "Is he not happy?", "copula_not_question"),
    ("She didn't like it.", "She liked it.", "denegate_do"),
    ("The cat did not sit on the mat.", "The cat sat on the mat.", "denegate_do"),
    ("He can't swim.", "He can swim.", "denegate_not"),
    ("He has never been there.", "He has been there.", "denegate_never"),
]


@pytest.mark.parametrize(("sentence", "expected", "rule"), CASES)
def test_rules(negator, sentence, expected, rule):
    result = negator.negate([sentence])[0]
    assert (result.text, result.rule) == (expected, rule)


@pytest.mark.parametrize(("sentence", "reason"), [
    ("Paris in the spring.", "no_verb"),
    ("Man arrested in Paris.", "non_finite_root"),
    ("No one came to the party.", "negated_other"),
    ("", "empty"),
])
def test_skips_are_named(negator, sentence, reason):
    result = negator.negate([sentence])[0]
    assert result.text is None and result.rule == reason


def test_skip_mode_leaves_negated_sentences(negator):
    skip = Negator(negator.model, already_negated="skip", nlp=negator.nlp)
    assert skip.negate(["She didn't like it."])[0].rule == "already_negated"


def test_never_unchanged_never_double_on_wikipedia(negator, wiki):
    """Guards against inserting a second negation or returning the input on real text."""
    results = negator.negate(wiki[:300])
    done = [r for r in results if r.ok]
    assert len(done) / len(results) > 0.8  # measured coverage on 10k sentences is reported in benchmarks/
    for r in done:
        assert r.text != r.source
        delta = negation_count(r.text) - negation_count(r.source)
        assert delta == (-1 if r.denegated else 1), (r.source, r.text)
        assert "not not" not in r.text.lower()
    assert sum(negator.rules.values()) >= 300


def test_cannot_human_pairs_quality_floor(negator, cannot_pairs):
    """On GLUE-diagnostic negation pairs the output must be close to the human negation (token F1)."""
    from collections import Counter

    pairs = cannot_pairs["glue_diagnostic"]
    results = negator.negate([s for s, _ in pairs])
    f1s = []
    for (_, human), r in zip(pairs, results):
        if not r.ok:
            continue
        a, b = Counter(words(r.text)), Counter(words(human))
        common = sum((a & b).values())
        f1s.append(0 if common == 0 else 2 * common / (sum(a.values()) + sum(b.values())))
    assert len(f1s) / len(pairs) > 0.8
    assert sum(f1s) / len(f1s) > 0.85


def test_non_string_raises(negator):
    with pytest.raises(ValueError, match="not str"):
        negator.negate(["fine.", 3])
    with pytest.raises(ValueError, match="already_negated"):
        Negator(negator.model, already_negated="maybe")
    with pytest.raises(ValueError, match="blas"):
        Negator(negator.model, blas="mkl")  # type: ignore[arg-type]


def test_negated_antonym_generator(negator):
    gen = NegatedAntonymGenerator(negator)
    out = gen.generate(["The house is large.", "The cat sat.", "The film is good."])
    assert out[0][0].text == "The house is not small."
    assert out[1] == [] and out[2] == [] and gen.report.declined["no_antonym"] == 2


def test_negated_antonym_shares_the_syntactic_word_list(negator, monkeypatch):
    """Both negated-antonym rewrites read one curated list: a pair added there reaches both."""
    from st_debias.data import lexicon
    from st_debias.data.paraphrase.syntactic import SyntacticParaphraser

    monkeypatch.setitem(lexicon.SAFE_ANTONYMS, "good", "bad")
    assert NegatedAntonymGenerator(negator).generate(["The film is good."])[0][0].text == "The film is not bad."
    paraphraser = SyntacticParaphraser(transforms=["antonym_negation"], mer_window=(0.0, 1.0))
    assert [c.text for c in paraphraser.generate(["The film is good."])[0]] == ["The film is not bad."]


def test_negator_pipeline_parses_like_blis(negator, wiki):
    """The negator's own pipeline multiplies with numpy's BLAS: the parses and results of blis stay."""
    blis_nlp = Negator(negator.model, blas="blis").nlp
    assert all(node.ops.use_blis for node in blis_nlp.get_pipe("tok2vec").model.walk())
    assert not any(node.ops.use_blis for node in negator.nlp.get_pipe("tok2vec").model.walk())
    sentences = wiki[:300]

    def parses(nlp):
        return [[(t.tag_, t.dep_, t.head.i) for t in doc] for doc in nlp.pipe(sentences)]

    assert parses(negator.nlp) == parses(blis_nlp)
    on_blis = Negator(negator.model, nlp=blis_nlp)  # a pipeline passed in is used as it is
    assert on_blis.negate(sentences) == negator.negate(sentences)
    assert all(node.ops.use_blis for node in blis_nlp.get_pipe("parser").model.walk())


def test_negate_doc_agrees_with_negate(negator, wiki):
    """``negate`` reads a Doc's text from its input, ``negate_doc`` from the Doc: both give one result, also
    around runs of spaces, tabs and curly quotes, where render needs each token's exact trailing space."""
    from st_debias.data.negation.negator import _columns, _surface
    from st_debias.data.paraphrase.syntactic.draft import surface_of

    odd = ["He  likes\tcats .", "“They went home,” she said.", "It rains\u00a0today.", "I don't know  why."]
    sentences = [*wiki[:200], *odd, *(s for s, _, _ in CASES)]
    for sentence, result in zip(sentences, negator.negate(sentences)):
        doc = negator.nlp(sentence.strip())
        assert negator.negate_doc(doc) == result
        assert _surface(doc, doc.to_array(_columns()[0]).tolist(), doc.text) == surface_of(doc)
