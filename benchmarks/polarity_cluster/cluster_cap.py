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
n* the same under the reference (eval mode unless ``reference_dropout``), and sg no gradient,

    e = m(n) − sg(m(a)),        e* = m(n*) − m(a*),        L = l_c + λ · l_m + w · max(e − e*, 0)

so only the negation column moves, only while its cluster is above the start model's on the same rows, and the
term is exactly zero once the cap holds. Everything else is ``MarginNegationLoss`` (w = ``cap_weight``).

Which rows: with ``cap_rows="all"`` the figures are taken over every row. The ``st-debias`` rows carry no polarity
label, and their negation column holds the negated sentences among edits of other kinds, which dilute the figure
(about 17 rows of 64 add a negation). With ``cap_rows="negated"`` they are taken over the rows whose negation adds
a negation word to its anchor, counted from the token ids as ``negation_count`` counts words (the words of
``NEG_WORDS`` that are one token, and the contraction "n't", which WordPiece splits into "'" and "t"). A batch
with fewer than two such rows gives no term.

With ``cap_shape="hold"`` the term is w · (e − e*)² instead: two-sided, it also pulls the cluster back up to the
start model's level, and its gradient shrinks as e nears e*. With the reference's dropout on, the noise between
the two sides adds a constant to its expectation and nothing to its gradient's, where the hinge's expected
gradient grows with the noise.

Dropout lowers the figure (``batch_cluster.py``): with ``reference_dropout=True`` the reference embeds with dropout
on, as the trained model does while the term acts, so that the cap compares like with like. Cost: the anchor and
negation columns embedded once more by the reference, without gradients.

The lab's entry points (``benchmarks/pyproject.toml``) add the class to the recipe loss registry, so
that a lab recipe YAML can name it.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Literal

import torch
from torch import Tensor

from st_debias import core
from st_debias.losses import MarginNegationLoss
from st_debias.losses.base import LossOutput, combine_parts
from st_debias.losses.margin_negation import Contrastive
from st_debias.losses.similarity_preservation import model_inputs

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


CapRows = Literal["all", "negated"]
CapShape = Literal["hinge", "hold"]


def negation_tokens(tokenizer: Any) -> tuple[frozenset[int], tuple[int, int] | None]:
    """The ids of the negation words that are one token of ``tokenizer``, and the ids of "'" and "t" (the WordPiece
    split of "n't"; None when the vocabulary lacks them)."""
    from st_debias.data.negation.negator import NEG_WORDS

    def single(token: str) -> int | None:
        ids = tokenizer.convert_tokens_to_ids([token])
        return None if not ids or ids[0] in (None, tokenizer.unk_token_id) else ids[0]

    words = frozenset(i for i in map(single, NEG_WORDS) if i is not None)
    apostrophe, t = single("'"), single("t")
    return words, None if apostrophe is None or t is None else (apostrophe, t)


