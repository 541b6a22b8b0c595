"""DebiasInfoNCE: DebCSE's alternative-normalisation contrastive loss (Miao et al. 2023)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import torch
from sentence_transformers.util import cos_sim, similarity_fct_name
from torch import Tensor

from st_debias import core

from .base import EmbeddingLoss

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

InBatch = Literal["counterpart", "same", "both"]
Normalization = Literal["joint", "per_column"]


class DebiasInfoNCE(EmbeddingLoss):
    def __init__(
        self,
        model: SentenceTransformer | None,
        scale: float = 20.0,
        similarity_fct: core.SimilarityFct = cos_sim,
        in_batch_negatives: InBatch = "counterpart",
        positive_in_denominator: bool = True,
        batch_norm: Normalization = "joint",
        symmetric: bool = True,
        gather_across_devices: bool = False,
    ) -> None:
        r"""Predict one side's batch-normalised embedding from the other side's raw embedding (DebCSE §4.3).

        Use it on rows built by IPW sampling (:func:`st_debias.data.build_ipw_dataset`): an anchor, a
        mined positive and mined hard negatives. DebCSE eq. 7–9:

        .. math::

            \mathcal{L} = L(z_{x_i}, h_{x_i^+}) + L(z_{x_i^+}, h_{x_i}), \quad
            L(z_a, h_p) = -\log \frac{e^{\cos(z_a, h_p)/\tau}}
                {[e^{\cos(z_a, h_p)/\tau}] + \sum_{k=1}^{m} e^{\cos(z_a, z_{x_i^{-,k}})/\tau}
                 + \sum_{j \ne i} e^{\cos(z_a, z_j)/\tau}}

        :math:`h` are the encoder's embeddings (dropout on), :math:`z` = BatchNorm(:math:`h`) over the
        batch, :math:`\cos` the similarity (cosine by default), :math:`\tau` = 1 / ``scale``, :math:`m` = the number of negative columns. Each term is
        averaged over rows; the two are summed (eq. 7).

        Open points of the paper, decided here (with the alternative as an option):

        - **positive in the denominator**: yes (InfoNCE convention; the printed eq. 8–9 omit it and
          are then unbounded below). ``positive_in_denominator=False`` follows the printed formula.
        - **in-batch candidates** :math:`z_j`: ``"counterpart"`` (default) — the other rows' *other*
          side, as SimCSE's in-batch negatives are the other rows' positives: term 1 uses
          :math:`z_{x_j^+}`, term 2 :math:`z_{x_j}`; ``"same"`` uses the same side; ``"both"`` both.
          A row's own negatives are its ``m`` mined ones; other rows' mined negatives are not used.
        - **BatchNorm**: no affine parameters (parameters owned by a loss are not saved with the
          model) and no running statistics: always the current batch's statistics, in train and
          eval mode alike, with gradients through the statistics; it never touches the model's
          inference output. ``batch_norm="joint"`` (default) computes one mean/variance over every
          embedding of the batch (anchors, positives and negatives), so all :math:`z` share one
          scale; ``"per_column"`` normalises each column with its own statistics. A feature constant
          over the batch (e.g. a column holding the same text in every row under ``"per_column"``)
          normalises to exactly 0 with no gradient, where BatchNorm would amplify rounding noise
          (see :func:`st_debias.core.batch_standardize`).
        - **symmetric**: both terms of eq. 7 (default); ``symmetric=False`` keeps only the first.

        Reduction to MultipleNegativesRankingLoss: none (the z/h asymmetry has no MNRL counterpart).

        Args:
            model: the SentenceTransformer to train, or ``None`` for :meth:`compute_loss_from_embeddings`.
            scale: :math:`1/\tau` > 0; paper τ = 0.05 (20).
            similarity_fct: similarity between embeddings, as in MultipleNegativesRankingLoss; only
                ``util.cos_sim`` (the paper's) is accepted. The :math:`z` side is standardised over the
                batch (every feature mean 0, variance 1), so its norm is about :math:`\sqrt{d}` (≈ 19.6 for
                384 dimensions): a dot product or a distance would scale every logit by that norm and leave
                τ meaningless (a loss in the hundreds where the cosine gives a few units). Computed in
                float32 for float16/bfloat16 embeddings, as is the batch normalisation.
            in_batch_negatives: ``"counterpart"``, ``"same"`` or ``"both"`` (see above).
            positive_in_denominator: keep the positive in the softmax denominator.
            batch_norm: ``"joint"`` or ``"per_column"`` statistics.
            symmetric: add the second, mirrored term of eq. 7.
            gather_across_devices: gather all columns from every process before normalising (DDP), so
                the statistics and candidates are those of the global batch.

        References:
            - Miao et al., "DebCSE: Rethinking Unsupervised Contrastive Sentence Embedding Learning in
              the Debiasing Perspective", CIKM 2023. https://arxiv.org/abs/2309.07396

        Requirements:
            1. (anchor, positive, negative_1..m) rows from IPW sampling; (anchor, positive) pairs work
               with in-batch negatives only. BatchNorm needs batches of several rows (≥ 16 advised):
               a batch of one row raises, so set ``dataloader_drop_last=True`` when the dataset size
               is not a multiple of the batch size.
            2. ``BatchSamplers.NO_DUPLICATES``.

        Inputs:
            +-------------------------------------------------+--------+
            | Texts                                           | Labels |
            +=================================================+========+
            | (anchor, positive) pairs                        | none   |
            +-------------------------------------------------+--------+
            | (anchor, positive, negative_1, ..., negative_m) | none   |
            +-------------------------------------------------+--------+

        Relations:
            - :class:`InstanceWeightedMNRL` and sentence-transformers' MultipleNegativesRankingLoss
              score raw embeddings on both sides.

        Example:
            ::

                from datasets import Dataset
                from sentence_transformers import SentenceTransformer, SentenceTransformerTrainer
                from st_debias.losses import DebiasInfoNCE
                from st_debias.paths import resolve_model_name

                model = SentenceTransformer(resolve_model_name())
                train_dataset = Dataset.from_dict({
                    "anchor": ["A man is playing a guitar.", "The cat sleeps on the sofa."],
                    "positive": ["A man plays the guitar.", "On the sofa, the cat is sleeping."],
                    "negative_1": ["A man is playing a piano.", "The dog sleeps on the sofa."],
                })
                loss = DebiasInfoNCE(model)
                SentenceTransformerTrainer(model=model, train_dataset=train_dataset, loss=loss).train()
        """
        super().__init__(model)
        name = "DebiasInfoNCE"
        core.check_positive(scale, "scale", name)
        if in_batch_negatives not in ("counterpart", "same", "both"):
            raise ValueError(f"{name}: in_batch_negatives must be 'counterpart', 'same' or 'both', got {in_batch_negatives!r}.")
        if batch_norm not in ("joint", "per_column"):
            raise ValueError(f"{name}: batch_norm must be 'joint' or 'per_column', got {batch_norm!r}.")
        if similarity_fct_name(similarity_fct) != "cos_sim":
            raise ValueError(
                f"{name}: similarity_fct must be cos_sim, got {similarity_fct_name(similarity_fct)}: the loss scores "
                "batch-standardised embeddings (norm about sqrt(dimension)), on which only the cosine keeps the "
                "temperature's meaning."
            )
        self.scale = float(scale)
        self.similarity_fct = similarity_fct
        self.in_batch_negatives = in_batch_negatives
        self.positive_in_denominator = positive_in_denominator
        self.batch_norm = batch_norm
        self.symmetric = symmetric
        self.gather_across_devices = gather_across_devices

    def compute_loss_from_embeddings(self, embeddings: list[Tensor], labels: Tensor | None = None) -> Tensor:
        name = "DebiasInfoNCE"
        core.check_num_columns(embeddings, *self.text_columns, name, "anchor, positive, negative_1..m")
        # Upcast once per column, so that a column used twice sums its gradient in float32, not float16.
        embeddings = [core.at_least_float32(e) for e in embeddings]
        batch_size = embeddings[0].size(0)
        columns, offset = core.gather_rows(list(embeddings), self.gather_across_devices)
        world_rows = columns[0].size(0)
        if world_rows < 2:
            # BatchNorm over one row is 0/0: no value matches MNRL here, unlike the other losses.
            raise ValueError(
                f"{name}: batch normalisation needs at least 2 rows per batch, got {world_rows}. The last batch "
                "of an epoch is this short when the dataset size leaves a remainder of 1: set "
                "dataloader_drop_last=True in the training arguments (or change the batch size)."
            )

        if self.batch_norm == "joint":
            normalized = list(core.batch_standardize(torch.cat(columns)).split(world_rows))
        else:
            normalized = [core.batch_standardize(column) for column in columns]
        local = slice(offset, offset + batch_size)
        anchor_h, positive_h = columns[0][local], columns[1][local]
        anchor_z, positive_z = normalized[0], normalized[1]
        negatives_z = [column[local] for column in normalized[2:]]

        loss = self._term(anchor_z[local], positive_h, positive_z, anchor_z, negatives_z, offset)
        if self.symmetric:
            loss = loss + self._term(positive_z[local], anchor_h, anchor_z, positive_z, negatives_z, offset)
        return loss

    def _term(
        self, query_z: Tensor, target_h: Tensor, counterpart_z: Tensor, same_z: Tensor, negatives_z: list[Tensor], offset: int
    ) -> Tensor:
        """One term L(z_query, h_target) of eq. 7, averaged over the local rows."""
        batch_size = query_z.size(0)
        similarity = self.similarity_fct
        blocks = [core.rowwise_similarity(query_z, target_h, similarity).unsqueeze(1)]
        blocks += [core.rowwise_similarity(query_z, negative, similarity).unsqueeze(1) for negative in negatives_z]
        keep = [torch.ones(batch_size, len(blocks), dtype=torch.bool, device=query_z.device)]
        in_batch = {"counterpart": [counterpart_z], "same": [same_z], "both": [counterpart_z, same_z]}
        for candidates in in_batch[self.in_batch_negatives]:
            blocks.append(core.similarity_matrix(query_z, candidates, similarity))
            # The own row is the query itself ("same") or its own positive ("counterpart"): not a negative.
            keep.append(~core.own_row_mask(batch_size, candidates.size(0), 1, offset, query_z.device))
        logits = core.scaled(torch.cat(blocks, dim=1), self.scale)
        positive = torch.zeros(batch_size, dtype=torch.long, device=query_z.device)
        return core.infonce(logits, positive, keep=torch.cat(keep, dim=1), include_positive=self.positive_in_denominator)

    def get_config_dict(self) -> dict[str, Any]:
        return {
            "scale": self.scale,
            "similarity_fct": similarity_fct_name(self.similarity_fct),
            "in_batch_negatives": self.in_batch_negatives,
            "positive_in_denominator": self.positive_in_denominator,
            "batch_norm": self.batch_norm,
            "symmetric": self.symmetric,
            "gather_across_devices": self.gather_across_devices,
        }

    @property
    def citation(self) -> str:
        return """
@inproceedings{miao2023debcse,
    title = {{DebCSE}: Rethinking Unsupervised Contrastive Sentence Embedding Learning in the Debiasing Perspective},
    author = {Miao, Pu and Du, Zeyao and Zhang, Junlin},
    booktitle = {Proceedings of the 32nd ACM International Conference on Information and Knowledge Management},
    year = {2023},
    pages = {1847--1856},
    url = {https://arxiv.org/abs/2309.07396},
}
"""
