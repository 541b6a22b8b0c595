"""Noun-phrase rules: ``genitive``, ``coordination``, ``relative_reduction``, ``relative_expansion`` and
``relative_pronoun``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from st_debias.data.paraphrase.syntactic.draft import NEW, Draft
from st_debias.data.paraphrase.syntactic.morph import (
    be_form,
    lemma_of,
    noun_kind,
)
from st_debias.data.paraphrase.syntactic.parsed import (
    Edit,
    Parsed,
    is_temporal,
    original_items,
    plain_word,
    replace_block,
    subtree_indices,
    word_edit,
)

if TYPE_CHECKING:  # spaCy is imported where a model is loaded, not for the type names
    from spacy.tokens import Token

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
    span = subtree_indices(head)
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
            new_items = [*original_items(poss), (NEW, marker), *original_items(mods), (n1.i, "")]
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
            head_span = [i for i in subtree_indices(n2) if i != case[0].i]
            poss = _simple_possessor_tokens(p, n2, head_span)
            if poss is None:
                continue
            mods = list(range(case[0].i + 1, n1.i))
            block = list(range(n1.left_edge.i, n1.i + 1))
            new_items = [(NEW, "the"), *original_items(mods), (n1.i, ""), (NEW, "of"), *original_items(poss)]
            claims = frozenset({*block})
        else:
            continue
        if p.splits_quote(block):
            continue

        def fn(draft: Draft, block=block, new_items=new_items, claims=claims) -> Draft | None:
            items = replace_block(draft, block, new_items)
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
        b_span = subtree_indices(b)
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
        new_items = [*original_items(b_span), (and_.i, ""), *original_items(a_span)]
        claims = frozenset(block)

        def fn(draft: Draft, block=block, new_items=new_items, claims=claims) -> Draft | None:
            items = replace_block(draft, block, new_items)
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
    if not (plain_word(p, a) and plain_word(p, b)) or a.i == 0:
        return None
    if a.dep_ == "amod" and not (a.head.i == b.i + 1 and a.head.pos_ in ("NOUN", "PROPN")):
        return None
    block = [a.i, and_.i, b.i]
    claims = frozenset(block)
    new_items = [(b.i, ""), (and_.i, ""), (a.i, "")]

    def fn(draft: Draft) -> Draft | None:
        items = replace_block(draft, block, new_items)
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
            if past or any(is_temporal(x) for c in v.children if c.dep_ == "prep" for x in c.children):
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
                edits.append(word_edit("relative_pronoun", {r.i: ""}))
        if r.dep_ in ("nsubj", "nsubjpass", "dobj") and noun_kind(lemma_of(n.text, n.tag_)) == "thing":
            edits.append(word_edit("relative_pronoun", {r.i: "which" if r.lower_ == "that" else "that"}))
    return edits or "no_restrictive_relative"
