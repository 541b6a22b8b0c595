"""Negation quality (CANNOT human pairs), coverage (Wikipedia) and speed of the rule negator.

Quality: for each human pair (sentence, negated) of ``probes/cannot/{glue_diagnostic,nan_nli}.tsv``, the
builder's output for ``sentence`` is compared with the human ``negated``: exact match (whitespace-
normalised) and bag-of-words token F1 (words of ``st_debias.data.text.words``). Both are reported over
all pairs (a skipped sentence scores 0) and over the negated ones.
Coverage: share of the first ``--coverage`` Wikipedia sentences that get a negation, with the rule counts.
Speed: sentences per second of ``Negator.negate`` over those sentences (parse + rules), after a warm-up.
"""

from __future__ import annotations

import argparse
import csv
import json
from collections import Counter

from benchmarks.harness.provenance import LoadWatch, wait_for_idle, write_stamped_json
from st_debias.data.io.corpus import read_sentences
from st_debias.data.negation.negator import Negator
from st_debias.data.text import words
from st_debias.paths import data_file


def token_f1(a: str, b: str) -> float:
    x, y = Counter(words(a)), Counter(words(b))
    common = sum((x & y).values())
    return 0.0 if common == 0 else 2 * common / (sum(x.values()) + sum(y.values()))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--model", default=None, help="spaCy model (default $ST_DEBIAS_SPACY_MODEL / en_core_web_sm)"
    )
    parser.add_argument("--coverage", type=int, default=10000)
    parser.add_argument("--n-process", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--out", default="benchmarks/builders/results/negation_quiet.json")
    parser.add_argument(
        "--allow-load", action="store_true", help="write the result even if the machine was loaded"
    )
    args = parser.parse_args(argv)
    negator = Negator(args.model, batch_size=args.batch_size, n_process=args.n_process)
    result: dict[str, object] = {
        "args": vars(args),
        "spacy_model": negator.model,
        "pipes": negator.nlp.pipe_names,
    }
    quality = {}
    for name in ("glue_diagnostic", "nan_nli"):
        with open(data_file(f"probes/cannot/{name}.tsv"), encoding="utf-8") as handle:
            pairs = [
                (r["sentence"], r["negated"])
                for r in csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
            ]
        outs = negator.negate([s for s, _ in pairs])
        exact = [
            int(o.ok and " ".join(o.text.split()) == " ".join(h.split())) for (_, h), o in zip(pairs, outs)
        ]
        f1 = [token_f1(o.text, h) if o.ok else 0.0 for (_, h), o in zip(pairs, outs)]
        done = [i for i, o in enumerate(outs) if o.ok]
        quality[name] = {
            "pairs": len(pairs),
            "negated": len(done),
            "exact_match_all": sum(exact) / len(pairs),
            "exact_match_negated": sum(exact[i] for i in done) / max(1, len(done)),
            "token_f1_all": sum(f1) / len(pairs),
            "token_f1_negated": sum(f1[i] for i in done) / max(1, len(done)),
            "rules": dict(Counter(o.rule for o in outs)),
            "examples": [
                {"sentence": s, "human": h, "ours": o.text, "rule": o.rule}
                for (s, h), o in list(zip(pairs, outs))[:6]
            ],
        }
    result["quality"] = quality
    sentences = read_sentences(limit=args.coverage)
    negator.negate(sentences[:200])  # warm-up
    wait_for_idle()
    with LoadWatch() as watch:
        outs = negator.negate(sentences)
    seconds = watch.wall_s
    result["coverage"] = {
        "sentences": len(sentences),
        "negated": sum(o.ok for o in outs),
        "share": sum(o.ok for o in outs) / len(sentences),
        "denegated": sum(o.denegated for o in outs),
        "rules": dict(Counter(o.rule for o in outs).most_common()),
    }
    result["speed"] = {"seconds": seconds, "sentences_per_second": len(sentences) / seconds}
    result["machine"] = watch.record()
    watch.refuse_if_loaded(allow=args.allow_load)
    write_stamped_json(args.out, result)
    print(json.dumps({k: v for k, v in result.items() if k != "quality"}, indent=2))
    print(
        json.dumps(
            {k: {m: v for m, v in q.items() if m not in ("examples", "rules")} for k, q in quality.items()},
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
