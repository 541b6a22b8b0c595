"""SimilarityPreservation: keep the batch's similarity structure close to the start model's while debiasing."""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import torch
from torch import Tensor, nn

from st_debias import core

from .base import LossOutput, combine_parts

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

_INPUT_KEYS = ("input_ids", "attention_mask", "token_type_ids")


def model_inputs(features: dict[str, Tensor], device: torch.device | None = None) -> dict[str, Tensor]:
    """The tokeniser's tensors of one column, without what a forward pass wrote into the dict."""
    return {k: v if device is None else v.to(device) for k, v in features.items() if k in _INPUT_KEYS}


class SimilarityPreservation(nn.Module):
    def __init__(
        self,
        model: SentenceTransformer | None,
        loss: nn.Module,
        weight: float = 1.0,
        reference: SentenceTransformer | None = None,
        return_parts: bool = False,
        without_dropout: bool = False,
    ) -> None:
        r"""Wrap an st_debias loss and add a penalty on how far the in-batch similarities of the anchors drift
        from a frozen reference model (by default a copy of ``model`` taken now, i.e. the start model):

        .. math::

            l_p = w \cdot \frac{1}{B(B-1)} \sum_{i \ne j} \big(s(h_i, h_j) - s(h^*_i, h^*_j)\big)^2

        with :math:`h` the trained model's anchor embeddings, :math:`h^*` the reference's, :math:`s` cosine.

        Use it when a debiasing term acts on a few edited pairs (negations, argument swaps) and should leave
        every other pair where a good pretrained model put it: the wrapped loss reshapes the minimal pairs,
        this term holds the rest of the similarity structure in place. It is the function-space counterpart
        of :class:`RecallRegularizer` (which anchors the weights), in the spirit of "Learning without
        Forgetting" (Li and Hoiem, 2016): it constrains what the model outputs, not which weights produce it.

        Returns one tensor, the sum of the parts, so it works wherever a sentence-transformers loss does; with
        ``return_parts=True`` it returns the wrapped loss's parts plus ``"preservation"`` (a wrapped loss
        returning a tensor contributes it under its class name), which SentenceTransformerTrainer sums and logs
        one by one. ``weight=0`` leaves the wrapped loss unchanged (plus ``preservation`` = 0).

        Cost: one extra forward pass of the anchor column through the reference, without gradients.

        Dropout: the reference embeds in eval mode, while the trained model embeds with dropout on. By default
        the term compares those noisy anchors with the noise-free reference, so it is not zero at the start
        weights: it has a floor set by dropout, and part of its gradient fights that noise rather than drift.
        ``without_dropout=True`` embeds the anchors a second time with dropout off, with gradients, and
        compares those: the term is then exactly zero at the start weights and measures drift only, for one
        more forward and backward pass of the anchor column. The wrapped loss still sees the dropout
        embeddings.

        Args:
            model: the SentenceTransformer being trained (the default reference is a frozen copy of it).
            loss: an st_debias loss (it must embed through ``loss.embed``, as every st_debias loss does).
            weight: :math:`w \ge 0`.
            reference: a frozen model to compare with (default: a copy of ``model`` at construction). It is
                held outside the module tree, so it is neither trained nor saved with the model. It embeds the
                trained model's token ids, so it must share ``model``'s tokenizer; its width may differ (only
                cosines are compared).
            return_parts: return the named parts instead of their sum (for the trainer's per-part logging).
            without_dropout: compare anchors embedded with dropout off (needs ``model``; see Dropout above).

        References:
            - Li and Hoiem, "Learning without Forgetting", ECCV 2016 (output-space preservation).

        Inputs:
            Those of the wrapped loss; the first column (the anchors) is the one preserved.

        Raises:
            ValueError: a ``reference`` whose tokenizer's vocabulary is not ``model``'s (it would read the
                trained model's token ids as other words).

        Example:
            ::

                from sentence_transformers import SentenceTransformer
                from st_debias.losses import MarginNegationLoss, SimilarityPreservation
                from st_debias.paths import resolve_model_name

                model = SentenceTransformer(resolve_model_name())
                loss = SimilarityPreservation(model, MarginNegationLoss(model, margin_weight=1.0), weight=1.0)
        """
        super().__init__()
        core.check_non_negative(weight, "weight", "SimilarityPreservation")
        if getattr(loss, "uses_gradient_cache", False):
            raise ValueError(
                f"SimilarityPreservation cannot wrap the cached {type(loss).__name__}: the preservation term needs "
                "the anchors' embeddings with gradients, which a cached loss only holds in mini-batches during the "
                "backward pass. Wrap the uncached loss: SimilarityPreservation(model, FocalInfoNCE(model), ...)."
            )
        if not hasattr(loss, "embed"):
            raise TypeError(
                f"SimilarityPreservation wraps st_debias losses (they embed through .embed); got "
                f"{type(loss).__name__}. Wrap the st_debias loss first, then RecallRegularizer around both."
            )
        self.model = model
        self.loss = loss
        self.weight = float(weight)
        self.return_parts = return_parts
        if without_dropout and model is None:
            raise ValueError("SimilarityPreservation: without_dropout=True re-embeds the anchors, so it needs model.")
        self.without_dropout = without_dropout
        if reference is None:
            if model is None:
                raise ValueError("SimilarityPreservation: pass model (its frozen copy is the reference) or reference=.")
            reference = copy.deepcopy(model)
        elif model is not None and _vocabulary(reference) != _vocabulary(model):
            raise ValueError(
                "SimilarityPreservation: the reference embeds the trained model's token ids, so it needs the same "
                "tokenizer; this reference's vocabulary differs from the model's. Use a reference trained from the "
                "same base model, or the default (a frozen copy of the model)."
            )
        # Under MatryoshkaLoss a reference of the model's own width is cut to the anchors' prefix; a reference of
        # another width is another model, compared by its own cosines.
        self._cut_to_anchor_width = model is None or _width(reference) == _width(model)
        reference.requires_grad_(False)
        reference.eval()
        # A list, not an attribute module: the reference is not a submodule, so it is not saved or optimised.
        self._reference = [reference]

    @property
    def reference(self) -> Any:
        return self._reference[0]

    def reference_embeddings(self, features: dict[str, Tensor]) -> Tensor:
        """The reference model's sentence embeddings for one tokenised column, without gradients."""
        reference = self.reference
        device = next(reference.parameters()).device
        with torch.no_grad():
            return reference(model_inputs(features, device))["sentence_embedding"]

    def _with_preservation(self, output: LossOutput, anchors: Tensor, reference: Tensor) -> LossOutput:
        parts = dict(output) if isinstance(output, dict) else {type(self.loss).__name__: output}
        if self._cut_to_anchor_width and reference.size(-1) > anchors.size(-1):
            # Inside MatryoshkaLoss the anchors are truncated: compare with the same prefix of the reference.
            reference = reference[..., : anchors.size(-1)]
        drift = core.similarity_drift(anchors, reference.to(anchors.device))
        parts["preservation"] = (self.weight * drift).to(dtype=next(iter(parts.values())).dtype)
        return combine_parts(parts, self.return_parts)

    def forward(self, sentence_features: Iterable[dict[str, Tensor]], labels: Tensor | None = None) -> LossOutput:
        features = list(sentence_features)
        anchor_inputs = dict(features[0])  # the model writes its outputs into the feature dicts
        captured: list[list[Tensor]] = []
        inner_embed = self.loss.embed

        def embed_and_keep(columns):
            # One upcast of the anchors feeds both terms: their float16 gradients would overflow when summed.
            embeddings = list(inner_embed(columns))
            embeddings[0] = core.at_least_float32(embeddings[0])
            captured.append(embeddings)
            return embeddings

        self.loss.embed = embed_and_keep  # instance attribute shadows the method for this call only
        try:
            output = self.loss(features, labels)
        finally:
            del self.loss.embed
        anchors = captured[0][0]
        if self.without_dropout and self.model.training:
            anchors = self.anchors_without_dropout(anchor_inputs)[..., : anchors.size(-1)]
        return self._with_preservation(output, anchors, self.reference_embeddings(anchor_inputs))

    def anchors_without_dropout(self, features: dict[str, Tensor]) -> Tensor:
        """The trained model's anchor embeddings with dropout off, with gradients; its mode is restored after."""
        self.model.eval()
        try:
            return self.model(model_inputs(features))["sentence_embedding"]
        finally:
            self.model.train()

    def compute_loss_from_embeddings(
        self, embeddings: list[Tensor], labels: Tensor | None = None, reference: Tensor | None = None
    ) -> LossOutput:
        """The maths on plain tensors: ``reference`` = the reference model's embeddings of ``embeddings[0]``."""
        if reference is None:
            raise ValueError("SimilarityPreservation.compute_loss_from_embeddings needs reference= embeddings.")
        # One upcast of the anchors feeds both terms: their float16 gradients would overflow when summed.
        anchors = core.at_least_float32(embeddings[0])
        output = self.loss.compute_loss_from_embeddings([anchors, *embeddings[1:]], labels)
        return self._with_preservation(output, anchors, reference)

    def get_config_dict(self) -> dict[str, Any]:
        inner = self.loss.get_config_dict() if hasattr(self.loss, "get_config_dict") else {}
        return {
            "weight": self.weight,
            "without_dropout": self.without_dropout,
            "loss": f"st_debias.losses.{type(self.loss).__name__}",
            **{f"loss.{k}": v for k, v in inner.items()},
        }

    @property
    def citation(self) -> str:
        inner = getattr(self.loss, "citation", "") or ""
        return LWF_CITATION + inner


def _vocabulary(model: Any) -> dict[str, int] | None:
    """A SentenceTransformer's token → id map (None for a model without a tokenizer)."""
    tokenizer = getattr(model, "tokenizer", None)
    return tokenizer.get_vocab() if tokenizer is not None and hasattr(tokenizer, "get_vocab") else None


def _width(model: Any) -> int | None:
    """A SentenceTransformer's embedding width, None when it does not say."""
    width = getattr(model, "get_embedding_dimension", None)
    return width() if callable(width) else None


LWF_CITATION = """
@inproceedings{li2016lwf,
    title = {Learning without Forgetting},
    author = {Li, Zhizhong and Hoiem, Derek},
    booktitle = {European Conference on Computer Vision (ECCV)},
    year = {2016},
}
"""
