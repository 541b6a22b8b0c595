"""Where STS-B dev is lost: its Spearman per genre (captions, forums, news) and each genre's mean cosine.

STS-B dev pools three genres. A pooled score can fall because one genre's ranking breaks, or because one genre's
cosines shift against the others' while each keeps its ranking (calibration); the genre columns tell them apart.
Scored with :meth:`st_debias.evaluation.STSSuite.subset_scores`, for saved models or training checkpoints:

    python benchmarks/teachers_preservation/dev_genres.py start outputs/v6/cpu-dev-500/<run>/checkpoints/checkpoint-243 \
        --max-seq-length 32 --out benchmarks/teachers_preservation/results/dev_genres.md

``start`` is the default start model. Writes the table (``--out``) and the same rows, stamped, next to it as JSON.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from benchmarks.harness.provenance import write_table
from st_debias.evaluation import STSSuite
from st_debias.paths import portable_path

TASK = "STSBenchmark-dev"


def model_label(name: str) -> str:
    """``start``, or the model folder as a result file may show it (never a path of this machine)."""
    return name if name == "start" else portable_path(name)


def genre_row(name: str, suite: STSSuite, max_seq_length: int | None) -> dict:
    """Pooled and per-genre STS-B dev figures of one model."""
    from st_debias.evaluation import EmbeddingCache
    from st_debias.paths import load_model

    model = load_model(None if name == "start" else name)
    if max_seq_length is not None:
        model.max_seq_length = max_seq_length
    cache = EmbeddingCache(model, show_progress_bar=False)
    return {
        "model": model_label(name),
        "max_seq_length": model.max_seq_length,
        "pooled": suite.evaluate(cache)[TASK],
        "genres": suite.subset_scores(cache)[TASK],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("models", nargs="+", help="'start' or saved model / checkpoint folders")
    parser.add_argument("--out", type=Path, required=True, help="the Markdown table to write (.md)")
    parser.add_argument("--max-seq-length", type=int, default=None, help="tokens per sentence (default: each model's)")
    args = parser.parse_args(argv)
    for name in args.models:
        if name != "start" and not (Path(name) / "config.json").is_file():
            parser.error(f"{name}: not a saved model folder (no config.json)")
    if args.out.suffix != ".md":
        parser.error(f"--out must name a .md file, got {args.out}")
    if args.max_seq_length is not None and args.max_seq_length < 1:
        parser.error(f"--max-seq-length must be at least 1, got {args.max_seq_length}")

    suite = STSSuite([TASK])
    if len(set(suite.data[TASK].subsets)) < 2:
        parser.error(f"{suite.data[TASK].source} has no genre per pair: set ST_DEBIAS_DATA to the shared data folder")
    rows = []
    for number, name in enumerate(args.models, 1):
        print(f"[dev_genres] {number}/{len(args.models)}: {model_label(name)}", flush=True)
        rows.append(genre_row(name, suite, args.max_seq_length))
    genres = list(rows[0]["genres"])
    lines = [
        "| model | tokens | STS-B dev | " + " | ".join(genres) + " | " + " | ".join(f"mean cos, {g}" for g in genres) + " |",
        "|---|---:|---:|" + "---:|" * (2 * len(genres)),
    ]
    for row in rows:
        spearman = [f"{value:.2f}" if (value := row["genres"][g]["spearman"]) is not None else "–" for g in genres]
        cosine = [f"{row['genres'][g]['mean_cosine']:.3f}" for g in genres]
        lines.append(
            f"| `{row['model']}` | {row['max_seq_length']} | {row['pooled']:.2f} | " + " | ".join(spearman + cosine) + " |"
        )
    write_table(args.out, lines, {"task": TASK, "rows": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
