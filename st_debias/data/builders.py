"""One-call entry points over the builder classes, and merging of sharded builds."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from datasets import Dataset, concatenate_datasets

from st_debias.data.io.report import BuildReport, merge_reports
from st_debias.data.ipw.builder import IPWBuilder
from st_debias.data.negation.builder import OssCSEBuilder


def build_ipw_dataset(
    sentences: Sequence[object],
    model: Any = None,
    *,
    shard: tuple[int, int] | None = None,
    return_report: bool = False,
    **options: Any,
) -> Dataset | tuple[Dataset, BuildReport]:
    """DebCSE rows ``(anchor, positive, negative_1..m[, label])``: :class:`IPWBuilder` (options) ``.build``.

    Example:
        >>> rows, report = build_ipw_dataset(read_sentences(limit=2000), return_report=True)  # doctest: +SKIP
    """
    builder = IPWBuilder(model, **options)
    rows = builder.build(sentences, shard=shard)
    return (rows, builder.report) if return_report else rows


def build_negation_dataset(
    sentences: Sequence[object], *, return_report: bool = False, **options: Any
) -> Dataset | tuple[Dataset, BuildReport]:
    """OssCSE rows ``(anchor, paraphrase, negation)``: :class:`OssCSEBuilder` (options) ``.build``."""
    builder = OssCSEBuilder(**options)
    rows = builder.build(sentences)
    return (rows, builder.report) if return_report else rows


def merge_builds(parts: Sequence[tuple[Dataset, BuildReport]]) -> tuple[Dataset, BuildReport]:
    """Concatenate shard builds (``IPWBuilder.build(..., shard=...)`` outputs, in shard order) and merge
    their reports. (:func:`st_debias.data.io.embeddings.merge_shards` is its counterpart for embeddings.)"""
    if not parts:
        raise ValueError("No shards to merge.")
    return concatenate_datasets([rows for rows, _ in parts]), merge_reports([report for _, report in parts])
