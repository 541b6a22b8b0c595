"""Two CPU processes (gloo): ``gather_across_devices`` gives the loss of one process on the whole batch.

Guards against a gather that silently drops the other process's candidates (each rank would train on
a half-size batch), misplaces the local positives (wrong offset), or loses gradients across ranks,
against unequal per-process batch sizes (the last batch of an epoch) aborting the gather with a gloo
size mismatch or shifting the row offset, and against RecallRegularizer's term being counted once per
process under DDP.
"""

from __future__ import annotations

import gc
import os
import sys
from pathlib import Path

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

WORLD = 2
DIM = 8


def _losses(gather: bool):
    from st_debias.losses import DebiasInfoNCE, FocalInfoNCE, InstanceWeightedMNRL, MarginNegationLoss

    return {
        "focal": (FocalInfoNCE(None, gather_across_devices=gather), 3, None),
        "dclr": (InstanceWeightedMNRL(None, threshold=0.3, labels="guide_embeddings", gather_across_devices=gather), 3, "guide"),
        "dclr-weights": (InstanceWeightedMNRL(None, labels="weights", gather_across_devices=gather), 2, "weights"),
        "debcse": (DebiasInfoNCE(None, gather_across_devices=gather), 3, None),
        "osscse": (MarginNegationLoss(None, contrastive="dropout", margin_weight=1.0, gather_across_devices=gather), 4, None),
        "osscse-views": (
            MarginNegationLoss(None, margin_weight=1.0, dropout_columns=("anchor", "negation"), gather_across_devices=gather),
            5,
            None,
        ),
    }


def _inputs(columns: int, label_kind: str | None, rows: int):
    generator = torch.Generator().manual_seed(7)
    embeddings = [torch.randn(rows, DIM, generator=generator, dtype=torch.float64) for _ in range(columns)]
    labels = None
    if label_kind == "guide":
        labels = torch.cat([e + 0.5 * torch.randn(rows, DIM, generator=generator, dtype=torch.float64) for e in embeddings], 1)
    elif label_kind == "weights":
        labels = torch.rand(rows, generator=generator, dtype=torch.float64) * 2
    return embeddings, labels


def _total(output) -> torch.Tensor:
    return sum(output.values()) if isinstance(output, dict) else output


def _share(rows_per_rank: tuple[int, ...], rank: int) -> float:
    """Rank ``rank``'s weight in the global mean: its rows over the average rows per rank.

    Each rank's loss is a mean over its own rows and DDP averages gradients over ranks, so with
    unequal sizes a rank's loss counts ``B_r / N`` of the global mean only once scaled by this factor
    (1 for equal sizes).
    """
    return rows_per_rank[rank] * len(rows_per_rank) / sum(rows_per_rank)


def _worker(rank: int, store: str, out_dir: str, rows_per_rank: tuple[int, ...]) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=WORLD)
    try:
        start = sum(rows_per_rank[:rank])
        local = slice(start, start + rows_per_rank[rank])
        results = {}
        for name, (loss, columns, label_kind) in _losses(gather=True).items():
            embeddings, labels = _inputs(columns, label_kind, sum(rows_per_rank))
            mine = [e[local].clone().requires_grad_(True) for e in embeddings]
            value = _total(loss.compute_loss_from_embeddings(mine, None if labels is None else labels[local]))
            value = value * _share(rows_per_rank, rank)
            value.backward()
            results[name] = (value.detach(), [m.grad for m in mine])
        results["recall"] = _recall_under_ddp()
        torch.save(results, os.path.join(out_dir, f"rank{rank}.pt"))
        # Neither rank tears gloo down while the other still talks to it.
        dist.barrier()
    except BaseException:
        dist.destroy_process_group()
        raise
    dist.destroy_process_group()
    # Skip interpreter finalization: gloo's C++ threads destroyed there can abort the process
    # ("terminate called without an active exception", seen on CI) after the results are written.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _recall_under_ddp() -> torch.Tensor:
    from torch import nn

    from st_debias.losses import FocalInfoNCE, RecallRegularizer

    torch.manual_seed(0)
    linear = nn.Linear(3, 2).double()
    regularizer = RecallRegularizer(None, FocalInfoNCE(None), gamma=0.5, parameters=linear.parameters())
    ddp = nn.parallel.DistributedDataParallel(linear)
    with torch.no_grad():
        linear.weight.add_(1.0)
    # Each rank's loss = its (zero) data term through the DDP module + the recall term.
    data_term = ddp(torch.zeros(1, 3, dtype=torch.float64)).sum() * 0
    (data_term + regularizer.recall()).backward()
    gradient = linear.weight.grad.clone()
    # DDP's reducer holds the process group; free it now, not at interpreter exit.
    del ddp
    gc.collect()
    return gradient


@pytest.mark.timeout(300)
@pytest.mark.parametrize("rows_per_rank", [(4, 4), (5, 3)], ids=["equal", "unequal"])
def test_gather_across_devices_equals_one_process_on_the_whole_batch(tmp_path: Path, rows_per_rank) -> None:
    mp.spawn(_worker, args=(str(tmp_path / "store"), str(tmp_path), rows_per_rank), nprocs=WORLD, join=True)
    ranks = [torch.load(tmp_path / f"rank{r}.pt") for r in range(WORLD)]
    for name, (loss, columns, label_kind) in _losses(gather=False).items():
        embeddings, labels = _inputs(columns, label_kind, sum(rows_per_rank))
        full = [e.clone().requires_grad_(True) for e in embeddings]
        expected = _total(loss.compute_loss_from_embeddings(full, labels))
        expected.backward()
        # DDP averages over ranks: the mean of the (share-scaled) rank losses is the loss on the whole batch.
        mean_of_ranks = sum(r[name][0] for r in ranks) / WORLD
        torch.testing.assert_close(mean_of_ranks, expected.detach(), rtol=0, atol=1e-10, msg=name)
        for column, full_embedding in enumerate(full):
            gathered = torch.cat([r[name][1][column] for r in ranks]) / WORLD
            torch.testing.assert_close(gathered, full_embedding.grad, rtol=0, atol=1e-10, msg=f"{name} grad col {column}")
    # Recall term: both ranks add the same ½γ‖θ−θ*‖²; DDP's averaged gradient is γ(θ−θ*) = 0.5 · 1, once.
    for r in ranks:
        torch.testing.assert_close(r["recall"], torch.full((2, 3), 0.5, dtype=torch.float64))
