"""Cue-balanced minimal pairs: small edits that change the meaning (negatives) beside edits that keep it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from st_debias._exports import lazy_exports

if TYPE_CHECKING:
    from st_debias.data.minimal_pairs.builder import (
        DEFAULT_SHARES,
        NEGATIVE_FAMILIES,
        MinimalPairBuilder,
        cue_statistics,
    )

_EXPORTS = {
    "DEFAULT_SHARES": "st_debias.data.minimal_pairs.builder",
    "NEGATIVE_FAMILIES": "st_debias.data.minimal_pairs.builder",
    "MinimalPairBuilder": "st_debias.data.minimal_pairs.builder",
    "cue_statistics": "st_debias.data.minimal_pairs.builder",
}

__all__ = [
    "DEFAULT_SHARES",
    "MinimalPairBuilder",
    "NEGATIVE_FAMILIES",
    "cue_statistics",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