def negation_counts(input_ids: Tensor, attention_mask: Tensor, words: frozenset[int], contraction: tuple[int, int] | None) -> Tensor:
    """Per row, the negation words among the tokens: ids in ``words``, plus each "'" followed by "t"."""
    real = attention_mask.bool()
    counts = (torch.isin(input_ids, torch.tensor(sorted(words), device=input_ids.device)) & real).sum(dim=1)
    if contraction is not None:
        pairs = (input_ids[:, :-1] == contraction[0]) & (input_ids[:, 1:] == contraction[1]) & real[:, 1:]
        counts = counts + pairs.sum(dim=1)
    return counts


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
        cap_rows: CapRows = "all",
        reference_dropout: bool = False,
        cap_shape: CapShape = "hinge",
    ) -> None:
        """``MarginNegationLoss`` plus w · max(e − e*, 0) (module docstring), w = ``cap_weight``.

        Args:
            model: the SentenceTransformer being trained; its frozen copy, taken now, is the reference unless
                ``reference`` is given (``None`` for the maths alone, through ``compute_loss_from_embeddings``).
            reference: the model whose cluster is the cap.
            cap_rows: ``"all"`` rows, or the ``"negated"`` ones (module docstring).
            reference_dropout: embed with the reference with dropout on.
            cap_shape: ``"hinge"``, w · max(e − e*, 0), or ``"hold"``, w · (e − e*)² (module docstring).

        Raises:
            ValueError: a negative ``cap_weight``; an unknown ``cap_rows`` or ``cap_shape``.
        """
        super().__init__(model, alpha=alpha, beta=beta, margin_weight=margin_weight, contrastive=contrastive,
                         scale=scale, return_parts=return_parts)
        core.check_non_negative(cap_weight, "cap_weight", "ClusterCapMarginLoss")
        self.cap_weight = float(cap_weight)
        if cap_rows not in ("all", "negated"):
            raise ValueError(f"ClusterCapMarginLoss: cap_rows must be 'all' or 'negated', got {cap_rows!r}.")
        self.cap_rows = cap_rows
        if cap_shape not in ("hinge", "hold"):
            raise ValueError(f"ClusterCapMarginLoss: cap_shape must be 'hinge' or 'hold', got {cap_shape!r}.")
        self.cap_shape = cap_shape
        self.reference_dropout = bool(reference_dropout)
        self._negation_tokens = None
        if reference is None and model is not None:
            reference = copy.deepcopy(model)
        if reference is not None:
            reference.requires_grad_(False)
            reference.train(self.reference_dropout)
        # A list, not an attribute module: the reference is not a submodule, so it is neither saved nor optimised.
        self._reference = [reference]

    def reference_excess(
        self, anchor_features: dict[str, Tensor], negation_features: dict[str, Tensor], rows: Tensor | None = None
    ) -> Tensor:
        """e* for one batch: the reference model's cluster excess on the same rows (``rows``: a mask of the rows to
        take, default all), without gradients."""
        reference = self._reference[0]
        if reference is None:
            raise ValueError("ClusterCapMarginLoss: no reference model (pass model= or reference=).")
        device = next(reference.parameters()).device
        with torch.no_grad():
            anchor, negation = (reference(model_inputs(f, device))["sentence_embedding"]
                                for f in (anchor_features, negation_features))
            if rows is not None:
                anchor, negation = anchor[rows.to(device)], negation[rows.to(device)]
            return cluster_excess(anchor, negation)

    def negated_rows(self, anchor_features: dict[str, Tensor], negation_features: dict[str, Tensor]) -> Tensor:
        """The rows whose negation has more negation words than its anchor (from the token ids)."""
        if self._negation_tokens is None:
            self._negation_tokens = negation_tokens(self.model.tokenizer)
        words, contraction = self._negation_tokens
        anchor, negation = (negation_counts(f["input_ids"], f["attention_mask"], words, contraction)
                            for f in (anchor_features, negation_features))
        return negation > anchor

    def forward(self, sentence_features: Iterable[dict[str, Tensor]], labels: Tensor | None = None) -> LossOutput:
        features = list(sentence_features)
        columns = self.input_columns(features)
        rows = self.negated_rows(features[0], features[2]) if self.cap_rows == "negated" else None
        cap = self.reference_excess(features[0], features[2], rows)
        return self.compute_loss_from_embeddings(self.embed(columns), labels, reference_excess=cap, rows=rows)

    def compute_loss_from_embeddings(
        self,
        embeddings: list[Tensor],
        labels: Tensor | None = None,
        reference_excess: Tensor | float | None = None,
        rows: Tensor | None = None,
    ) -> LossOutput:
        """``embeddings`` as for ``MarginNegationLoss``; ``reference_excess`` = e* for these rows; ``rows``: a mask of
        the rows the cap is taken over (default all; fewer than two give no term).

        Raises:
            ValueError: no ``reference_excess``.
        """
        if reference_excess is None:
            raise ValueError("ClusterCapMarginLoss.compute_loss_from_embeddings needs reference_excess= (e*).")
        output = MarginNegationLoss.compute_loss_from_embeddings(self, embeddings, labels)
        parts = dict(output) if isinstance(output, dict) else {"margin_negation": output}
        anchor, negation = embeddings[0], embeddings[2]
        if rows is not None:
            anchor, negation = anchor[rows.to(anchor.device)], negation[rows.to(anchor.device)]
        excess = cluster_excess(anchor, negation)
        above = excess - torch.as_tensor(reference_excess, dtype=excess.dtype, device=excess.device)
        parts["cluster_cap"] = self.cap_weight * (torch.relu(above) if self.cap_shape == "hinge" else above.square())
        return combine_parts(parts, self.return_parts)

    def get_config_dict(self) -> dict[str, Any]:
        return {**super().get_config_dict(), "cap_weight": self.cap_weight, "cap_rows": self.cap_rows,
                "reference_dropout": self.reference_dropout, "cap_shape": self.cap_shape}
