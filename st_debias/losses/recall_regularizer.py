"""RecallRegularizer: pull the parameters back towards their start values (OssCSE eq. 4, Recall-and-Learn)."""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import torch
from sentence_transformers.util import fullname
from torch import Tensor, nn

from st_debias import core

from .base import LossOutput, combine_parts
from .margin_negation import OSSCSE_CITATION

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer


class RecallRegularizer(nn.Module):
    def __init__(
        self,
        model: SentenceTransformer | None,
        loss: nn.Module | None = None,
        gamma: float = 2e-3,
        parameters: Iterable[nn.Parameter] | None = None,
        return_parts: bool = False,
    ) -> None:
        r"""Wrap any loss and add :math:`l_r = \frac{1}{2}\gamma \sum_i (\theta_i - \theta^*_i)^2`.

        Use it when fine-tuning an already good model (e.g. all-MiniLM-L6-v2) so that debiasing does
        not make it forget: OssCSE Fig. 6 shows the Oppn split degrading after ~3,000 steps without it.
        :math:`\theta^*` are the trainable parameters' values when the wrapper is built.

        Takes the model first, like sentence-transformers' wrapper losses (``MatryoshkaLoss(model,
        loss, ...)``). The former ``RecallRegularizer(loss, gamma)`` still works and emits a
        ``DeprecationWarning``.

        Returns the wrapped loss plus :math:`l_r` as one scalar, usable wherever a sentence-transformers
        loss is (MatryoshkaLoss, AdaptiveLayerLoss, ``model.old_fit``). With ``return_parts=True`` it
        returns the wrapped loss's parts plus ``"recall"`` instead (a wrapped loss that returns a tensor
        contributes it under its class name): SentenceTransformerTrainer sums and logs each part.
        Put it outermost: ``RecallRegularizer(model, MatryoshkaLoss(model, loss, dims))`` adds
        :math:`l_r` once, whereas ``MatryoshkaLoss(model, RecallRegularizer(model, loss), dims)`` adds it
        once per dimension (AdaptiveLayerLoss: once per layer pass).

        :math:`\theta^*` is a plain detached copy held by the wrapper: it is not registered as a buffer,
        so it is never saved into the model (nor into the model's ``state_dict``); it is moved to each
        parameter's current device and dtype on first use after a move. Under DDP every rank adds the
        same term to its loss and DDP *averages* gradients, so the regulariser's gradient
        :math:`\gamma(\theta-\theta^*)` is applied once, not once per process.

        Reduction: ``gamma=0`` returns the wrapped loss unchanged (plus ``recall`` = 0).

        Args:
            model: the SentenceTransformer being trained (the one ``loss`` embeds with), or ``None``
                with explicit ``parameters`` for :meth:`compute_loss_from_embeddings`.
            loss: any sentence-transformers-style loss.
            gamma: :math:`\gamma \ge 0`; paper 2e-3 (chosen on STS-B dev).
            parameters: the parameters to anchor; default every trainable parameter of ``model``.
            return_parts: return named parts (for the trainer's per-part logging) instead of their
                sum; set it on the wrapped loss too to log that loss's own parts. Leave it False
                inside MatryoshkaLoss, AdaptiveLayerLoss or ``old_fit``, which need a tensor.

        References:
            - Shi et al., OssCSE, EMNLP 2023, eq. 4; Chen et al., "Recall and Learn", EMNLP 2020.

        Inputs:
            Those of the wrapped loss.

        Example:
            ::

                from sentence_transformers import SentenceTransformer
                from st_debias.losses import FocalInfoNCE, RecallRegularizer
                from st_debias.paths import resolve_model_name

                model = SentenceTransformer(resolve_model_name())
                loss = RecallRegularizer(model, FocalInfoNCE(model), gamma=2e-3)
        """
        super().__init__()
        if not isinstance(loss, nn.Module):
            # Former signature RecallRegularizer(loss, gamma=..., parameters=...): `model` holds the loss.
            warnings.warn(
                "RecallRegularizer(loss, gamma) is deprecated: pass the model first, "
                "RecallRegularizer(model, loss, gamma=...), as for sentence-transformers' MatryoshkaLoss.",
                DeprecationWarning,
                stacklevel=2,
            )
            if loss is not None:  # gamma given positionally
                gamma = loss
            loss, model = model, getattr(model, "model", None)
        inner_model = getattr(loss, "model", None)
        if model is not None and inner_model is not None and inner_model is not model:
            raise ValueError("RecallRegularizer: `model` is not the model the wrapped loss trains (loss.model).")
        core.check_non_negative(gamma, "gamma", "RecallRegularizer")
        self.model = model
        self.loss = loss
        self.gamma = float(gamma)
        self.return_parts = return_parts
        if parameters is None:
            if model is None:
                raise ValueError("RecallRegularizer: model is None; pass the model or parameters=... explicitly.")
            parameters = model.parameters()
        # Plain lists, not buffers: the anchor is neither saved with the model nor counted as a parameter.
        self._parameters_to_recall: list[nn.Parameter] = [p for p in parameters if p.requires_grad]
        self._start_values: list[Tensor] = [p.detach().clone() for p in self._parameters_to_recall]

    def recall(self) -> Tensor:
        """The regularisation term ½·γ·Σ(θ − θ*)² for the current parameter values."""
        params = self._parameters_to_recall
        if not params:
            return torch.zeros(())
        if self.gamma == 0:
            return torch.zeros((), device=params[0].device, dtype=params[0].dtype)
        for index, (param, start) in enumerate(zip(params, self._start_values)):
            if start.device != param.device or start.dtype != param.dtype:
                self._start_values[index] = start.to(device=param.device, dtype=param.dtype)
        squared = torch.stack([(p - s).pow(2).sum() for p, s in zip(params, self._start_values)]).sum()
        return 0.5 * self.gamma * squared

    def _with_recall(self, output: LossOutput) -> LossOutput:
        parts = dict(output) if isinstance(output, dict) else {type(self.loss).__name__: output}
        recall = self.recall()
        reference = next(iter(parts.values()))
        parts["recall"] = recall.to(device=reference.device, dtype=reference.dtype)
        return combine_parts(parts, self.return_parts)

    @property
    def uses_gradient_cache(self) -> bool:
        """True around a cached loss, so that sentence-transformers' wrappers treat this loss as one."""
        return bool(getattr(self.loss, "uses_gradient_cache", False))

    @property
    def calculate_loss(self) -> Any:
        """What MatryoshkaLoss decorates on a cached loss; around one, refused with the order that works."""
        if not self.uses_gradient_cache:
            raise AttributeError("calculate_loss")
        inner = type(self.loss).__name__
        raise ValueError(
            f"MatryoshkaLoss cannot wrap RecallRegularizer around the cached {inner}: the cached loss re-embeds "
            "during the backward pass, after MatryoshkaLoss has stopped truncating the embeddings. Put "
            f"RecallRegularizer outermost: RecallRegularizer(model, MatryoshkaLoss(model, {inner}(model, ...), dims))."
        )

    def forward(self, sentence_features: Iterable[dict[str, Tensor]], labels: Tensor | None = None) -> LossOutput:
        return self._with_recall(self.loss(sentence_features, labels))

    def compute_loss_from_embeddings(self, embeddings: list[Tensor], labels: Tensor | None = None) -> LossOutput:
        return self._with_recall(self.loss.compute_loss_from_embeddings(embeddings, labels))

    def get_config_dict(self) -> dict[str, Any]:
        inner = self.loss.get_config_dict() if hasattr(self.loss, "get_config_dict") else {}
        return {"gamma": self.gamma, "loss": fullname(self.loss), **{f"loss.{k}": v for k, v in inner.items()}}

    @property
    def citation(self) -> str:
        inner = getattr(self.loss, "citation", "") or ""
        return OSSCSE_CITATION + ("" if inner.strip() == OSSCSE_CITATION.strip() else inner)
