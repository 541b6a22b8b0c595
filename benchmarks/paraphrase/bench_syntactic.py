"""Benchmark the offline syntactic paraphraser: coverage, meaning, grammar, speed, samples.

Reads the first ``--n`` sentences of ``$ST_DEBIAS_DATA/corpus/wiki_sentences.txt`` (the file is in random
order, so the head is a uniform sample) and writes, under ``--out``:

* ``syntactic_results.json``: every figure, with the command, date and machine load.
* ``syntactic_samples.jsonl``: ``--samples`` random outputs per transform (with the input) for reading.

Run from the repository root, see ``benchmarks/paraphrase/README.md`` for the exact command.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib
import json
import os
import random
import time
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

from benchmarks.harness.provenance import command_line, uptime, write_stamped_json
from st_debias.data.paraphrase.syntactic import RULES, SyntacticParaphraser
from st_debias.data.text import match_error_rate
from st_debias.paths import data_file, load_model


def load_sentences(n: int, skip: int = 0) -> list[str]:
    path = data_file("corpus/wiki_sentences.txt")
    out = []
    with open(path, encoding="utf-8") as f:
        for i, line in enumerate(f):
            if i < skip:
                continue
            if len(out) >= n:
                break
            out.append(line.strip())
    return out


def grammar_ok(doc) -> bool:
    """One sentence with a verbal ROOT and no dangling auxiliary.

    Dangling: an ``aux``/``auxpass`` whose head is not a verb to its right, or an auxiliary that is the
    last word before final punctuation.
    """
    sents = list(doc.sents)
    if len(sents) != 1 or sents[0].root.pos_ not in ("VERB", "AUX"):
        return False
    words = [t for t in doc if not t.is_punct]
    if words and words[-1].dep_ in ("aux", "auxpass"):
        return False
    for t in doc:
        if t.dep_ in ("aux", "auxpass") and (t.head.pos_ not in ("VERB", "AUX") or t.head.i < t.i):
            return False
    return True


def find_negator(nlp):
    """The negation builder's sentences -> negations function (``st_debias.data.negation.negator.Negator``), if present."""
    try:
        module = importlib.import_module("st_debias.data.negation.negator")
    except ImportError:
        return None, "st_debias.data.negation.negator not found"
    negator_cls = getattr(module, "Negator", None)
    if negator_cls is None:
        return None, "st_debias.data.negation.negator has no Negator"
    negator = negator_cls(nlp=nlp)
    return negator.negate, "st_debias.data.negation.negator.Negator(nlp=<same pipeline>).negate"


