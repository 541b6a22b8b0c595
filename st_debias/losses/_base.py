"""What every st_debias loss shares: ``forward`` embeds the columns and hands over to the math."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import torch
from sentence_transformers.base.losses.merged_forward import embed_columns
from torch import Tensor, nn

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

LossOutput = Tensor | dict[str, Tensor]


def combine_parts(parts: dict[str, Tensor], return_parts: bool) -> LossOutput:
    """A multi-part loss's output: the named parts (``return_parts``) or their sum.

    The sum is what every sentence-transformers consumer expects (MatryoshkaLoss, AdaptiveLayerLoss,
    ``model.old_fit`` call ``*`` or ``.backward()`` on it). The dict is for SentenceTransformerTrainer,
    which sums the parts itself and logs each one.
    """
    return dict(parts) if return_parts else torch.stack(list(parts.values())).sum()


class EmbeddingLoss(nn.Module):
    """Base of the st_debias losses, following sentence-transformers' loss contract.

    ``forward(sentence_features, labels)`` embeds every input column with ``self.model`` and calls
    ``compute_loss_from_embeddings(embeddings, labels)``, which holds all the math and works with
    ``model=None`` on plain tensors.
    """

    def __init__(self, model: SentenceTransformer | None) -> None:
        super().__init__()
        self.model = model

    @property
    def temperature(self) -> float:
        """τ = 1 / ``scale`` (sentence-transformers' convention: scale 20 ⇔ τ 0.05)."""
        return 1.0 / self.scale

    def embed(self, sentence_features: Iterable[dict[str, Tensor]]) -> list[Tensor]:
        if self.model is None:
            raise ValueError(
                f"{type(self).__name__} was built with model=None: call compute_loss_from_embeddings(...) "
                "with embeddings, or pass a SentenceTransformer to train."
            )
        return embed_columns(self.model, sentence_features)

    def forward(self, sentence_features: Iterable[dict[str, Tensor]], labels: Tensor | None = None) -> LossOutput:
        return self.compute_loss_from_embeddings(self.embed(sentence_features), labels)

    def compute_loss_from_embeddings(self, embeddings: list[Tensor], labels: Tensor | None = None) -> LossOutput:
        raise NotImplementedError
