"""InstanceWeightedMNRL: InfoNCE that drops guide-detected false negatives (DCLR, Zhou et al. 2022)."""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Literal

import torch
from sentence_transformers.base.losses.merged_forward import embed_columns
from sentence_transformers.util import batch_to_device, cos_sim, similarity_fct_name
from torch import Tensor

from st_debias import core

from .base import EmbeddingLoss

if TYPE_CHECKING:
    from datasets import Dataset
    from sentence_transformers import SentenceTransformer

logger = logging.getLogger(__name__)

LabelMode = Literal["none", "weights", "guide_embeddings", "weights_and_guide_embeddings"]
_LABEL_MODES = ("none", "weights", "guide_embeddings", "weights_and_guide_embeddings")


class InstanceWeightedMNRL(EmbeddingLoss):
    def __init__(
        self,
        model: SentenceTransformer | None,
        guide: SentenceTransformer | None = None,
        scale: float = 20.0,
        similarity_fct: core.SimilarityFct = cos_sim,
        threshold: float = 0.9,
        labels: LabelMode = "none",
        noise_ratio: float = 0.0,
        noise_steps: int = 4,
        noise_step_size: float = 1e-3,
        noise_std: float = 1.0,
        gather_across_devices: bool = False,
    ) -> None:
        r"""MultipleNegativesRankingLoss with per-(anchor, candidate) weights from a frozen guide model.

        Use it to stop contrastive training from pushing away false negatives: in-batch candidates that
        a complementary ("guide") model already finds near-identical to the anchor leave the softmax
        denominator. DCLR (Zhou et al. 2022), eq. 5–6:

        .. math::

            \alpha_{ij} = \begin{cases} 0 & s_G(a_i, c_j) \ge \varphi \\ 1 & \text{otherwise}\end{cases},
            \qquad
            l_i = -\log \frac{e^{s(a_i, p_i)/\tau}}
                  {e^{s(a_i, p_i)/\tau} + \sum_{j \ne p_i} \alpha_{ij}\, e^{s(a_i, c_j)/\tau}}

        :math:`s` is the trained model's similarity (cosine by default), :math:`s_G` the guide's cosine,
        :math:`c_j` runs over every positive and hard negative in the batch, :math:`\varphi` = ``threshold``, :math:`\tau` = 1 /
        ``scale``. Masked candidates leave the denominator (the paper's eq. 6; the reference code
        instead multiplies them by 0, leaving :math:`e^0` terms). The positive is never masked.
        A row whose candidates are all masked keeps only its positive, so its loss is exactly 0
        (finite, no gradient): there is nothing left to contrast against. Guide embeddings with NaN
        or inf are rejected (they would mask silently); the share of candidates the guide masked is
        kept in :attr:`last_masked_share` and logged (a warning when it exceeds half).

        Options beyond the mask:

        - noise-based negatives (DCLR §4.2, ``noise_ratio`` = k > 0): k·B vectors from
          N(0, ``noise_std``²), refined by ``noise_steps`` normalised gradient-ascent steps of size
          ``noise_step_size`` on the InfoNCE over [positives | noise] (the main τ, as the reference
          code; the paper's eq. 2 has only the noise in the denominator and its own τ_u), then detached
          and appended as negatives with weight 1 — the paper also weights them with the guide
          (eq. 5–6), but a guide cannot embed a vector that has no text, so they are always kept.
          k·B is rounded half up;
        - per-row instance weights from the label column (``labels="weights"``, e.g. IPW-weighted
          data): :math:`L = \frac{1}{B}\sum_i w_i l_i`;
        - a precomputed guide (``labels="guide_embeddings"``): the label column holds, per row, the
          guide embeddings of every text column concatenated (see
          :func:`st_debias.data.guide.attach_guide_embeddings`), so training runs no guide forward.
          ``"weights_and_guide_embeddings"`` puts the row weight first, then the embeddings.

        Reduction to MultipleNegativesRankingLoss: no guide (or nothing above ``threshold``), unit
        weights and ``noise_ratio=0`` give exactly ``MultipleNegativesRankingLoss(scale=scale)``.

        Args:
            model: the SentenceTransformer to train, or ``None`` for :meth:`compute_loss_from_embeddings`.
            guide: frozen SentenceTransformer used for the mask (any tokenizer: texts are re-tokenized
                when its vocabulary differs). ``None`` with ``labels`` holding guide embeddings, or for
                no mask at all.
            scale: :math:`1/\tau` > 0. Paper: τ = 0.05 (20).
            similarity_fct: the trained model's similarity, as in MultipleNegativesRankingLoss:
                ``util.cos_sim`` (default) or e.g. ``util.dot_score`` for a model trained with dot
                products. Computed in float32 for float16/bfloat16 embeddings. The guide is always
                compared by cosine (``threshold`` is a cosine).
            threshold: :math:`\varphi \in (-1, 1]`; 0.9 for BERT, 0.85 for RoBERTa in the paper.
                1.0 masks only candidates identical to the anchor under the guide (up to 1e-6 of rounding).
            labels: what the label column holds: ``"none"`` (ignored), ``"weights"``,
                ``"guide_embeddings"`` or ``"weights_and_guide_embeddings"``.
            noise_ratio: k, noise negatives per row (0 = off). Paper: 1 (BERT-base), 2.5 (RoBERTa-base).
            noise_steps: t gradient-ascent steps, paper 4.
            noise_step_size: β, paper 1e-3.
            noise_std: σ of the initial noise (irrelevant under cosine), paper 1.
            gather_across_devices: gather candidates from all processes (DDP).

        References:
            - Zhou et al., "Debiased Contrastive Learning of Unsupervised Sentence Representations",
              ACL 2022. https://arxiv.org/abs/2205.00656 (code: github.com/RUCAIBox/DCLR)

        Requirements:
            1. (anchor, positive) pairs or (anchor, positive, negative_1..n) tuples.
            2. A guide model, or guide embeddings in the label column. Use ``BatchSamplers.NO_DUPLICATES``.

        Inputs:
            +-------------------------------------------------+-----------------------------------------+
            | Texts                                           | Labels                                  |
            +=================================================+=========================================+
            | (anchor, positive) pairs                        | none, weight, guide embeddings, or both |
            +-------------------------------------------------+-----------------------------------------+
            | (anchor, positive, negative_1, ..., negative_n) | none, weight, guide embeddings, or both |
            +-------------------------------------------------+-----------------------------------------+

        Relations:
            - sentence-transformers' :class:`GISTEmbedLoss` masks with the guide's *positive* similarity
              as the threshold; in unsupervised SimCSE that is ≈ 1 and filters almost nothing. DCLR's
              fixed φ does filter.
            - :class:`DebiasInfoNCE` consumes IPW-sampled rows; their weights can be used here too.

        Example:
            ::

                from datasets import Dataset
                from sentence_transformers import SentenceTransformer, SentenceTransformerTrainer
                from st_debias.losses import InstanceWeightedMNRL
                from st_debias.paths import resolve_model_name

                model = SentenceTransformer(resolve_model_name())
                guide = SentenceTransformer(resolve_model_name())  # frozen copy of the start model
                texts = ["A man is playing a guitar.", "A man plays the guitar.", "Stocks fell sharply."]
                train_dataset = Dataset.from_dict({"anchor": texts, "positive": texts})
                loss = InstanceWeightedMNRL(model, guide=guide, threshold=0.9, noise_ratio=1.0)
                SentenceTransformerTrainer(model=model, train_dataset=train_dataset, loss=loss).train()
        """
        super().__init__(model)
        name = "InstanceWeightedMNRL"
        core.check_positive(scale, "scale", name)
        if not (isinstance(threshold, (int, float)) and math.isfinite(threshold) and -1.0 < threshold <= 1.0):
            raise ValueError(f"{name}: threshold φ must be in (-1, 1], got {threshold!r}.")
        if labels not in _LABEL_MODES:
            raise ValueError(f"{name}: labels must be one of {_LABEL_MODES}, got {labels!r}.")
        if guide is not None and "guide_embeddings" in labels:
            raise ValueError(f"{name}: pass either a guide model or labels={labels!r} (precomputed guide), not both.")
        core.check_non_negative(noise_ratio, "noise_ratio", name)
        if not (isinstance(noise_steps, int) and noise_steps >= 0):
            raise ValueError(f"{name}: noise_steps must be a non-negative int, got {noise_steps!r}.")
        core.check_non_negative(noise_step_size, "noise_step_size", name)
        core.check_positive(noise_std, "noise_std", name)
        self.scale = float(scale)
        self.similarity_fct = similarity_fct
        self.threshold = float(threshold)
        self.labels = labels
        self.noise_ratio = float(noise_ratio)
        self.noise_steps = noise_steps
        self.noise_step_size = float(noise_step_size)
        self.noise_std = float(noise_std)
        self.gather_across_devices = gather_across_devices
        self.guide = guide
        self._retokenize = False
        # Share of the negative candidates the guide masked in the last batch (None before a guided batch).
        self.last_masked_share: float | None = None
        self._warned_about_masking = False
        if guide is not None:
            guide.requires_grad_(False)
            guide.eval()
            if model is not None:
                self._retokenize = _needs_retokenization(model, guide)

    # -- forward ---------------------------------------------------------------------------------
    def forward(self, sentence_features: Iterable[dict[str, Tensor]], labels: Tensor | None = None) -> Tensor:
        sentence_features = list(sentence_features)
        # The guide writes its outputs into the dicts it gets: give it shallow copies.
        guide_features = [dict(features) for features in sentence_features]
        embeddings = self.embed(sentence_features)
        guide_embeddings = self._embed_with_guide(guide_features) if self.guide is not None else None
        return self.compute_loss_from_embeddings(embeddings, labels, guide_embeddings=guide_embeddings)

    @torch.no_grad()
    def _embed_with_guide(self, features: list[dict[str, Tensor]]) -> list[Tensor]:
        self.guide.eval()
        if self._retokenize:
            tokenizer = self.model.tokenizer
            texts = [tokenizer.batch_decode(f["input_ids"], skip_special_tokens=True) for f in features]
            features = [batch_to_device(self.guide.preprocess(column), self.guide.device) for column in texts]
        return embed_columns(self.guide, features)

    # -- math --------------------------------------------------------------------------------------
    def compute_loss_from_embeddings(
        self,
        embeddings: list[Tensor],
        labels: Tensor | None = None,
        guide_embeddings: list[Tensor] | None = None,
    ) -> Tensor:
        """Loss from embeddings; ``guide_embeddings`` (one tensor per column) overrides the label column."""
        name = "InstanceWeightedMNRL"
        core.check_num_columns(embeddings, *self.text_columns, name, "anchor, positive, negative_1..n")
        # Upcast once per column, so that a column used twice sums its gradient in float32, not float16.
        embeddings = [core.at_least_float32(e) for e in embeddings]
        anchors = embeddings[0]
        batch_size = anchors.size(0)
        row_weights, label_guide = self._parse_labels(labels, batch_size, len(embeddings))
        guide_embeddings = guide_embeddings if guide_embeddings is not None else label_guide

        candidates, offset = core.gather_rows(list(embeddings[1:]), self.gather_across_devices)
        num_noise = int(self.noise_ratio * batch_size + 0.5)
        positive = core.positive_index(batch_size, offset, anchors.device)

        # A batch of one with no hard negative leaves the positive alone: loss 0, as in MNRL.
        logits = core.scaled(core.similarity_matrix(anchors, torch.cat(candidates), self.similarity_fct), self.scale)
        keep = None
        if guide_embeddings is not None:
            if len(guide_embeddings) != len(embeddings):
                raise ValueError(f"{name}: got guide embeddings for {len(guide_embeddings)} columns, expected {len(embeddings)}.")
            core.check_finite(list(guide_embeddings), "guide embeddings", name)
            guide_candidates, _ = core.gather_rows(list(guide_embeddings[1:]), self.gather_across_devices)
            guide_similarity = core.similarity_matrix(guide_embeddings[0], torch.cat(guide_candidates)).to(logits.device)
            keep = core.threshold_mask(guide_similarity, self.threshold, keep=core.one_hot_mask(positive, logits.size(1)))
            self._log_masked_share(keep)

        if num_noise > 0:
            noise = core.adversarial_noise(
                anchors,
                candidates[0],
                positive,
                num_noise,
                self.noise_steps,
                self.noise_step_size,
                self.scale,
                self.noise_std,
                similarity_fct=self.similarity_fct,
            )
            noise_logits = core.scaled(core.similarity_matrix(anchors, noise, self.similarity_fct), self.scale)
            logits = torch.cat([logits, noise_logits], dim=1)
            if keep is not None:
                keep = torch.cat([keep, keep.new_ones(batch_size, num_noise)], dim=1)
        return core.infonce(logits, positive, keep=keep, row_weights=row_weights)

    def _log_masked_share(self, keep: Tensor) -> None:
        """Record the share of negative candidates the guide masked; log it for the first batch, and warn
        (once) when a batch loses more than half of them."""
        negatives = keep.numel() - keep.size(0)  # every candidate but each row's one positive
        if negatives == 0:
            return
        share = float((~keep).sum()) / negatives
        first_batch = self.last_masked_share is None
        self.last_masked_share = share
        if share > 0.5 and not self._warned_about_masking:
            self._warned_about_masking = True
            logger.warning(
                "InstanceWeightedMNRL: the guide masked %.0f%% of the in-batch negatives (threshold %.3g); "
                "a row with all of them masked trains on nothing. Check the guide, or raise the threshold.",
                100 * share,
                self.threshold,
            )
        else:
            logger.log(
                logging.INFO if first_batch else logging.DEBUG,
                "InstanceWeightedMNRL: the guide masked %.1f%% of the in-batch negatives.",
                100 * share,
            )

    def _parse_labels(
        self, labels: Tensor | None, batch_size: int, num_columns: int
    ) -> tuple[Tensor | None, list[Tensor] | None]:
        if self.labels == "none":
            return None, None
        name = "InstanceWeightedMNRL"
        if labels is None:
            raise ValueError(f"{name}: labels={self.labels!r} but the batch has no label column.")
        if labels.numel() == 0 or labels.numel() % batch_size:
            raise ValueError(f"{name}: the label column holds {labels.numel()} values, not a multiple of the {batch_size} rows.")
        labels = labels.reshape(batch_size, -1)
        if not labels.is_floating_point():
            labels = labels.to(torch.get_default_dtype())
        weights = None
        if self.labels in ("weights", "weights_and_guide_embeddings"):
            weights = core.check_row_weights(labels[:, 0], batch_size, name)
            labels = labels[:, 1:]
        if self.labels == "weights":
            if labels.size(1):
                raise ValueError(f"{name}: labels='weights' expects one value per row, got {labels.size(1) + 1}.")
            return weights, None
        if labels.size(1) == 0 or labels.size(1) % num_columns:
            raise ValueError(
                f"{name}: the label column holds {labels.size(1)} guide values per row, not a multiple of the "
                f"{num_columns} text columns."
            )
        return weights, list(labels.reshape(batch_size, num_columns, -1).unbind(dim=1))

    @classmethod
    def from_recipe(
        cls,
        model: SentenceTransformer,
        rows: Dataset,
        params: dict[str, Any],
        guide: SentenceTransformer | None = None,
        guide_mode: str = "precomputed",
        show_progress_bar: bool = True,
    ) -> tuple[Any, Dataset]:
        """The loss a recipe asks for, and its rows: a ``label`` column of the rows holds per-row weights; a
        ``precomputed`` guide's embeddings are added to it (:func:`st_debias.data.guide.attach_guide_embeddings`),
        a ``live`` guide embeds each batch. ``labels`` is set from those."""
        has_weights = "label" in rows.column_names
        if guide is not None and guide_mode == "precomputed":
            from st_debias.data.guide import attach_guide_embeddings

            rows = attach_guide_embeddings(
                rows, guide, weight_column="label" if has_weights else None, show_progress_bar=show_progress_bar
            )
            return cls(model, **params, labels="weights_and_guide_embeddings" if has_weights else "guide_embeddings"), rows
        return cls(model, guide=guide, **{"labels": "weights" if has_weights else "none", **params}), rows

    def get_config_dict(self) -> dict[str, Any]:
        return {
            "scale": self.scale,
            "similarity_fct": similarity_fct_name(self.similarity_fct),
            "threshold": self.threshold,
            "labels": self.labels,
            "guide": _model_name(self.guide),
            "noise_ratio": self.noise_ratio,
            "noise_steps": self.noise_steps,
            "noise_step_size": self.noise_step_size,
            "noise_std": self.noise_std,
            "gather_across_devices": self.gather_across_devices,
        }

    @property
    def citation(self) -> str:
        return """
@inproceedings{zhou2022dclr,
    title = {Debiased Contrastive Learning of Unsupervised Sentence Representations},
    author = {Zhou, Kun and Zhang, Beichen and Zhao, Xin and Wen, Ji-Rong},
    booktitle = {Proceedings of the 60th Annual Meeting of the Association for Computational Linguistics},
    year = {2022},
    pages = {6120--6130},
    url = {https://arxiv.org/abs/2205.00656},
}
"""


def _needs_retokenization(model: SentenceTransformer, guide: SentenceTransformer) -> bool:
    model_tokenizer, guide_tokenizer = getattr(model, "tokenizer", None), getattr(guide, "tokenizer", None)
    if model_tokenizer is None or guide_tokenizer is None:
        raise ValueError("InstanceWeightedMNRL: both the model and the guide need a tokenizer.")
    return model_tokenizer.get_vocab() != guide_tokenizer.get_vocab() or guide.max_seq_length < model.max_seq_length


def _model_name(model: SentenceTransformer | None) -> str | None:
    """The model's Hub id when the model card knows it, else the name or path it was loaded from."""
    if model is None:
        return None
    base_model = getattr(getattr(model, "model_card_data", None), "base_model", None)
    if base_model:
        return base_model
    transformers_model = getattr(model, "transformers_model", None)
    return getattr(getattr(transformers_model, "config", None), "_name_or_path", None) or None
