"""Gathering embeddings across processes with gradients (DDP), the way MultipleNegativesRankingLoss does."""

from __future__ import annotations

from sentence_transformers.util import all_gather_with_grad, get_rank, get_world_size
from torch import Tensor


def gather_rows(columns: list[Tensor], enabled: bool) -> tuple[list[Tensor], int]:
    """Gather each column's rows from every process (with gradients) and return this process's row offset.

    With ``enabled`` False, or outside a process group, the columns come back unchanged with offset 0.
    The gathered tensor of every column is ordered by rank, so this process's rows sit at
    ``offset : offset + local_batch_size``.
    """
    if not enabled or get_world_size() == 1:
        return columns, 0
    batch_size = columns[0].size(0)
    return [all_gather_with_grad(column) for column in columns], get_rank() * batch_size
