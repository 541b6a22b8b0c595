"""An experimental margin that weighs the negation-meaning rows more than the minimal pairs.

``MarginNegationLoss`` gives every row the same weight λ in its margin term. In the ``st-debias`` rows the
negation-meaning rows ("X is not A", "X is B", "X is not B") are a fifth of the batch, and under the recall
regulariser the model does not fit them where the antonym is another word ("not rare" / "common"): on its own
training quadruples, the gap cos(not A, B) − cos(not A, not B) of those rows does not rise
(``probe_cosines.py --items-from-lines``). Raising λ or the rows' share moves every row, or displaces minimal pairs.

``MeaningWeightedMarginLoss`` multiplies the margin of those rows alone by ``meaning_weight`` (w):

    L = l_c + λ · (1/N) Σ_i w_i · [max(s(a_i, n_i) − s(a_i, p_i) + α, 0) + max(s(a_i, p_i) − s(a_i, n_i) − β, 0)]

with w_i = w for a row whose anchor carries a negation word and whose paraphrase carries none (the shape of the
rows of the ``negation_meaning`` source and of the lab's ``negation_meaning_affirmative``; none of 64,000 built
minimal pairs has it), else 1. The rows are told apart from their token ids, decoded with the model's tokenizer.
Everything else is ``MarginNegationLoss``.

The lab's entry points (``benchmarks/pyproject.toml``) add the class to the recipe loss registry, so
that a lab recipe YAML can name it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import torch
from torch import Tensor

from st_debias import core
from st_debias.data.negation.negator import negation_count
from st_debias.losses import MarginNegationLoss
from st_debias.losses.margin_negation import Contrastive

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

_CONTRACTION = re.compile(r"n\s*'\s*t\b")


def rejoin_contractions(text: str) -> str:
    """``text`` as written where a tokenizer's decoding split its contractions ("doesn ' t" → "doesn't"), so that
    ``negation_count`` sees them."""
    return _CONTRACTION.sub("n't", text)


def is_meaning_row(anchor: str, paraphrase: str, negation: str) -> bool:
    """Whether a row has the negation-meaning shape: a negated anchor whose paraphrase carries no negation (its
    negation, "X is not B" or "X is A", may be either)."""
    return bool(negation_count(anchor)) and not negation_count(paraphrase)


def row_weights(rows: Iterable[Sequence[str]], meaning_weight: float) -> list[float]:
    """``meaning_weight`` for each (anchor, paraphrase, negation) of the negation-meaning shape, else 1."""
    return [meaning_weight if is_meaning_row(*row) else 1.0 for row in rows]


class MeaningWeightedMarginLoss(MarginNegationLoss):
    def __init__(
        self,
        model: SentenceTransformer | None,
        meaning_weight: float = 1.0,
        alpha: float = 0.05,
        beta: float = 0.2,
        margin_weight: float = 1e-3,
        contrastive: Contrastive = "dropout",
        scale: float = 20.0,
        return_parts: bool = False,
        dropout_columns: Sequence[str] = ("anchor",),
        contrastive_weight: float = 1.0,
    ) -> None:
        """``MarginNegationLoss`` (the same arguments) whose margin weighs the negation-meaning rows
        ``meaning_weight`` times the others (module docstring); 1 gives ``MarginNegationLoss`` back.

        :meth:`compute_loss_from_embeddings` takes the row weights as ``labels`` (a tensor of one weight per row;
        None: all 1); :meth:`forward` makes them from the rows' texts.
        """
        super().__init__(
            model, alpha=alpha, beta=beta, margin_weight=margin_weight, contrastive=contrastive, scale=scale,
            return_parts=return_parts, dropout_columns=dropout_columns, contrastive_weight=contrastive_weight,
        )
        core.check_non_negative(meaning_weight, "meaning_weight", "MeaningWeightedMarginLoss")
        self.meaning_weight = float(meaning_weight)
        self._weights: Tensor | None = None  # the batch's row weights, while compute_loss_from_embeddings runs

    def forward(self, sentence_features: Iterable[dict[str, Tensor]], labels: Tensor | None = None) -> Any:
        features = list(sentence_features)
        if self.model is None:
            raise ValueError("MeaningWeightedMarginLoss.forward needs the model (its tokenizer reads the rows).")
        decode = self.model.tokenizer.batch_decode
        # WordPiece decodes "isn't" as "isn ' t"; negation_count reads the contraction whole.
        texts = [
            [rejoin_contractions(text) for text in decode(column["input_ids"], skip_special_tokens=True)]
            for column in features[:3]
        ]
        weights = torch.tensor(row_weights(zip(*texts, strict=True), self.meaning_weight))
        return self.compute_loss_from_embeddings(self.embed(self.input_columns(features)), weights)

    def compute_loss_from_embeddings(self, embeddings: list[Tensor], labels: Tensor | None = None) -> Any:
        self._weights = labels
        try:
            return super().compute_loss_from_embeddings(embeddings)
        finally:
            self._weights = None

    def margin_term(self, anchor: Tensor, paraphrase: Tensor, negation: Tensor) -> Tensor:
        margins = self.row_margins(anchor, paraphrase, negation)
        if self._weights is None:
            return margins.mean()
        return (self._weights.to(device=margins.device, dtype=margins.dtype) * margins).mean()

    def get_config_dict(self) -> dict[str, Any]:
        return {**super().get_config_dict(), "meaning_weight": self.meaning_weight}
