"""MarginNegationLoss: keep a negation related but below the paraphrase (OssCSE, Shi et al. 2023)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

import torch
from torch import Tensor

from st_debias import core

from ._base import EmbeddingLoss

Contrastive = Literal["dropout", "paraphrase"] | None


class MarginNegationLoss(EmbeddingLoss):
    def __init__(
        self,
        model: Any | None,
        alpha: float = 0.05,
        beta: float = 0.2,
        margin_weight: float = 1e-3,
        contrastive: Contrastive = "dropout",
        scale: float = 20.0,
        gather_across_devices: bool = False,
    ) -> None:
        r"""Two-way hinge that ranks a paraphrase above a negation, within a window (OssCSE eq. 3, 5).

        Use it to stop a model from treating a sentence and its negation as near-identical, without
        teaching it that "not" means "unrelated". For rows (anchor :math:`h_i`, paraphrase
        :math:`h_i^p`, negation :math:`h_i^n`), with cosine :math:`s`:

        .. math::

            U_m^i = \max(s(h_i,h_i^n) - s(h_i,h_i^p) + \alpha, 0) + \max(s(h_i,h_i^p) - s(h_i,h_i^n) - \beta, 0)

        so the paraphrase must beat the negation by at least :math:`\alpha` and at most :math:`\beta`.
        :math:`l_m` is the mean of :math:`U_m^i` over rows. The full OssCSE objective
        :math:`\mathcal{L} = l_c + l_r + \lambda l_m` is this loss (``l_c`` + ``margin_weight``·``l_m``)
        wrapped in :class:`RecallRegularizer` (``l_r``). The contrastive part :math:`l_c`:

        - ``"dropout"`` (default, OssCSE's SimCSE term): InfoNCE between the anchor and a second
          dropout view of the anchor (the anchor column is embedded twice), in-batch negatives only;
        - ``"paraphrase"``: InfoNCE between the anchor and its paraphrase, in-batch negatives only;
        - ``None``: the margin term alone.

        Negations never enter :math:`l_c` as hard negatives: as unbounded negatives they teach
        "not ⇒ different" and cost STS accuracy (docs/losses/margin_negation.md).

        Returns a dict ``{"contrastive": l_c, "margin": λ·l_m}`` (``"contrastive"`` absent when
        ``contrastive=None``); the trainer sums and logs the parts.

        Reduction to MultipleNegativesRankingLoss: ``margin_weight=0`` with ``contrastive="paraphrase"``
        is MNRL on (anchor, paraphrase); with ``"dropout"`` it is unsupervised SimCSE.

        Args:
            model: the SentenceTransformer to train, or ``None`` for :meth:`compute_loss_from_embeddings`.
            alpha: minimum lead of the paraphrase over the negation, ≥ 0; paper 0.05.
            beta: maximum lead, ≥ ``alpha``; paper 0.2.
            margin_weight: λ, ≥ 0; paper 1e-3 (chosen on STS-B dev). Use 1.0 for the margin alone.
            contrastive: ``"dropout"``, ``"paraphrase"`` or ``None`` (see above).
            scale: 1/τ of the contrastive part; paper τ = 0.05 (20).
            gather_across_devices: gather the contrastive part's candidates from all processes (DDP).

        References:
            - Shi et al., "OssCSE: Overcoming Surface Structure Bias in Contrastive Learning for
              Unsupervised Sentence Embedding", EMNLP 2023.

        Requirements:
            1. (anchor, paraphrase, negation) rows, e.g. from :func:`st_debias.data.build_negation_dataset`.
            2. ``BatchSamplers.NO_DUPLICATES``.

        Inputs:
            +----------------------------------+--------+
            | Texts                            | Labels |
            +==================================+========+
            | (anchor, paraphrase, negation)   | none   |
            +----------------------------------+--------+

        Relations:
            - :class:`RecallRegularizer` adds OssCSE's :math:`l_r`.
            - MultipleNegativesRankingLoss on (anchor, paraphrase, negation) triplets treats the
              negation as an unbounded hard negative.

        Example:
            ::

                from datasets import Dataset
                from sentence_transformers import SentenceTransformer, SentenceTransformerTrainer
                from st_debias.losses import MarginNegationLoss, RecallRegularizer
                from st_debias.paths import resolve_model_name

                model = SentenceTransformer(resolve_model_name())
                train_dataset = Dataset.from_dict({
                    "anchor": ["The committee approved the budget.", "She likes the new design."],
                    "paraphrase": ["The budget was approved by the committee.", "The new design is liked by her."],
                    "negation": ["The committee did not approve the budget.", "She does not like the new design."],
                })
                loss = RecallRegularizer(MarginNegationLoss(model), gamma=2e-3)
                SentenceTransformerTrainer(model=model, train_dataset=train_dataset, loss=loss).train()
        """
        super().__init__(model)
        name = "MarginNegationLoss"
        core.check_non_negative(alpha, "alpha", name)
        core.check_non_negative(beta, "beta", name)
        if beta < alpha:
            raise ValueError(f"{name}: beta ({beta}) must be ≥ alpha ({alpha}), or no similarity gap satisfies both hinges.")
        core.check_non_negative(margin_weight, "margin_weight", name)
        core.check_positive(scale, "scale", name)
        if contrastive not in ("dropout", "paraphrase", None):
            raise ValueError(f"{name}: contrastive must be 'dropout', 'paraphrase' or None, got {contrastive!r}.")
        self.alpha = float(alpha)
        self.beta = float(beta)
        self.margin_weight = float(margin_weight)
        self.contrastive = contrastive
        self.scale = float(scale)
        self.gather_across_devices = gather_across_devices

    def forward(self, sentence_features: Iterable[dict[str, Tensor]], labels: Tensor | None = None) -> dict[str, Tensor]:
        features = list(sentence_features)
        if self.contrastive == "dropout" and len(features) == 3:
            # A second dropout view of the anchor, as the fourth column (copy: the model writes into dicts).
            features.append(dict(features[0]))
        return self.compute_loss_from_embeddings(self.embed(features), labels)

    def compute_loss_from_embeddings(self, embeddings: list[Tensor], labels: Tensor | None = None) -> dict[str, Tensor]:
        """``embeddings`` = [anchor, paraphrase, negation], plus the anchor's second view when ``contrastive="dropout"``."""
        name = "MarginNegationLoss"
        expected = 4 if self.contrastive == "dropout" else 3
        layout = "anchor, paraphrase, negation" + (", anchor dropout view" if expected == 4 else "")
        core.check_num_columns(embeddings, expected, expected, name, layout)
        anchor, paraphrase, negation = embeddings[:3]
        paraphrase_similarity = core.rowwise_cosine(anchor, paraphrase)
        negation_similarity = core.rowwise_cosine(anchor, negation)
        gap = paraphrase_similarity - negation_similarity
        margin = (torch.relu(self.alpha - gap) + torch.relu(gap - self.beta)).mean()

        parts: dict[str, Tensor] = {}
        if self.contrastive is not None:
            positives = embeddings[3] if self.contrastive == "dropout" else paraphrase
            (gathered,), offset = core.gather_rows([positives], self.gather_across_devices)
            core.check_has_negatives(gathered.size(0) - 1, name)
            logits = core.scaled(core.cosine_matrix(anchor, gathered), self.scale)
            parts["contrastive"] = core.infonce(logits, core.positive_index(anchor.size(0), offset, anchor.device))
        parts["margin"] = self.margin_weight * margin
        return parts

    def get_config_dict(self) -> dict[str, Any]:
        return {
            "alpha": self.alpha,
            "beta": self.beta,
            "margin_weight": self.margin_weight,
            "contrastive": self.contrastive,
            "scale": self.scale,
            "gather_across_devices": self.gather_across_devices,
        }

    @property
    def citation(self) -> str:
        return OSSCSE_CITATION


OSSCSE_CITATION = """
@inproceedings{shi2023osscse,
    title = {{OssCSE}: Overcoming Surface Structure Bias in Contrastive Learning for Unsupervised Sentence Embedding},
    author = {Shi, Zhan and Wang, Guoyin and Bai, Ke and Li, Jiwei and Li, Xiang and Cui, Qingjun and Zeng, Belinda and Chilimbi, Trishul and Zhu, Xiaodan},
    booktitle = {Proceedings of the 2023 Conference on Empirical Methods in Natural Language Processing},
    year = {2023},
    pages = {7242--7254},
}
"""
