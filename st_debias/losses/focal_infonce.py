"""FocalInfoNCE: InfoNCE with focal modulation of the similarities (Hou & Li 2023)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch
from sentence_transformers.util import cos_sim, similarity_fct_name
from torch import Tensor

from st_debias import core

from .base import EmbeddingLoss

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer


class FocalInfoNCE(EmbeddingLoss):
    def __init__(
        self,
        model: SentenceTransformer | None,
        scale: float = 20.0,
        margin: float = 0.3,
        similarity_fct: core.SimilarityFct = cos_sim,
        gather_across_devices: bool = False,
    ) -> None:
        r"""InfoNCE whose logits up-weight hard negatives and down-weight easy positives.

        Use it in place of :class:`MultipleNegativesRankingLoss` (e.g. for unsupervised SimCSE with
        anchor = positive) when easy pairs dominate the gradient. Focal-InfoNCE (Hou & Li 2023, eq. 2):

        .. math::

            l_i = -\log \frac{e^{(s_p^i)^2/\tau}}
                  {\sum_{j \ne i} e^{s_n^{ij}(s_n^{ij}+m)/\tau} + e^{(s_p^i)^2/\tau}}

        with :math:`s` the similarity (cosine by default), :math:`s_p^i` = s(anchor_i, positive_i),
        :math:`s_n^{ij}` = s(anchor_i, candidate_j) for every other positive in the batch and every hard
        negative, :math:`\tau` = 1 / ``scale`` and :math:`m` = ``margin``. The loss is the mean over
        rows (the reference code's reduction; the paper writes a sum). Hard-negative columns are not in
        the paper: they get the same :math:`s(s+m)` modulation as in-batch negatives.

        Reduction to MultipleNegativesRankingLoss: none — no value of ``margin`` gives plain InfoNCE
        (the positive logit is always squared).

        Args:
            model: the SentenceTransformer to train, or ``None`` to use only
                :meth:`compute_loss_from_embeddings`.
            scale: inverse temperature :math:`1/\tau`, > 0. Paper default 20 (τ = 0.05).
            margin: :math:`m`, the negative modulation offset. Paper default 0.3.
            similarity_fct: similarity between embeddings, as in MultipleNegativesRankingLoss:
                ``util.cos_sim`` (default; the paper's) or e.g. ``util.dot_score`` for a model trained
                with dot products (the modulation then acts on unbounded scores). Computed in float32
                for float16/bfloat16 embeddings.
            gather_across_devices: gather candidates from all processes (DDP), as in
                MultipleNegativesRankingLoss.

        References:
            - Hou & Li, "Improving Contrastive Learning of Sentence Embeddings with Focal-InfoNCE",
              Findings of EMNLP 2023. https://arxiv.org/abs/2310.06918
            - Reference code: github.com/puerrrr/Focal-InfoNCE (``sp_logits``).

        Requirements:
            1. (anchor, positive) pairs; for unsupervised SimCSE use the same text in both columns.
            2. Optional hard negatives. Use ``BatchSamplers.NO_DUPLICATES``.

        Inputs:
            +-------------------------------------------------+--------+
            | Texts                                           | Labels |
            +=================================================+========+
            | (anchor, positive) pairs                        | none   |
            +-------------------------------------------------+--------+
            | (anchor, positive, negative_1, ..., negative_n) | none   |
            +-------------------------------------------------+--------+

        Relations:
            - :class:`MultipleNegativesRankingLoss` is the unmodulated InfoNCE.
            - :class:`InstanceWeightedMNRL` removes false negatives instead of re-weighting hard ones.

        Example:
            ::

                from datasets import Dataset
                from sentence_transformers import SentenceTransformer, SentenceTransformerTrainer
                from st_debias.losses import FocalInfoNCE
                from st_debias.paths import resolve_model_name

                model = SentenceTransformer(resolve_model_name())  # packaged all-MiniLM-L6-v2 offline
                texts = ["A man is playing a guitar.", "The cat sleeps on the sofa.", "Stocks fell sharply."]
                train_dataset = Dataset.from_dict({"anchor": texts, "positive": texts})
                trainer = SentenceTransformerTrainer(model=model, train_dataset=train_dataset,
                                                     loss=FocalInfoNCE(model))
                trainer.train()
        """
        super().__init__(model)
        core.check_positive(scale, "scale", "FocalInfoNCE")
        core.check_finite_number(margin, "margin", "FocalInfoNCE")
        self.scale = float(scale)
        self.margin = float(margin)
        self.similarity_fct = similarity_fct
        self.gather_across_devices = gather_across_devices

    def compute_loss_from_embeddings(self, embeddings: list[Tensor], labels: Tensor | None = None) -> Tensor:
        core.check_num_columns(embeddings, *self.text_columns, "FocalInfoNCE", "anchor, positive, negative_1..n")
        # Upcast once per column, so that a column used twice sums its gradient in float32, not float16.
        embeddings = [core.at_least_float32(e) for e in embeddings]
        anchors = embeddings[0]
        batch_size = anchors.size(0)
        candidates, offset = core.gather_rows(list(embeddings[1:]), self.gather_across_devices)
        # A batch of one with no hard negative leaves the positive alone: loss 0, as in MNRL.
        similarity = core.similarity_matrix(anchors, torch.cat(candidates), self.similarity_fct)
        positive = core.positive_index(batch_size, offset, anchors.device)
        logits = core.focal(similarity, core.one_hot_mask(positive, similarity.size(1)), self.margin, self.scale)
        return core.infonce(logits, positive)

    def get_config_dict(self) -> dict[str, Any]:
        return {
            "scale": self.scale,
            "margin": self.margin,
            "similarity_fct": similarity_fct_name(self.similarity_fct),
            "gather_across_devices": self.gather_across_devices,
        }

    @property
    def citation(self) -> str:
        return """
@inproceedings{hou2023focalinfonce,
    title = {Improving Contrastive Learning of Sentence Embeddings with Focal-{InfoNCE}},
    author = {Hou, Pengyue and Li, Xingyu},
    booktitle = {Findings of the Association for Computational Linguistics: EMNLP 2023},
    year = {2023},
    url = {https://arxiv.org/abs/2310.06918},
}
"""

