"""Noise negatives (DCLR §4.2): Gaussian vectors refined by normalised gradient ascent on InfoNCE."""

from __future__ import annotations

import pytest
import torch

from st_debias import core


def _pair(dtype: torch.dtype = torch.float64) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(7)
    anchors = torch.randn(4, 6, generator=generator, dtype=torch.float64)
    positives = anchors + 0.1 * torch.randn(4, 6, generator=generator, dtype=torch.float64)
    return anchors.to(dtype), positives.to(dtype)


def test_without_steps_the_noise_is_the_generators_gaussian_times_std():
    """Guards against the generator being ignored (noise not reproducible) or ``std`` not applied."""
    anchors, positives = _pair()
    noise = core.adversarial_noise(
        anchors, positives, torch.arange(4), 5, steps=0, step_size=0.5, scale=20.0, std=0.3,
        generator=torch.Generator().manual_seed(8),
    )
    expected = torch.randn(5, 6, generator=torch.Generator().manual_seed(8), dtype=torch.float64) * 0.3
    assert noise.shape == (5, 6) and noise.dtype == torch.float64
    torch.testing.assert_close(noise, expected, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32])
def test_noise_negatives_are_finite_float32_and_raise_the_loss(dtype):
    """Guards against NaN noise in float16 (its 1e-12 floor is 0) and against descent instead of ascent."""
    anchors, positives = _pair(dtype)
    positive = torch.arange(4)
    noise = core.adversarial_noise(
        anchors, positives, positive, 4, steps=0, step_size=0.5, scale=20.0, generator=torch.Generator().manual_seed(8)
    )
    refined = core.adversarial_noise(
        anchors, positives, positive, 4, steps=4, step_size=0.5, scale=20.0, generator=torch.Generator().manual_seed(8)
    )
    assert refined.dtype == torch.float32 and torch.isfinite(refined).all()

    def loss(extra: torch.Tensor) -> float:
        return core.infonce(20.0 * core.similarity_matrix(anchors, torch.cat([positives.float(), extra])), positive).item()

    assert loss(refined) > loss(noise)
