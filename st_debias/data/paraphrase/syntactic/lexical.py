"""Lexical rules: ``synonym``, ``antonym_negation``, ``contraction``, ``number_word`` and ``phrase``."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from st_debias.data.lexicon import safe_antonym
from st_debias.data.paraphrase.syntactic.draft import NEW, Draft
from st_debias.data.paraphrase.syntactic.morph import (
    SYNONYM_STOPLIST,
    be_form,
    inflect,
    lemma_of,
    person_number,
    synonyms,
    wordnet_available,
)
from st_debias.data.paraphrase.syntactic.parsed import (
    MONTHS,
    YEAR,
    Edit,
    Parsed,
    plain_word,
    word_edit,
)
from st_debias.data.text import is_ascii_integer

if TYPE_CHECKING:  # spaCy is imported where a model is loaded, not for the type names
    from spacy.tokens import Doc, Token

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
            or not plain_word(p, t)
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
        if c.dep_ == "acomp" and c.tag_ == "JJ" and not list(c.children) and plain_word(p, c)
    ]
    if len(adjs) != 1 or adjs[0].i != root.i + 1 or p.subject is None:
        return "no_plain_predicate_adjective"
    adj = adjs[0]
    auxes = [c for c in root.children if c.dep_ == "aux" and c.i < root.i]
    anchor = auxes[0] if auxes else root
    if anchor.text.startswith("'"):
        return "contracted_aux"
    antonym = safe_antonym(adj.lower_)
    if antonym is None:
        return "no_antonym"
    claims = frozenset({adj.i, anchor.i, root.i})

    def fn(draft: Draft) -> Draft | None:
        pos = draft.positions([anchor.i])
        if not pos:
            return None
        items = list(draft.items)
        items.insert(pos[0] + 1, (NEW, "not"))
        return draft.derive("antonym_negation", claims, items, {adj.i: antonym})

    return [Edit("antonym_negation", claims, fn, False)]


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
            or doc[t.i - 1].lower_ in MONTHS
            or doc[t.i - 1].tag_ == "CD"
        ):
            continue
        if t.head.lower_ in MONTHS or not p.spaces[t.i]:
            continue
        if is_ascii_integer(t.text) and 2 <= int(t.text) <= 20:
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
# First words of the keys above: a token that is neither starts no fixed phrase.
_PHRASE_STARTS = frozenset(key[0] for key in _PHRASES)
_ABBREVIATION_STARTS = frozenset(key[0] for key in _ABBREVIATIONS)


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
# The only lower-cased words :func:`_contextual_phrase` rewrites.
_CONTEXTUAL_WORDS = frozenset(
    ["more", "over", *_NUMBER_PREPS, *"consist consists consisted located following after is are".split()]
)


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
    texts = p.surface[0]
    edits = []
    n = len(tokens)
    for i in range(n):
        if i in p.quoted:
            continue
        fixed = lowers[i] in _PHRASE_STARTS or texts[i] in _ABBREVIATION_STARTS
        for size in range(1, _MAX_PHRASE + 1) if fixed else ():
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
            edits.append(word_edit("phrase", overrides))
        if lowers[i] in _CONTEXTUAL_WORDS:
            contextual = _contextual_phrase(p, tokens[i])
            if contextual is not None:
                edits.append(word_edit("phrase", contextual))
        if texts[i] == "%" and i > 0 and tokens[i - 1].tag_ == "CD" and spaces[i - 1] == "":
            edits.append(word_edit("phrase", {i: "percent"}))
        elif lowers[i] == "percent" and i > 0 and tokens[i - 1].tag_ == "CD" and texts[i - 1][-1:].isdigit():
            edits.append(word_edit("phrase", {i: "%"}))
        if i + 2 < n and _DAY.match(texts[i]) and lowers[i + 1] in MONTHS and YEAR.match(texts[i + 2]):
            # 3 May 1921 -> May 3, 1921
            if spaces[i] == " " and spaces[i + 1] == " " and (i + 3 >= n or texts[i + 3] != ","):
                edits.append(word_edit("phrase", {i: texts[i + 1], i + 1: texts[i] + ","}))
        if (
            i + 3 < n
            and lowers[i] in MONTHS
            and _DAY.match(texts[i + 1])
            and texts[i + 2] == ","
            and YEAR.match(texts[i + 3])
        ):
            # May 3, 1921 -> 3 May 1921
            edits.append(word_edit("phrase", {i: texts[i + 1], i + 1: texts[i], i + 2: ""}))
    return edits or "no_phrase"
