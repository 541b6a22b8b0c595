"""Noise-based negatives (DCLR §4.2): Gaussian vectors pushed by gradient ascent towards hard negatives."""

from __future__ import annotations

import torch
from torch import Tensor

from .infonce import infonce
from .similarity import cosine_matrix


def adversarial_noise(
    anchors: Tensor,
    positives: Tensor,
    positive: Tensor,
    num_vectors: int,
    steps: int,
    step_size: float,
    scale: float,
    std: float = 1.0,
    generator: torch.Generator | None = None,
) -> Tensor:
    """Sample ``num_vectors`` vectors from N(0, std^2) and refine them by normalised gradient ascent.

    Each step computes the InfoNCE of ``anchors`` against ``[positives | noise]`` (``positive`` gives the
    index of each anchor's positive), then moves the noise ``h <- h + step_size * g / ||g||_2`` (per
    vector) along the gradient ``g`` of that loss. Anchors and positives are treated as constants; the
    result is detached, ready to be appended as extra negatives.
    """
    anchors, positives = anchors.detach(), positives.detach()
    noise = torch.randn(
        num_vectors, anchors.size(1), generator=generator, dtype=anchors.dtype, device=anchors.device
    ) * std
    for _ in range(steps):
        noise = noise.detach().requires_grad_(True)
        with torch.enable_grad():
            logits = cosine_matrix(anchors, torch.cat([positives, noise])) * scale
            (gradient,) = torch.autograd.grad(infonce(logits, positive), noise)
        noise = noise + step_size * gradient / gradient.norm(dim=-1, keepdim=True).clamp_min(1e-12)
    return noise.detach()
