"""What every st_debias loss shares, for those who write one: :class:`EmbeddingLoss` (``forward`` embeds the
columns and hands over to the math) and a multi-part loss's output (:func:`combine_parts`, :class:`LossParts`,
:data:`LossOutput`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import torch
from sentence_transformers.base.losses.merged_forward import embed_columns
from torch import Tensor, nn

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer


class LossParts(dict):
    """The named parts of a loss (``return_parts=True``): a ``dict`` of scalar tensors, as
    SentenceTransformerTrainer expects (it sums them and logs each), that also backpropagates and reads as
    their sum, as sentence-transformers' legacy ``model.old_fit`` loop needs (``loss.backward()``,
    ``loss.item()``)."""

    def total(self) -> Tensor:
        """The sum of the parts: the value the trainer minimises."""
        return torch.stack(list(self.values())).sum()

    def backward(self, *args, **kwargs) -> None:
        self.total().backward(*args, **kwargs)

    def item(self) -> float:
        return self.total().item()


LossOutput = Tensor | LossParts


def combine_parts(parts: dict[str, Tensor], return_parts: bool) -> LossOutput:
    """A multi-part loss's output: the named parts (``return_parts``) or their sum.

    The sum is what every sentence-transformers consumer expects (MatryoshkaLoss and AdaptiveLayerLoss
    multiply and add it). The parts are for SentenceTransformerTrainer, which sums them itself and logs each
    one; :class:`LossParts` also runs under ``model.old_fit`` (without ``use_amp``, whose gradient scaler takes
    tensors only).
    """
    return LossParts(parts) if return_parts else LossParts(parts).total()


class EmbeddingLoss(nn.Module):
    """Base of the st_debias losses, following sentence-transformers' loss contract.

    ``forward(sentence_features, labels)`` embeds every input column with ``self.model`` and calls
    ``compute_loss_from_embeddings(embeddings, labels)``, which holds all the math and works with
    ``model=None`` on plain tensors.
    """

    #: How many text columns a training row gives the loss: (fewest, most; None: any). The recipes check a user's
    #: rows against it before a model loads.
    text_columns: tuple[int, int | None] = (2, None)
    #: Whether recipes build it with ``return_parts=True`` (see :mod:`st_debias.registry`).
    logs_parts: bool = False

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
