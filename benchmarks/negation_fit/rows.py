"""The negation-meaning rows that ``st-debias`` version 6 trains on, split by antonym kind, before any training.

    python benchmarks/negation_fit/rows.py --steps 100 --seed 42 --out benchmarks/negation_fit/results/rows.json

Builds the rows as ``train_recipe`` does (same corpus lines, builder, mix and seed; the row cache is shared) and
reports: how many rows are negation-meaning rows, whose antonym is the adjective with a negative prefix
("able"/"unable") or another word ("large"/"small"); how many of each a batch of 64 holds under the trainer's
no-duplicates sampler; how the antonym pairs tokenise under the start model's WordPiece vocabulary; and, under the
start model, the cosines of the quadruples' sentences and of the words alone, with each row's margin gap
s(anchor, positive) − s(anchor, negative) against the hinge window [α, β] (inside it a row gives no gradient).
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.harness.provenance import command_line, write_stamped_json

#: Row groups, in the order the tables show them: negation-meaning rows by antonym kind, then the minimal pairs.
GROUPS = ("other_word", "prefixed", "minimal_pair")
RECIPE = "st-debias"


def recipe_at(steps: int, seed: int) -> Any:
    """The packaged recipe (version 6) at ``steps`` steps and ``seed``, as ``select_dev.py`` overrides it."""
    from st_debias.recipes import load_recipe
    from st_debias.recipes.config import override

    return override(
        load_recipe(RECIPE), steps=steps, batch_size=64, max_seq_length=32, eval_steps=min(25, steps), seed=seed
    )


def corpus_lines(recipe: Any) -> int:
    """How many corpus lines ``train_recipe`` reads for ``recipe`` (the rows and the mixed-in quadruples come from them)."""
    from st_debias.data.kinds import DATA_KINDS

    training = recipe.training
    return training.sentences or DATA_KINDS[recipe.data.kind].oversample * training.steps * training.batch_size


def quadruple_kinds(sentences: list[str]) -> dict[tuple[str, str, str], tuple[str, tuple[str, str]]]:
    """Each negation-meaning row of ``sentences`` (anchor, positive, negative) → (antonym kind, (A, B) words)."""
    from st_debias.data.lexicon import is_prefixed_antonym
    from st_debias.data.text import swapped_words
    from st_debias.recipes.mix_sources import meaning_rows, negation_meaning_quadruples

    quadruples, _ = negation_meaning_quadruples(sentences, None)
    kinds = {}
    for quadruple in quadruples:
        pair = swapped_words(quadruple[0], quadruple[2])
        kind = "prefixed" if is_prefixed_antonym(*pair) else "other_word"
        for row in meaning_rows([quadruple]):
            kinds[row] = (kind, pair)
    return kinds


def training_rows(recipe: Any, model: Any) -> tuple[Any, dict[str, Any], list[str]]:
    """The rows ``train_recipe`` trains ``recipe`` on (built at the training length, mixed from the corpus lines the
    recipe's extensions ask for, cached), its report and corpus."""
    from st_debias.recipes.data import build_rows, read_corpus
    from st_debias.recipes.extensions import recipe_extensions

    sentences = read_corpus(None, corpus_lines(recipe))
    mix_count = next((n for e in recipe_extensions(recipe) if (n := e.mix_corpus_sentences()) is not None), None)
    mix_sentences = read_corpus(None, mix_count) if mix_count else None
    own = model.max_seq_length
    model.max_seq_length = recipe.training.max_seq_length
    try:
        rows, report = build_rows(recipe, sentences, model, show_progress_bar=False, mix_sentences=mix_sentences)
    finally:
        model.max_seq_length = own
    return rows, report, sentences


def row_groups(rows: Any, sentences: list[str]) -> list[str]:
    """The group (:data:`GROUPS`) of each row."""
    kinds = quadruple_kinds(sentences)
    columns = rows.column_names[:3]
    return [
        kinds.get(row, ("minimal_pair",))[0]
        for row in zip(*(rows[c] for c in columns), strict=True)
    ]


def training_batches(rows: Any, batch_size: int, seed: int, steps: int | None = None) -> list[list[int]]:
    """The row indices of each of the first ``steps`` batches (default: one epoch) under the trainer's no-duplicates
    sampler, seeded as ``SentenceTransformerTrainer`` seeds it for st_debias's training arguments (last partial batch
    dropped), one epoch after another."""
    import torch
    from sentence_transformers.base.sampler import NoDuplicatesBatchSampler

    generator = torch.Generator()
    generator.manual_seed(seed)
    sampler = NoDuplicatesBatchSampler(rows, batch_size=batch_size, drop_last=True, generator=generator, seed=seed)
    if len(sampler) == 0:
        raise ValueError(f"{len(rows)} rows fill no batch of {batch_size}.")
    steps = len(sampler) if steps is None else steps
    batches: list[list[int]] = []
    epoch = 0
    while len(batches) < steps:
        sampler.set_epoch(epoch)
        batches.extend(list(sampler)[:steps - len(batches)])
        epoch += 1
    return batches


def batch_counts(rows: Any, groups: list[str], steps: int, seed: int) -> list[dict[str, int]]:
    """Rows of each group in each of the first ``steps`` batches of 64 (:func:`training_batches`)."""
    return [dict(Counter(groups[i] for i in batch)) for batch in training_batches(rows, 64, seed, steps)]


def tokenisation(pairs: dict[tuple[str, str], str], tokenizer: Any) -> list[dict[str, Any]]:
    """How each antonym pair (A, B) tokenises: the WordPiece tokens of A and B and of "not", and, for prefixed
    pairs, whether the longer word's tokens contain the shorter word's token (the stem shared as a token)."""
    entries = []
    for (a, b), kind in sorted(pairs.items(), key=lambda item: (item[1], item[0])):
        tokens_a, tokens_b = tokenizer.tokenize(a), tokenizer.tokenize(b)
        short, long_ = sorted((tokens_a, tokens_b), key=lambda t: len("".join(t)))
        entries.append({
            "kind": kind, "a": a, "b": b, "tokens_a": tokens_a, "tokens_b": tokens_b,
            "single_tokens": len(tokens_a) == 1 and len(tokens_b) == 1,
            "stem_token_shared": all(t in long_ for t in short) if kind == "prefixed" else None,
        })
    return entries


def word_cosines(pairs: dict[tuple[str, str], str], model: Any) -> list[dict[str, Any]]:
    """Per pair: the cosine of A's and B's input token embeddings (mean over their WordPieces), and the start
    model's sentence cosines of the words alone: cos(A, B), cos(not A, B), cos(not A, A)."""
    import torch

    from st_debias.evaluation import EmbeddingCache

    table = model[0].auto_model.get_input_embeddings().weight.detach()
    tokenizer = model.tokenizer

    def token_vector(word: str) -> torch.Tensor:
        return table[tokenizer.convert_tokens_to_ids(tokenizer.tokenize(word))].mean(0)

    cache = EmbeddingCache(model)
    items = sorted(pairs.items(), key=lambda item: (item[1], item[0]))
    a_words, b_words = [a for (a, _), _ in items], [b for (_, b), _ in items]
    not_a = [f"not {a}" for a in a_words]
    cos_ab, cos_not_a_b = cache.cosine(a_words, b_words), cache.cosine(not_a, b_words)
    cos_not_a_a = cache.cosine(not_a, a_words)
    return [
        {
            "kind": kind, "a": a, "b": b,
            "token_cos": float(torch.cosine_similarity(token_vector(a), token_vector(b), dim=0)),
            "word_cos_a_b": float(cos_ab[k]), "word_cos_not_a_b": float(cos_not_a_b[k]),
            "word_cos_not_a_a": float(cos_not_a_a[k]),
        }
        for k, ((a, b), kind) in enumerate(items)
    ]


def row_gaps(rows: Any, groups: list[str], model: Any, alpha: float, beta: float) -> dict[str, dict[str, float]]:
    """Per group, under the start model (eval mode, training length): the mean margin gap s(a, p) − s(a, n) and the
    shares of rows below α (lower hinge active), inside [α, β] (no gradient) and above β (upper hinge active)."""
    from st_debias.evaluation import EmbeddingCache

    columns = rows.column_names[:3]
    anchors, positives, negatives = (rows[c] for c in columns)
    cache = EmbeddingCache(model)
    gap = cache.cosine(anchors, positives) - cache.cosine(anchors, negatives)
    kinds = np.asarray(groups)
    out = {}
    for group in GROUPS:
        g = gap[kinds == group]
        out[group] = {
            "rows": int(g.size), "mean_gap": float(g.mean()), "below_alpha": float((g < alpha).mean()),
            "in_window": float(((g >= alpha) & (g <= beta)).mean()), "above_beta": float((g > beta).mean()),
        }
    return out


def quadruple_cosines(sentences: list[str], model: Any) -> dict[str, dict[str, float]]:
    """Per antonym kind, under the start model: the mean cosines within the distinct quadruples the rows come from,
    and the share of quadruples where cos(X is A, X is B) > cos(X is A, X is not A) (the antonym sentence nearer
    than the negation)."""
    from st_debias.evaluation import EmbeddingCache
    from st_debias.recipes.mix_sources import negation_meaning_quadruples

    quadruples, _ = negation_meaning_quadruples(sentences, None)
    kinds = quadruple_kinds(sentences)
    cache = EmbeddingCache(model)
    out = {}
    for kind in GROUPS[:2]:
        chosen = [q for q in quadruples if kinds[(q[1], q[2], q[3])][0] == kind]
        if not chosen:
            continue
        a, not_a, b, not_b = (list(column) for column in zip(*chosen, strict=True))
        cos = {
            "a_b": cache.cosine(a, b), "a_not_a": cache.cosine(a, not_a), "not_a_b": cache.cosine(not_a, b),
            "not_a_not_b": cache.cosine(not_a, not_b),
        }
        out[kind] = {
            "quadruples": len(chosen), **{f"cos_{name}": float(v.mean()) for name, v in cos.items()},
            "antonym_nearer_than_negation": float((cos["a_b"] > cos["a_not_a"]).mean()),
            "ii": float((cos["not_a_b"] > cos["not_a_not_b"]).mean()),
        }
    return out


def summarise_batches(counts: list[dict[str, int]]) -> dict[str, dict[str, float]]:
    out = {}
    for group in GROUPS:
        n = np.asarray([c.get(group, 0) for c in counts])
        out[group] = {
            "mean": float(n.mean()), "min": int(n.min()), "max": int(n.max()), "share": float(n.mean() / 64),
            "batches_without": int((n == 0).sum()),
        }
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=100, help="the run's steps (sets rows and corpus lines)")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/negation_fit/results/rows.json"))
    args = parser.parse_args(argv)

    from st_debias.paths import load_model

    recipe = recipe_at(args.steps, args.seed)
    model = load_model(None)
    rows, report, sentences = training_rows(recipe, model)
    groups = row_groups(rows, sentences)
    kinds = quadruple_kinds(sentences)
    used = Counter(
        row for row in zip(*(rows[c] for c in rows.column_names[:3]), strict=True) if row in kinds
    )
    pairs = {pair: kind for kind, pair in kinds.values()}
    pair_rows = Counter((kinds[row][1], kinds[row][0]) for row in used.elements())
    params = recipe.loss.params
    model.max_seq_length = recipe.training.max_seq_length  # rows and gaps at the training length
    result = {
        "command": command_line(__file__, argv),
        "recipe": {"name": recipe.name, "version": recipe.version, "steps": args.steps, "seed": args.seed},
        "corpus_lines": len(sentences),
        "rows": len(rows),
        "mix": report.get("mix", {}),
        "groups": {
            group: {
                "rows": groups.count(group),
                "distinct_rows": len({r for r in used if kinds[r][0] == group}) if group != "minimal_pair" else None,
                "pairs": len({p for p, k in pairs.items() if k == group}) if group != "minimal_pair" else None,
            }
            for group in GROUPS
        },
        "rows_per_pair": [
            {"kind": kind, "a": a, "b": b, "rows": n} for ((a, b), kind), n in pair_rows.most_common()
        ],
        "batches": summarise_batches(batch_counts(rows, groups, args.steps, args.seed)),
        "tokenisation": tokenisation(pairs, model.tokenizer),
        "word_cosines": word_cosines(pairs, model),
        "start_gaps": row_gaps(rows, groups, model, params["alpha"], params["beta"]),
        "start_quadruples": quadruple_cosines(sentences, model),
        "hinge": {"alpha": params["alpha"], "beta": params["beta"], "margin_weight": params["margin_weight"]},
    }
    write_stamped_json(args.out, result, indent=1)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
