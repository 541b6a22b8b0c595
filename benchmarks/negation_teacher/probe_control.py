"""A control for the negation-meaning probe: is "X is not A" nearer "X is B" because B is A's opposite, or nearer
any other word in A's place?

Per item, "X is C": the antonym sentence "X is B" with B replaced by C, the antonym word of another item of the
probe, drawn with a fixed seed per item and never A, B, a WordNet antonym or synonym of either, or A's curated
antonym (an item whose sentence does not change in exactly that one word is left out). On the subsets of
``probe_split.py``:

* (i) "not A" nearer "B" than "A" (the probe's);
* (iv) nearer "B" than "C": the opposite over another adjective in the same sentence;
* (v) nearer "C" than "A": another adjective over the sentence's own;
* the mean of cos(not A, B) − cos(not A, C): how much nearer the opposite is than another adjective.

A model that has learned "a negated sentence means the same sentence with some other word" raises (v) with (i) and
brings "not A" as near C as B, so the gap shrinks; one that has learned which word is A's opposite keeps or widens
it. (iv) is near 1 for every model scored, so the gap is the figure that can move.
Models are ``label=folder`` (or a hub name):

    python benchmarks/negation_teacher/probe_control.py start=sentence-transformers/all-MiniLM-L6-v2 \
        floor=outputs/negation_teacher/dev-500/v6-halfpairs-marginfloor-negedit03-other2-seed42/model \
        --out benchmarks/negation_teacher/results/probe_control_500.md
"""

from __future__ import annotations

import argparse
import random
import re
from functools import cache
from pathlib import Path
from typing import Any

from benchmarks.harness.provenance import write_table
from benchmarks.harness.trained import MODEL_HELP, labelled_models
from benchmarks.negation_teacher.probe_split import probe_subsets
from benchmarks.negation_teacher.wordnet_pairs import direct_adjective_antonyms
from st_debias.data.lexicon import safe_antonym
from st_debias.data.text import swapped_words
from st_debias.evaluation import EmbeddingCache

SUBSETS = ("curated, all", "curated, other word", "curated, held-out half", "curated, held-out half, other word",
           "wordnet new, held-out half")
FIGURES = (("(i) B over A ↑", "b_over_a", 3), ("(iv) B over C ↑", "b_over_c", 3), ("(v) C over A", "c_over_a", 3),
           ("B − C gap ↑", "b_minus_c", 4))


@cache
def _synonyms(word: str) -> frozenset[str]:
    """The lemmas of every adjective synset of ``word``, lower-cased."""
    from nltk.corpus import wordnet

    return frozenset(lemma.name().lower() for synset in wordnet.synsets(word, pos="a") for lemma in synset.lemmas())


def unrelated(a: str, b: str, c: str) -> bool:
    """Whether C may stand in for B as "another adjective" for the pair (A, B) (module docstring)."""
    antonyms = direct_adjective_antonyms()
    return (c not in {a, b} and safe_antonym(a) != c and all(c not in antonyms.get(w, ()) for w in (a, b))
            and all(c not in _synonyms(w) for w in (a, b)))


def replaced_word(sentence: str, old: str, new: str) -> str | None:
    """``sentence`` with its one word ``old`` (lower-cased, as :func:`~st_debias.data.text.words` reads it) replaced
    by ``new``; None when ``old`` is not exactly one of its words."""
    matches = [m for m in re.finditer(r"[\w'’]+", sentence) if m.group().lower() == old]
    if len(matches) != 1:
        return None
    match = matches[0]
    return sentence[:match.start()] + new + sentence[match.end():]


def unrelated_sentences(affirmative: list[str], antonym: list[str], pool: list[str], seed: int = 0) -> list[str | None]:
    """Per item, "X is C" (module docstring), C drawn from ``pool`` with a generator seeded by ``seed`` and the item's
    sentence, so an item gets the same C in every subset; None where no C fits."""
    words = sorted(set(pool))
    out: list[str | None] = []
    for first, second in zip(affirmative, antonym, strict=True):
        a, b = swapped_words(first, second)
        candidates = [c for c in words if unrelated(a, b, c)]
        if not candidates:
            out.append(None)
            continue
        c = random.Random(f"{seed}|{first}").choice(candidates)
        sentence = replaced_word(second, b, c)
        out.append(sentence if sentence is not None and swapped_words(second, sentence) == (b, c) else None)
    return out


def control_scores(cache: EmbeddingCache, items: Any, pool: list[str], seed: int = 0) -> dict[str, float]:
    """(i), (iv), (v) and the B − C gap on the items that have an "X is C" (module docstring)."""
    controls = unrelated_sentences(items.affirmative, items.antonym, pool, seed)
    keep = [i for i, sentence in enumerate(controls) if sentence is not None]
    negated = [items.negated[i] for i in keep]
    to_b = cache.cosine(negated, [items.antonym[i] for i in keep])
    to_a = cache.cosine(negated, [items.affirmative[i] for i in keep])
    to_c = cache.cosine(negated, [controls[i] for i in keep])
    return {"items": len(keep), "b_over_a": float((to_b > to_a).mean()), "b_over_c": float((to_b > to_c).mean()),
            "c_over_a": float((to_c > to_a).mean()), "b_minus_c": float((to_b - to_c).mean())}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("models", nargs="+", help=MODEL_HELP)
    parser.add_argument("--seed", type=int, default=0, help="the draw of C (default 0)")
    parser.add_argument("--out", type=Path, required=True, help="the Markdown table (its JSON goes beside it)")
    args = parser.parse_args(argv)
    models = labelled_models(parser, args.models)
    if not args.out.parent.is_dir():
        parser.error(f"--out {args.out}: no folder {args.out.parent}")

    from st_debias.paths import load_model, portable_path

    subsets = probe_subsets()
    curated = subsets["curated, all"]
    pool = [swapped_words(a, b)[1] for a, b in zip(curated.affirmative, curated.antonym, strict=True)]
    scores: dict[str, dict[str, dict[str, float]]] = {}
    for label, path in models.items():
        embeddings = EmbeddingCache(load_model(path))
        scores[label] = {name: control_scores(embeddings, subsets[name], pool, args.seed) for name in SUBSETS}
    lines = ["The negation-meaning dev probe against another adjective in the antonym's place (items; (i), (iv), (v) "
             "and the B − C gap per model; `probe_control.py`).", "",
             "| subset | items | " + " | ".join(f"{label} {fig}" for label in models for fig, _, _ in FIGURES) + " |",
             "|---|---:|" + "---:|" * (len(models) * len(FIGURES))]
    for name in SUBSETS:
        first = next(iter(scores.values()))[name]
        cells = [f"{scores[label][name][key]:.{digits}f}" for label in models for _, key, digits in FIGURES]
        lines.append(f"| {name} | {first['items']} | " + " | ".join(cells) + " |")
    portable = {label: portable_path(path) if Path(path).exists() else path for label, path in models.items()}
    write_table(args.out, lines, {"models": portable, "seed": args.seed, "scores": scores})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
