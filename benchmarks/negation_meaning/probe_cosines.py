"""Where the negation-meaning probe's (i) moves: its mean cosines, for the start model and trained model folders.

(i) is the share of items where cos(not A, B) > cos(not A, A). A fall can come from "not A" moving away from its
paraphrase "B" or toward "A"; the mean of each cosine (and of cos(not A, not B), which (ii) compares) says which.

    python benchmarks/negation_meaning/probe_cosines.py \
        outputs/v6/cpu-dev-500/v6-swap10-gamma1e3-margin-last-seed42/model \
        outputs/v6/cpu-dev-500/v6-swap10-gamma1e3-negviews-last-seed42/model \
        outputs/v6/cpu-dev-500/v6-swap10-gamma1e3-negviews05-last-seed42/model \
        --out benchmarks/polarity_cluster/results/probe_cosines.md

The start model is scored first. Each folder is loaded as ``select_dev.py`` scores it (a trainer checkpoint at its
run's length). Writes the table (``--out``) and the same rows, stamped, next to it as JSON.

``--reference FOLDER`` scores another start model (a plain sentence-transformers folder, e.g. all-mpnet-base-v2 from
``../mpnet/fetch_mpnet.py``) after the start model. ``--compare I:J`` (rows numbered from 0, the start model, then
the references and the folders in order) adds a paired comparison of the two models on the same
items: for (i) and for (ii), how many items it gains and loses from I to J, the exact McNemar p-value of that
split and a 95 % paired bootstrap interval of the change, and the same interval for the change in the mean of
cos(not A, B) − cos(not A, A). ``--pair-halves`` adds
(i) and (ii) on the items whose antonym pair is in the training half of ``negation_meaning_half_pairs``
(``held_out_pairs.py``) and on the others, whose pairs such a run never trained on. ``--pair-kinds``
adds (i), (ii) and the mean gap on the items whose antonym is the word with a negative prefix ("able"/"unable")
and on those whose antonym is another word ("common"/"rare"; ``NegationMeaningItems.prefixed_antonyms``), and
splits the comparisons the same way.
``--items-from-lines N`` scores, in place of the probe's items, the quadruples of the negation-meaning rows built from
the first N corpus lines (the rows a run trained on): whether a run fits its own rows.
``--rows-from-lines N`` counts the probe's items whose antonym pair is also in the negation-meaning rows built from
the first N corpus lines (a run of B batches of 64 rows builds them from its first 128·B lines), and splits each
model's change from the start model by how many of those rows' quadruples use the item's pair.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from benchmarks.harness.provenance import write_table


def item_gaps(cache, items) -> tuple[np.ndarray, np.ndarray]:
    """Per item, cos(not A, B) − cos(not A, A) (> 0 counts for (i)) and cos(not A, B) − cos(not A, not B) (ii)."""
    to_paraphrase = cache.cosine(items.negated, items.antonym)
    return (
        to_paraphrase - cache.cosine(items.negated, items.affirmative),
        to_paraphrase - cache.cosine(items.negated, items.negated_antonym),
    )


def paired_change(before: np.ndarray, after: np.ndarray) -> dict:
    """How a figure moves from one model to another on the same items (``before``/``after``: each item's gap, > 0
    counting for the figure)."""
    from scipy.stats import binomtest, bootstrap

    won_before, won_after = before > 0, after > 0
    gained, lost = int((won_after & ~won_before).sum()), int((won_before & ~won_after).sum())

    def interval(values: np.ndarray) -> list[float]:
        ci = bootstrap((values,), np.mean, n_resamples=5000, method="percentile", random_state=0).confidence_interval
        return [float(ci.low), float(ci.high)]

    return {
        "share_change": float(won_after.mean() - won_before.mean()),
        "share_change_ci": interval(won_after.astype(float) - won_before),
        "gained": gained,
        "lost": lost,
        "mcnemar_p": float(binomtest(gained, gained + lost).pvalue) if gained + lost else 1.0,
        "gap_change": float((after - before).mean()),
        "gap_change_ci": interval(after - before),
    }


def probe_row(
    label: str, model, items, halves: np.ndarray | None = None, prefixed: np.ndarray | None = None
) -> dict:
    from st_debias.evaluation import EmbeddingCache, negation_meaning_probe

    cache = EmbeddingCache(model)
    probe = negation_meaning_probe(cache, items)
    cosines = probe["mean_cosine"]
    first, second = item_gaps(cache, items)
    by_half = {}
    if halves is not None:
        for name, mask in (("seen", halves), ("held_out", ~halves)):
            by_half[f"i_{name}"] = float((first[mask] > 0).mean())
            by_half[f"ii_{name}"] = float((second[mask] > 0).mean())
    if prefixed is not None:  # (i) and (ii) by kind from the library's probe; the mean gap from the same mask
        for name, mask in (("prefixed", prefixed), ("other_word", ~prefixed)):
            by_half[f"i_{name}"] = probe["by_antonym_kind"][name]["paraphrase_over_affirmative"]
            by_half[f"ii_{name}"] = probe["by_antonym_kind"][name]["paraphrase_over_negated_antonym"]
            by_half[f"gap_i_{name}"] = float(first[mask].mean())
    return {
        "model": label,
        "items": probe["items"],
        "i": probe["paraphrase_over_affirmative"],
        "ii": probe["paraphrase_over_negated_antonym"],
        "iii": probe["polarity_cluster"],
        "cos_not_a_b": cosines["negated_to_paraphrase"],
        "cos_not_a_a": cosines["negated_to_affirmative"],
        "cos_not_a_not_b": cosines["negated_to_negated_antonym"],
        "gap_i": float(first.mean()),
        **by_half,
        "_gaps": (first, second),
    }


def training_row_items(corpus_lines: int, cache_dir: Path | None = None):
    """The quadruples of the negation-meaning rows built from the first ``corpus_lines`` corpus lines, as probe
    items: the rows a run trained on, to ask whether it fits them (``cache_dir``: the cache folder, default the
    library's)."""
    from st_debias.data.io.corpus import read_sentences
    from st_debias.data.negation.meaning import cached_negation_meaning_quadruples
    from st_debias.evaluation.bias_data import NegationMeaningItems

    built = cached_negation_meaning_quadruples(read_sentences(limit=corpus_lines), cache_dir)
    return NegationMeaningItems(
        affirmative=built.affirmative, negated=built.negated, antonym=built.antonym,
        negated_antonym=built.negated_antonym, lines=[index + 1 for index in built.sources],
        source="the corpus (training rows)", line_range=(1, corpus_lines), declined=dict(built.declined),
    )


def items_with_training_pairs(corpus_lines: int) -> dict:
    """How many probe items share their antonym pair with the negation-meaning rows of the first ``corpus_lines``
    lines of the corpus."""
    from collections import Counter

    from benchmarks.negation_meaning.held_out_pairs import antonym_pair
    from st_debias.data.io.corpus import read_sentences
    from st_debias.evaluation import load_negation_meaning_items
    from st_debias.recipes.mix_sources import negation_meaning_quadruples

    # Read as training reads its corpus (recipes.data.read_corpus), so the quadruples are the rows' own.
    quadruples, _ = negation_meaning_quadruples(read_sentences(limit=corpus_lines), None)
    row_pairs = Counter(antonym_pair(a, b) for a, _, b, _ in quadruples)
    items = load_negation_meaning_items()
    probe_pairs = [antonym_pair(a, b) for a, b in zip(items.affirmative, items.antonym, strict=True)]
    return {
        "items": len(probe_pairs),
        "shared": sum(pair in row_pairs for pair in probe_pairs),
        "row_pairs": len(row_pairs),
        "quadruples": len(quadruples),
        "item_quadruples": [row_pairs[pair] for pair in probe_pairs],
    }


#: Item groups by how many quadruples of the rows use the item's antonym pair: (label, lowest, highest).
PAIR_FREQUENCY = (("0", 0, 0), ("1–9", 1, 9), ("10–29", 10, 29), ("30 or more", 30, np.inf))


def training_half_items() -> np.ndarray:
    """Which probe items have an antonym pair in the training half of ``negation_meaning_half_pairs``."""
    from benchmarks.negation_meaning.held_out_pairs import antonym_pair, in_training_half
    from st_debias.evaluation import load_negation_meaning_items

    items = load_negation_meaning_items()
    return np.array([in_training_half(antonym_pair(a, b)) for a, b in zip(items.affirmative, items.antonym, strict=True)])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folders", nargs="+", type=Path, help="trained model folders (a run's model/ or a checkpoint)")
    parser.add_argument("--out", type=Path, required=True, help="the Markdown table to write (.md)")
    parser.add_argument(
        "--reference", action="append", default=[], type=Path, metavar="FOLDER",
        help="a plain sentence-transformers folder (another start model) scored after the start model; repeatable",
    )
    parser.add_argument(
        "--compare", action="append", default=[], metavar="I:J",
        help="a paired comparison of rows I and J (0 = the start model, then the references and the folders in "
        "order); repeatable",
    )
    parser.add_argument("--pair-halves", action="store_true", help="(i) and (ii) on each half of the antonym pairs")
    parser.add_argument(
        "--pair-kinds", action="store_true",
        help="(i) and (ii) on the items whose antonym is the word with a prefix (able/unable) and on the others",
    )
    parser.add_argument(
        "--rows-from-lines", type=int, default=0, metavar="N",
        help="count the probe items whose antonym pair the negation-meaning rows of the first N corpus lines use",
    )
    parser.add_argument(
        "--items-from-lines", type=int, default=0, metavar="N",
        help="score the quadruples of the negation-meaning rows built from the first N corpus lines (the rows a run "
        "trained on) instead of the dev probe's items",
    )
    args = parser.parse_args(argv)
    if args.items_from_lines < 0:
        parser.error(f"--items-from-lines must be >= 0, got {args.items_from_lines}")
    if args.items_from_lines and (args.pair_halves or args.rows_from_lines):
        parser.error("--items-from-lines replaces the probe's items; --pair-halves and --rows-from-lines describe them")
    comparisons = []
    for text in args.compare:
        first, _, second = text.partition(":")
        if not (first.isdigit() and second.isdigit()) or max(int(first), int(second)) > len(args.reference) + len(args.folders):
            parser.error(f"--compare {text}: expected I:J with rows 0–{len(args.reference) + len(args.folders)}")
        comparisons.append((int(first), int(second)))
    if args.rows_from_lines < 0:
        parser.error(f"--rows-from-lines must be >= 0, got {args.rows_from_lines}")
    for folder in [*args.reference, *args.folders]:
        if not (folder / "config.json").is_file() and not (folder / "modules.json").is_file():
            parser.error(f"{folder}: not a model folder (no modules.json or config.json)")
    if args.out.suffix != ".md":
        parser.error(f"--out must name a .md file, got {args.out}")

    from benchmarks.harness.trained import load_trained
    from st_debias.paths import load_model

    print("[probe_cosines] scoring the start model", flush=True)
    halves = training_half_items() if args.pair_halves else None
    from st_debias.evaluation import load_negation_meaning_items

    items = training_row_items(args.items_from_lines) if args.items_from_lines else load_negation_meaning_items()
    prefixed = np.array(items.prefixed_antonyms()) if args.pair_kinds else None
    rows = [probe_row("start", load_model(None), items, halves, prefixed)]
    for folder in args.reference:
        print(f"[probe_cosines] scoring {folder.name}", flush=True)
        rows.append(probe_row(folder.name, load_model(folder), items, halves, prefixed))
    for folder in args.folders:
        label = f"{folder.parents[1].name}/{folder.parent.name}" if folder.name == "model" else f"{folder.parents[2].name}/{folder.parents[1].name}/{folder.name}"
        print(f"[probe_cosines] scoring {label}", flush=True)
        rows.append(probe_row(label, load_trained(folder)[0], items, halves, prefixed))
    gaps = [row.pop("_gaps") for row in rows]
    what = (
        f"The quadruples of the negation-meaning rows built from the first {args.items_from_lines:,} corpus lines"
        if args.items_from_lines
        else "Negation-meaning probe"
    )
    lines = [
        f"{what}, {rows[0]['items']} items: (i), (ii), (iii) and the mean cosine of \"not A\" to each candidate.",
        "",
        "| model | (i) ↑ | (ii) ↑ | (iii) ↓ | cos(not A, B) | cos(not A, A) | cos(not A, not B) |",
        "|---|---:|---:|---:|---:|---:|---:|",
        *(
            f"| {row['model']} | {row['i']:.3f} | {row['ii']:.3f} | {row['iii']:.4f} | {row['cos_not_a_b']:.4f} | "
            f"{row['cos_not_a_a']:.4f} | {row['cos_not_a_not_b']:.4f} |"
            for row in rows
        ),
    ]
    if halves is not None:
        seen = int(halves.sum())
        lines += [
            "",
            f"On the {seen} items whose antonym pair is in the training half of `negation_meaning_half_pairs` and the "
            f"{len(halves) - seen} whose pair is held out:",
            "",
            "| model | (i) seen ↑ | (i) held out ↑ | (ii) seen ↑ | (ii) held out ↑ |",
            "|---|---:|---:|---:|---:|",
            *(
                f"| {row['model']} | {row['i_seen']:.3f} | {row['i_held_out']:.3f} | {row['ii_seen']:.3f} | "
                f"{row['ii_held_out']:.3f} |"
                for row in rows
            ),
        ]
    if prefixed is not None:
        lines += [
            "",
            f"On the {int(prefixed.sum())} items whose antonym is the word with a negative prefix (\"able\"/\"unable\") and "
            f"the {int((~prefixed).sum())} whose antonym is another word (\"common\"/\"rare\"), with the mean gap "
            "cos(not A, B) − cos(not A, A):",
            "",
            "| model | (i) prefixed ↑ | (i) other word ↑ | gap prefixed ↑ | gap other word ↑ | (ii) prefixed ↑ | (ii) other word ↑ |",
            "|---|---:|---:|---:|---:|---:|---:|",
            *(
                f"| {row['model']} | {row['i_prefixed']:.3f} | {row['i_other_word']:.3f} | {row['gap_i_prefixed']:+.4f} | "
                f"{row['gap_i_other_word']:+.4f} | {row['ii_prefixed']:.3f} | {row['ii_other_word']:.3f} |"
                for row in rows
            ),
        ]
    shared = None
    if args.rows_from_lines:
        shared = items_with_training_pairs(args.rows_from_lines)
        lines += [
            "",
            f"{shared['shared']} of the {shared['items']} items use an antonym pair that the negation-meaning rows built from "
            f"the first {args.rows_from_lines:,} corpus lines also use ({shared['row_pairs']} pairs in "
            f"{shared['quadruples']} quadruples). By how many of those quadruples use the item's pair, the change "
            "from the start model in (ii) (items gained / lost) and in the mean gap of (i):",
            "",
            "| model | quadruples per pair | items | (ii) | gained / lost | (i) mean gap change |",
            "|---|---|---:|---:|---:|---:|",
        ]
        per_item = np.array(shared.pop("item_quadruples"))
        shared["by_frequency"] = []
        for row, (first, second) in zip(rows[1:], gaps[1:], strict=True):
            for label, lowest, highest in PAIR_FREQUENCY:
                mask = (per_item >= lowest) & (per_item <= highest)
                if not mask.any():
                    continue
                won_start, won = gaps[0][1][mask] > 0, second[mask] > 0
                group = {
                    "model": row["model"], "quadruples": label, "items": int(mask.sum()),
                    "ii_start": float(won_start.mean()), "ii": float(won.mean()),
                    "gained": int((won & ~won_start).sum()), "lost": int((won_start & ~won).sum()),
                    "gap_i_change": float((first[mask] - gaps[0][0][mask]).mean()),
                }
                shared["by_frequency"].append(group)
                lines.append(
                    f"| {group['model']} | {label} | {group['items']} | {group['ii_start']:.3f} → {group['ii']:.3f} | "
                    f"{group['gained']} / {group['lost']} | {group['gap_i_change']:+.4f} |"
                )
    subsets = {"all": np.ones(len(gaps[0][0]), dtype=bool)}
    if halves is not None:
        subsets |= {"seen": halves, "held_out": ~halves}
    if prefixed is not None:
        subsets |= {"prefixed": prefixed, "other_word": ~prefixed}
    changes = []
    for first, second in comparisons:
        change = {"from": rows[first]["model"], "to": rows[second]["model"]}
        for name, mask in subsets.items():
            change[name] = {
                figure: paired_change(before[mask], after[mask])
                for figure, before, after in zip(("i", "ii"), gaps[first], gaps[second], strict=True)
            }
        changes.append(change)
    if changes:
        lines += [
            "",
            "Paired on the same items, from one model to the other: the change in (i) and (ii), the items each gains and "
            "loses (exact McNemar p), and 95 % paired bootstrap intervals of the change in the share and in the mean gap "
            "(cos(not A, B) − cos(not A, A) for (i)).",
            "",
            "| from → to | items | (i) change [95 %] | gained / lost (p) | (i) mean gap change [95 %] | (ii) change [95 %] | gained / lost (p) |",
            "|---|---|---:|---:|---:|---:|---:|",
        ]

        def cells(c: dict) -> str:
            return (
                f"{c['share_change']:+.3f} [{c['share_change_ci'][0]:+.3f}, {c['share_change_ci'][1]:+.3f}] | "
                f"{c['gained']} / {c['lost']} ({c['mcnemar_p']:.2f})"
            )

        for change in changes:
            lines += [
                f"| {change['from']} → {change['to']} | {name.replace('_', ' ')} | {cells(c['i'])} | "
                f"{c['i']['gap_change']:+.4f} [{c['i']['gap_change_ci'][0]:+.4f}, {c['i']['gap_change_ci'][1]:+.4f}] | "
                f"{cells(c['ii'])} |"
                for name, c in ((name, change[name]) for name in subsets)
            ]
    write_table(args.out, lines, {"rows": rows, "comparisons": changes, "pair_overlap": shared})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
