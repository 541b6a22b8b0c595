"""Build (and cache on disk) the training rows a recipe asks for, from plain corpus sentences."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from datasets import Dataset, Features, load_from_disk

from st_debias.data.io.corpus import read_sentences
from st_debias.data.io.rows import LABEL_COLUMNS, check_row_sources, read_rows
from st_debias.data.kinds import DATA_KINDS
from st_debias.files import atomic_write_json, staged_folder
from st_debias.paths import cache_root
from st_debias.progress import announce

from .config import Recipe
from .mix_sources import MIX_SOURCES

__all__ = ["build_rows", "cache_root", "read_corpus", "read_user_rows", "user_rows"]
logger = logging.getLogger(__name__)

def read_corpus(path: str | os.PathLike[str] | None, count: int) -> list[str]:
    """The first ``count`` sentences of ``path`` (default: the shared Wikipedia sample), with a clear error.

    Raises:
        FileNotFoundError: ``path`` does not exist.
        ValueError: no sentence, or a file of rows (a header, delimiters): those go to ``--rows``.
    """
    check_row_sources(path, None)
    sentences = read_sentences(path, limit=count)
    if not any(s.strip() for s in sentences):
        raise ValueError(f"Corpus {path or 'default'} has no non-empty sentence.")
    return sentences


def _key(recipe: Recipe, sentences: list[str], model: Any, max_rows: int | None = None) -> str:
    from st_debias.fingerprint import model_fingerprint

    payload = {
        "max_rows": max_rows or recipe.training.rows_wanted(),
        # Mixed-in rows are added after the cache: the key names the built rows only.
        "data": {"kind": recipe.data.kind, "options": recipe.data.options},
        "seed": recipe.training.seed,
        "model": model_fingerprint(model),
        "sentences": hashlib.sha256("\n".join(sentences).encode()).hexdigest(),
        "generators": DATA_KINDS[recipe.data.kind].versions(),
        "format": 3,  # 3: entries carry their rows' checksum
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()[:20]


def build_rows(
    recipe: Recipe,
    sentences: list[str],
    model: Any,
    cache_dir: str | os.PathLike[str] | None = None,
    show_progress_bar: bool = True,
    max_rows: int | None = None,
    data_dir: str | os.PathLike[str] | None = None,
    num_proc: int | None = None,
    mix_sentences: list[str] | None = None,
) -> tuple[Dataset, dict[str, Any]]:
    """Rows for ``recipe.data`` built from ``sentences`` with ``model`` as the guide; cached by content.

    The rows build with ``num_proc`` workers (None: every usable core): processes for a kind built in blocks,
    threads for the negative draws of ``ipw``; any number gives the same rows.

    ``max_rows`` (default steps x batch size, times the process count under ``torchrun``) caps the rows kept.
    Rows of ``recipe.data.mix`` (read from ``data_dir``, default ``$ST_DEBIAS_DATA``; the ``negation_meaning``
    source built from ``mix_sentences``, default ``sentences``) then replace their share.
    Returns the dataset and the builder's report (counts, skips with reasons, pair statistics).
    """
    wanted = max_rows or recipe.training.rows_wanted()
    rows, report = _built_rows(recipe, sentences, model, cache_dir, show_progress_bar, wanted, num_proc)
    if recipe.data.mix:
        rows, report = mix_rows(
            rows, report, recipe.data.mix, wanted, seed=recipe.training.seed, data_dir=data_dir,
            sentences=mix_sentences or sentences, cache_dir=cache_dir,
        )
    return rows, report


def read_user_rows(recipe: Recipe, path: str | os.PathLike[str], columns: Sequence[str] | None = None) -> Dataset:
    """The user's rows (:func:`~st_debias.data.io.rows.read_rows`), checked against the recipe before any model
    loads: the loss takes their number of text columns, and a recipe that mixes in (anchor, positive, negative)
    rows gets rows of that shape. Columns are renamed to the data kind's when their count matches (the losses
    that read columns by name, such as MarginNegationLoss's ``negation``, find them).

    Raises:
        ValueError: naming the file and what the recipe needs.
    """
    from .losses import check_row_columns

    rows = read_rows(path, columns)
    texts = [name for name in rows.column_names if name not in LABEL_COLUMNS]
    try:
        check_row_columns(recipe.loss, len(texts))
    except ValueError as error:
        raise ValueError(f"--rows {path}: text columns {texts} do not fit recipe {recipe.name!r}: {error}") from error
    kind_columns = DATA_KINDS[recipe.data.kind].columns
    if recipe.data.mix and len(texts) != 3:
        raise ValueError(
            f"--rows {path}: recipe {recipe.name!r} mixes (anchor, positive, negative) rows of "
            f"{sorted(recipe.data.mix)} into the rows, but these rows have {len(texts)} text columns {texts}."
        )
    if len(texts) == len(kind_columns):
        rows = rows.rename_columns({old: new for old, new in zip(texts, kind_columns) if old != new})
    return rows


def user_rows(
    recipe: Recipe,
    rows: Dataset,
    wanted: int,
    *,
    data_dir: str | os.PathLike[str] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    source: str = "",
) -> tuple[Dataset, dict[str, Any]]:
    """The user's rows (:func:`read_user_rows`) as the training rows, with ``recipe.data.mix``'s rows in their
    share (the corpus-built sources, such as ``negation_meaning``, built from the rows' anchors) and a report."""
    report: dict[str, Any] = {"builder": "rows file", "source": source, "rows": len(rows), "rows_used": len(rows)}
    if recipe.data.mix:
        anchors = list(dict.fromkeys(rows[rows.column_names[0]]))
        rows, report = mix_rows(
            rows, report, recipe.data.mix, wanted, seed=recipe.training.seed, data_dir=data_dir,
            sentences=anchors, cache_dir=cache_dir,
        )
    return rows, report


def _built_rows(
    recipe: Recipe, sentences: list[str], model: Any, cache_dir: Any, show_progress_bar: bool, wanted: int,
    num_proc: int | None,
) -> tuple[Dataset, dict[str, Any]]:
    """The data kind's own rows (at most ``wanted``), from the cache or built and cached."""
    folder = cache_root(cache_dir) / "rows" / f"{recipe.data.kind}-{_key(recipe, sentences, model, wanted)}"
    cached = _read_cached_rows(folder)
    if cached is not None:
        announce(f"Reusing the {recipe.data.kind} rows cached at {folder}.", show_progress_bar)
        return cached
    kind = DATA_KINDS[recipe.data.kind]
    announce(
        f"Building rows: {kind.description} from {len(sentences):,} corpus sentences (up to {wanted:,} rows kept)…",
        show_progress_bar,
    )
    rows, built = kind.build(
        sentences, seed=recipe.training.seed, options=recipe.data.options, model=model, cache_dir=cache_dir,
        show_progress_bar=show_progress_bar, num_proc=num_proc,
    )
    report = built.as_dict()
    if len(rows) > wanted:
        # Builders that skip sentences read more of the corpus; every recipe trains on the same budget.
        report["rows_built"] = len(rows)
        rows = rows.select(range(wanted))
    report["rows_used"] = len(rows)
    _write_cached_rows(folder, rows, report)
    return rows, report


def mix_rows(
    rows: Dataset,
    report: dict[str, Any],
    mix: dict[str, float],
    wanted: int,
    seed: int,
    data_dir: str | os.PathLike[str] | None = None,
    sentences: list[str] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
) -> tuple[Dataset, dict[str, Any]]:
    """Replace a share of ``rows`` with rows of other sources (``mix``: source → share of the rows).

    Sources: :data:`st_debias.recipes.mix_sources.MIX_SOURCES` (:func:`mix_source_rows`), ``nli`` read from
    ``data_dir`` and ``negation_meaning`` built from the corpus ``sentences`` and cached. The built
    rows keep their order and come first; each source's rows are drawn in a seeded order, repeated when the
    source has fewer than asked for (the report counts the repeats); the whole is then shuffled with
    ``seed``. The report gains ``mix``: per source, its rows, what its reader kept and dropped, and the
    repeats. A source that gives no row (a corpus without an eligible sentence) is logged and skipped.
    """
    from datasets import concatenate_datasets

    total = min(wanted, len(rows))
    columns = rows.column_names[:3]
    mixed_parts, details = [], {}
    for number, (source, share) in enumerate(sorted(mix.items())):
        count = round(share * total)
        triplets, described = mix_source_rows(source, data_dir=data_dir, sentences=sentences, cache_dir=cache_dir)
        if not triplets:
            # A small or unusual corpus can hold no eligible sentence: train on the built rows, and say so.
            logger.warning("data.mix: the %s source gave no row (%s); its share goes to the built rows.", source, described)
            details[source] = {"rows": 0, **described, "repeats": 0}
            continue
        order = np.random.default_rng([seed, 17, number]).permutation(len(triplets))
        picks = [triplets[int(order[k % len(order)])] for k in range(count)]
        mixed_parts.append(Dataset.from_dict({name: [row[i] for row in picks] for i, name in enumerate(columns)}))
        details[source] = {"rows": count, **described, "repeats": max(0, count - len(triplets))}
    built = total - sum(len(part) for part in mixed_parts)
    own = rows.select(range(built)).select_columns(columns)
    combined = concatenate_datasets([own, *mixed_parts]).shuffle(seed=seed).flatten_indices()
    report = {**report, "rows_used": len(combined), "rows_built_used": built, "mix": details}
    return combined, report


def mix_source_rows(
    source: str,
    *,
    data_dir: str | os.PathLike[str] | None = None,
    sentences: list[str] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
) -> tuple[list[tuple[str, str, str]], dict[str, Any]]:
    """The (anchor, positive, negative) rows of one ``data.mix`` source and a description of how they were made,
    from the source's function in :data:`st_debias.recipes.mix_sources.MIX_SOURCES`."""
    if source not in MIX_SOURCES:
        raise ValueError(f"Unknown mix source {source!r}; choose from {tuple(MIX_SOURCES)}.")
    return MIX_SOURCES[source].rows(data_dir=data_dir, sentences=sentences, cache_dir=cache_dir)


def rows_checksum(rows: Dataset) -> str:
    """The sha256 of ``rows``' column types and values (the row cache checks it on every reuse)."""
    digest = hashlib.sha256(json.dumps(rows.features.to_dict(), sort_keys=True).encode())
    values = rows[:] if len(rows) else {name: [] for name in rows.column_names}
    for name in rows.column_names:
        digest.update(json.dumps([name, values[name]], ensure_ascii=False, default=str).encode())
    return digest.hexdigest()


#: The file of a row cache entry holding its rows' checksum, count and column types.
_CHECKSUM_FILE = "checksum.json"


def _read_cached_rows(folder: Path) -> tuple[Dataset, dict[str, Any]] | None:
    """The cached rows and report in ``folder``, or None; an entry that is unreadable, or whose rows do not match
    the checksum written with them (a flipped byte, a damaged file), is named, removed and rebuilt."""
    if not folder.exists():
        return None
    try:
        report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
        recorded = json.loads((folder / _CHECKSUM_FILE).read_text(encoding="utf-8"))
        if recorded["rows"] == 0:  # a dataset of 0 rows cannot be read back from disk: only its columns are kept
            features = Features.from_dict(recorded["features"])
            rows = Dataset.from_dict({name: [] for name in features}, features=features)
        else:
            rows = load_from_disk(str(folder / "dataset"))
            rows.data.validate(full=True)  # damaged offsets would crash (or worse) on the first read
        found = rows_checksum(rows)
        if found != recorded["sha256"]:
            raise ValueError(f"its rows do not match their checksum ({found[:12]}…, recorded {recorded['sha256'][:12]}…)")
    except Exception as error:  # a truncated or damaged entry from a crash or a bad disk: any failure means rebuild
        logger.warning("Row cache entry %s is unreadable (%s: %s); rebuilding it.", folder, type(error).__name__, error)
        shutil.rmtree(folder, ignore_errors=True)
        return None
    return rows, report


def _write_cached_rows(folder: Path, rows: Dataset, report: dict[str, Any]) -> None:
    """Publish the entry whole (:func:`~st_debias.files.staged_folder`), with its rows' checksum; a concurrent
    writer's copy may win."""
    checksum = {"sha256": rows_checksum(rows), "rows": len(rows), "features": rows.features.to_dict()}
    with staged_folder(folder, replace=False) as staging:
        if len(rows):
            rows.save_to_disk(str(staging / "dataset"))
        atomic_write_json(staging / "report.json", report)
        atomic_write_json(staging / _CHECKSUM_FILE, checksum)
