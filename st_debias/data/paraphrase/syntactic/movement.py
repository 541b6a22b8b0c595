"""Constituent movement rules: adverbials and subordinate clauses to the front, the end or the middle.

Movement stays in the main clause.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from st_debias.data.paraphrase.syntactic.draft import NEW, Draft
from st_debias.data.paraphrase.syntactic.morph import (
    lemma_of,
)
from st_debias.data.paraphrase.syntactic.parsed import (
    END_SLOT,
    FRONT_SLOT,
    SUBJECT_DEPS,
    TERMINAL,
    Edit,
    Parsed,
    contiguous_block,
    is_temporal,
    original_items,
    subtree_indices,
)

if TYPE_CHECKING:  # spaCy is imported where a model is loaded, not for the type names
    from spacy.tokens import Token

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
_BAD_REMAINDER_DEPS = frozenset({"relcl", "acl", "advcl", "ccomp", "conj", "appos", "parataxis", "cc"})


def _trailing_adverbial_ok(c: Token) -> bool:
    if c.dep_ == "prep":
        pobjs = [x for x in c.children if x.dep_ == "pobj"]
        if len(pobjs) != 1 or len(list(c.children)) != 1:
            return False
        if c.lower_ in _ADJUNCT_PREPS or (c.lower_ in _TEMPORAL_PREPS and is_temporal(pobjs[0])):
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
        return is_temporal(c) and c.pos_ in ("NOUN", "PROPN")
    if c.dep_ == "advmod":
        return c.lower_ in _MOVABLE_ADVERBS and not list(c.children)
    return False


def _clause_ok(c: Token) -> bool:
    if c.dep_ != "advcl":
        return False
    first = c.left_edge
    return first.dep_ == "mark" and first.head == c and first.lower_ in _CLAUSE_MARKS


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
            claims = frozenset({FRONT_SLOT, c.i})

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
            if c.dep_ != "prep" or any(doc[i].is_punct for i in subtree_indices(c)):
                continue
            later = [k for k in kids if k.i > c.i]
            if any(k.dep_ not in _ADJUNCT_DEPS and k.dep_ not in ("cc", "conj") for k in later):
                continue  # an object or complement follows: the phrase may belong to something else
            clauses = [
                k
                for k in later
                if k.dep_ == "conj"
                and k.pos_ in ("VERB", "AUX")
                and any(x.dep_ in SUBJECT_DEPS for x in k.children)
            ]
            if any(k.dep_ == "conj" and k not in clauses for k in later) or (
                any(k.dep_ == "cc" for k in later) and not clauses
            ):
                continue  # "visited X in the 1950s, and again in 1975": the ellipsis needs the phrase
            nxt = doc[c.right_edge.i + 1]
            if nxt.dep_ in ("cc", "conj") or nxt.text in ("(", "-", "–", "—", ";", ":"):
                continue
            pobj = next(x for x in c.children if x.dep_ == "pobj")
            if nxt.dep_ == "prep" and not is_temporal(pobj) and c.lower_ not in _ADJUNCT_PREPS:
                continue  # "in Office 2008 for Mac": the next phrase may modify this one
            if doc[c.left_edge.i - 1].text == ",":
                continue  # a parenthetical between commas
        if c.dep_ == "prep" and any(k.dep_ == "prep" and k.lower_ in ("from", "between") for k in kids):
            continue  # "rose from 2% in June 2000 to 4%": the date belongs to the range
        span = subtree_indices(c)
        if span[0] <= root.i or len(span) > 14 or p.splits_quote(span):
            continue
        comma = [span[0] - 1] if last and doc[span[0] - 1].text == "," else []
        if any(doc[i].text in (",", ";", ":", "(", ")") for i in range(root.i + 1, span[0] - len(comma))):
            continue  # a parenthetical or non-restrictive clause sits between: the attachment is unsure
        claims = frozenset({FRONT_SLOT, END_SLOT})

        def fn(draft: Draft, span=span, comma=comma, claims=claims, last=last) -> Draft | None:
            block = contiguous_block(draft, span)
            if block is None:
                return None
            start, end = block
            if last and any(
                draft.items[q][0] < 0 or doc[draft.items[q][0]].text not in TERMINAL
                for q in range(end + 1, len(draft.items))
            ):
                return None
            rest = [it for q, it in enumerate(draft.items) if not start <= q <= end and it[0] not in comma]
            return draft.derive(name, claims, [*original_items(span), (NEW, ","), *rest])

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
    span = subtree_indices(c)
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
    claims = frozenset({FRONT_SLOT, END_SLOT})

    def fn(draft: Draft) -> Draft | None:
        block = contiguous_block(draft, [*span, comma])
        if block is None or block[0] != 0:
            return None
        rest = list(draft.items[block[1] + 1 :])
        cut = len(rest)
        while cut > 0 and rest[cut - 1][0] >= 0 and doc[rest[cut - 1][0]].text in TERMINAL:
            cut -= 1
        return draft.derive(name, claims, [*rest[:cut], *original_items(span), *rest[cut:]])

    return [Edit(name, claims, fn, True)]


def _fronted_adverbial_ok(c: Token) -> bool:
    if c.dep_ == "prep":
        return c.lower_ not in _UNMOVABLE_FRONT_PREPS and c.pos_ == "ADP"
    if c.dep_ == "npadvmod":
        return is_temporal(c)
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
        return is_temporal(c)
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
    if p.semicolon:
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
    span = subtree_indices(c)
    comma = span[-1] + 1
    if doc[comma].text != ",":
        # "In 1893 the ship sank": without a comma only a clear time phrase is taken
        pobjs = [x for x in c.children if x.dep_ == "pobj"]
        clear = c.dep_ == "prep" and len(pobjs) == 1 and (c.lower_ in _ADJUNCT_PREPS or is_temporal(pobjs[0]))
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
    subj_span = subtree_indices(subj)
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
    claims = frozenset({FRONT_SLOT, _MID})
    block = [*span, comma] if comma >= 0 else span

    def fn(draft: Draft) -> Draft | None:
        front = contiguous_block(draft, block)
        subject = contiguous_block(draft, subj_span)
        if front is None or subject is None or front[0] != 0 or subject[0] != front[1] + 1:
            return None
        rest = list(draft.items[subject[1] + 1 :])
        moved = [*draft.items[subject[0] : subject[1] + 1], (NEW, ","), *original_items(span), (NEW, ",")]
        return draft.derive("mid_adverbial", claims, [*moved, *rest])

    return [Edit("mid_adverbial", claims, fn, True)]
