"""An experimental cap on the polarity cluster: the negation column may not draw together more than it does under the
start model.

``MarginNegationLoss`` widens the gap between a sentence and its negation row by row. One way to widen it for every
negation row at once is to move all negated sentences the same way, and then negated sentences with different
content drift together: the polarity cluster of the dev negation probe (figure (iii), the mean cosine between
negated sentences minus the same for their affirmative forms). SimCSE's view on the negation column spreads them
again but keeps spreading past the start model's level, and takes back part of what separates "not A" from "A".

``ClusterCapMarginLoss`` adds a one-sided term that is zero while the batch's negation column clusters no more,
relative to its anchor column, than under a frozen copy of the start model. With m(X) the mean cosine between the
rows of X over the pairs i ≠ j, a and n the anchor and negation columns of the trained model (dropout on), a* and
n* the same under the reference (eval mode), and sg no gradient,

    e = m(n) − sg(m(a)),        e* = m(n*) − m(a*),        L = l_c + λ · l_m + w · max(e − e*, 0)

so only the negation column moves, only while its cluster is above the start model's on the same rows, and the
term is exactly zero once the cap holds. Everything else is ``MarginNegationLoss`` (w = ``cap_weight``). The rows
carry no polarity label: in the ``st-debias`` rows the negation column holds the negated sentences (negation rows,
and the negated antonyms of the negation-meaning rows) among edits of other kinds, which move its mean cosine
with their anchors'. Cost: the anchor and negation columns embedded once more by the reference, without gradients.

:func:`register` adds the class to the recipe loss registry, so that a lab recipe YAML can name it
(``select_dev.py`` calls it).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import torch
from torch import Tensor

from st_debias import core
from st_debias.losses import MarginNegationLoss
from st_debias.losses._base import LossOutput, combine_parts
from st_debias.losses.margin_negation import Contrastive
from st_debias.losses.similarity_preservation import _model_inputs

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer


def mean_pairwise_cosine(x: Tensor) -> Tensor:
    """m(X): the mean cosine between the rows of ``x`` over the pairs i ≠ j (zero for fewer than two rows)."""
    rows = x.size(0)
    if rows < 2:
        return x.sum() * 0.0
    unit = torch.nn.functional.normalize(core.at_least_float32(x), dim=-1)
    total = unit.sum(dim=0)
    # Σ_{i≠j} u_i·u_j = ‖Σ u‖² − Σ ‖u_i‖², with ‖u_i‖ = 1.
    return (total @ total - rows) / (rows * (rows - 1))


def cluster_excess(anchor: Tensor, negation: Tensor) -> Tensor:
    """e = m(negation) − sg(m(anchor)): how much more the negation column draws together than its anchors; only
    the negations carry a gradient."""
    return mean_pairwise_cosine(negation) - mean_pairwise_cosine(anchor).detach()


class ClusterCapMarginLoss(MarginNegationLoss):
    def __init__(
        self,
        model: SentenceTransformer | None,
        cap_weight: float = 0.02,
        alpha: float = 0.05,
        beta: float = 0.2,
        margin_weight: float = 1e-3,
        contrastive: Contrastive = "dropout",
        scale: float = 20.0,
        return_parts: bool = False,
        reference: SentenceTransformer | None = None,
    ) -> None:
        """``MarginNegationLoss`` plus w · max(e − e*, 0) (module docstring), w = ``cap_weight``.

        Args:
            model: the SentenceTransformer being trained; its frozen copy, taken now, is the reference unless
                ``reference`` is given (``None`` for the maths alone, through ``compute_loss_from_embeddings``).
            reference: the model whose cluster is the cap.

        Raises:
            ValueError: a negative ``cap_weight``.
        """
        super().__init__(model, alpha=alpha, beta=beta, margin_weight=margin_weight, contrastive=contrastive,
                         scale=scale, return_parts=return_parts)
        core.check_non_negative(cap_weight, "cap_weight", "ClusterCapMarginLoss")
        self.cap_weight = float(cap_weight)
        if reference is None and model is not None:
            reference = copy.deepcopy(model)
        if reference is not None:
            reference.requires_grad_(False)
            reference.eval()
        # A list, not an attribute module: the reference is not a submodule, so it is neither saved nor optimised.
        self._reference = [reference]

    def reference_excess(self, anchor_features: dict[str, Tensor], negation_features: dict[str, Tensor]) -> Tensor:
        """e* for one batch: the reference model's cluster excess on the same rows, without gradients."""
        reference = self._reference[0]
        if reference is None:
            raise ValueError("ClusterCapMarginLoss: no reference model (pass model= or reference=).")
        device = next(reference.parameters()).device
        with torch.no_grad():
            anchor, negation = (reference(_model_inputs(f, device))["sentence_embedding"]
                                for f in (anchor_features, negation_features))
            return cluster_excess(anchor, negation)

    def forward(self, sentence_features: Iterable[dict[str, Tensor]], labels: Tensor | None = None) -> LossOutput:
        features = list(sentence_features)
        columns = self.input_columns(features)
        cap = self.reference_excess(features[0], features[2])
        return self.compute_loss_from_embeddings(self.embed(columns), labels, reference_excess=cap)

    def compute_loss_from_embeddings(
        self, embeddings: list[Tensor], labels: Tensor | None = None, reference_excess: Tensor | float | None = None
    ) -> LossOutput:
        """``embeddings`` as for ``MarginNegationLoss``; ``reference_excess`` = e* for these rows.

        Raises:
            ValueError: no ``reference_excess``.
        """
        if reference_excess is None:
            raise ValueError("ClusterCapMarginLoss.compute_loss_from_embeddings needs reference_excess= (e*).")
        output = MarginNegationLoss.compute_loss_from_embeddings(self, embeddings, labels)
        parts = dict(output) if isinstance(output, dict) else {"margin_negation": output}
        excess = cluster_excess(embeddings[0], embeddings[2])
        parts["cluster_cap"] = self.cap_weight * torch.relu(excess - torch.as_tensor(reference_excess, dtype=excess.dtype, device=excess.device))
        return combine_parts(parts, self.return_parts)

    def get_config_dict(self) -> dict[str, Any]:
        return {**super().get_config_dict(), "cap_weight": self.cap_weight}


def register() -> None:
    """Add ``ClusterCapMarginLoss`` to the recipe loss registry (for lab recipes; the library's docs list only its
    own losses)."""
    from st_debias.recipes import losses

    losses.LOSSES.setdefault("ClusterCapMarginLoss", __name__)
