"""The transforms: each looks at one parsed sentence and returns the edits it can make, or why it declines.

A rule is a function ``rule(parsed) -> list[Edit] | str``; a string is the reason it declines (recorded
as ``"<rule>:<reason>"`` in the generator's report). An :class:`Edit` rewrites a :class:`Draft` and
returns None when the draft no longer fits (a token it needs was already rewritten or moved apart),
so edits compose in any order.

Structural rules (voice, constituent movement) handle a single declarative sentence and decline on
questions, imperatives, verbs sharing a subject, quotes, and complements they do not understand. Voice
also changes inside a subordinate or coordinated clause that has its own subject; movement stays in the
main clause.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from spacy.tokens import Doc, Token

from st_debias.data.paraphrase.syntactic.draft import NEW, Draft, Surface, surface_of
from st_debias.data.paraphrase.syntactic.morph import (
    OBJECT_TO_SUBJECT,
    SUBJECT_TO_OBJECT,
    SYNONYM_STOPLIST,
    antonyms,
    be_form,
    finite_form,
    inflect,
    is_past,
    lemma_of,
    noun_kind,
    person_number,
    synonyms,
    wordnet_available,
)

_QUOTES = frozenset({'"', "“", "”", "``", "''", "„", "«", "»"})
_TERMINAL = frozenset({".", "!"})
_YEAR = re.compile(r"^(1[0-9]{3}|20[0-9]{2})s?$")
_MONTHS = frozenset(
    "january february march april may june july august september october november december".split()
)
_WEEKDAYS = frozenset("monday tuesday wednesday thursday friday saturday sunday".split())
_TIME_NOUNS = frozenset(
    """year years month months week weeks day days morning mornings afternoon evening evenings night
    nights century centuries decade decades season seasons summer winter spring autumn hour hours
    minute minutes weekend weekends period era time times today yesterday tomorrow""".split()
)
# Prepositions whose phrase is an adjunct whatever its object (safe to move to the front).
_ADJUNCT_PREPS = frozenset(
    {"during", "after", "before", "since", "until", "throughout", "despite", "following", "amid"}
)
# Prepositions whose phrase is an adjunct when its object is a time expression.
_TEMPORAL_PREPS = frozenset({"in", "on", "at", "by", "for", "within", "around"})
# Prepositions whose phrase is a place adjunct when its object is a proper name (verbs below excepted).
_PLACE_PREPS = frozenset({"in", "at"})
_PLACE_COMPLEMENT_VERBS = frozenset(
    "result participate specialize specialise invest believe succeed engage involve interest major fail persist consist lie".split()
)
# Fronted prepositions that must not move to the end (they would attach to the wrong phrase).
_UNMOVABLE_FRONT_PREPS = frozenset({"of", "with", "like", "as", "than", "to", "for", "by"})
_MOVABLE_ADVERBS = frozenset(
    """later eventually recently previously subsequently finally initially originally currently today
    yesterday afterwards thereafter meanwhile sometimes often usually traditionally formerly soon
    now""".split()
)
_CLAUSE_MARKS = frozenset(
    {
        "because",
        "although",
        "though",
        "when",
        "whenever",
        "while",
        "if",
        "unless",
        "until",
        "after",
        "before",
        "once",
        "whereas",
        "since",
    }
)
# Verbs without a natural passive, and verb+object idioms that must not be passivised.
_VOICE_STOPLIST = frozenset(
    "have lack resemble cost weigh fit suit equal become get let marry mean total possess contain hold reach".split()
)
_IDIOMS = frozenset(
    {
        ("take", "place"),
        ("take", "part"),
        ("take", "care"),
        ("make", "sense"),
        ("pay", "attention"),
        ("give", "birth"),
        ("take", "advantage"),
        ("make", "use"),
        ("take", "office"),
        ("take", "time"),
        ("do", "nothing"),
        ("lose", "track"),
    }
)
_COMPLEMENT_DEPS = frozenset(
    {"dative", "ccomp", "xcomp", "oprd", "attr", "acomp", "iobj", "csubj", "csubjpass", "expl", "parataxis"}
)
_BAD_REMAINDER_DEPS = frozenset({"relcl", "acl", "advcl", "ccomp", "conj", "appos", "parataxis", "cc"})
_ORDINARY_WHITESPACE = " "


@dataclass(frozen=True)
class Edit:
    """One applicable rewrite of a parsed sentence.

    Attributes:
        name: transform name recorded on the candidate.
        claims: original token indices (and slot ids below 0) it rewrites; two edits with overlapping
            claims never combine.
        fn: the rewrite itself; returns None when the draft no longer fits.
        structural: True for voice and movement (they start a composition), False for lexical edits.
    """

    name: str
    claims: frozenset[int]
    fn: Callable[[Draft], Draft | None]
    structural: bool

    def apply(self, draft: Draft) -> Draft | None:
        """The draft with this edit applied, or None when it conflicts with earlier edits."""
        if not draft.free(self.claims):
            return None
        return self.fn(draft)


# Claim slots for sentence positions (negative so they never collide with token indices).
_FRONT, _END = -2, -3


@dataclass
class Parsed:
    """What every rule needs to know about one parsed sentence."""

    doc: Doc
    tokens: list[Token]
    spaces: list[str]
    root: Token
    subject: Token | None
    single: bool
    has_quotes: bool
    quoted: frozenset[int]
    quote_regions: tuple[tuple[int, int], ...]
    balanced: bool
    last: int  # index of the last non-punctuation token
    clean_end: bool  # only terminal punctuation follows ``last``
    coordinated: str  # "" (none), "shared" (verb phrases share the subject) or "clauses"
    surface: Surface  # what ``render`` needs, read once

    @classmethod
    def of(cls, doc: Doc) -> Parsed:
        tokens = list(doc)
        sents = list(doc.sents)
        root = sents[0].root
        subject = next((c for c in root.children if c.dep_ in ("nsubj", "nsubjpass", "csubj", "expl")), None)
        quoted: set[int] = set()
        regions: list[tuple[int, int]] = []
        opened: int | None = None
        for t in tokens:
            if t.text in _QUOTES:
                if opened is None:
                    opened = t.i
                else:
                    regions.append((opened, t.i))
                    opened = None
            if opened is not None or t.text in _QUOTES:
                quoted.add(t.i)
        last = len(tokens) - 1
        while last > 0 and tokens[last].is_punct:
            last -= 1
        clean_end = all(tokens[i].text in _TERMINAL for i in range(last + 1, len(tokens)))
        conj_verbs = [c for c in root.children if c.dep_ == "conj" and c.pos_ in ("VERB", "AUX")]
        # "shared" = verb phrases sharing the subject ("He wrote X and left"); "clauses" = each has its own.
        has_subject = [any(x.dep_ in ("nsubj", "nsubjpass", "expl") for x in c.children) for c in conj_verbs]
        coordinated = "shared" if not all(has_subject) else "clauses" if conj_verbs else ""
        surface = surface_of(doc, tokens)
        return cls(
            doc,
            tokens,
            surface[1],
            root,
            subject,
            len(sents) == 1,
            bool(quoted),
            frozenset(quoted),
            tuple(regions),
            opened is None,
            last,
            clean_end,
            coordinated,
            surface,
        )

    def splits_quote(self, indices) -> bool:
        """Whether moving/rewriting ``indices`` would cut a quoted stretch in two."""
        chosen = set(indices)
        return any(0 < len(chosen.intersection(range(a, b + 1))) < b - a + 1 for a, b in self.quote_regions)

    def clause_problem(self, allow_clauses: bool = False) -> str | None:
        """Why a structural rule cannot touch this sentence, or None.

        Args:
            allow_clauses: accept a main clause followed by coordinated clauses with their own subjects
                ("X approved Y, and Z left"): rewriting inside the first clause leaves the others intact.
        """
        if not self.single:
            return "multiple_sentences"
        if not self.balanced or self.root.i in self.quoted:
            return "quotes"
        if any(t.text == ";" for t in self.tokens):
            return "multiple_clauses"
        if self.root.pos_ not in ("VERB", "AUX"):
            return "no_verb_root"
        if self.subject is None:
            return "imperative" if self.root.tag_ == "VB" else "no_subject"
        if self.coordinated == "shared" or (self.coordinated and not allow_clauses):
            return "coordinated"
        if not self.clean_end:
            return "unclear_ending"
        return None


def _span(token: Token) -> list[int]:
    return list(range(token.left_edge.i, token.right_edge.i + 1))


def _block(draft: Draft, indices: list[int]) -> tuple[int, int] | None:
    """Start/end positions of ``indices`` in the draft if they sit there contiguously in the same order."""
    pos = draft.positions(indices)
    if len(pos) != len(indices) or pos != list(range(pos[0], pos[0] + len(pos))):
        return None
    if [draft.items[p][0] for p in pos] != indices:
        return None
    return pos[0], pos[-1]


def _replace_block(
    draft: Draft, indices: list[int], new_items: list[tuple[int, str]]
) -> list[tuple[int, str]] | None:
    block = _block(draft, indices)
    if block is None:
        return None
    start, end = block
    return [*draft.items[:start], *new_items, *draft.items[end + 1 :]]


def _orig(indices) -> list[tuple[int, str]]:
    return [(i, "") for i in indices]


def _pronoun_case(
    tokens: list[int], doc: Doc, table: dict[str, str]
) -> tuple[dict[int, str], str | None] | str:
    """Overrides changing the case of a one-word pronoun phrase; a reason string when it cannot."""
    if len(tokens) == 1:
        tok = doc[tokens[0]]
        if tok.tag_ in ("WP", "WDT"):
            return "wh_word"
        if tok.tag_ == "PRP":
            new = table.get(tok.lower_)
            if new is None:
                return "reflexive_or_case"
            return {tok.i: new} if new != tok.text else {}, new
        return {}, None
    if any(doc[i].tag_ in ("PRP", "WP", "WDT") for i in tokens):
        return "pronoun_in_phrase"
    return {}, None


# ---------------------------------------------------------------- voice


def _middle(p: Parsed, subj: Token, verb: Token | None = None) -> list[int] | str:
    """Tokens between the subject and the verb; only auxiliaries, negation and adverbs may sit there."""
    doc, root = p.doc, verb if verb is not None else p.root
    allowed: set[int] = set()
    for c in root.children:
        if c.dep_ in ("aux", "auxpass", "neg", "advmod") and subj.right_edge.i < c.i < root.i:
            allowed.update(_span(c))
    middle = list(range(subj.right_edge.i + 1, root.i))
    if any(i not in allowed for i in middle):
        return "interrupted"
    if any(doc[i].text.startswith("'") for i in middle):
        return "contracted_aux"
    return middle


# Clause heads (besides the root) whose own subject and object a voice change may swap.
_CLAUSE_HEAD_DEPS = frozenset({"ccomp", "advcl", "conj"})


def passive(p: Parsed) -> list[Edit] | str:
    """Active -> passive: "The committee approved the budget." -> "The budget was approved by the committee.".

    Also inside a subordinate or coordinated clause with its own subject ("He said that the committee
    approved the budget." -> "He said that the budget was approved by the committee.").
    """
    problem = p.clause_problem(allow_clauses=True)
    if problem == "unclear_ending":
        problem = None  # the rewrite stays between the subject and the object
    result = problem or _passive_at(p, p.root, p.subject, is_root=True)
    edits = list(result) if not isinstance(result, str) else []
    for v in _inner_clause_heads(p):
        if v.pos_ != "VERB":
            continue
        subj = next((c for c in v.children if c.dep_ in _SUBJECT_DEPS), None)
        if subj is None or subj.tag_ in ("WP", "WDT"):
            continue
        inner = _passive_at(p, v, subj, is_root=False)
        if not isinstance(inner, str):
            edits.extend(inner)
    return edits or result


def _inner_clause_heads(p: Parsed):
    """Verbs heading a subordinate or coordinated clause (a bare advcl needs its marker), outside quotes."""
    if not p.single or not p.balanced or any(t.text == ";" for t in p.tokens):
        return
    for v in p.tokens:
        if v.dep_ not in _CLAUSE_HEAD_DEPS or v.i in p.quoted:
            continue
        if v.dep_ == "advcl" and not any(m.dep_ == "mark" for m in v.children):
            continue
        yield v


def _passive_at(p: Parsed, root: Token, subject: Token, is_root: bool) -> list[Edit] | str:
    doc = p.doc
    if root.pos_ != "VERB":
        return "no_verb_root"
    kids = list(root.children)
    deps = {c.dep_ for c in kids}
    if deps & {"auxpass", "nsubjpass"}:
        return "already_passive"
    if subject.dep_ != "nsubj":
        return "no_subject"
    objs = [c for c in kids if c.dep_ == "dobj"]
    if len(objs) != 1:
        return "no_object"
    if deps & _COMPLEMENT_DEPS:
        return "complex_complement"
    subj, obj = subject, objs[0]
    lemma = lemma_of(root.text, root.tag_)
    if lemma in _VOICE_STOPLIST or (lemma, obj.lower_) in _IDIOMS:
        return "no_passive_for_verb"
    if not (subj.right_edge.i < root.i < obj.left_edge.i):
        return "unusual_order"
    middle = _middle(p, subj, root)
    if isinstance(middle, str):
        return middle
    prts = [c.i for c in kids if c.dep_ == "prt"]
    between = set(range(root.i + 1, obj.left_edge.i))
    if not between <= set(prts):
        return "interrupted"
    if any(c.dep_ == "advcl" and not any(m.dep_ == "mark" for m in c.children) for c in kids):
        return "participial_clause"
    if any(c.dep_ == "prep" and any(x.dep_ == "pcomp" and x.tag_ == "VBG" for x in c.children) for c in kids):
        return "participial_clause"  # "released albums before debuting X": the -ing verb needs its subject
    if not is_root and root.dep_ == "advcl" and root.i < p.root.i:
        after = root.right_edge.i + 1
        if after >= len(doc) or doc[after].text != ",":
            return "unclear_ending"  # "After communication begins the target is ...": unsure where it ends
    obj_span, subj_span = _span(obj), _span(subj)
    if any(doc[i].text in (",", ";", ":", "(", ")") for i in subj_span):
        return "complex_subject"
    if (
        p.splits_quote(subj_span)
        or p.splits_quote(obj_span)
        or p.splits_quote(range(subj.left_edge.i, obj.right_edge.i + 1))
    ):
        return "quotes"
    end = obj.right_edge.i
    if obj.right_edge.i + 1 in prts:
        end += 1
    elif any(i > end for i in prts):
        return "interrupted"
    if obj.lower_ in ("other", "another") or obj.tag_ in ("WP", "WDT"):
        return "reflexive_or_case"
    if any(doc[i].text in (",", ";", ":", "(", ")") for i in _span(obj)):
        return "complex_object"
    if any(doc[i].tag_ == "PRP$" for i in _span(obj)):
        return "possessive_object"  # "He spent his childhood" -> "His childhood was spent by him"
    if any(doc[i].dep_ in ("acl", "relcl") and doc[i].tag_ == "VB" for i in _span(obj)):
        return "complex_object"  # "led forces to conquer X": the infinitive may belong to the verb
    if any(t.dep_ == "appos" and t.head.i in obj_span for t in doc[obj.right_edge.i + 1 :]):
        return "complex_object"
    if obj.right_edge.i + 2 < len(doc) and doc[obj.right_edge.i + 1].text == ",":
        if doc[obj.right_edge.i + 2].pos_ == "PROPN":
            return "complex_object"  # "a job in Jamaica, Queens": the name after the comma belongs to it
    if (
        obj.tag_ == "NN" and not any(c.dep_ in ("det", "poss", "nummod") for c in obj.children)
    ) or obj.lower_ in (
        "most",
        "best",
        "use",
    ):
        return "idiomatic_object"  # "gave rise to", "lost ground", "made the most of"
    for t in p.tokens[root.i + 1 :] if is_root else root.children:
        if t.dep_ == "conj" and t.pos_ == "VERB" and not any(c.dep_.startswith("nsubj") for c in t.children):
            return "coordinated"  # a later verb shares the subject the passive would move
    after = obj.right_edge.i + 1
    if any(c.dep_ == "conj" for c in obj.children) or (
        after < len(doc) and doc[after].dep_ in ("cc", "conj")
    ):
        return "coordinated_object"
    subj_case = _pronoun_case(subj_span, doc, SUBJECT_TO_OBJECT)
    obj_case = _pronoun_case(obj_span, doc, OBJECT_TO_SUBJECT)
    for case in (subj_case, obj_case):
        if isinstance(case, str):
            return case
    agreement = person_number(obj, obj_case[1])
    vbn = inflect(lemma, "VBN")
    if vbn is None:
        return "no_participle"

    auxes = [c for c in kids if c.dep_ == "aux" and c.i < root.i]
    negs = [i for i in middle if doc[i].dep_ == "neg" and doc[i].head == root]
    advs = [i for i in middle if i not in negs and doc[i].dep_ not in ("aux", "auxpass")]
    first: list[tuple[int, str]]
    tail: list[tuple[int, str]] = []
    if not auxes:
        if root.tag_ not in ("VBD", "VBZ", "VBP"):
            return "untensed_verb"
        first = [(NEW, be_form(is_past(root), agreement))]
    elif auxes[0].tag_ == "MD":
        first = [(auxes[0].i, "")]
        tail = _orig(a.i for a in auxes[1:])
        last_aux = lemma_of(auxes[-1].text, auxes[-1].tag_) if len(auxes) > 1 else "modal"
        if root.tag_ == "VB" and len(auxes) == 1:
            tail.append((NEW, "be"))
        elif root.tag_ == "VBN" and last_aux == "have" and len(auxes) == 2:
            tail.append((NEW, "been"))
        else:
            return "aux_chain"
    else:
        if len(auxes) != 1:
            return "aux_chain"
        aux_lemma = lemma_of(auxes[0].text, auxes[0].tag_)
        past = is_past(auxes[0])
        if aux_lemma == "do" and root.tag_ == "VB":
            first = [(NEW, be_form(past, agreement))]
        elif aux_lemma == "have" and root.tag_ == "VBN":
            first = [(NEW, finite_form("have", past, agreement))]
            tail = [(NEW, "been")]
        elif aux_lemma == "be" and root.tag_ == "VBG":
            first = [(NEW, be_form(past, agreement))]
            tail = [(NEW, "being")]
        else:
            return "aux_chain"

    group = [*first, *_orig(negs), *_orig(advs), *tail, (root.i, ""), *_orig(prts)]
    block = list(range(subj.left_edge.i, end + 1))
    new_items = [*_orig(obj_span), *group, (NEW, "by"), *_orig(subj_span)]
    overrides = {root.i: vbn, **subj_case[0], **obj_case[0]}
    claims = frozenset({root.i, subj.i, obj.i, *(a.i for a in auxes), *negs, *prts})

    def fn(draft: Draft) -> Draft | None:
        items = _replace_block(draft, block, new_items)
        return None if items is None else draft.derive("passive", claims, items, overrides)

    return [Edit("passive", claims, fn, True)]


def active(p: Parsed) -> list[Edit] | str:
    """Passive with a ``by`` agent -> active: "The budget was approved by the committee." -> "The committee approved the budget.".

    Also inside a subordinate or coordinated clause with its own subject.
    """
    problem = p.clause_problem(allow_clauses=True)
    if problem == "unclear_ending":
        problem = None
    result = problem or _active_at(p, p.root, p.subject)
    edits = list(result) if not isinstance(result, str) else []
    for v in _inner_clause_heads(p):
        if v.tag_ != "VBN":
            continue
        if v.dep_ == "advcl" and v.i < p.root.i:
            after = v.right_edge.i + 1
            if after >= len(p.doc) or p.doc[after].text != ",":
                continue
        subj = next((c for c in v.children if c.dep_ == "nsubjpass"), None)
        if subj is None or subj.tag_ in ("WP", "WDT"):
            continue
        inner = _active_at(p, v, subj)
        if not isinstance(inner, str):
            edits.extend(inner)
    return edits or result


def _active_at(p: Parsed, root: Token, subject: Token) -> list[Edit] | str:
    doc = p.doc
    kids = list(root.children)
    deps = {c.dep_ for c in kids}
    if "nsubjpass" not in deps or root.tag_ != "VBN":
        return "not_passive"
    agents = [c for c in kids if c.dep_ == "agent" and c.lower_ == "by"]
    if len(agents) != 1:
        return "no_agent"
    agent = agents[0]
    pobjs = [c for c in agent.children if c.dep_ == "pobj"]
    if len(pobjs) != 1 or len(list(agent.children)) != 1:
        return "no_agent"
    if deps & (_COMPLEMENT_DEPS | {"dobj"}):
        return "complex_complement"
    subj, new_subj = subject, pobjs[0]
    prts = [c.i for c in kids if c.dep_ == "prt"]
    if agent.i != root.i + 1 + len([i for i in prts if i < agent.i]) or any(i > agent.i for i in prts):
        return "agent_not_after_verb"
    if pobjs[0].left_edge.i != agent.i + 1:
        return "no_agent"
    if prts and subj.tag_ == "PRP":
        return "particle_pronoun"  # "would shoot down it" needs "shoot it down"
    middle = _middle(p, subj, root)
    if isinstance(middle, str):
        return middle
    auxpass = [c for c in kids if c.dep_ == "auxpass"]
    if len(auxpass) != 1 or lemma_of(auxpass[0].text, auxpass[0].tag_) != "be":
        return "aux_chain"
    subj_span, agent_np = _span(subj), _span(new_subj)
    if any(doc[i].text in (",", ";", ":", "(", ")") or doc[i].lower_ == "as" for i in agent_np):
        return "complex_agent"
    if any(doc[i].text in (",", ";", ":", "(", ")") for i in subj_span):
        return "complex_subject"
    if new_subj.tag_ == "NN" and not any(c.dep_ in ("det", "poss") for c in new_subj.children):
        return "manner_by"  # "by hand", "by name", "by train" are not agents
    if (
        p.splits_quote(subj_span)
        or p.splits_quote(agent_np)
        or p.splits_quote(range(subj.left_edge.i, new_subj.right_edge.i + 1))
    ):
        return "quotes"
    if any(c.dep_ == "advcl" and not any(m.dep_ == "mark" for m in c.children) for c in kids):
        return "participial_clause"
    subj_case = _pronoun_case(subj_span, doc, SUBJECT_TO_OBJECT)
    agent_case = _pronoun_case(agent_np, doc, OBJECT_TO_SUBJECT)
    for case in (subj_case, agent_case):
        if isinstance(case, str):
            return case
    agreement = person_number(new_subj, agent_case[1])
    lemma = lemma_of(root.text, root.tag_)
    auxes = [c for c in kids if c.dep_ == "aux" and c.i < root.i]
    negs = [i for i in middle if doc[i].dep_ == "neg" and doc[i].head == root]
    advs = [i for i in middle if i not in negs and doc[i].dep_ not in ("aux", "auxpass")]
    be = auxpass[0]
    first: list[tuple[int, str]] = []
    tail: list[tuple[int, str]] = []
    verb = root.text
    if not auxes:
        if be.tag_ not in ("VBD", "VBZ", "VBP"):
            return "aux_chain"
        if negs:
            first = [(NEW, finite_form("do", is_past(be), agreement))]
            verb = lemma
        else:
            verb = finite_form(lemma, is_past(be), agreement)
    elif auxes[0].tag_ == "MD":
        first = [(auxes[0].i, "")]
        tail = _orig(a.i for a in auxes[1:])
        if len(auxes) == 1 and be.tag_ == "VB":
            verb = lemma
        elif len(auxes) == 2 and lemma_of(auxes[1].text, auxes[1].tag_) == "have" and be.lower_ == "been":
            verb = root.text
        else:
            return "aux_chain"
    elif len(auxes) == 1:
        aux_lemma = lemma_of(auxes[0].text, auxes[0].tag_)
        past = is_past(auxes[0])
        if aux_lemma == "have" and be.lower_ == "been":
            first = [(NEW, finite_form("have", past, agreement))]
        elif aux_lemma == "be" and be.lower_ == "being":
            first = [(NEW, be_form(past, agreement))]
            verb = inflect(lemma, "VBG")
        else:
            return "aux_chain"
    else:
        return "aux_chain"
    if not verb or not all(w for i, w in first if i == NEW):
        return "no_inflection"
    group = [*first, *_orig(negs), *_orig(advs), *tail, (root.i, ""), *_orig(prts)]
    block = list(range(subj.left_edge.i, new_subj.right_edge.i + 1))
    new_items = [*_orig(agent_np), *group, *_orig(subj_span)]
    overrides = {root.i: verb.lower(), **subj_case[0], **agent_case[0]}
    claims = frozenset({root.i, subj.i, new_subj.i, agent.i, be.i, *(a.i for a in auxes), *negs, *prts})

    def fn(draft: Draft) -> Draft | None:
        items = _replace_block(draft, block, new_items)
        return None if items is None else draft.derive("active", claims, items, overrides)

    return [Edit("active", claims, fn, True)]


def copula_swap(p: Parsed) -> list[Edit] | str:
    """Identity statements with a definite complement read both ways:
    "Raleigh is the capital of North Carolina." <-> "The capital of North Carolina is Raleigh."."""
    problem = p.clause_problem()
    if problem:
        return problem
    doc, root, subj = p.doc, p.root, p.subject
    if root.pos_ != "AUX" or lemma_of(root.text, root.tag_) != "be" or subj.dep_ != "nsubj":
        return "no_copula"
    kids = [c for c in root.children if c.dep_ != "punct"]
    attrs = [c for c in kids if c.dep_ == "attr"]
    if len(attrs) != 1 or any(c.dep_ not in ("nsubj", "attr", "aux", "neg") for c in kids):
        return "not_identity"
    attr = attrs[0]
    if subj.tag_ in ("PRP", "WP", "WDT", "DT", "EX") or attr.tag_ in ("PRP", "WP", "WDT", "DT"):
        return "pronoun"
    definite = any(c.dep_ == "det" and c.lower_ == "the" for c in attr.children) or any(
        c.dep_ == "poss" for c in attr.children
    )
    if not definite or attr.tag_ not in ("NN", "NNS", "NNP", "NNPS"):
        return "indefinite_complement"
    plural = {t.tag_ in ("NNS", "NNPS") for t in (subj, attr)}
    if len(plural) != 1 or any(c.dep_ == "conj" for t in (subj, attr) for c in t.children):
        return "number_mismatch"
    subj_span, attr_span = _span(subj), _span(attr)
    if subj_span[0] != 0 or attr_span[-1] != p.last or p.splits_quote(subj_span) or p.splits_quote(attr_span):
        return "unusual_order"
    if any(doc[i].text in (",", ";", ":", "(", ")", "-", "–", "—") for i in (*subj_span, *attr_span)):
        return "complex_phrase"
    middle = list(range(subj_span[-1] + 1, attr_span[0]))
    if any(doc[i].dep_ not in ("aux", "neg") and i != root.i for i in middle):
        return "interrupted"
    block = [*subj_span, *middle, *attr_span]
    new_items = [*_orig(attr_span), *_orig(middle), *_orig(subj_span)]
    claims = frozenset({subj.i, attr.i, root.i, _FRONT, _END})

    def fn(draft: Draft) -> Draft | None:
        items = _replace_block(draft, block, new_items)
        return None if items is None else draft.derive("copula_swap", claims, items)

    return [Edit("copula_swap", claims, fn, True)]


# ---------------------------------------------------------------- constituent movement


def _is_temporal(token: Token) -> bool:
    for t in (
        token,
        *(c for c in token.children if c.dep_ in ("nummod", "compound", "amod", "npadvmod", "det")),
    ):
        low = t.lower_
        if low in _TIME_NOUNS or low in _MONTHS or low in _WEEKDAYS or _YEAR.match(low):
            return True
    return False


def _trailing_adverbial_ok(c: Token) -> bool:
    if c.dep_ == "prep":
        pobjs = [x for x in c.children if x.dep_ == "pobj"]
        if len(pobjs) != 1 or len(list(c.children)) != 1:
            return False
        if c.lower_ in _ADJUNCT_PREPS or (c.lower_ in _TEMPORAL_PREPS and _is_temporal(pobjs[0])):
            return True
        head = c.head
        if c.lower_ not in _PLACE_PREPS or lemma_of(head.text, head.tag_) in _PLACE_COMPLEMENT_VERBS:
            return False
        # A place phrase is an adjunct when the verb already has its object (or is a passive with its
        # subject); a bare "lives in X" / "based in X" keeps it as a complement, so only proper-name
        # places qualify there.
        has_object = any(x.dep_ in ("dobj", "nsubjpass") for x in head.children)
        return pobjs[0].tag_ == "NNP" and (has_object or head.tag_ != "VBN")
    if c.dep_ == "npadvmod":
        return _is_temporal(c) and c.pos_ in ("NOUN", "PROPN")
    if c.dep_ == "advmod":
        return c.lower_ in _MOVABLE_ADVERBS and not list(c.children)
    return False


def _clause_ok(c: Token) -> bool:
    if c.dep_ != "advcl":
        return False
    first = c.left_edge
    return first.dep_ == "mark" and first.head == c and first.lower_ in _CLAUSE_MARKS


_SUBJECT_DEPS = frozenset({"nsubj", "nsubjpass", "expl", "csubj"})
_ADJUNCT_DEPS = frozenset({"prep", "advmod", "npadvmod", "advcl", "punct", "agent"})


def _fronting(
    p: Parsed, name: str, accept: Callable[[Token], bool], what: str, inner: bool = False
) -> list[Edit] | str:
    """Edits moving a root-attached phrase that ``accept`` takes to the front, followed by a comma.

    With ``inner``, the phrase need not be the last constituent: it may be followed by other adjuncts of
    the verb ("He moved to Paris in 1921 with his family." -> "In 1921, he moved to Paris with his
    family."), and the sentence may continue with a clause that has its own subject.
    """
    problem = p.clause_problem(allow_clauses=inner)
    if problem and not (inner and problem == "unclear_ending"):
        return problem
    doc, root, subj = p.doc, p.root, p.subject
    if subj.left_edge.i != 0:
        return "not_subject_first"
    edits = []
    kids = list(root.children)
    for c in kids:
        if c.i < root.i and inner and c.dep_ == "advmod" and subj.right_edge.i < c.i and accept(c):
            # "He later moved to Paris." -> "Later, he moved to Paris."
            if doc[c.i - 1].text == "," or doc[c.i + 1].is_punct or c.i in p.quoted:
                continue
            claims = frozenset({_FRONT, c.i})

            def early(draft: Draft, i=c.i, claims=claims) -> Draft | None:
                pos = draft.positions([i])
                if not pos or pos[0] == 0:
                    return None
                rest = [it for q, it in enumerate(draft.items) if q != pos[0]]
                return draft.derive(name, claims, [(i, ""), (NEW, ","), *rest])

            edits.append(Edit(name, claims, early, True))
            continue
        if c.i < root.i or not accept(c):
            continue
        last = c.right_edge.i == p.last
        if not last:
            if not inner or not p.clean_end and problem:
                continue
            if c.dep_ != "prep" or any(doc[i].is_punct for i in _span(c)):
                continue
            later = [k for k in kids if k.i > c.i]
            if any(k.dep_ not in _ADJUNCT_DEPS and k.dep_ not in ("cc", "conj") for k in later):
                continue  # an object or complement follows: the phrase may belong to something else
            clauses = [
                k
                for k in later
                if k.dep_ == "conj"
                and k.pos_ in ("VERB", "AUX")
                and any(x.dep_ in _SUBJECT_DEPS for x in k.children)
            ]
            if any(k.dep_ == "conj" and k not in clauses for k in later) or (
                any(k.dep_ == "cc" for k in later) and not clauses
            ):
                continue  # "visited X in the 1950s, and again in 1975": the ellipsis needs the phrase
            nxt = doc[c.right_edge.i + 1]
            if nxt.dep_ in ("cc", "conj") or nxt.text in ("(", "-", "–", "—", ";", ":"):
                continue
            pobj = next(x for x in c.children if x.dep_ == "pobj")
            if nxt.dep_ == "prep" and not _is_temporal(pobj) and c.lower_ not in _ADJUNCT_PREPS:
                continue  # "in Office 2008 for Mac": the next phrase may modify this one
            if doc[c.left_edge.i - 1].text == ",":
                continue  # a parenthetical between commas
        if c.dep_ == "prep" and any(k.dep_ == "prep" and k.lower_ in ("from", "between") for k in kids):
            continue  # "rose from 2% in June 2000 to 4%": the date belongs to the range
        span = _span(c)
        if span[0] <= root.i or len(span) > 14 or p.splits_quote(span):
            continue
        comma = [span[0] - 1] if last and doc[span[0] - 1].text == "," else []
        if any(doc[i].text in (",", ";", ":", "(", ")") for i in range(root.i + 1, span[0] - len(comma))):
            continue  # a parenthetical or non-restrictive clause sits between: the attachment is unsure
        claims = frozenset({_FRONT, _END})

        def fn(draft: Draft, span=span, comma=comma, claims=claims, last=last) -> Draft | None:
            block = _block(draft, span)
            if block is None:
                return None
            start, end = block
            if last and any(
                draft.items[q][0] < 0 or doc[draft.items[q][0]].text not in _TERMINAL
                for q in range(end + 1, len(draft.items))
            ):
                return None
            rest = [it for q, it in enumerate(draft.items) if not start <= q <= end and it[0] not in comma]
            return draft.derive(name, claims, [*_orig(span), (NEW, ","), *rest])

        edits.append(Edit(name, claims, fn, True))
    return edits or f"no_trailing_{what}"


def _backing(p: Parsed, name: str, accept: Callable[[Token], bool], what: str) -> list[Edit] | str:
    problem = p.clause_problem()
    if problem:
        return problem
    doc, root, subj = p.doc, p.root, p.subject
    fronted = [c for c in root.children if c.i < root.i and c.left_edge.i == 0 and c != subj]
    if len(fronted) != 1 or not accept(fronted[0]):
        return f"no_fronted_{what}"
    c = fronted[0]
    span = _span(c)
    if p.splits_quote(span):
        return "quotes"
    if subj.tag_ == "PRP":
        return "pronoun_subject"  # "If a worker can read it, he sorts it": the pronoun would precede its antecedent
    comma = span[-1] + 1
    if doc[comma].text != "," or subj.left_edge.i != comma + 1:
        return "no_comma_then_subject"
    # The moved phrase goes after the last constituent of the clause: it must be a plain one, or the
    # phrase would read as attached to a relative clause, an apposition or a list inside it.
    tail = [c for c in root.children if c.i > root.i and c.dep_ != "punct"]
    last_part = doc[tail[-1].left_edge.i : tail[-1].right_edge.i + 1] if tail else doc[root.i : root.i + 1]
    if any(t.text in (",", ";", ":", "(", "-", "–", "—") or t.dep_ in _BAD_REMAINDER_DEPS for t in last_part):
        return "complex_remainder"
    if any(t.text in (";", ":", "(", "-", "–", "—") for t in doc[comma + 1 : p.last + 1]):
        return "complex_remainder"
    claims = frozenset({_FRONT, _END})

    def fn(draft: Draft) -> Draft | None:
        block = _block(draft, [*span, comma])
        if block is None or block[0] != 0:
            return None
        rest = list(draft.items[block[1] + 1 :])
        cut = len(rest)
        while cut > 0 and rest[cut - 1][0] >= 0 and doc[rest[cut - 1][0]].text in _TERMINAL:
            cut -= 1
        return draft.derive(name, claims, [*rest[:cut], *_orig(span), *rest[cut:]])

    return [Edit(name, claims, fn, True)]


def _fronted_adverbial_ok(c: Token) -> bool:
    if c.dep_ == "prep":
        return c.lower_ not in _UNMOVABLE_FRONT_PREPS and c.pos_ == "ADP"
    if c.dep_ == "npadvmod":
        return _is_temporal(c)
    if c.dep_ == "advmod":
        return c.lower_ in _MOVABLE_ADVERBS and not list(c.children)
    return False


def front_adverbial(p: Parsed) -> list[Edit] | str:
    """Trailing time/adjunct phrase to the front: "The museum opens at nine every morning." -> "Every morning, the museum opens at nine."."""
    return _fronting(p, "front_adverbial", _trailing_adverbial_ok, "adverbial", inner=True)


def back_adverbial(p: Parsed) -> list[Edit] | str:
    """Fronted adverbial to the end: "In 1921, the family moved to Paris." -> "The family moved to Paris in 1921."."""
    return _backing(p, "back_adverbial", _fronted_adverbial_ok, "adverbial")


def front_clause(p: Parsed) -> list[Edit] | str:
    """Trailing subordinate clause to the front: "X because Y." -> "Because Y, X."."""
    if p.subject is not None and p.subject.lower_ in ("it", "this", "that", "there"):
        return "expletive_subject"  # "It is not known if X" -> "If X, it is not known" changes the meaning
    return _fronting(p, "front_clause", _clause_ok, "clause")


def back_clause(p: Parsed) -> list[Edit] | str:
    """Fronted subordinate clause to the end: "Because Y, X." -> "X because Y."."""
    return _backing(p, "back_clause", _clause_ok, "clause")


_SENTENCE_ADVERBS = frozenset(
    """however moreover furthermore nevertheless nonetheless therefore thus consequently additionally
    instead meanwhile subsequently later eventually initially originally previously recently finally
    today currently traditionally historically ultimately accordingly hence likewise similarly
    afterwards thereafter""".split()
)
_EXPLETIVES = frozenset({"there", "here"})
_MID = -4


def _interposable(c: Token) -> bool:
    """A fronted phrase that reads the same set off by commas after the subject."""
    if c.dep_ == "prep":
        return c.pos_ == "ADP" and c.lower_ not in ("of", "than", "like", "to") and bool(list(c.children))
    if c.dep_ == "npadvmod":
        return _is_temporal(c)
    if c.dep_ == "advmod":
        return c.lower_ in _SENTENCE_ADVERBS and not list(c.children)
    if c.dep_ == "advcl":
        # "Because Y, X" or a participial phrase ("Born in Paris, X ..." -> "X, born in Paris, ...")
        participial = c.tag_ in ("VBG", "VBN") and c.left_edge.i == c.i
        return _clause_ok(c) or (
            participial
            and not any(x.dep_ in ("nsubj", "nsubjpass", "mark", "aux", "auxpass") for x in c.children)
        )
    return False


def mid_adverbial(p: Parsed) -> list[Edit] | str:
    """Fronted adverbial to after the subject, between commas: "In 1921, the family moved to Paris and
    settled there." -> "The family, in 1921, moved to Paris and settled there."; "However, the plan
    failed." -> "The plan, however, failed.".

    The phrase stays in the main clause (its scope over coordinated verb phrases does not change), so
    this also works where moving it to the end would be ambiguous.
    """
    if not p.single:
        return "multiple_sentences"
    if not p.balanced or p.root.i in p.quoted:
        return "quotes"
    if p.root.pos_ not in ("VERB", "AUX"):
        return "no_verb_root"
    if any(t.text == ";" for t in p.tokens):
        return "multiple_clauses"
    doc, root, subj = p.doc, p.root, p.subject
    if subj is None:
        return "no_subject"
    if p.coordinated == "clauses":
        return "coordinated"  # the phrase may scope over every clause; after one subject it would not
    fronted = [c for c in root.children if c.i < root.i and c.left_edge.i == 0 and c != subj]
    if len(fronted) != 1 or not _interposable(fronted[0]):
        return "no_fronted_adverbial"
    c = fronted[0]
    span = _span(c)
    comma = span[-1] + 1
    if doc[comma].text != ",":
        # "In 1893 the ship sank": without a comma only a clear time phrase is taken
        pobjs = [x for x in c.children if x.dep_ == "pobj"]
        clear = (
            c.dep_ == "prep" and len(pobjs) == 1 and (c.lower_ in _ADJUNCT_PREPS or _is_temporal(pobjs[0]))
        )
        first = doc[subj.left_edge.i]
        if (
            not clear
            or subj.left_edge.i != comma
            or first.tag_ not in ("DT", "NNP", "NNPS", "PRP$", "NN", "NNS")
        ):
            return "no_comma_then_subject"  # "In 2005 alone additions rose": unsure where the phrase ends
        comma = -1
    elif subj.left_edge.i != comma + 1:
        return "no_comma_then_subject"
    if len(span) > 12 or any(doc[i].text in (",", ";", ":", "(", ")", "-", "–", "—") for i in span):
        return "complex_adverbial"
    subj_span = _span(subj)
    if p.splits_quote(span) or p.splits_quote(subj_span):
        return "quotes"
    if subj.dep_ == "expl" or subj.lower_ in _EXPLETIVES or subj.tag_ in ("WP", "WDT", "EX"):
        return "expletive_subject"
    if subj.tag_ == "PRP" and len(span) > 1:
        return "pronoun_subject"  # "He, in 1921, moved" is stilted; a fronted clause may hold the antecedent
    if len(subj_span) > 10 or any(
        doc[i].text in (",", ";", ":", "(", ")", "-", "–", "—") or doc[i].dep_ in ("relcl", "acl", "appos")
        for i in subj_span
    ):
        return "complex_subject"
    after = subj.right_edge.i + 1
    if after > p.last or doc[after].is_punct or after > root.i:
        return "complex_subject"
    claims = frozenset({_FRONT, _MID})
    block = [*span, comma] if comma >= 0 else span

    def fn(draft: Draft) -> Draft | None:
        front = _block(draft, block)
        subject = _block(draft, subj_span)
        if front is None or subject is None or front[0] != 0 or subject[0] != front[1] + 1:
            return None
        rest = list(draft.items[subject[1] + 1 :])
        moved = [*draft.items[subject[0] : subject[1] + 1], (NEW, ","), *_orig(span), (NEW, ",")]
        return draft.derive("mid_adverbial", claims, [*moved, *rest])

    return [Edit("mid_adverbial", claims, fn, True)]


# ---------------------------------------------------------------- lexical


def _plain(p: Parsed, t: Token) -> bool:
    """A lower-case word outside quotes, not glued to a neighbour (hyphens, slashes)."""
    doc = p.doc
    if t.i in p.quoted or not t.is_alpha or not t.text.islower():
        return False
    if p.spaces[t.i] != _ORDINARY_WHITESPACE and not (
        t.i + 1 < len(doc) and doc[t.i + 1].is_punct and doc[t.i + 1].text not in "-/"
    ):
        return False
    return t.i == 0 or p.spaces[t.i - 1] == _ORDINARY_WHITESPACE


_SYN_TAGS = {
    "NN": "NOUN",
    "NNS": "NOUN",
    "JJ": "ADJ",
    "RB": "ADV",
    "VB": "VERB",
    "VBD": "VERB",
    "VBG": "VERB",
    "VBN": "VERB",
    "VBP": "VERB",
    "VBZ": "VERB",
}


def _article_fix(doc: Doc, t: Token, new: str) -> dict[int, str] | None:
    """Overrides for an ``a``/``an`` right before ``t`` when the new word changes the vowel sound; None if unsure."""
    if t.i == 0:
        return {}
    prev = doc[t.i - 1]
    if prev.lower_ not in ("a", "an"):
        return {}
    if (new[0] in "aeiou") == (t.lower_[0] in "aeiou"):
        return {}
    if new[0] in "uh" or t.lower_[0] in "uh":
        return None
    return {prev.i: "an" if new[0] in "aeiou" else "a"}


def synonym(p: Parsed) -> list[Edit] | str:
    """WordNet synonym in the word's most frequent sense, same part of speech and inflection."""
    if not wordnet_available():
        return "no_wordnet"
    doc = p.doc
    edits = []
    present = {t.lower_ for t in p.tokens}
    for t in p.tokens:
        upos = _SYN_TAGS.get(t.tag_)
        if (
            upos is None
            or t.dep_ in ("aux", "auxpass", "neg", "compound", "prt", "det", "poss")
            or not _plain(p, t)
        ):
            continue
        if upos == "VERB" and any(c.dep_ in ("prt", "prep", "dative") and c.i == t.i + 1 for c in t.children):
            continue  # "rely on", "set up": the synonym may not take the same particle or preposition
        lemma = lemma_of(t.text, t.tag_) if upos in ("VERB", "NOUN") else t.lower_
        if lemma in SYNONYM_STOPLIST:
            continue
        for syn in synonyms(lemma, upos)[:2]:
            if upos == "NOUN" and lemma_of(syn, "NN") != syn:
                continue
            word = syn if t.tag_ in ("NN", "JJ", "RB", "VB") else inflect(syn, t.tag_)
            if not word or word == t.lower_ or word in present or not any(v in word for v in "aeiouy"):
                continue  # "spiritual and religious" must not become "religious and religious"
            fix = _article_fix(doc, t, word)
            if fix is None:
                continue
            overrides = {t.i: word, **fix}
            claims = frozenset(overrides)
            edits.append(
                Edit(
                    "synonym",
                    claims,
                    lambda d, o=overrides, c=claims: d.derive("synonym", c, overrides=o),
                    False,
                )
            )
    return edits or "no_synonym"


def antonym_negation(p: Parsed) -> list[Edit] | str:
    """Predicate adjective -> negated antonym: "The house is large." -> "The house is not small."."""
    root = p.root
    if not p.single:
        return "multiple_sentences"
    if lemma_of(root.text, root.tag_) != "be" or root.pos_ != "AUX" or p.coordinated == "shared":
        return "no_copula"
    if any(c.dep_ == "neg" for c in root.children):
        return "already_negated"
    adjs = [
        c
        for c in root.children
        if c.dep_ == "acomp" and c.tag_ == "JJ" and not list(c.children) and _plain(p, c)
    ]
    if len(adjs) != 1 or adjs[0].i != root.i + 1 or p.subject is None:
        return "no_plain_predicate_adjective"
    adj = adjs[0]
    auxes = [c for c in root.children if c.dep_ == "aux" and c.i < root.i]
    anchor = auxes[0] if auxes else root
    if anchor.text.startswith("'"):
        return "contracted_aux"
    edits = []
    for ant in antonyms(adj.lower_)[:1]:
        claims = frozenset({adj.i, anchor.i, root.i})

        def fn(draft: Draft, ant=ant, claims=claims) -> Draft | None:
            pos = draft.positions([anchor.i])
            if not pos:
                return None
            items = list(draft.items)
            items.insert(pos[0] + 1, (NEW, "not"))
            return draft.derive("antonym_negation", claims, items, {adj.i: ant})

        edits.append(Edit("antonym_negation", claims, fn, False))
    return edits or "no_antonym"


_CONTRACT_NEG = {
    "is": "is",
    "are": "are",
    "was": "was",
    "were": "were",
    "does": "does",
    "do": "do",
    "did": "did",
    "has": "has",
    "have": "have",
    "had": "had",
    "would": "would",
    "could": "could",
    "should": "should",
    "will": "wo",
    "can": "ca",
    "must": "must",
}
_EXPAND_NEG = {"wo": "will", "ca": "can", "sha": "shall"}
_CONTRACT_PRON = {"am": "'m", "is": "'s", "are": "'re", "will": "'ll", "have": "'ve", "has": "'s"}
_EXPAND_CLITIC = {"'m": "am", "'re": "are", "'ll": "will", "'ve": "have"}


def contraction(p: Parsed) -> list[Edit] | str:
    """Contract ("is not" -> "isn't", "it is" -> "it's") or expand ("doesn't" -> "does not")."""
    doc = p.doc
    edits = []
    for t, nxt in zip(p.tokens, p.tokens[1:]):
        if t.i in p.quoted:
            continue
        overrides: dict[int, str] = {}
        if nxt.lower_ == "not" and nxt.dep_ == "neg" and t.lower_ in _CONTRACT_NEG and p.spaces[t.i]:
            overrides = {t.i: _CONTRACT_NEG[t.lower_], nxt.i: "n't"}
        elif nxt.lower_ == "n't" and t.lower_ in ("ca",):
            overrides = {t.i: "cannot", nxt.i: ""}
        elif nxt.lower_ == "n't":
            overrides = {t.i: _EXPAND_NEG.get(t.lower_, t.lower_), nxt.i: "not"}
        elif (
            t.tag_ == "PRP"
            and t.dep_ in ("nsubj", "nsubjpass")
            and nxt.lower_ in _CONTRACT_PRON
            and p.spaces[t.i]
        ):
            if nxt.lower_ in ("have", "has") and nxt.dep_ != "aux":
                continue
            if (
                nxt.lower_ == "am"
                and t.lower_ != "i"
                or t.lower_ == "i"
                and nxt.lower_ not in ("am", "will", "have")
            ):
                continue
            if nxt.i + 1 >= len(doc) or doc[nxt.i + 1].is_punct:
                continue
            overrides = {nxt.i: _CONTRACT_PRON[nxt.lower_]}
        elif nxt.lower_ in _EXPAND_CLITIC and t.tag_ == "PRP":
            overrides = {nxt.i: _EXPAND_CLITIC[nxt.lower_]}
        elif nxt.lower_ == "'s" and t.tag_ == "PRP" and nxt.tag_ == "VBZ":
            overrides = {
                nxt.i: "is"
                if nxt.dep_ != "aux" or nxt.head.tag_ == "VBG"
                else "has"
                if nxt.head.tag_ == "VBN"
                else ""
            }
            if not overrides[nxt.i]:
                continue
        else:
            continue
        if t.i == 0 and t.i in overrides:
            overrides[t.i] = overrides[t.i].lower()
        claims = frozenset({t.i, nxt.i})
        edits.append(
            Edit(
                "contraction",
                claims,
                lambda d, o=overrides, c=claims: d.derive("contraction", c, overrides=o),
                False,
            )
        )
    return edits or "no_contractible_pair"


_NUMBER_WORDS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty"
).split()
_NUMBER_VALUE = {w: i for i, w in enumerate(_NUMBER_WORDS)}


def number_word(p: Parsed) -> list[Edit] | str:
    """Counts of things between 2 and 20 in digits <-> words: "3 children" <-> "three children"."""
    doc = p.doc
    edits = []
    for t in p.tokens:
        if t.tag_ != "CD" or t.dep_ != "nummod" or t.head.tag_ != "NNS" or t.i in p.quoted:
            continue
        if t.head.i <= t.i or any(x.dep_ not in ("amod", "compound") for x in p.tokens[t.i + 1 : t.head.i]):
            continue
        if t.i > 0 and (
            doc[t.i - 1].text in ("$", "£", "€", "-", "/")
            or doc[t.i - 1].lower_ in _MONTHS
            or doc[t.i - 1].tag_ == "CD"
        ):
            continue
        if t.head.lower_ in _MONTHS or not p.spaces[t.i]:
            continue
        if t.text.isdigit() and 2 <= int(t.text) <= 20:
            new = _NUMBER_WORDS[int(t.text)]
        elif t.lower_ in _NUMBER_VALUE and 2 <= _NUMBER_VALUE[t.lower_] <= 20:
            new = str(_NUMBER_VALUE[t.lower_])
        else:
            continue
        claims = frozenset({t.i})

        def fn(draft: Draft, i=t.i, new=new, claims=claims) -> Draft | None:
            if new.isdigit() and draft.items[0][0] == i:
                return None  # no digits at the start of a sentence
            return draft.derive("number_word", claims, overrides={i: new})

        edits.append(Edit("number_word", claims, fn, False))
    return edits or "no_count"


# ---------------------------------------------------------------- noun-phrase rewrites

# Heads of "the N of X" that are partitive, appositive or naming, where "X's N" would change the meaning.
_NO_GENITIVE_HEADS = frozenset(
    """city town state county village province region island river kingdom republic country name title term
    word number series kind type sort part lot group set pair couple amount majority rest most some one
    all none many few each use total variety range list bit piece couple dozen hundreds thousands millions
    percent percentage member members half third quarter end beginning start middle side top bottom form
    fact idea issue problem case way means method act process""".split()
)
_POSSESSOR_DEPS = frozenset({"compound", "det", "amod"})
_POSSESSOR_DETS = frozenset({"the", "a", "an"})


def _simple_possessor(p: Parsed, head: Token, allow_det: bool) -> list[int] | None:
    """Tokens of a short possessor phrase (proper name, or [the] [adj] noun), or None."""
    span = _span(head)
    if len(span) > 4 or span[-1] != head.i or head.tag_ not in ("NNP", "NNPS", "NN", "NNS"):
        return None
    for i in span[:-1]:
        t = p.doc[i]
        if i == span[0] and allow_det and t.head == head and t.tag_ == "PRP$" and t.dep_ == "poss":
            continue  # "the death of his father" -> "his father's death"
        if (
            t.dep_ not in _POSSESSOR_DEPS
            or t.head != head
            or (t.dep_ == "det" and (not allow_det or t.lower_ not in _POSSESSOR_DETS or i != span[0]))
            or (t.lower_ in ("a", "an") and (head.tag_ != "NN" or noun_kind(head.lower_) != "person"))
        ):  # "the death of a soldier" -> "a soldier's death"; not "a second's fraction"
            return None
        if not (t.is_alpha or t.dep_ == "compound"):
            return None
    if any(p.doc[i].i in p.quoted for i in span):
        return None
    return span


def genitive(p: Parsed) -> list[Edit] | str:
    """Genitive alternation: "the capital of France" <-> "France's capital"."""
    edits = []
    for n1 in p.tokens:
        if n1.tag_ not in ("NN", "NNS") or n1.lower_ in _NO_GENITIVE_HEADS or n1.i in p.quoted:
            continue
        kids = list(n1.children)
        left = [c for c in kids if c.i < n1.i]
        right = [c for c in kids if c.i > n1.i]
        if right and len(right) == 1 and right[0].lower_ == "of" and right[0].dep_ == "prep":
            # the N1 of N2  ->  N2's N1
            if not left or left[0].lower_ != "the" or left[0].dep_ != "det" or left[0].i != n1.left_edge.i:
                continue
            if any(c.dep_ not in ("det", "amod", "compound") for c in left):
                continue
            of = right[0]
            pobjs = [c for c in of.children if c.dep_ == "pobj"]
            if len(pobjs) != 1 or len(list(of.children)) != 1 or of.i != n1.i + 1:
                continue
            n2 = pobjs[0]
            poss = _simple_possessor(p, n2, allow_det=True)
            if poss is None or n2.right_edge.i != n1.right_edge.i:
                continue
            marker = "'" if n2.tag_ in ("NNS", "NNPS") and n2.lower_.endswith("s") else "'s"
            mods = [i for i in range(left[0].i + 1, n1.i)]
            block = list(range(n1.left_edge.i, n1.right_edge.i + 1))
            new_items = [*_orig(poss), (NEW, marker), *_orig(mods), (n1.i, "")]
            claims = frozenset({*block})
        elif left and not right:
            # N2's N1  ->  the N1 of N2
            possessors = [c for c in left if c.dep_ == "poss"]
            if len(possessors) != 1 or possessors[0].i != n1.left_edge.i:
                continue
            n2 = possessors[0]
            case = [c for c in n2.children if c.dep_ == "case"]
            if len(case) != 1 or case[0].lower_ not in ("'s", "'") or case[0].i != n2.right_edge.i:
                continue
            if any(c.dep_ not in ("poss", "amod", "compound") for c in left):
                continue
            head_span = [i for i in _span(n2) if i != case[0].i]
            poss = _simple_possessor_tokens(p, n2, head_span)
            if poss is None:
                continue
            mods = list(range(case[0].i + 1, n1.i))
            block = list(range(n1.left_edge.i, n1.i + 1))
            new_items = [(NEW, "the"), *_orig(mods), (n1.i, ""), (NEW, "of"), *_orig(poss)]
            claims = frozenset({*block})
        else:
            continue
        if p.splits_quote(block):
            continue

        def fn(draft: Draft, block=block, new_items=new_items, claims=claims) -> Draft | None:
            items = _replace_block(draft, block, new_items)
            return None if items is None else draft.derive("genitive", claims, items)

        edits.append(Edit("genitive", claims, fn, True))
    return edits or "no_genitive"


def _simple_possessor_tokens(p: Parsed, n2: Token, span: list[int]) -> list[int] | None:
    if not span or len(span) > 4 or n2.tag_ not in ("NNP", "NNPS", "NN", "NNS") or span[-1] != n2.i:
        return None
    for i in span[:-1]:
        t = p.doc[i]
        if t.dep_ not in _POSSESSOR_DEPS or t.head != n2:
            return None
    if any(i in p.quoted for i in span):
        return None
    return span


_FIXED_PAIRS = frozenset(
    {"rock", "law", "salt", "bread", "black", "trial", "research", "arts", "crafts", "ladies"}
)


def coordination(p: Parsed) -> list[Edit] | str:
    """Swap two coordinated names, nouns or adjectives: "Britain and France" -> "France and Britain",
    "the Senate and the House" -> "the House and the Senate", "political and economic reforms" ->
    "economic and political reforms"."""
    doc = p.doc
    edits = []
    for a in p.tokens:
        if a.i in p.quoted:
            continue
        if a.pos_ == "ADJ":
            edit = _adjective_pair(p, a)
            if edit is not None:
                edits.append(edit)
            continue
        if a.pos_ not in ("PROPN", "NOUN"):
            continue
        conj = [c for c in a.children if c.dep_ == "conj"]
        cc = [c for c in a.children if c.dep_ == "cc"]
        if (
            len(conj) != 1
            or len(cc) != 1
            or cc[0].lower_ != "and"
            or any(c.dep_ == "preconj" for c in a.children)
        ):
            continue
        b, and_ = conj[0], cc[0]
        if a.dep_ in ("compound", "amod", "poss", "nmod"):
            continue  # "Oxford and Regent Streets": the pair modifies a shared head
        if b.pos_ != a.pos_ or a.lower_ in _FIXED_PAIRS or b.tag_ != a.tag_ and a.pos_ == "NOUN":
            continue
        a_span = list(range(a.left_edge.i, and_.i))
        b_span = _span(b)
        if and_.i != a.i + 1 or b_span[0] != and_.i + 1 or b.right_edge.i != a.right_edge.i:
            continue
        allowed = ("compound",) if a.pos_ == "PROPN" else ("compound", "amod")
        first_a, first_b = doc[a_span[0]], doc[b_span[0]]
        if (
            first_a.dep_ == "det"
            and first_b.dep_ == "det"
            and first_a.lower_ == first_b.lower_ == "the"
            and first_a.head == a
            and first_b.head == b
        ):
            allowed = (*allowed, "det")  # "the Senate and the House"; "the city and county" shares "the"
        ok = all(doc[i].dep_ in allowed and doc[i].head == a for i in a_span[:-1])
        ok = ok and all(doc[i].dep_ in allowed and doc[i].head == b for i in b_span[:-1])
        ok = (
            ok
            and all(doc[i].is_alpha for i in (*a_span, *b_span))
            and not any(c.dep_ not in (*allowed, "conj", "cc") for c in a.children)
        )
        ok = ok and not list(c for c in b.children if c.dep_ not in allowed)
        if not ok or len(a_span) > 3 or len(b_span) > 3 or p.splits_quote([*a_span, *b_span]):
            continue
        if a.pos_ == "PROPN" and len(a_span) == 1 and len(b_span) > 1:
            continue  # "Mary and John Frudden": the surname is shared
        block = [*a_span, and_.i, *b_span]
        new_items = [*_orig(b_span), (and_.i, ""), *_orig(a_span)]
        claims = frozenset(block)

        def fn(draft: Draft, block=block, new_items=new_items, claims=claims) -> Draft | None:
            items = _replace_block(draft, block, new_items)
            return None if items is None else draft.derive("coordination", claims, items)

        edits.append(Edit("coordination", claims, fn, False))
    return edits or "no_coordinated_pair"


# Adjectives whose order in a pair is fixed or carries meaning ("black and white", "first and second").
_FIXED_ADJECTIVES = frozenset(
    """black white safe sound alive well short sweet high dry null void first second third last next
    more less better worse further older newer bigger smaller great greater little old new""".split()
)


def _adjective_pair(p: Parsed, a: Token) -> Edit | None:
    """Swap "political and economic" when both are plain adjectives sharing one head (or predicate)."""
    kids = list(a.children)
    conj = [c for c in kids if c.dep_ == "conj"]
    cc = [c for c in kids if c.dep_ == "cc"]
    if len(conj) != 1 or len(cc) != 1 or cc[0].lower_ != "and" or len(kids) != 2:
        return None
    b, and_ = conj[0], cc[0]
    if a.tag_ != "JJ" or b.tag_ != "JJ" or list(b.children) or a.dep_ not in ("amod", "acomp"):
        return None
    if and_.i != a.i + 1 or b.i != a.i + 2 or a.lower_ in _FIXED_ADJECTIVES or b.lower_ in _FIXED_ADJECTIVES:
        return None
    if not (_plain(p, a) and _plain(p, b)) or a.i == 0:
        return None
    if a.dep_ == "amod" and not (a.head.i == b.i + 1 and a.head.pos_ in ("NOUN", "PROPN")):
        return None
    block = [a.i, and_.i, b.i]
    claims = frozenset(block)
    new_items = [(b.i, ""), (and_.i, ""), (a.i, "")]

    def fn(draft: Draft) -> Draft | None:
        items = _replace_block(draft, block, new_items)
        return None if items is None else draft.derive("coordination", claims, items)

    return Edit("coordination", claims, fn, False)


def relative_reduction(p: Parsed) -> list[Edit] | str:
    """Passive relative clause -> reduced relative: "a bridge which was built in 1900" -> "a bridge built in 1900"."""
    tokens = p.tokens
    edits = []
    for v in tokens:
        if v.dep_ != "relcl" or v.tag_ != "VBN" or v.i < 2 or v.i in p.quoted:
            continue
        rel, aux = tokens[v.i - 2], tokens[v.i - 1]
        if rel.lower_ not in ("which", "that", "who") or rel.dep_ != "nsubjpass" or rel.head != v:
            continue
        if aux.dep_ != "auxpass" or aux.lower_ not in ("is", "are", "was", "were") or aux.head != v:
            continue
        if any(c.dep_ in ("neg", "aux") for c in v.children) or v.left_edge.i != rel.i:
            continue
        claims = frozenset({rel.i, aux.i, v.i})
        overrides = {rel.i: "", aux.i: ""}
        edits.append(
            Edit(
                "relative_reduction",
                claims,
                lambda d, o=overrides, c=claims: d.derive("relative_reduction", c, overrides=o),
                False,
            )
        )
    return edits or "no_passive_relative"


def _clause_is_past(token: Token) -> bool:
    """Whether the nearest finite verb above ``token`` is in the past tense."""
    for verb in token.ancestors:
        if verb.pos_ not in ("VERB", "AUX"):
            continue
        auxes = [c for c in verb.children if c.dep_ in ("aux", "auxpass")]
        if verb.tag_ in ("VBD", "VBZ", "VBP") or auxes:
            return verb.tag_ == "VBD" or any(a.tag_ == "VBD" for a in auxes)
    return False


_SMALL_CLAUSE_VERBS = frozenset(
    "have get see hear want need make keep leave find like watch consider render prefer".split()
)


def _relative_pronoun(noun: Token, restrictive: bool) -> str | None:
    if restrictive:
        return "that" if noun.tag_ in ("NN", "NNS") else None
    kind = noun_kind(lemma_of(noun.text, noun.tag_)) if noun.tag_ in ("NN", "NNS") else ""
    return {"person": "who", "thing": "which"}.get(kind)


def relative_expansion(p: Parsed) -> list[Edit] | str:
    """Reduced participle or apposition -> full relative clause, with the clause's tense and the noun's
    number: "a bridge built in 1900" -> "a bridge that was built in 1900"; "Paris, the capital of
    France, is ..." -> "Paris, which is the capital of France, is ..."."""
    if not p.single or p.root.pos_ not in ("VERB", "AUX"):
        return "no_clause"
    doc, tokens = p.doc, p.tokens
    edits = []
    for v in tokens:
        if v.i in p.quoted or v.dep_ not in ("acl", "appos"):
            continue
        n = v.head
        if n.tag_ not in ("NN", "NNS", "NNP", "NNPS") or n.i >= v.i or n.dep_ == "conj":
            continue
        if any(c.dep_ == "conj" for c in n.children) or n.i in p.quoted:
            continue
        comma = doc[n.i + 1].text == ","
        if n.dep_ == "pobj" and n.head.lower_ == "with":
            continue  # "with 38% of women infected": a small clause, not a modifier
        if n.dep_ == "dobj" and lemma_of(n.head.text, n.head.tag_) in _SMALL_CLAUSE_VERBS:
            continue  # "have a queen beheaded": the participle is the verb's complement
        past = _clause_is_past(n)
        if v.dep_ == "acl":
            # "a bridge built in 1900": the participle opens its phrase right after the noun
            if v.tag_ != "VBN" or v.left_edge.i != v.i or v.i != n.i + 1 + comma:
                continue
            if any(c.dep_ in ("aux", "auxpass", "nsubj", "nsubjpass", "neg", "mark") for c in v.children):
                continue
            if not comma and n.right_edge.i != v.right_edge.i:
                continue
            if past or any(_is_temporal(x) for c in v.children if c.dep_ == "prep" for x in c.children):
                tense = True
            else:
                tense = past
            start = v.i
        else:
            # "Paris, the capital of France, ...": a determiner opens the apposition after a comma
            first = doc[v.left_edge.i]
            if (
                not comma
                or v.left_edge.i != n.i + 2
                or first.lower_ not in ("a", "an", "the")
                or first.head != v
            ):
                continue
            if v.tag_ not in ("NN", "NNS") or (n.tag_ in ("NNS", "NNPS")) != (v.tag_ == "NNS"):
                continue
            if (n.left_edge.i > 0 and doc[n.left_edge.i - 1].text == ",") or any(
                c.dep_ in ("cc", "conj") for c in (*n.children, *v.children)
            ):
                continue  # "a synagogue, a country club, and a cemetery" is a list, not an apposition
            after = v.right_edge.i + 2
            if after < len(doc) and doc[after].lower_ in ("and", "or", "nor"):
                continue
            tense, start = past, first.i
        end = v.right_edge.i + 1
        if comma and (end >= len(doc) or doc[end].text not in (",", ".")):
            continue
        if any(doc[i].text in ("(", ")", ";", ":", "-", "–", "—", '"') for i in range(start, end)):
            continue
        pronoun = _relative_pronoun(n if v.dep_ == "acl" else v, restrictive=not comma)
        if pronoun is None:
            continue
        be = be_form(tense, "pl" if n.tag_ in ("NNS", "NNPS") else "3sg")
        claims = frozenset({v.i, start, -100 - v.i})

        def fn(draft: Draft, start=start, pronoun=pronoun, be=be, claims=claims) -> Draft | None:
            pos = draft.positions([start])
            if not pos:
                return None
            items = list(draft.items)
            items[pos[0] : pos[0]] = [(NEW, pronoun), (NEW, be)]
            return draft.derive("relative_expansion", claims, items)

        edits.append(Edit("relative_expansion", claims, fn, False))
    return edits or "no_reduced_relative"


def relative_pronoun(p: Parsed) -> list[Edit] | str:
    """Restrictive relative pronoun: "that" <-> "which" for things ("the house that he built" -> "the
    house which he built"), and an object "that"/"which" dropped ("the book that he wrote" -> "the book
    he wrote")."""
    edits = []
    for v in p.tokens:
        if v.dep_ != "relcl" or v.i in p.quoted:
            continue
        r = v.left_edge
        n = v.head
        if r.lower_ not in ("that", "which") or r.head != v or r.i != n.i + 1 or r.i in p.quoted:
            continue  # after a comma (non-restrictive) "which" must stay
        if n.tag_ not in ("NN", "NNS") or not p.spaces[r.i]:
            continue
        if r.dep_ == "dobj":
            subj = [c for c in v.children if c.dep_ in ("nsubj", "nsubjpass")]
            if subj and subj[0].left_edge.i == r.i + 1:
                edits.append(_word_edit("relative_pronoun", {r.i: ""}))
        if r.dep_ in ("nsubj", "nsubjpass", "dobj") and noun_kind(lemma_of(n.text, n.tag_)) == "thing":
            edits.append(_word_edit("relative_pronoun", {r.i: "which" if r.lower_ == "that" else "that"}))
    return edits or "no_restrictive_relative"


# Multi-word paraphrases that keep meaning and grammar wherever they occur (lower-case word sequences).
_PHRASES: dict[tuple[str, ...], str] = {
    ("in", "order", "to"): "to",
    ("so", "as", "to"): "to",
    ("due", "to"): "because of",
    ("because", "of"): "due to",
    ("as", "a", "result", "of"): "because of",
    ("a", "number", "of"): "several",
    ("a", "large", "number", "of"): "many",
    ("a", "variety", "of"): "various",
    ("the", "majority", "of"): "most",
    ("prior", "to"): "before",
    ("in", "spite", "of"): "despite",
    ("with", "the", "exception", "of"): "except for",
    ("for", "example"): "for instance",
    ("for", "instance"): "for example",
    ("known", "as"): "called",
    ("referred", "to", "as"): "called",
    ("at", "the", "same", "time"): "simultaneously",
    ("the", "vast", "majority", "of"): "most",
    ("a", "majority", "of"): "most",
    ("in", "the", "vicinity", "of"): "near",
    ("despite", "the", "fact", "that"): "although",
    ("due", "to", "the", "fact", "that"): "because",
    ("each", "other"): "one another",
    ("one", "another"): "each other",
    ("along", "with"): "together with",
    ("together", "with"): "along with",
    ("shortly", "after"): "soon after",
    ("soon", "after"): "shortly after",
    ("moreover",): "furthermore",
    ("furthermore",): "moreover",
    ("nevertheless",): "nonetheless",
    ("nonetheless",): "nevertheless",
    ("whereas",): "while",
    ("numerous",): "many",
    ("whilst",): "while",
    ("amongst",): "among",
    ("although",): "though",
    ("approximately",): "about",
    ("roughly",): "about",
}
_MAX_PHRASE = max(map(len, _PHRASES))
# Abbreviations and the names they stand for (case-sensitive, both directions).
_ABBREVIATIONS = {
    ("U.S.",): "United States",
    ("US",): "United States",
    ("UK",): "United Kingdom",
    ("U.K.",): "United Kingdom",
    ("USSR",): "Soviet Union",
    ("UN",): "United Nations",
    ("EU",): "European Union",
    ("United", "States"): "U.S.",
    ("United", "Kingdom"): "UK",
    ("Soviet", "Union"): "USSR",
    ("United", "Nations"): "UN",
    ("European", "Union"): "EU",
}
_DAY = re.compile(r"^([1-9]|[12][0-9]|3[01])$")


def _word_edit(name: str, overrides: dict[int, str]) -> Edit:
    claims = frozenset(overrides)
    return Edit(name, claims, lambda d, o=overrides, c=claims: d.derive(name, c, overrides=o), False)


_EVENT_NOUNS = frozenset(
    """war wars death election elections release collapse fall success failure defeat victory merger
    resignation retirement invasion attack attacks revolution independence battle incident accident
    earthquake crisis announcement departure arrival completion publication closure conclusion split
    breakup acquisition dissolution introduction assassination murder coup liberation occupation
    surrender armistice ceasefire reunification partition bankruptcy fire flood floods storm hurricane
    disaster riots riot scandal marriage divorce birth funeral graduation trial conviction
    release launch opening closing demise sale purchase takeover restoration reformation conquest
    annexation withdrawal destruction reign abdication coronation season""".split()
)
_NUMBER_PREPS = {"around": "about", "about": "around"}
_BE_FINITE = frozenset({"is", "was", "are", "were"})


def _contextual_phrase(p: Parsed, t: Token) -> dict[int, str] | None:
    """Overrides for paraphrases that depend on the parse, or None.

    "more than 200" <-> "over 200", "around 300" <-> "about 300", "consists of" -> "is made up of",
    "is located in" -> "is situated in", "following the war" <-> "after the war", "is able to" -> "can".
    """
    tokens, spaces = p.tokens, p.spaces
    i, n = t.i, len(tokens)
    if i in p.quoted or not spaces[i]:
        return None
    nxt = tokens[i + 1] if i + 1 < n else None
    low = t.lower_
    if nxt is None:
        return None
    if low == "more" and nxt.lower_ == "than" and i + 2 < n and tokens[i + 2].tag_ == "CD" and spaces[i + 1]:
        if tokens[i + 2].text[:1].isdigit() and (i == 0 or tokens[i - 1].lower_ not in ("no", "much", "far")):
            return {i: "over", i + 1: ""}
    if low == "over" and nxt.tag_ == "CD" and nxt.text[:1].isdigit() and t.dep_ in ("quantmod", "advmod"):
        return {i: "more than"}
    if (
        low in _NUMBER_PREPS
        and nxt.tag_ == "CD"
        and nxt.text[:1].isdigit()
        and t.dep_ in ("quantmod", "advmod")
    ):
        return {i: _NUMBER_PREPS[low]}
    if low in ("consist", "consists", "consisted") and t.tag_ in ("VBZ", "VBD", "VBP") and nxt.lower_ == "of":
        if any(c.dep_ in ("aux", "neg", "advmod") for c in t.children):
            return None
        if t.tag_ != "VBD":  # the present tag already carries the number
            return {i: f"{be_form(False, '3sg' if t.tag_ == 'VBZ' else 'pl')} made up"}
        subject = next((c for c in t.children if c.dep_ == "nsubj"), None)
        if subject is None:
            return None
        if subject.tag_ in ("WDT", "WP") and t.dep_ == "relcl":
            subject = t.head  # "teams which consisted of": agree with the antecedent
        return {i: f"{be_form(True, person_number(subject))} made up"}
    if low == "located" and t.tag_ == "VBN" and nxt.lower_ in ("in", "on", "at", "near") and i > 0:
        if tokens[i - 1].lower_ in _BE_FINITE and tokens[i - 1].dep_ == "auxpass":
            return {i: "situated"}
    if low in ("following", "after") and t.dep_ == "prep" and (low == "after" or t.tag_ == "VBG"):
        # only before an event ("following the war"); "following the instructions" means obeying them
        pobj = [c for c in t.children if c.dep_ == "pobj"]
        if len(pobj) == 1 and len(list(t.children)) == 1 and pobj[0].lower_ in _EVENT_NOUNS:
            if tokens[pobj[0].left_edge.i].lower_ in ("the", "his", "her", "their", "its"):
                return {i: "after" if low == "following" else "following"}
    if low in ("is", "are") and nxt.lower_ == "able" and i + 2 < n and tokens[i + 2].lower_ == "to":
        if t.dep_ == "ROOT" or t.pos_ == "AUX":
            verb = tokens[i + 3] if i + 3 < n else None
            if verb is not None and verb.tag_ == "VB" and spaces[i + 1] and spaces[i + 2]:
                return {i: "can", i + 1: "", i + 2: ""}
    return None


def phrase(p: Parsed) -> list[Edit] | str:
    """Fixed paraphrases: connectives ("in order to" -> "to"), abbreviations ("UK" <-> "United Kingdom"),
    percentages ("26%" <-> "26 percent") and dates ("3 May 1921" <-> "May 3, 1921")."""
    tokens, spaces = p.tokens, p.spaces
    lowers = [t.lower_ for t in tokens]
    texts = [t.text for t in tokens]
    edits = []
    n = len(tokens)
    for i in range(n):
        if i in p.quoted:
            continue
        for size in range(1, _MAX_PHRASE + 1):
            j = i + size
            if j > n or any(spaces[k] != " " for k in range(i, j - 1)):
                break
            key = tuple(lowers[i:j])
            new = _PHRASES.get(key)
            if new is None:
                new = _ABBREVIATIONS.get(tuple(texts[i:j]))
            if new is None:
                continue
            if new.endswith(".") and j < n and texts[j] == ".":
                continue
            if key in (("because", "of"),) and tokens[i].dep_ != "prep":
                continue
            if key == ("known", "as") and tokens[i].tag_ != "VBN":
                continue
            if key in (("along", "with"), ("together", "with")) and tokens[i + 1].dep_ != "prep":
                continue
            if key == ("numerous",) and (tokens[i].tag_ != "JJ" or tokens[i].head.tag_ != "NNS"):
                continue
            if key[-1] == "of" and j < n and tokens[j].tag_ in ("DT", "PRP$", "PRP", "CD"):
                # "the majority of the team" -> "most of the team", not "most the team"
                if new not in ("most", "several", "many"):
                    continue
                new = f"{new} of"
            overrides = {i: new, **{k: "" for k in range(i + 1, j)}}
            edits.append(_word_edit("phrase", overrides))
        t = tokens[i]
        contextual = _contextual_phrase(p, t)
        if contextual is not None:
            edits.append(_word_edit("phrase", contextual))
        if t.text == "%" and i > 0 and tokens[i - 1].tag_ == "CD" and spaces[i - 1] == "":
            edits.append(_word_edit("phrase", {i: "percent"}))
        elif (
            t.lower_ == "percent"
            and i > 0
            and tokens[i - 1].tag_ == "CD"
            and tokens[i - 1].text[-1:].isdigit()
        ):
            edits.append(_word_edit("phrase", {i: "%"}))
        if i + 2 < n and _DAY.match(t.text) and lowers[i + 1] in _MONTHS and _YEAR.match(texts[i + 2]):
            # 3 May 1921 -> May 3, 1921
            if spaces[i] == " " and spaces[i + 1] == " " and (i + 3 >= n or tokens[i + 3].text != ","):
                edits.append(_word_edit("phrase", {i: texts[i + 1], i + 1: t.text + ","}))
        if (
            i + 3 < n
            and lowers[i] in _MONTHS
            and _DAY.match(texts[i + 1])
            and texts[i + 2] == ","
            and _YEAR.match(texts[i + 3])
        ):
            # May 3, 1921 -> 3 May 1921
            edits.append(_word_edit("phrase", {i: texts[i + 1], i + 1: t.text, i + 2: ""}))
    return edits or "no_phrase"


RULES: dict[str, Callable[[Parsed], list[Edit] | str]] = {
    "passive": passive,
    "active": active,
    "copula_swap": copula_swap,
    "front_adverbial": front_adverbial,
    "back_adverbial": back_adverbial,
    "front_clause": front_clause,
    "back_clause": back_clause,
    "mid_adverbial": mid_adverbial,
    "genitive": genitive,
    "coordination": coordination,
    "relative_reduction": relative_reduction,
    "relative_expansion": relative_expansion,
    "relative_pronoun": relative_pronoun,
    "phrase": phrase,
    "synonym": synonym,
    "antonym_negation": antonym_negation,
    "contraction": contraction,
    "number_word": number_word,
}
"""All transforms, by name, in the order they are tried."""
