"""Fixtures for the loss tests: seeded float64 embeddings, tiny enough for 2 shared CPU cores."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch


def make_columns(
    seed: int, batch: int, dim: int, columns: int, requires_grad: bool = False
) -> list[torch.Tensor]:
    """``columns`` float64 tensors of shape ``(batch, dim)`` drawn from a seeded ``torch.Generator``.

    Each column is the previous one plus noise, so cosine similarities spread over (−1, 1) rather than
    clustering at 0 as independent high-dimensional Gaussians would.
    """
    generator = torch.Generator().manual_seed(seed)
    base = torch.randn(batch, dim, generator=generator, dtype=torch.float64)
    out = []
    for _ in range(columns):
        out.append(
            (base + 0.8 * torch.randn(batch, dim, generator=generator, dtype=torch.float64)).requires_grad_(
                requires_grad
            )
        )
    return out


@pytest.fixture
def columns() -> Callable[..., list[torch.Tensor]]:
    """Factory: ``columns(seed, batch, dim, n)`` → n seeded float64 ``(batch, dim)`` tensors."""
    return make_columns


def make_guide(embeddings: list[torch.Tensor], seed: int, spread: float = 0.6) -> list[torch.Tensor]:
    """Frozen "guide" embeddings: the model's plus noise from another generator, so that some (not all)
    guide similarities cross a threshold φ around 0.5."""
    generator = torch.Generator().manual_seed(1000 + seed)
    return [
        e.detach() + spread * torch.randn(e.shape, generator=generator, dtype=e.dtype) for e in embeddings
    ]


@pytest.fixture
def guide_for() -> Callable[..., list[torch.Tensor]]:
    """Factory: ``guide_for(embeddings, seed)`` → one detached guide tensor per column."""
    return make_guide
