"""Deprecated home of the range neighbour search: import from :mod:`st_debias.data.neighbours`."""

from __future__ import annotations

import warnings

from st_debias.data.neighbours import NeighbourTable, range_topk

__all__ = ["NeighbourTable", "range_topk"]

warnings.warn(
    "st_debias.data.ipw.neighbours moved to st_debias.data.neighbours; import range_topk from there.",
    DeprecationWarning,
    stacklevel=2,
)
