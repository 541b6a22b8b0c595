"""Noise-based negatives (DCLR §4.2): Gaussian vectors pushed by gradient ascent towards hard negatives."""

from __future__ import annotations

import torch
from sentence_transformers.util import cos_sim
from torch import Tensor

from .infonce import infonce
from .similarity import SimilarityFct, at_least_float32, similarity_matrix


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
    similarity_fct: SimilarityFct = cos_sim,
) -> Tensor:
    """Sample ``num_vectors`` vectors from N(0, std^2) and refine them by normalised gradient ascent.

    Each step computes the InfoNCE of ``anchors`` against ``[positives | noise]`` (``positive`` gives the
    index of each anchor's positive), then moves the noise ``h <- h + step_size * g / ||g||_2`` (per
    vector) along the gradient ``g`` of that loss, scored with ``similarity_fct``. Anchors and positives are treated as constants; the
    result is detached, ready to be appended as extra negatives. The noise is float32 (or wider) whatever
    the embeddings' dtype: in float16 the step's ``1 / ||g||`` would underflow its floor to 0 (NaN noise).
    """
    anchors, positives = at_least_float32(anchors.detach()), at_least_float32(positives.detach())
    noise = torch.randn(
        num_vectors, anchors.size(1), generator=generator, dtype=anchors.dtype, device=anchors.device
    ) * std
    for _ in range(steps):
        noise = noise.detach().requires_grad_(True)
        with torch.enable_grad():
            logits = similarity_matrix(anchors, torch.cat([positives, noise]), similarity_fct) * scale
            (gradient,) = torch.autograd.grad(infonce(logits, positive), noise)
        noise = noise + step_size * gradient / gradient.norm(dim=-1, keepdim=True).clamp_min(1e-12)
    return noise.detach()
