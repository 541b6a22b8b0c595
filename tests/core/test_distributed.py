"""Gathering rows across processes: identity alone, rank order, offsets and unequal batch sizes.

The two-process runs with a real gloo group are in tests/losses/test_distributed.py; here the collective is
replaced by a stand-in that returns what every rank holds, so the padding and offset logic is checked alone.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from st_debias import core
from st_debias.core import distributed


def test_gather_rows_outside_a_process_group_is_the_identity():
    """Guards against a gather that needs a process group (single-process training must not change)."""
    columns = [torch.ones(3, 2), torch.zeros(3, 2)]
    for enabled in (False, True):
        gathered, offset = core.gather_rows(columns, enabled)
        assert offset == 0 and all(g is c for g, c in zip(gathered, columns))


def _rows(seed: int, count: int) -> torch.Tensor:
    return torch.randn(count, 4, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def _two_ranks(monkeypatch: pytest.MonkeyPatch, rank: int, sizes: list[int], other: list[torch.Tensor]) -> None:
    """Pretend to be ``rank`` of two; ``other[k]`` is column ``k`` on the other rank (before any padding)."""
    pending = list(other)

    def all_gather_with_grad(tensor: torch.Tensor) -> torch.Tensor:
        theirs = pending.pop(0)
        theirs = F.pad(theirs, (0, 0, 0, tensor.size(0) - theirs.size(0)))  # every rank sends the same size
        return torch.cat([tensor, theirs] if rank == 0 else [theirs, tensor])

    monkeypatch.setattr(distributed, "get_world_size", lambda: 2)
    monkeypatch.setattr(distributed, "get_rank", lambda: rank)
    monkeypatch.setattr(distributed, "_gather_sizes", lambda batch_size, device: list(sizes))
    monkeypatch.setattr(distributed, "all_gather_with_grad", all_gather_with_grad)


@pytest.mark.parametrize("rank, sizes", [(0, [3, 3]), (1, [3, 3]), (0, [2, 3]), (1, [3, 2]), (1, [1, 4])])
def test_gathered_rows_are_in_rank_order_without_padding(monkeypatch, rank, sizes):
    """Guards against the padding of a shorter last batch left among the candidates, the local rows placed
    at another offset than the sum of the lower ranks' sizes, or gradients cut by the gather."""
    local = [_rows(1, sizes[rank]).requires_grad_(True), _rows(2, sizes[rank]).requires_grad_(True)]
    other = [_rows(3, sizes[1 - rank]), _rows(4, sizes[1 - rank])]
    _two_ranks(monkeypatch, rank, sizes, other)
    gathered, offset = core.gather_rows(local, enabled=True)
    assert offset == sum(sizes[:rank])
    for mine, theirs, result in zip(local, other, gathered):
        expected = torch.cat([mine, theirs] if rank == 0 else [theirs, mine])
        torch.testing.assert_close(result, expected, rtol=0, atol=0)
        assert torch.equal(result[offset : offset + sizes[rank]], mine)
    sum(result.sum() for result in gathered).backward()
    assert all(torch.equal(column.grad, torch.ones_like(column)) for column in local)
