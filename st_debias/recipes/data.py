"""Build (and cache on disk) the training rows a recipe asks for, from plain corpus sentences."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from datasets import Dataset, load_from_disk

from st_debias.data.io.corpus import clean_sentences, read_sentences
from st_debias.data.io.embeddings import cache_root

from .config import Recipe

__all__ = ["build_rows", "cache_root", "read_corpus"]


def read_corpus(path: str | os.PathLike[str] | None, count: int) -> list[str]:
    """The first ``count`` sentences of ``path`` (default: the shared Wikipedia sample), with a clear error."""
    if path is not None and not Path(path).is_file():
        raise FileNotFoundError(f"Corpus file {Path(path).resolve()} does not exist (one sentence per line expected).")
    sentences = read_sentences(path, limit=count)
    if not any(s.strip() for s in sentences):
        raise ValueError(f"Corpus {path or 'default'} has no non-empty sentence.")
    return sentences


def _key(recipe: Recipe, sentences: list[str], model: Any) -> str:
    from st_debias.fingerprint import model_fingerprint

    payload = {
        "data": recipe.data.__dict__,
        "seed": recipe.training.seed,
        "model": model_fingerprint(model),
        "sentences": hashlib.sha256("\n".join(sentences).encode()).hexdigest(),
        "generators": _generator_versions(recipe),
        "format": 2,
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()[:20]


def _generator_versions(recipe: Recipe) -> dict[str, int]:
    """Versions of the rule-based generators a recipe's rows depend on: new rules must not reuse old rows."""
    if recipe.data.kind not in ("negation", "minimal_pairs"):
        return {}
    from st_debias.data.paraphrase.syntactic import SyntacticParaphraser

    versions = {"syntactic": SyntacticParaphraser.version}
    if recipe.data.kind == "minimal_pairs":
        from st_debias.data.minimal_pairs import MinimalPairBuilder

        versions["minimal_pairs"] = MinimalPairBuilder.version
    return versions


def build_rows(
    recipe: Recipe,
    sentences: list[str],
    model: Any,
    cache_dir: str | os.PathLike[str] | None = None,
    show_progress_bar: bool = True,
) -> tuple[Dataset, dict[str, Any]]:
    """Rows for ``recipe.data`` built from ``sentences`` with ``model`` as the guide; cached by content.

    Returns the dataset and the builder's report (counts, skips with reasons, pair statistics).
    """
    folder = cache_root(cache_dir) / "rows" / f"{recipe.data.kind}-{_key(recipe, sentences, model)}"
    if (folder / "report.json").exists():
        return load_from_disk(str(folder / "dataset")), json.loads((folder / "report.json").read_text())
    builders = {
        "simcse": _simcse_rows, "ipw": _ipw_rows, "negation": _negation_rows, "minimal_pairs": _minimal_pair_rows,
    }
    rows, report = builders[recipe.data.kind](recipe, sentences, model, cache_dir, show_progress_bar)
    wanted = recipe.training.steps * recipe.training.batch_size
    if len(rows) > wanted:
        # Builders that skip sentences read more of the corpus; every recipe trains on the same budget.
        report["rows_built"] = len(rows)
        rows = rows.select(range(wanted))
    report["rows_used"] = len(rows)
    folder.mkdir(parents=True, exist_ok=True)
    rows.save_to_disk(str(folder / "dataset"))
    (folder / "report.json").write_text(json.dumps(report, indent=2, default=str))
    return rows, report


def _simcse_rows(recipe, sentences, model, cache_dir, show_progress_bar) -> tuple[Dataset, dict[str, Any]]:
    if recipe.data.options:
        raise ValueError(f"Recipe {recipe.name}: data kind 'simcse' takes no options, got {sorted(recipe.data.options)}.")
    cleaned = clean_sentences(sentences)
    report = {"builder": "simcse", "inputs": len(sentences), "rows": len(cleaned.sentences), "skipped": dict(cleaned.skipped)}
    return Dataset.from_dict({"anchor": cleaned.sentences, "positive": cleaned.sentences}), report


def _ipw_rows(recipe, sentences, model, cache_dir, show_progress_bar) -> tuple[Dataset, dict[str, Any]]:
    from st_debias.data.ipw.builder import IPWBuilder

    options = dict(recipe.data.options)
    builder = IPWBuilder(
        model, seed=recipe.training.seed, cache_dir=cache_dir, show_progress_bar=show_progress_bar, **options
    )
    rows = builder.build(sentences)
    return rows, builder.report.as_dict()


def _negation_rows(recipe, sentences, model, cache_dir, show_progress_bar) -> tuple[Dataset, dict[str, Any]]:
    """OssCSE rows (anchor, paraphrase, negation); ``options.paraphrases`` picks the paraphrase source.

    The choices (``syntactic``, the default; ``syntactic+edits``; ``edits``; ``dropout``, the anchor standing in
    for its paraphrase, OssCSE's ablation) are :func:`st_debias.data.builders.candidate_generators`'s. Other
    options go to :class:`~st_debias.data.negation.builder.OssCSEBuilder`.
    """
    from st_debias.data.builders import candidate_generators
    from st_debias.data.negation.builder import OssCSEBuilder

    options = dict(recipe.data.options)
    source = options.pop("paraphrases", "syntactic")
    generators = candidate_generators(source, "negation", mer_range=options.get("mer_range", (0.15, 0.6)))
    if source == "dropout":
        options["on_missing_paraphrase"] = "anchor"
    builder = OssCSEBuilder(
        paraphrase_generators=generators, seed=recipe.training.seed, show_progress_bar=show_progress_bar, **options
    )
    rows = builder.build(sentences)
    report = builder.report.as_dict()
    report["paraphrase_source"] = source
    return rows, report


def _minimal_pair_rows(recipe, sentences, model, cache_dir, show_progress_bar) -> tuple[Dataset, dict[str, Any]]:
    """Cue-balanced (anchor, positive, negative) minimal pairs; options go to
    :class:`~st_debias.data.minimal_pairs.MinimalPairBuilder` (``shares``, ``on_missing_positive``)."""
    from st_debias.data.minimal_pairs import MinimalPairBuilder

    builder = MinimalPairBuilder(seed=recipe.training.seed, show_progress_bar=show_progress_bar, **recipe.data.options)
    rows = builder.build(sentences)
    return rows, builder.report.as_dict()
