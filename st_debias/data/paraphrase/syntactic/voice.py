"""Voice rules: ``passive``, ``active`` and ``copula_swap``.

Voice also changes inside a subordinate or coordinated clause that has its own subject.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from st_debias.data.paraphrase.syntactic.draft import NEW, Draft
from st_debias.data.paraphrase.syntactic.morph import (
    OBJECT_TO_SUBJECT,
    SUBJECT_TO_OBJECT,
    be_form,
    finite_form,
    inflect,
    is_past,
    lemma_of,
    person_number,
)
from st_debias.data.paraphrase.syntactic.parsed import (
    END_SLOT,
    FRONT_SLOT,
    SUBJECT_DEPS,
    Edit,
    Parsed,
    original_items,
    replace_block,
    subtree_indices,
)

if TYPE_CHECKING:  # spaCy is imported where a model is loaded, not for the type names
    from spacy.tokens import Doc, Token

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


def _middle(p: Parsed, subj: Token, verb: Token | None = None) -> list[int] | str:
    """Tokens between the subject and the verb; only auxiliaries, negation and adverbs may sit there."""
    doc, root = p.doc, verb if verb is not None else p.root
    allowed: set[int] = set()
    for c in root.children:
        if c.dep_ in ("aux", "auxpass", "neg", "advmod") and subj.right_edge.i < c.i < root.i:
            allowed.update(subtree_indices(c))
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
        subj = next((c for c in v.children if c.dep_ in SUBJECT_DEPS), None)
        if subj is None or subj.tag_ in ("WP", "WDT"):
            continue
        inner = _passive_at(p, v, subj, is_root=False)
        if not isinstance(inner, str):
            edits.extend(inner)
    return edits or result


def _inner_clause_heads(p: Parsed):
    """Verbs heading a subordinate or coordinated clause (a bare advcl needs its marker), outside quotes."""
    if not p.single or not p.balanced or p.semicolon:
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
    obj_span, subj_span = subtree_indices(obj), subtree_indices(subj)
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
    if any(doc[i].text in (",", ";", ":", "(", ")") for i in subtree_indices(obj)):
        return "complex_object"
    if any(doc[i].tag_ == "PRP$" for i in subtree_indices(obj)):
        return "possessive_object"  # "He spent his childhood" -> "His childhood was spent by him"
    if any(doc[i].dep_ in ("acl", "relcl") and doc[i].tag_ == "VB" for i in subtree_indices(obj)):
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
        tail = original_items(a.i for a in auxes[1:])
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

    group = [*first, *original_items(negs), *original_items(advs), *tail, (root.i, ""), *original_items(prts)]
    block = list(range(subj.left_edge.i, end + 1))
    new_items = [*original_items(obj_span), *group, (NEW, "by"), *original_items(subj_span)]
    overrides = {root.i: vbn, **subj_case[0], **obj_case[0]}
    claims = frozenset({root.i, subj.i, obj.i, *(a.i for a in auxes), *negs, *prts})

    def fn(draft: Draft) -> Draft | None:
        items = replace_block(draft, block, new_items)
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
    subj_span, agent_np = subtree_indices(subj), subtree_indices(new_subj)
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
        tail = original_items(a.i for a in auxes[1:])
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
    group = [*first, *original_items(negs), *original_items(advs), *tail, (root.i, ""), *original_items(prts)]
    block = list(range(subj.left_edge.i, new_subj.right_edge.i + 1))
    new_items = [*original_items(agent_np), *group, *original_items(subj_span)]
    overrides = {root.i: verb.lower(), **subj_case[0], **agent_case[0]}
    claims = frozenset({root.i, subj.i, new_subj.i, agent.i, be.i, *(a.i for a in auxes), *negs, *prts})

    def fn(draft: Draft) -> Draft | None:
        items = replace_block(draft, block, new_items)
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
    subj_span, attr_span = subtree_indices(subj), subtree_indices(attr)
    if subj_span[0] != 0 or attr_span[-1] != p.last or p.splits_quote(subj_span) or p.splits_quote(attr_span):
        return "unusual_order"
    if any(doc[i].text in (",", ";", ":", "(", ")", "-", "–", "—") for i in (*subj_span, *attr_span)):
        return "complex_phrase"
    middle = list(range(subj_span[-1] + 1, attr_span[0]))
    if any(doc[i].dep_ not in ("aux", "neg") and i != root.i for i in middle):
        return "interrupted"
    block = [*subj_span, *middle, *attr_span]
    new_items = [*original_items(attr_span), *original_items(middle), *original_items(subj_span)]
    claims = frozenset({subj.i, attr.i, root.i, FRONT_SLOT, END_SLOT})

    def fn(draft: Draft) -> Draft | None:
        items = replace_block(draft, block, new_items)
        return None if items is None else draft.derive("copula_swap", claims, items)

    return [Edit("copula_swap", claims, fn, True)]
