"""Gathering embeddings across processes with gradients (DDP), the way MultipleNegativesRankingLoss does."""

from __future__ import annotations

import torch
import torch.distributed as dist
import torch.nn.functional as F
from sentence_transformers.util import all_gather_with_grad, get_rank, get_world_size
from torch import Tensor


def gather_rows(columns: list[Tensor], enabled: bool) -> tuple[list[Tensor], int]:
    """Gather each column's rows from every process (with gradients) and return this process's row offset.

    With ``enabled`` False, or outside a process group, the columns come back unchanged with offset 0.
    The gathered tensor of every column is ordered by rank, so this process's rows sit at
    ``offset : offset + local_batch_size``. Processes may hold different numbers of rows (e.g. the
    last, shorter batch of an epoch): the sizes are exchanged first, every process pads to the
    largest, and the padding is dropped after the gather.
    """
    if not enabled or get_world_size() == 1:
        return columns, 0
    batch_size = columns[0].size(0)
    sizes = _gather_sizes(batch_size, columns[0].device)
    offset = sum(sizes[: get_rank()])
    largest = max(sizes)
    if largest == min(sizes):
        return [all_gather_with_grad(column) for column in columns], offset
    # Rows to keep from the padded gather: the first sizes[r] rows of each rank's block of `largest`.
    real_rows = torch.cat(
        [torch.arange(r * largest, r * largest + size, device=columns[0].device) for r, size in enumerate(sizes)]
    )
    gathered = []
    for column in columns:
        padded = F.pad(column, (0, 0, 0, largest - batch_size))
        gathered.append(all_gather_with_grad(padded).index_select(0, real_rows))
    return gathered, offset


def _gather_sizes(batch_size: int, device: torch.device) -> list[int]:
    """Every process's local row count, in rank order."""
    local = torch.tensor([batch_size], dtype=torch.long, device=device)
    sizes = [torch.zeros_like(local) for _ in range(get_world_size())]
    dist.all_gather(sizes, local)
    return [int(size.item()) for size in sizes]
