"""Minimal-pair edits on a spaCy parse: small surface changes that change the meaning, or keep it.

Every edit takes a parsed sentence (a spaCy ``Doc`` with tags and dependencies) and a seeded random
generator and returns the edited text, or a :class:`Declined` reason. An edit never returns its input.

Meaning-changing edits (negatives):

=================  ===============================================  ==============================================
edit               what it changes                                  example
=================  ===============================================  ==============================================
``argument_swap``  subject and object of a transitive verb swap     The cat chased the dog. → The dog chased the cat.
``phrase_swap``    two noun phrases in different roles swap         sold the farm to his son → sold his son to the farm
``number``         one number becomes another of the same kind      born in 1921 → born in 1926
``cohyponym``      a noun becomes a sibling in WordNet              a glass of wine → a glass of beer
``antonym``        an adjective becomes its antonym                 The house is large. → The house is small.
=================  ===============================================  ==============================================

(Negation and de-negation, the fifth meaning-changing family, is :class:`~st_debias.data.negation.negator.Negator`.)

They keep the words close on purpose: a bag-of-words model scores such a pair as near-identical, so these
pairs are exactly where it has to look at meaning. Their counterparts that keep the meaning while adding the
same surface cues (a negated antonym "is not small", a synonym, a voice change) are produced by the
paraphrase generators; :class:`~st_debias.data.minimal_pairs.builder.MinimalPairBuilder` pairs them up.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from st_debias.data.text import is_ascii_integer

# Function words and very general nouns whose WordNet siblings are not a meaningful contrast.
_GENERIC_NOUNS = frozenset(
    """thing things one ones part parts way ways time times year years people person man men woman women
    number numbers kind kinds type types lot lots group groups area areas member members end side form
    use case cases place places point points fact name names""".split()
)
_ARGUMENT_BLOCKERS = frozenset({"relcl", "acl", "advcl", "ccomp", "xcomp", "conj", "cc", "appos", "punct"})
_FINITE_ACTIVE = frozenset({"VBD", "VBZ", "VBP"})
_NOUN_TAGS = frozenset({"NN", "NNS", "NNP", "NNPS"})
# Adjective + noun collocations whose "antonym" is not a contrast ("high school" -> "low school").
_FIXED_HEADS = frozenset("school schools court courts level levels class classes street streets".split())
_MIN_WORDNET_COUNT = 3
_MAX_ARGUMENT_TOKENS = 6


@dataclass(frozen=True)
class Declined:
    """Why an edit does not apply to a sentence (counted per edit in the builder's report)."""

    reason: str


def _render(doc, replacements: dict[int, str]) -> str:
    """The text of ``doc`` with token ``i`` replaced by ``replacements[i]`` (spaCy spacing kept)."""
    return "".join(replacements.get(t.i, t.text) + t.whitespace_ for t in doc).strip()


def _contiguous(token) -> tuple[int, int] | None:
    left, right = token.left_edge.i, token.right_edge.i
    return (left, right) if len(list(token.subtree)) == right - left + 1 else None


def _argument_span(token) -> tuple[int, int] | str:
    """Token range of a short, clause-free noun phrase headed by ``token``, or a decline reason."""
    if token.tag_ not in _NOUN_TAGS:
        return "pronoun_or_other_head" if token.tag_ in ("PRP", "WP", "EX") else "argument_not_noun"
    if any(t.dep_ in _ARGUMENT_BLOCKERS for t in token.subtree if t is not token):
        return "complex_argument"
    span = _contiguous(token)
    if span is None:
        return "discontinuous_argument"
    if span[1] - span[0] + 1 > _MAX_ARGUMENT_TOKENS:
        return "long_argument"
    return span


def _case_for_position(text: str, first_token, at_start: bool) -> str:
    """Capitalise a phrase moved to the start; lower-case a common-noun phrase moved away from it."""
    if at_start:
        return text[:1].upper() + text[1:]
    if first_token.i == 0 and first_token.tag_ not in ("NNP", "NNPS") and not first_token.text.isupper():
        return text[:1].lower() + text[1:]
    return text


def _swap_spans(doc, first: tuple[int, int], second: tuple[int, int]) -> str:
    """The text of ``doc`` with two token ranges (inclusive, ``first`` before ``second``) exchanged; each
    phrase's capitalisation follows its new position."""
    (a0, a1), (b0, b1) = first, second
    moved = {
        a0: (_case_for_position(doc[b0 : b1 + 1].text, doc[b0], at_start=a0 == 0), a1),
        b0: (_case_for_position(doc[a0 : a1 + 1].text, doc[a0], at_start=False), b1),
    }
    pieces = []
    for t in doc:
        if t.i in moved:
            text, end = moved[t.i]
            pieces.append(text + doc[end].whitespace_)
        elif a0 < t.i <= a1 or b0 < t.i <= b1:
            continue
        else:
            pieces.append(t.text + t.whitespace_)
    return "".join(pieces).strip()


def argument_swap(doc, rng: np.random.Generator) -> str | Declined:
    """Swap the subject and the direct object of the sentence's finite active verb.

    Declines for passives, pronouns (their case would change), clauses inside an argument, arguments
    longer than six tokens, and present-tense verbs whose agreement would break (singular ↔ plural).
    """
    roots = [t for t in doc if t.dep_ == "ROOT"]
    if not roots or roots[0].tag_ not in _FINITE_ACTIVE:
        return Declined("no_finite_active_root")
    verb = roots[0]
    subjects = [c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass")]
    objects = [c for c in verb.children if c.dep_ == "dobj"]
    if any(c.dep_ in ("nsubjpass", "auxpass") for c in verb.children):
        return Declined("passive")
    if len(subjects) != 1 or len(objects) != 1:
        return Declined("no_subject_and_object")
    subject, obj = subjects[0], objects[0]
    if not subject.i < verb.i < obj.i:
        return Declined("unusual_order")
    spans = [_argument_span(subject), _argument_span(obj)]
    for span in spans:
        if isinstance(span, str):
            return Declined(span)
    (s0, s1), (o0, o1) = spans  # type: ignore[misc]
    if verb.tag_ in ("VBZ", "VBP") and subject.tag_ != obj.tag_:
        return Declined("agreement")
    if any(t.dep_ == "neg" for t in verb.children) or any(t.lower_ in ("each", "other") for t in doc[o0 : o1 + 1]):
        return Declined("reciprocal_or_negated")
    subject_text = doc[s0 : s1 + 1].text
    object_text = doc[o0 : o1 + 1].text
    if subject_text.lower() == object_text.lower():
        return Declined("same_arguments")
    return _swap_spans(doc, (s0, s1), (o0, o1))


def _is_year(value: int, text: str) -> bool:
    return len(text) == 4 and 1000 <= value <= 2099


def number(doc, rng: np.random.Generator) -> str | Declined:
    """Change one number written in digits: a year moves by 1–9 years, any other count to a different
    value of the same order of magnitude (never equal, never zero)."""
    candidates = [
        t for t in doc
        if t.tag_ == "CD" and is_ascii_integer(t.text.replace(",", "")) and not t.text.startswith("0")
    ]
    if not candidates:
        return Declined("no_number")
    token = candidates[int(rng.integers(len(candidates)))]
    digits = token.text.replace(",", "")
    value = int(digits)
    if _is_year(value, digits):
        shift = int(rng.integers(1, 10)) * (1 if rng.random() < 0.5 else -1)
        new_value = value + shift
        new_text = str(new_value)
    else:
        low, high = (2, 10) if value < 10 else (10 ** (len(digits) - 1), 10 ** len(digits))
        choices = [v for v in range(low, min(high, low + 1000)) if v != value]
        new_value = int(rng.choice(choices))
        new_text = f"{new_value:,}" if "," in token.text else str(new_value)
    return _render(doc, {token.i: new_text})


def _is_unit(sense) -> bool:
    """Whether a noun sense is a unit of measure or of time (yard, inch, hour): under WordNet's ``measure.n.02``."""
    return any(node.name() == "measure.n.02" for path in sense.hypernym_paths() for node in path)


def _part_of_another_whole(sense, sibling) -> bool:
    """Whether two noun senses are parts of different wholes (a wheel of a vehicle, a pulley of a block and
    tackle): a swap a reader takes for a change of topic, not of one detail."""
    wholes, others = set(sense.part_holonyms()), set(sibling.part_holonyms())
    return bool(wholes) and bool(others) and not wholes & others


@functools.lru_cache(maxsize=1 << 16)
def _siblings(lemma: str, strict: bool = True) -> tuple[str, ...]:
    """Single-word co-hyponyms of ``lemma``'s most frequent noun sense that WordNet's corpus has seen; with
    ``strict``, none for a unit of measure, and no sibling that is a part of another whole.

    Cached per process: common nouns recur in every block."""
    from st_debias.data.lexicon import lemma_count, wordnet

    wn = wordnet()
    synsets = wn.synsets(lemma, pos="n")
    if not synsets:
        return ()
    sense = synsets[0]
    if strict and _is_unit(sense):
        return ()
    out: list[str] = []
    # Sorted: NLTK returns related synsets in set order, which changes with each process's string hashing.
    for hypernym in sorted(sense.hypernyms()):
        for sibling in sorted(hypernym.hyponyms()):
            if sibling == sense or (strict and _part_of_another_whole(sense, sibling)):
                continue
            lemma_obj = sibling.lemmas()[0]
            name = lemma_obj.name()
            if name.isalpha() and name.islower() and name != lemma and lemma_count(lemma_obj) >= _MIN_WORDNET_COUNT and name not in out:
                out.append(name)
    return tuple(out)


def _noun_lemma(token) -> str:
    """Base form of a noun token (lemminflect; the parser pipeline runs without spaCy's lemmatizer)."""
    if token.tag_ == "NN":
        return token.lower_
    from lemminflect import getLemma

    lemmas = getLemma(token.lower_, upos="NOUN")
    return lemmas[0] if lemmas else token.lower_


def _inflect_noun(lemma: str, tag: str) -> str | None:
    if tag == "NN":
        return lemma
    if lemma.endswith("s"):  # "subspecies", "series": lemminflect would write "subspecieses"
        return None
    from lemminflect import getInflection

    forms = getInflection(lemma, tag="NNS")
    return forms[0] if forms else None


def _article(previous: str, word: str) -> str | None:
    """The article ``previous`` rewritten for ``word`` (``a`` ↔ ``an``), or None when no change is needed."""
    if previous.lower() not in ("a", "an"):
        return None
    wanted = "an" if word[:1].lower() in "aeiou" else "a"
    if previous.lower() == wanted:
        return None
    return wanted.capitalize() if previous[:1].isupper() else wanted


def _replace_word(doc, token, word: str) -> str:
    """The text of ``doc`` with ``token`` replaced by ``word`` and an article before it fixed (a ↔ an)."""
    replacements = {token.i: word}
    if token.i > 0:
        article = _article(doc[token.i - 1].text, word)
        if article:
            replacements[token.i - 1] = article
    return _render(doc, replacements)


def cohyponym(doc, rng: np.random.Generator, *, strict: bool = True) -> str | Declined:
    """Replace one common noun with a WordNet sibling of its most frequent sense ("wine" → "beer"), same
    number; the replacement must have been seen in WordNet's tagged corpus (a frequency guard). With ``strict``
    (default), units of measure are not swapped (yard → inch) and neither are parts of different wholes
    (wheel → pulley): a sentence declined for want of any other swap is counted as ``unit_of_measure`` or
    ``part_of_another_whole`` when those swaps were all it had."""
    nouns = [
        t for t in doc
        if t.tag_ in ("NN", "NNS") and t.dep_ not in ("compound", "amod", "npadvmod") and t.text.isalpha()
        and t.text.islower() and _noun_lemma(t) not in _GENERIC_NOUNS
    ]
    if not nouns:
        return Declined("no_noun")
    order = rng.permutation(len(nouns))
    filtered: list[str] = []  # why strict left a noun without siblings that WordNet has
    for k in order:
        token = nouns[int(k)]
        if token.tag_ == "NNS" and _noun_lemma(token) == token.lower_:
            continue  # invariant plural ("species"): the number of a replacement cannot be checked
        lemma = _noun_lemma(token)
        siblings = _siblings(lemma, strict)
        if not siblings:
            if strict and _siblings(lemma, False):
                filtered.append("unit_of_measure" if _is_unit_noun(lemma) else "part_of_another_whole")
            continue
        choice = siblings[int(rng.integers(len(siblings)))]
        form = _inflect_noun(choice, token.tag_)
        if not form or form == token.text:
            continue
        return _replace_word(doc, token, form)
    return Declined(filtered[0] if filtered else "no_sibling")


def _is_unit_noun(lemma: str) -> bool:
    from st_debias.data.lexicon import wordnet

    synsets = wordnet().synsets(lemma, pos="n")
    return bool(synsets) and _is_unit(synsets[0])


def antonym(doc, rng: np.random.Generator) -> str | Declined:
    """Replace one predicate or attributive adjective with its antonym ("large" → "small"), no negation
    added. Antonyms come from the curated gradable pairs of :mod:`st_debias.data.lexicon` (the same list the
    negated-antonym positives use, so both sides of a row share the antonym); declines adjectives modified
    by an adverb ("radically different") and fixed collocations ("high school")."""
    from st_debias.data.lexicon import safe_antonym

    adjectives = [
        t for t in doc
        if t.tag_ == "JJ" and t.dep_ in ("acomp", "amod") and t.text.isalpha() and t.text.islower()
        and not any(c.dep_ == "advmod" for c in t.children)
        and not (t.dep_ == "amod" and (t.head.lower_ in _FIXED_HEADS or t.head.dep_ == "compound"))
    ]
    if not adjectives:
        return Declined("no_adjective")
    for k in rng.permutation(len(adjectives)):
        token = adjectives[int(k)]
        opposite = safe_antonym(token.lower_)
        if opposite and opposite != token.lower_:
            return _replace_word(doc, token, opposite)
    return Declined("no_antonym")


_SWAP_BLOCKERS = frozenset({"conj", "appos", "compound", "poss", "nmod", "npadvmod", "attr"})
# Words that mark a symmetric relation: swapping its two sides keeps the meaning ("A married B").
_SYMMETRIC_WORDS = frozenset(
    """between among with versus vs against like similar same different equal married met joined merged
    played each other""".split()
)
_MONTHS = frozenset(
    "january february march april may june july august september october november december".split()
)


def _swappable_chunks(doc) -> list[tuple[int, int, object]]:
    """Base noun phrases (spaCy noun chunks) headed by a noun, short, in a role a swap changes."""
    out = []
    for chunk in doc.noun_chunks:
        head = chunk.root
        if head.tag_ not in _NOUN_TAGS or head.dep_ in _SWAP_BLOCKERS or len(chunk) > _MAX_ARGUMENT_TOKENS:
            continue
        if _noun_lemma(head) in _GENERIC_NOUNS or head.lower_ in _MONTHS or head.lower_ in ("one", "other"):
            continue
        if chunk.end < len(doc) and doc[chunk.end].tag_ == "CD":
            continue  # "January 26", "Year 704": the number belongs to the phrase
        if head.tag_ in ("NNP", "NNPS") and head.head.lower_ == "of" and head.head.head.tag_ in ("NNP", "NNPS"):
            continue  # "School of Management", "Strait of Gibraltar": part of a longer name
        if head.tag_ in ("NNP", "NNPS") and any(
            c.lower_ == "of" and any(g.tag_ in ("NNP", "NNPS") for g in c.children) for c in head.children
        ):
            continue  # the first part of such a name
        if any(t.tag_ in ("PRP$", "WP$", "POS") or t.dep_ == "nummod" for t in chunk):
            continue  # "his son" / "the city's" / "two cities": a swap would move a possessor or a count
        if head.text.isupper() or not chunk.text.replace(" ", "").replace("-", "").replace("'", "").isalpha():
            continue
        out.append((chunk.start, chunk.end - 1, head))
    return out


def _related(a, b) -> bool:
    """Whether two heads are conjuncts or appositions of one another, or one sits inside the other's phrase:
    swapping them keeps the meaning ("cats and dogs") or breaks the parse."""
    for x, y in ((a, b), (b, a)):
        if x in y.subtree and x.head is not y.head:
            return True
        if x.dep_ in ("conj", "appos") and x.head is y:
            return True
    conjuncts = set(a.conjuncts)
    return b in conjuncts


def phrase_swap(doc, rng: np.random.Generator) -> str | Declined:
    """Swap two short noun phrases that play different roles ("The firm sold the farm to the bank." →
    "The firm sold the bank to the farm."): the words stay, who does what to whom changes.

    A wider version of :func:`argument_swap` (any two base noun phrases, not only subject and object).
    Declines conjuncts and appositions (a swap keeps the meaning), phrases with a possessive or a count,
    parts of a longer name or date ("School of Management", "January 26"), very general nouns, heads of
    different grammatical number (agreement), identical phrases, and sentences whose words mark a symmetric
    relation ("between", "married", "similar", "each other").
    """
    if any(t.lower_ in _SYMMETRIC_WORDS for t in doc):
        return Declined("symmetric_or_coordinated")
    chunks = _swappable_chunks(doc)
    if len(chunks) < 2:
        return Declined("fewer_than_two_phrases")
    pairs = [
        (x, y)
        for i, x in enumerate(chunks)
        for y in chunks[i + 1 :]
        if (x[2].tag_ in ("NNS", "NNPS")) == (y[2].tag_ in ("NNS", "NNPS"))
        and doc[x[0] : x[1] + 1].text.lower() != doc[y[0] : y[1] + 1].text.lower()
        and x[2].lower_ != y[2].lower_
        and not _related(x[2], y[2])
        and (x[2].dep_, x[2].head.i) != (y[2].dep_, y[2].head.i)
    ]
    if not pairs:
        return Declined("no_swappable_pair")
    (a0, a1, _), (b0, b1, _) = pairs[int(rng.integers(len(pairs)))]
    return _swap_spans(doc, (a0, a1), (b0, b1))


NEGATIVE_EDITS = {
    "argument_swap": argument_swap,
    "phrase_swap": phrase_swap,
    "number": number,
    "cohyponym": cohyponym,
    "antonym": antonym,
}