def embed(model, texts: list[str], batch_size: int = 128) -> np.ndarray:
    return model.encode(texts, batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000, help="sentences from the head of the corpus")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--samples", type=int, default=100, help="samples per transform in the samples file")
    parser.add_argument(
        "--cosine-n", type=int, default=2_000, help="inputs whose candidates get guide cosines"
    )
    parser.add_argument(
        "--grammar-n", type=int, default=200, help="outputs per transform re-parsed for grammar"
    )
    parser.add_argument("--out", type=Path, default=Path("benchmarks/paraphrase/results"))
    parser.add_argument("--skip-cosine", action="store_true")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(args.seed)

    sentences = load_sentences(args.n)
    warmup = load_sentences(200, skip=args.n)
    gen = SyntacticParaphraser()
    t0 = time.perf_counter()
    gen.generate(warmup, seed=args.seed)  # loads spaCy, WordNet and lemminflect tables
    startup_s = time.perf_counter() - t0

    uptime_before = uptime()
    t0 = time.perf_counter()
    results = gen.generate(sentences, seed=args.seed)
    gen_s = time.perf_counter() - t0
    uptime_after = uptime()
    report = gen.report.as_dict()

    parse_n = min(2_000, len(sentences))
    t0 = time.perf_counter()
    for _ in gen.nlp.pipe(sentences[:parse_n], batch_size=gen.batch_size):
        pass
    parse_s = time.perf_counter() - t0

    # coverage and per-transform counts
    per_transform: dict[str, list[tuple[str, str, tuple[str, ...]]]] = defaultdict(list)
    n_transforms = Counter()
    for sentence, candidates in zip(sentences, results):
        for c in candidates:
            n_transforms[len(c.transforms)] += 1
            for name in dict.fromkeys(c.transforms):
                per_transform[name].append((sentence, c.text, c.transforms))
    inputs_with = Counter()
    for candidates in results:
        for name in {t for c in candidates for t in c.transforms}:
            inputs_with[name] += 1

    # samples for reading
    with open(args.out / "syntactic_samples.jsonl", "w", encoding="utf-8") as f:
        for name in RULES:
            pool = per_transform.get(name, [])
            for sentence, text, transforms in rng.sample(pool, min(args.samples, len(pool))):
                row = {
                    "transform": name,
                    "input": sentence,
                    "output": text,
                    "transforms": list(transforms),
                    "mer": round(match_error_rate(sentence, text), 3),
                }
                f.write(json.dumps(row, ensure_ascii=False) + "\n")

    print(f"[{time.strftime('%H:%M:%S')}] generated {len(sentences)} in {gen_s:.1f}s; grammar", flush=True)
    # grammar: re-parse a sample of outputs per transform, and their inputs as the baseline
    grammar = {}
    for name in RULES:
        pool = per_transform.get(name, [])
        picked = rng.sample(pool, min(args.grammar_n, len(pool)))
        if not picked:
            continue
        out_ok = [grammar_ok(d) for d in gen.nlp.pipe([t for _, t, _ in picked])]
        in_ok = [grammar_ok(d) for d in gen.nlp.pipe([s for s, _, _ in picked])]
        grammar[name] = {
            "n": len(picked),
            "outputs_pass": round(float(np.mean(out_ok)), 3),
            "inputs_pass": round(float(np.mean(in_ok)), 3),
        }

    # meaning: guide cosines
    meaning: dict[str, object] = {}
    if not args.skip_cosine:
        print(f"[{time.strftime('%H:%M:%S')}] guide cosines", flush=True)
        model = load_model()
        sub = [(s, cs) for s, cs in zip(sentences, results) if cs][: args.cosine_n]
        pool = [s for s, _ in sub]
        negate, source = find_negator(gen.nlp)
        negs: list[str | None] = []
        if negate is not None:
            try:
                negs = [getattr(r, "text", r) for r in negate(pool)]
            except (Exception, SystemExit) as exc:  # another engineer's API may change; record, don't crash
                negate, source = None, f"{source} failed: {exc!r}"
        texts = list(dict.fromkeys([*pool, *(c.text for _, cs in sub for c in cs), *(n for n in negs if n)]))
        emb = dict(zip(texts, embed(model, texts)))

        def cos(a: str, b: str) -> float:
            return float(emb[a] @ emb[b])

        all_cos = [(cos(s, c.text), c.transforms) for s, cs in sub for c in cs]
        first = [cos(s, cs[0].text) for s, cs in sub]
        meaning["paraphrase_all_candidates"] = {
            "n": len(all_cos),
            "mean": round(float(np.mean([v for v, _ in all_cos])), 4),
        }
        meaning["paraphrase_first_candidate"] = {"n": len(first), "mean": round(float(np.mean(first)), 4)}
        by_name = {}
        for name in RULES:
            vals = [v for v, ts in all_cos if name in ts]
            if vals:
                by_name[name] = {"n": len(vals), "mean": round(float(np.mean(vals)), 4)}
        meaning["paraphrase_by_transform"] = by_name
        chance = [cos(a, b) for a, b in zip(pool, pool[1:] + pool[:1])]
        meaning["chance_pairs"] = {"n": len(chance), "mean": round(float(np.mean(chance)), 4)}
        if negate is None:
            meaning["negation"] = {"status": "pending", "why": source}
        else:
            pairs = [(s, n) for s, n in zip(pool, negs) if n]
            neg = [cos(s, n) for s, n in pairs]
            para_same = [cos(s, cs[0].text) for (s, cs), n in zip(sub, negs) if n]
            meaning["negation"] = {
                "n": len(neg),
                "mean": round(float(np.mean(neg)), 4),
                "first_paraphrase_mean_same_inputs": round(float(np.mean(para_same)), 4),
                "share_paraphrase_above_negation": round(
                    float(np.mean([p > q for p, q in zip(para_same, neg)])), 4
                ),
                "source": source,
            }

    n = len(sentences)
    result = {
        "command": command_line(__file__, argv),
        "date_utc": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "settings": {
            "n": n,
            "seed": args.seed,
            "mer_window": gen.mer_window,
            "max_candidates": gen.max_candidates,
            "spacy_model": gen.spacy_model,
            "transforms": list(gen.transforms),
        },
        "coverage": round(report["with_candidates"] / n, 4),
        "candidates_per_input": round(report["candidates"] / n, 3),
        "inputs_with_transform": {k: round(inputs_with[k] / n, 4) for k in RULES},
        "candidates_with_transform": {k: len(per_transform.get(k, [])) for k in RULES},
        "transforms_per_candidate": dict(sorted(n_transforms.items())),
        "declined_per_input": {k: v for k, v in report["declined"].items() if ":" not in k},
        "declined_by_rule_top": dict(
            Counter({k: v for k, v in report["declined"].items() if ":" in k}).most_common(40)
        ),
        "meaning_guide_cosine": meaning,
        "grammar": grammar,
        "speed": {
            "sentences_per_s": round(n / gen_s, 1),
            "parse_only_sentences_per_s": round(parse_n / parse_s, 1),
            "seconds": round(gen_s, 1),
            "startup_s": round(startup_s, 1),
            "n_process": gen.n_process,
            "uptime_before": uptime_before,
            "uptime_after": uptime_after,
            "cpus": os.cpu_count(),
        },
    }
    write_stamped_json(args.out / "syntactic_results.json", result)
    print(json.dumps({k: result[k] for k in ("coverage", "candidates_per_input", "speed")}, indent=2))
    print(json.dumps(result["meaning_guide_cosine"], indent=2))
    print(json.dumps(result["grammar"], indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
