"""Rule-based sentence negation (OssCSE §4, step 1) with a spaCy dependency parse.

Find the ROOT of the (first) sentence and negate it by its Penn tag:

==================  =============================================  ===================
rule                condition                                      example
==================  =============================================  ===================
``aux_not``         the root has an auxiliary before it            has gone → has not gone
``copula_not``      the root is a form of *be*                     is happy → is not happy
``modal_not``       the root is a modal (MD)                       can → can not
``do_vbz``          VBZ main verb                                  likes → does not like
``do_vbd``          VBD main verb                                  liked → did not like
``do_vbp``          VBP main verb                                  like → do not like
``imperative``      VB root without a subject                      Go home → Do not go home
==================  =============================================  ===================

In questions (auxiliary or copula before the subject) ``not`` goes after the subject
(``Is he happy?`` → ``Is he not happy?``). A sentence whose root already carries a negation
(``not``, ``n't``, ``never``) is de-negated (``denegate_not``, ``denegate_do``, ``denegate_never``:
``does not like`` → ``likes``) or skipped (``already_negated``), as configured. Skip reasons:
``no_verb`` (root is not a verb), ``non_finite_root`` (VBG/VBN/VB root with no auxiliary, e.g.
headlines), ``negated_other`` (a negation word such as *no*, *nobody*, *nothing* in the main clause,
where adding *not* would double the negation), ``guard_failed`` (the result would be unchanged or
would not differ by exactly one negation). A result is never the input and never a double negation.

The spaCy model is a setting: argument ``model``, else ``$ST_DEBIAS_SPACY_MODEL``, else
``en_core_web_sm``. Only ``tok2vec``, ``tagger`` and ``parser`` run (tags and dependencies are
all the rules read; base forms come from lemminflect), batched with ``nlp.pipe``, by default on
one thread of numpy's BLAS rather than blis (:func:`~st_debias.data.spacy_pipeline.use_numpy_blas`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal, overload

from st_debias.data.generators import Candidate, CandidateGenerator
from st_debias.data.lexicon import safe_antonym
from st_debias.data.paraphrase.syntactic.draft import NEW, Draft, Surface, keeps_capital, render
from st_debias.data.spacy_pipeline import (
    load_pipeline,
    one_blas_thread,
    resolve_spacy_model,
    use_lookup_pos,
    use_numpy_blas,
)
from st_debias.data.text import words

BE_FORMS = frozenset({"be", "am", "is", "are", "was", "were", "'s", "'re", "'m", "’s", "’re", "’m"})
NEG_WORDS = frozenset({"not", "n't", "never", "no", "nobody", "nothing", "none", "neither", "nor", "nowhere",
                       "cannot", "n’t"})
ROOT_NEGATORS = frozenset({"not", "n't", "n’t", "never"})
VERB_TAGS = frozenset({"VB", "VBD", "VBG", "VBN", "VBP", "VBZ", "MD"})
DO_FORMS = {"VBZ": "does", "VBD": "did", "VBP": "do"}
_CONTRACTED_AUX = {"ca": "can", "wo": "will", "sha": "shall"}
_SUBJECT_DEPS = frozenset({"nsubj", "nsubjpass", "expl", "csubj"})
_NT = ("n't", "n’t")


def negation_count(text: str) -> int:
    """Number of negation words in ``text`` (``not``, ``n't`` contractions, ``never``, ``no``, ...)."""
    return sum(1 for w in words(text) if w in NEG_WORDS or w.endswith(_NT))


@lru_cache(maxsize=1)
def _columns() -> tuple[list[int], int, frozenset[int]]:
    """The ``Doc.to_array`` attributes the rules read per token (dependency, lower-case form, length,
    trailing space), the hash of the ``ROOT`` label and the hashes of :data:`NEG_WORDS`."""
    from spacy.attrs import DEP, LENGTH, LOWER, SPACY
    from spacy.strings import get_string_id

    return [DEP, LOWER, LENGTH, SPACY], get_string_id("ROOT"), frozenset(map(get_string_id, NEG_WORDS))


def _surface(doc, rows: list[list[int]], source: str) -> Surface:
    """What :func:`render` reads, from ``rows`` of ``doc.to_array(_columns()[0])`` and the Doc's text
    ``source`` (as :func:`~st_debias.data.paraphrase.syntactic.draft.surface_of`, without Token objects)."""
    texts: list[str] = []
    spaces: list[str] = []
    start = 0
    for _, _, length, space in rows:
        end = start + length
        texts.append(source[start:end])
        spaces.append(" " if space else "")
        start = end + space
    return texts, spaces, keeps_capital(doc[0]) if rows else True


@dataclass(frozen=True)
class NegationResult:
    """The outcome for one sentence: ``text`` is None when skipped; ``rule`` names the rule that fired
    or the skip reason; ``denegated`` is True when a negation was removed rather than added."""

    source: str
    text: str | None
    rule: str
    denegated: bool = False

    @property
    def ok(self) -> bool:
        return self.text is not None


def _insert_after(draft: Draft, index: int, word: str) -> Draft:
    """``draft`` with ``word`` inserted right after original token ``index``."""
    position = draft.positions([index])[0]
    items = list(draft.items)
    items.insert(position + 1, (NEW, word))
    return draft.derive("negation", (), items)


def _insert_before(draft: Draft, index: int, words_: str) -> Draft:
    """``draft`` with the words of ``words_`` inserted right before original token ``index``."""
    position = draft.positions([index])[0]
    items = list(draft.items)
    items[position:position] = [(NEW, word) for word in words_.split()]
    return draft.derive("negation", (), items)


def _base_form(token) -> str:
    return _verb_lemma(token.text.lower())


@lru_cache(maxsize=65536)
def _verb_lemma(word: str) -> str:
    """lemminflect's first verb lemma of lower-cased ``word`` (``word`` itself when it has none)."""
    from lemminflect import getLemma

    lemmas = getLemma(word, upos="VERB")
    return lemmas[0] if lemmas else word


@lru_cache(maxsize=65536)
def _inflect(base: str, tag: str) -> str:
    from lemminflect import getInflection

    forms = getInflection(base, tag=tag)
    return forms[0] if forms else base


def _clause_head(token):
    """The nearest verbal ancestor (or the token itself when verbal): the head of its clause."""
    current = token
    while True:
        if current.tag_ in VERB_TAGS or current.dep_ == "ROOT":
            return current
        if current.head is current:
            return current
        current = current.head


class Negator:
    """Negate (or de-negate) sentences by the rules in the module docstring.

    Args:
        model: spaCy model name (default ``$ST_DEBIAS_SPACY_MODEL`` or ``en_core_web_sm``); ignored when
            ``nlp`` is given.
        already_negated: ``"denegate"`` (remove the root's negation) or ``"skip"``.
        batch_size: ``nlp.pipe`` batch size.
        n_process: ``nlp.pipe`` processes.
        nlp: a loaded spaCy ``Language`` to reuse.
        pos_tags: tokens also carry coarse part-of-speech tags (``token.pos_``), the model's ``attribute_ruler``
            ones by table lookup (:func:`~st_debias.data.spacy_pipeline.use_lookup_pos`), for callers that
            parse once for the negator and for rules that read them.
        blas: matrix products of a pipeline the negator loads itself: ``"numpy"`` (numpy's BLAS on one
            thread; parsing 1.3-1.6x faster on a 2-core VM) or ``"blis"`` (thinc's default). They differ
            in float32 rounding only: on the first 60,000 Wikipedia sentences one parse changed (late in a
            77-token sentence) and no negation result did. A pipeline passed as ``nlp`` is used as it is.

    Example:
        >>> Negator("en_core_web_sm").negate("My dog likes eating sausage.").text  # doctest: +SKIP
        'My dog does not like eating sausage.'
        >>> [r.rule for r in Negator().negate(["It rains.", "Go home."])]  # doctest: +SKIP
        ['do_vbz', 'imperative']
    """

    PIPES = ("tok2vec", "tagger", "parser")

    def __init__(
        self,
        model: str | None = None,
        *,
        already_negated: Literal["denegate", "skip"] = "denegate",
        batch_size: int = 256,
        n_process: int = 1,
        nlp: Any | None = None,
        pos_tags: bool = False,
        blas: Literal["numpy", "blis"] = "numpy",
    ) -> None:
        if already_negated not in ("denegate", "skip"):
            raise ValueError(f"already_negated must be 'denegate' or 'skip', got {already_negated!r}")
        if blas not in ("numpy", "blis"):
            raise ValueError(f"blas must be 'numpy' or 'blis', got {blas!r}")
        self._model = model
        self.already_negated = already_negated
        self.batch_size = batch_size
        self.n_process = n_process
        self._nlp = nlp
        self._model_resolved = False
        self.pos_tags = pos_tags
        self.blas = blas
        self.rules: Counter[str] = Counter()

    @property
    def model(self) -> str:
        """The spaCy model's name, resolved on first use (:func:`resolve_spacy_model`)."""
        if not self._model_resolved:  # a name given (en_core_web_sm, say) resolves as the default does
            self._model, self._model_resolved = resolve_spacy_model(self._model), True
        return self._model

    @property
    def nlp(self):
        if self._nlp is None:
            # The rules read tags and dependencies only; coarse POS (the attribute ruler's, looked up) on request.
            nlp = load_pipeline(
                self.model,
                keep=(*self.PIPES, "attribute_ruler") if self.pos_tags else self.PIPES,
                exclude=["ner", "lemmatizer"] + ([] if self.pos_tags else ["attribute_ruler"]),
                needs=("tagger", "parser"),
                user="the negator",
            )
            nlp = use_lookup_pos(nlp) if self.pos_tags else nlp
            self._nlp = use_numpy_blas(nlp) if self.blas == "numpy" else nlp
        return self._nlp

    @overload
    def negate(self, sentences: str, *, show_progress_bar: bool = False) -> NegationResult: ...

    @overload
    def negate(self, sentences: Iterable[str], *, show_progress_bar: bool = False) -> list[NegationResult]: ...

    def negate(
        self, sentences: str | Iterable[str], *, show_progress_bar: bool = False
    ) -> NegationResult | list[NegationResult]:
        """Negate one sentence (a string: one :class:`NegationResult`) or many (any iterable of strings: one
        result per sentence, in order); :attr:`rules` counts rules and skips.

        Raises:
            ValueError: a non-string item.
        """
        if isinstance(sentences, str):
            return self.negate([sentences], show_progress_bar=show_progress_bar)[0]
        sentences = list(sentences)
        for position, item in enumerate(sentences):
            if not isinstance(item, str):
                raise ValueError(f"Sentence at position {position} is {type(item).__name__}, not str.")
        results: list[NegationResult | None] = [None] * len(sentences)
        todo = []
        for i, sentence in enumerate(sentences):
            if not sentence.strip():
                results[i] = NegationResult(sentence, None, "empty")
            else:
                todo.append(i)
        with one_blas_thread():
            docs = self.nlp.pipe((sentences[i].strip() for i in todo), batch_size=self.batch_size,
                                 n_process=self.n_process)
            if show_progress_bar:
                from tqdm.auto import tqdm

                docs = tqdm(docs, total=len(todo), desc="negating")
            for i, doc in zip(todo, docs):
                results[i] = self._negate(doc, sentences[i].strip())  # a Doc's text is its input
        self.rules.update(result.rule for result in results)  # type: ignore[union-attr]
        return results  # type: ignore[return-value]

    def negate_doc(self, doc) -> NegationResult:
        """Negate one parsed ``Doc`` (see the rules in the module docstring)."""
        return self._negate(doc, doc.text)

    def _negate(self, doc, source: str) -> NegationResult:
        """:meth:`negate_doc` given the Doc's text ``source`` (``Doc.text`` rebuilds it token by token)."""
        columns, root_hash, neg_hashes = _columns()
        rows = doc.to_array(columns).tolist()  # one call instead of a Token object per token and attribute
        root_i = next((i for i, row in enumerate(rows) if row[0] == root_hash), None)
        if root_i is None:
            return NegationResult(source, None, "no_verb")
        root = doc[root_i]
        if root.tag_ not in VERB_TAGS:
            return NegationResult(source, None, "no_verb")
        children = list(root.children)
        auxes = [c for c in children if c.dep_ in ("aux", "auxpass") and c.i < root.i]
        root_negs = [c for c in children if c.dep_ == "neg" and c.lower_ in ROOT_NEGATORS]
        other_negs = any(
            t.lower_ in NEG_WORDS and t not in root_negs and _clause_head(t) == root
            for t in (doc[i] for i, row in enumerate(rows) if row[1] in neg_hashes)
        )
        if root_negs:
            if self.already_negated == "skip":
                return NegationResult(source, None, "already_negated")
            if other_negs:
                return NegationResult(source, None, "negated_other")
            surface = _surface(doc, rows, source)
            return self._guard(source, *self._denegate(doc, surface, root, root_negs[0], auxes), denegated=True)
        if other_negs:
            return NegationResult(source, None, "negated_other")
        draft = Draft.identity(doc)
        subject = next((c for c in children if c.dep_ in _SUBJECT_DEPS), None)
        if auxes:
            first = auxes[0]
            if first.lower_ == "to":
                return NegationResult(source, None, "non_finite_root")
            if subject is not None and first.i < subject.i < root.i:
                draft, rule = _insert_after(draft, subject.right_edge.i, "not"), "aux_not_question"
            else:
                draft, rule = _insert_after(draft, first.i, "not"), "aux_not"
        elif root.tag_ == "MD":
            draft, rule = _insert_after(draft, root.i, "not"), "modal_not"
        elif root.lower_ in BE_FORMS:
            if subject is not None and subject.i > root.i and root.i == 0:
                draft, rule = _insert_after(draft, subject.right_edge.i, "not"), "copula_not_question"
            else:
                draft, rule = _insert_after(draft, root.i, "not"), "copula_not"
        elif root.tag_ in DO_FORMS:
            if subject is None or subject.i > root.i:
                return NegationResult(source, None, "non_finite_root")  # inverted/fragment: unsafe
            base = _base_form(root)
            draft = _insert_before(draft.derive("negation", (), overrides={root.i: base}), root.i,
                                   f"{DO_FORMS[root.tag_]} not")
            rule = f"do_{root.tag_.lower()}"
        elif root.tag_ == "VB" and subject is None:
            # render capitalises the new first word and lower-cases the moved first token
            draft, rule = _insert_before(draft, root.i, "do not"), "imperative"
        else:
            return NegationResult(source, None, "non_finite_root")
        return self._guard(source, render(doc, draft, _surface(doc, rows, source)), rule)

    def _denegate(self, doc, surface: Surface, root, neg, auxes) -> tuple[str, str]:
        overrides = {neg.i: ""}  # "" deletes a token
        if neg.lower_ == "never":
            return self._render(doc, surface, overrides), "denegate_never"
        host = doc[neg.i - 1] if neg.i > 0 else None
        if host is not None and host.lower_ in _CONTRACTED_AUX and neg.lower_ in ("n't", "n’t"):
            overrides[host.i] = _CONTRACTED_AUX[host.lower_] if host.text.islower() else \
                _CONTRACTED_AUX[host.lower_].capitalize()
        if host is not None and host in auxes and host.lower_ in ("do", "does", "did") and auxes == [host] \
                and root.tag_ == "VB":
            overrides[host.i] = ""
            tag = {"do": "VBP", "does": "VBZ", "did": "VBD"}[host.lower_]
            overrides[root.i] = _inflect(_base_form(root), tag)
            return self._render(doc, surface, overrides), "denegate_do"
        return self._render(doc, surface, overrides), "denegate_not"

    @staticmethod
    def _render(doc, surface: Surface, overrides: dict[int, str]) -> str:
        return render(doc, Draft.identity(doc).derive("denegation", overrides, overrides=overrides), surface)

    @staticmethod
    def _guard(source: str, text: str, rule: str, *, denegated: bool = False) -> NegationResult:
        expected = negation_count(source) + (-1 if denegated else 1)
        if text == source or negation_count(text) != expected:
            return NegationResult(source, None, "guard_failed")
        return NegationResult(source, text, rule, denegated)


def antonym_swap(doc: Any, predicate_only: bool = False, antonyms: Mapping[str, str] | None = None) -> str | None:
    """The sentence of a parsed ``doc`` with its first adjective or adverb next to the root replaced by the
    curated antonym of :func:`~st_debias.data.lexicon.safe_antonym` (``is large`` → ``is small``), or by its
    entry in ``antonyms`` (lower-cased word → antonym) when given; None when there is none.

    "Next to the root" means a child of the root, or of the root's attribute noun (``is a large house``).
    With ``predicate_only``, only an unmodified adjective complement of the root qualifies (``is large``,
    ``remains stable``; not ``is very large``, ``a large house`` or ``early in the war``): the one position
    where negating the root means the antonym ("is not large" = "is small").
    """
    roots = [t for t in doc if t.dep_ == "ROOT"]
    for token in roots[0].subtree if roots else ():
        near_root = token.head == roots[0] or (token.head.head == roots[0] and token.head.dep_ == "attr")
        if predicate_only:
            near_root = token.head == roots[0] and token.dep_ == "acomp" and not any(
                child.dep_ in ("advmod", "npadvmod") for child in token.children
            )
        if near_root and token.tag_ in ("JJ", "RB") and token.dep_ in ("acomp", "advmod", "amod"):
            antonym = safe_antonym(token.lower_) if antonyms is None else antonyms.get(token.lower_)
            if antonym:
                return doc.text[: token.idx] + antonym + doc.text[token.idx + len(token.text):]
    return None


class NegatedAntonymGenerator(CandidateGenerator):
    """Meaning-preserving rewrite: an adjective/adverb next to the root becomes its antonym and the root
    is negated (``The house is large.`` → ``The house is not small.``). A positive/paraphrase candidate
    generator (not a negation): the two changes cancel. Antonyms come from the curated gradable pairs of
    :func:`st_debias.data.lexicon.safe_antonym`, the list the syntactic ``antonym_negation`` rule uses
    (WordNet's first antonym is not meaning-safe: *common* → *individual*).

    Args:
        negator: the :class:`Negator` to use (its spaCy model parses the input).
    """

    name = "negated_antonym"

    def __init__(self, negator: Negator | None = None) -> None:
        super().__init__()
        self.negator = negator or Negator()

    def prepare(self) -> None:
        """Load the negator's pipeline and lemminflect's tables now (:meth:`CandidateGenerator.prepare`)."""
        from st_debias.data.lexicon import load_lexicons

        load_lexicons()
        self.generate(["The house is large."])

    def generate(
        self, sentences: Sequence[str], *, seed: int = 0, docs: Sequence[Any] | None = None
    ) -> list[list[Candidate]]:
        """At most one candidate per input: its antonym swap, negated. ``docs``: the inputs already parsed by
        the negator's pipeline, in order (not parsed again)."""
        if docs is not None and len(docs) != len(sentences):
            raise ValueError(f"{len(docs)} docs for {len(sentences)} sentences")
        self.report = type(self.report)()
        self.report.inputs = len(sentences)
        nlp = self.negator.nlp
        out: list[list[Candidate]] = []
        with one_blas_thread():
            for doc in docs if docs is not None else nlp.pipe(sentences, batch_size=self.negator.batch_size):
                swapped = antonym_swap(doc)
                if swapped is None:
                    self.report.declined["no_antonym"] += 1
                    out.append([])
                    continue
                result = self.negator.negate_doc(nlp(swapped))
                if not result.ok or result.denegated:
                    self.report.declined[f"negation_{result.rule}"] += 1
                    out.append([])
                    continue
                self.report.with_candidates += 1
                self.report.candidates += 1
                out.append([Candidate(result.text, self.name, ("antonym", result.rule))])  # type: ignore[arg-type]
        return out
