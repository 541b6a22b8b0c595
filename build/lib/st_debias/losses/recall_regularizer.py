"""RecallRegularizer: pull the parameters back towards their start values (OssCSE eq. 4, Recall-and-Learn)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import torch
from torch import Tensor, nn

from st_debias import core

from .margin_negation import OSSCSE_CITATION


class RecallRegularizer(nn.Module):
    def __init__(self, loss: nn.Module, gamma: float = 2e-3, parameters: Iterable[nn.Parameter] | None = None) -> None:
        r"""Wrap any loss and add :math:`l_r = \frac{1}{2}\gamma \sum_i (\theta_i - \theta^*_i)^2`.

        Use it when fine-tuning an already good model (e.g. all-MiniLM-L6-v2) so that debiasing does
        not make it forget: OssCSE Fig. 6 shows the Oppn split degrading after ~3,000 steps without it.
        :math:`\theta^*` are the trainable parameters' values when the wrapper is built.

        Returns the wrapped loss's parts plus ``"recall"`` (a wrapped loss that returns a tensor
        contributes it under its class name); the trainer sums and logs them.

        :math:`\theta^*` is a plain detached copy held by the wrapper: it is not registered as a buffer,
        so it is never saved into the model (nor into the model's ``state_dict``); it is moved to each
        parameter's current device and dtype on first use after a move. Under DDP every rank adds the
        same term to its loss and DDP *averages* gradients, so the regulariser's gradient
        :math:`\gamma(\theta-\theta^*)` is applied once, not once per process.

        Reduction: ``gamma=0`` returns the wrapped loss unchanged (plus ``recall`` = 0).

        Args:
            loss: any sentence-transformers-style loss with a ``model`` attribute.
            gamma: :math:`\gamma \ge 0`; paper 2e-3 (chosen on STS-B dev).
            parameters: the parameters to anchor; default every trainable parameter of ``loss.model``.

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
                loss = RecallRegularizer(FocalInfoNCE(model), gamma=2e-3)
        """
        super().__init__()
        core.check_non_negative(gamma, "gamma", "RecallRegularizer")
        self.loss = loss
        self.gamma = float(gamma)
        if parameters is None:
            model = getattr(loss, "model", None)
            if model is None:
                raise ValueError("RecallRegularizer: the wrapped loss has no model; pass parameters=... explicitly.")
            parameters = model.parameters()
        # Plain lists, not buffers: the anchor is neither saved with the model nor counted as a parameter.
        self._parameters_to_recall: list[nn.Parameter] = [p for p in parameters if p.requires_grad]
        self._start_values: list[Tensor] = [p.detach().clone() for p in self._parameters_to_recall]

    @property
    def model(self) -> Any:
        return self.loss.model

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

    def _with_recall(self, output: Tensor | dict[str, Tensor]) -> dict[str, Tensor]:
        parts = dict(output) if isinstance(output, dict) else {type(self.loss).__name__: output}
        recall = self.recall()
        reference = next(iter(parts.values()))
        parts["recall"] = recall.to(device=reference.device, dtype=reference.dtype)
        return parts

    def forward(self, sentence_features: Iterable[dict[str, Tensor]], labels: Tensor | None = None) -> dict[str, Tensor]:
        return self._with_recall(self.loss(sentence_features, labels))

    def compute_loss_from_embeddings(self, embeddings: list[Tensor], labels: Tensor | None = None) -> dict[str, Tensor]:
        return self._with_recall(self.loss.compute_loss_from_embeddings(embeddings, labels))

    def get_config_dict(self) -> dict[str, Any]:
        inner = self.loss.get_config_dict() if hasattr(self.loss, "get_config_dict") else {}
        return {"gamma": self.gamma, "loss": type(self.loss).__name__, **{f"loss.{k}": v for k, v in inner.items()}}

    @property
    def citation(self) -> str:
        inner = getattr(self.loss, "citation", "") or ""
        return OSSCSE_CITATION + ("" if inner.strip() == OSSCSE_CITATION.strip() else inner)
