"""Cue-balanced minimal pairs: small edits that change the meaning (negatives) beside edits that keep it."""

from __future__ import annotations

from st_debias.data.minimal_pairs.builder import (
    DEFAULT_SHARES,
    NEGATIVE_FAMILIES,
    MinimalPairBuilder,
    cue_statistics,
)

__all__ = ["DEFAULT_SHARES", "NEGATIVE_FAMILIES", "MinimalPairBuilder", "cue_statistics"]
