"""Development-only probes for recipe selection (never the reported test probes).

* ``minimal_pairs``: rows built by :class:`st_debias.data.MinimalPairBuilder` (every family, real positives
  only) from Wikipedia lines 180,001–181,500, which no recipe trains on; per family, the share of rows where
  the model puts the positive above the negative, and the mean gap cos(a, p) − cos(a, n).
* ``word_order``: mean cosine between a sentence and the same words in a seeded random order, on Wikipedia
  lines 190,001–191,000 (the reported probe uses other lines).
* ``negation_meaning``: the library's negation-meaning probe (Wikipedia lines 150,001–180,000, which no
  recipe of up to 1,000 steps trains on): (i) ``nm_over_affirmative``, (ii) ``nm_over_negated_antonym``
  and (iii) ``nm_polarity_cluster``; (i) and (ii) again on each antonym kind (``nm_over_affirmative_prefixed``,
  ``..._other_word``, the same for (ii); the probe's ``by_antonym_kind``); and (i), (ii) and (iii) without the
  negated sentences' common direction (``i_wo_dir``, ``ii_wo_dir``, ``iii_wo_dir``) with that direction's length
  (``negation_direction_norm``; the probe's ``without_negation_direction``).

The rows are built once and cached as JSON under ``benchmarks/selection/results/`` (committed, so every
variant is scored on the same pairs). ``select_dev.py`` imports this module; run it alone to (re)build the rows:

    python benchmarks/selection/dev_probes.py --rebuild
"""

from __future__ import annotations

import argparse
import functools
import itertools
import json
import random
from pathlib import Path

import numpy as np

from benchmarks.harness.provenance import write_stamped_json

HERE = Path(__file__).resolve().parent
MINIMAL_PAIR_LINES = (180_000, 181_500)
WORD_ORDER_LINES = (190_000, 191_000)
ROWS_FILE = HERE / "results" / "dev_minimal_pairs.json"


def _corpus_lines(start: int, stop: int) -> list[str]:
    from st_debias.paths import data_dir

    with open(data_dir() / "corpus" / "wiki_sentences.txt", encoding="utf-8") as handle:
        return [line.strip() for line in itertools.islice(handle, start, stop)]


def dev_minimal_pairs() -> dict[str, list]:
    if ROWS_FILE.exists():
        return json.loads(ROWS_FILE.read_text())
    from st_debias.data import MinimalPairBuilder

    builder = MinimalPairBuilder(
        shares={f: 1.0 for f in ("negation", "antonym", "argument_swap", "phrase_swap", "number", "cohyponym")},
        on_missing_positive="skip",
        strict_cohyponyms=False,  # the rows of the committed file
        seed=7,
    )
    rows = builder.build(_corpus_lines(*MINIMAL_PAIR_LINES))
    data = {**rows.to_dict(), "family": builder.families, "report": builder.report.as_dict()}
    write_stamped_json(ROWS_FILE, json.loads(json.dumps(data, default=str)), indent=1)
    return data


def shuffled(sentence: str, seed: int) -> str | None:
    words = sentence.split()
    if len(words) < 4:
        return None
    rng = random.Random(seed)
    for _ in range(10):
        order = words[:]
        rng.shuffle(order)
        if order != words:
            return " ".join(order)
    return None


def minimal_pair_scores(cache) -> dict[str, float]:
    """Per family, the share of dev minimal pairs with the positive above the negative, and the negative cosine."""
    data = dev_minimal_pairs()
    pos = cache.cosine(data["anchor"], data["positive"])
    neg = cache.cosine(data["anchor"], data["negative"])
    families = np.array(data["family"])
    out: dict[str, float] = {
        "mp_accuracy": float(np.mean(pos > neg)),
        "mp_gap": float(np.mean(pos - neg)),
        "mp_rows": int(len(families)),
    }
    for family in sorted(set(data["family"])):
        mask = families == family
        out[f"mp_accuracy/{family}"] = float(np.mean(pos[mask] > neg[mask]))
        out[f"mp_neg_cos/{family}"] = float(np.mean(neg[mask]))
    return out


@functools.cache
def word_order_pairs() -> tuple[list[str], list[str]]:
    """The dev sentences of at least four words and their seeded shuffles (read once per process)."""
    sentences, shuffles = [], []
    for k, sentence in enumerate(_corpus_lines(*WORD_ORDER_LINES)):
        other = shuffled(sentence, k)
        if other is not None:
            sentences.append(sentence)
            shuffles.append(other)
    return sentences, shuffles


def word_order_scores(cache) -> dict[str, float]:
    """Mean cosine between a dev sentence and its words shuffled, and the share above 0.9."""
    word_order = cache.cosine(*word_order_pairs())
    return {"word_order_cos": float(np.mean(word_order)), "word_order_above_0.9": float(np.mean(word_order > 0.9))}


def negation_meaning_scores(cache) -> dict[str, float]:
    """The library's negation-meaning probe: (i), (ii), (iii), (i) and (ii) on each antonym kind, and the three
    without the negated sentences' common direction."""
    from st_debias.evaluation import load_negation_meaning_items, negation_meaning_probe

    meaning = negation_meaning_probe(cache, load_negation_meaning_items())
    out = {
        "nm_over_affirmative": meaning["paraphrase_over_affirmative"],
        "nm_over_negated_antonym": meaning["paraphrase_over_negated_antonym"],
        "nm_polarity_cluster": meaning["polarity_cluster"],
    }
    for kind, figures in meaning["by_antonym_kind"].items():  # prefixed ("able"/"unable") and other-word antonyms
        out[f"nm_over_affirmative_{kind}"] = figures["paraphrase_over_affirmative"]
        out[f"nm_over_negated_antonym_{kind}"] = figures["paraphrase_over_negated_antonym"]
    removed = meaning["without_negation_direction"]
    out.update({
        "i_wo_dir": removed["paraphrase_over_affirmative"],
        "ii_wo_dir": removed["paraphrase_over_negated_antonym"],
        "iii_wo_dir": removed["polarity_cluster"],
        "negation_direction_norm": removed["direction_length"],
    })
    return out


def dev_probe_scores(cache) -> dict[str, float]:
    """Scores for one model through an :class:`st_debias.evaluation.EmbeddingCache`."""
    return {**minimal_pair_scores(cache), **word_order_scores(cache), **negation_meaning_scores(cache)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rebuild", action="store_true", help="build the dev minimal pairs again")
    args = parser.parse_args(argv)
    if args.rebuild and ROWS_FILE.exists():
        ROWS_FILE.unlink()
    data = dev_minimal_pairs()
    print(f"{len(data['anchor'])} dev minimal pairs in {ROWS_FILE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
