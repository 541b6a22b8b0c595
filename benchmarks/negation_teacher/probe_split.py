"""The development negation-meaning probe split by what the training rows could have taught.

Items (Wikipedia lines 150,001–180,000, which no recipe of up to 1,000 steps trains on):

* ``curated``: the library's dev probe (curated pairs), by the half of ``held_out_pairs.py``'s split its pair
  falls in (``seen half`` / ``held-out half``) and by kind (``other word``: "large"/"small"; ``prefixed``:
  "able"/"unable");
* ``wordnet new``: items built the same way from WordNet's one-to-one adjective antonyms that are not curated
  pairs (``wordnet_pairs.py``), by half: the held-out half are pairs no training row of any variant here uses.

Per subset: (i) "not A" nearer "B" than "A", (ii) nearer "B" than "not B", (iii) the polarity cluster (the
library's ``negation_meaning_probe``). Models are ``label=folder`` (or a hub name):

    python benchmarks/negation_teacher/probe_split.py start=sentence-transformers/all-MiniLM-L6-v2 \
        v6=outputs/negation_teacher/dev-100/v6-halfpairs-seed42/model --out benchmarks/negation_teacher/results/probe_split.md
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path
from typing import Any

from benchmarks.harness.provenance import write_table
from benchmarks.harness.trained import MODEL_HELP, labelled_models
from benchmarks.negation_meaning.held_out_pairs import antonym_pair, in_training_half
from benchmarks.negation_teacher.wordnet_pairs import sorted_pair, wordnet_antonyms
from st_debias.datafiles import text_lines

FIGURES = (("(i) ↑", "paraphrase_over_affirmative"), ("(ii) ↑", "paraphrase_over_negated_antonym"),
           ("(iii) ↓", "polarity_cluster"))


def subset(items: Any, keep: list[bool]) -> Any:
    """The items where ``keep`` is true (every per-item column cut alike)."""
    index = [i for i, k in enumerate(keep) if k]
    columns = ("affirmative", "negated", "antonym", "negated_antonym", "lines")
    return dataclasses.replace(items, **{c: [getattr(items, c)[i] for i in index] for c in columns})


def probe_subsets() -> dict[str, Any]:
    """Name → items, for every subset of the module docstring."""
    from st_debias.data.lexicon import SAFE_ANTONYMS
    from st_debias.data.negation.meaning import cached_negation_meaning_quadruples
    from st_debias.evaluation import load_negation_meaning_items

    curated = load_negation_meaning_items()
    pairs = [antonym_pair(a, b) for a, b in zip(curated.affirmative, curated.antonym, strict=True)]
    seen = [in_training_half(p) for p in pairs]
    prefixed = curated.prefixed_antonyms()
    out = {"curated, all": curated}
    for half, in_half in (("seen half", True), ("held-out half", False)):
        out[f"curated, {half}"] = subset(curated, [s == in_half for s in seen])
        for kind, is_prefixed in (("other word", False), ("prefixed", True)):
            out[f"curated, {half}, {kind}"] = subset(
                curated, [s == in_half and p == is_prefixed for s, p in zip(seen, prefixed, strict=True)])
    out["curated, other word"] = subset(curated, [not p for p in prefixed])
    start, stop = curated.line_range
    sentences = [line.strip() for number, line in text_lines(curated.source) if start <= number <= stop]
    built = cached_negation_meaning_quadruples(sentences, None, wordnet_antonyms())
    curated_pairs = {sorted_pair(a, b) for a, b in SAFE_ANTONYMS.items()}
    wordnet = dataclasses.replace(
        curated, affirmative=built.affirmative, negated=built.negated, antonym=built.antonym,
        negated_antonym=built.negated_antonym, lines=[start + i for i in built.sources])
    new_pairs = [antonym_pair(a, b) for a, b in zip(wordnet.affirmative, wordnet.antonym, strict=True)]
    is_new = [p not in curated_pairs for p in new_pairs]
    wn_prefixed = wordnet.prefixed_antonyms()
    for half, in_half in (("seen half", True), ("held-out half", False)):
        out[f"wordnet new, {half}"] = subset(wordnet, [n and in_training_half(p) == in_half for n, p in zip(is_new, new_pairs, strict=True)])
        out[f"wordnet new, {half}, other word"] = subset(wordnet, [
            n and in_training_half(p) == in_half and not x for n, p, x in zip(is_new, new_pairs, wn_prefixed, strict=True)])
    return out


def score(model_name: str, subsets: dict[str, Any]) -> dict[str, dict[str, float]]:
    from st_debias.evaluation import EmbeddingCache, negation_meaning_probe
    from st_debias.paths import load_model

    cache = EmbeddingCache(load_model(model_name))
    out = {}
    for name, items in subsets.items():
        if len(items) < 2:
            continue
        probe = negation_meaning_probe(cache, items)
        out[name] = {"items": len(items), **{key: probe[key] for _, key in FIGURES}}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("models", nargs="+", help=MODEL_HELP)
    parser.add_argument("--out", type=Path, required=True, help="the Markdown table (its JSON goes beside it)")
    args = parser.parse_args(argv)
    models = labelled_models(parser, args.models)
    subsets = probe_subsets()
    scores = {label: score(path, subsets) for label, path in models.items()}
    names = [n for n in subsets if all(n in s for s in scores.values())]
    lines = ["Negation-meaning dev probe by subset (items; (i), (ii), (iii) per model).", "",
             "| subset | items | " + " | ".join(f"{label} {fig}" for label in models for fig, _ in FIGURES) + " |",
             "|---|---:|" + "---:|" * (len(models) * len(FIGURES))]
    for name in names:
        first = next(iter(scores.values()))[name]
        cells = [f"{scores[label][name][key]:.3f}" for label in models for _, key in FIGURES]
        lines.append(f"| {name} | {first['items']} | " + " | ".join(cells) + " |")
    from st_debias.paths import portable_path

    portable = {label: portable_path(path) if Path(path).exists() else path for label, path in models.items()}
    write_table(args.out, lines, {"models": portable, "scores": scores,
                                  "subset_items": {n: len(s) for n, s in subsets.items()}})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
