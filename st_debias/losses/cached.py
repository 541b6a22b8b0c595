"""Cached (GradCache) forms of the st_debias in-batch losses: batch size no longer bounded by memory."""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from typing import Any

import torch
from sentence_transformers.base.losses.gradcache import (
    CachedLossMixin,
    RandContext,
    _backward_hook,
    _create_minibatch,
    _minibatch_ranges,
    has_static_embedding_input,
)
from torch import Tensor, nn

from st_debias import core

from .base import LossOutput, combine_parts
from .debias_infonce import DebiasInfoNCE
from .focal_infonce import FocalInfoNCE
from .instance_weighted_mnrl import InstanceWeightedMNRL
from .margin_negation import MarginNegationLoss
from .recall_regularizer import RecallRegularizer
from .similarity_preservation import SimilarityPreservation

GRADCACHE_CITATION = """
@inproceedings{gao2021scaling,
    title = {Scaling Deep Contrastive Learning Batch Size under Memory Limited Setup},
    author = {Gao, Luyu and Zhang, Yunyi and Han, Jiawei and Callan, Jamie},
    booktitle = {Proceedings of the 6th Workshop on Representation Learning for NLP},
    year = {2021},
    url = {https://arxiv.org/abs/2101.06983},
}
"""

# The key under which a tensor-returning loss's value travels through the part machinery.
_SINGLE = "loss"


class CachedLoss(CachedLossMixin, nn.Module):
    def __init__(
        self, model: Any | None, loss: nn.Module, mini_batch_size: int = 32, show_progress_bar: bool = False
    ) -> None:
        r"""Train any st_debias in-batch loss on batches far larger than memory allows (GradCache).

        In-batch contrastive losses get better with the batch size, but the activations of every row
        stay in memory until the backward pass. GradCache (Gao et al. 2021) removes that bound in three
        steps, all in mini-batches of ``mini_batch_size`` rows:

        1. embed every column without gradients, saving each mini-batch's random state;
        2. compute the wrapped loss's :meth:`compute_loss_from_embeddings` on the whole batch of
           (detached) embeddings and back-propagate it to the embeddings only: these gradients are the
           cache;
        3. during the outer backward pass, re-embed each mini-batch with gradients under its saved
           random state (same dropout masks) and back-propagate the cached gradients into the model.

        Loss and gradients equal those of the uncached loss (up to floating-point rounding, and up to
        dropout sampling: the mini-batches draw other masks than one whole-batch forward). Peak memory is
        the larger of one mini-batch's activations and the loss's ``(B, candidates)`` score matrices, which
        are computed on the whole batch at once: flat in the batch size while the matrices stay the smaller,
        growing with B² beyond (measured on one GPU for all-MiniLM-L6-v2 at 32 tokens and
        ``mini_batch_size=128``: flat to B = 4,096, 1.6–2.6× at 8,192). The price is a second forward pass
        and smaller forward passes: 2.0–2.9× the uncached step time there (two steps per setting), as for
        :class:`CachedMultipleNegativesRankingLoss`; a larger ``mini_batch_size`` is faster.

        Everything the wrapped loss computes from the whole batch still sees the whole batch: batch
        normalisation statistics (:class:`DebiasInfoNCE`), guide masks and noise negatives
        (:class:`InstanceWeightedMNRL`, whose random noise is drawn once, in step 2), the margin and
        contrastive parts of :class:`MarginNegationLoss` (whose second dropout view of each of its
        ``dropout_columns`` is embedded as an extra column, as its own ``forward`` does). A live guide model embeds in
        mini-batches without gradients, once per step; guide embeddings in the label column are used
        as they are. With ``gather_across_devices=True`` on the wrapped loss, step 2 gathers the
        cached embeddings of every process, as sentence-transformers' cached losses do.

        A loss that returns named parts (a dict) returns the same parts here. Each part carries its
        own cached gradients, so any linear combination of the parts (the trainer's sum, a weighting)
        back-propagates exactly, with a single re-embedding pass.

        Args:
            model: the SentenceTransformer to train (the wrapped loss's ``model``), or ``None`` to use
                only :meth:`compute_loss_from_embeddings`.
            loss: an st_debias loss built on ``model`` (anything with
                ``compute_loss_from_embeddings(embeddings, labels)`` whose value depends on the model
                only through the embeddings). Wrap :class:`RecallRegularizer` *around* the cached loss,
                not inside it: its term depends on the parameters directly.
            mini_batch_size: rows per forward pass, ≥ 1. Sets the memory; larger is faster. Default 32.
            show_progress_bar: show a progress bar over the mini-batches.

        References:
            - Gao et al., "Scaling Deep Contrastive Learning Batch Size under Memory Limited Setup",
              RepL4NLP 2021. https://arxiv.org/abs/2101.06983 (code: github.com/luyug/GradCache)
            - sentence-transformers' :class:`CachedMultipleNegativesRankingLoss`, whose mini-batching,
              random-state replay and backward hook this class reuses.

        Requirements:
            1. Those of the wrapped loss.
            2. A large ``per_device_train_batch_size`` and a ``mini_batch_size`` that fits in memory.
            3. Inside :class:`MatryoshkaLoss` it works as sentence-transformers' cached losses do: the
               wrapped loss runs once per dimension on the cached embeddings, and the named parts are
               summed. Wrap :class:`RecallRegularizer` around either. Not inside
               :class:`AdaptiveLayerLoss` nor around :class:`SimilarityPreservation` (both raise).

        Inputs:
            Those of the wrapped loss.

        Relations:
            - :class:`CachedFocalInfoNCE`, :class:`CachedInstanceWeightedMNRL`,
              :class:`CachedDebiasInfoNCE` and :class:`CachedMarginNegationLoss` build the wrapped loss
              for you.
            - sentence-transformers' :class:`CachedMultipleNegativesRankingLoss` is the same technique for
              MultipleNegativesRankingLoss.

        Example:
            ::

                from datasets import Dataset
                from sentence_transformers import SentenceTransformer, SentenceTransformerTrainer
                from sentence_transformers import SentenceTransformerTrainingArguments
                from st_debias.losses import CachedLoss, FocalInfoNCE
                from st_debias.paths import resolve_model_name

                model = SentenceTransformer(resolve_model_name())  # packaged all-MiniLM-L6-v2 offline
                texts = ["A man is playing a guitar.", "The cat sleeps on the sofa.", "Stocks fell sharply."]
                train_dataset = Dataset.from_dict({"anchor": texts, "positive": texts})
                loss = CachedLoss(model, FocalInfoNCE(model), mini_batch_size=2)
                args = SentenceTransformerTrainingArguments("out", per_device_train_batch_size=3, report_to=[])
                SentenceTransformerTrainer(model=model, args=args, train_dataset=train_dataset, loss=loss).train()
        """
        nn.Module.__init__(self)
        name = type(self).__name__
        if not (
            isinstance(mini_batch_size, int)
            and not isinstance(mini_batch_size, bool)
            and mini_batch_size >= 1
        ):
            raise ValueError(f"{name}: mini_batch_size must be a positive int, got {mini_batch_size!r}.")
        if isinstance(loss, RecallRegularizer):
            raise ValueError(
                f"{name}: RecallRegularizer depends on the parameters, not only on the embeddings, so its gradient "
                f"cannot be cached. Wrap it around the cached loss instead: RecallRegularizer(model, {name}(model, ...))."
            )
        if isinstance(loss, SimilarityPreservation):
            raise ValueError(
                f"{name}: SimilarityPreservation compares the anchors with a reference model's embeddings of the "
                "same texts, which the cached embeddings do not carry; it cannot be cached, nor wrap a cached loss. "
                "Use it around the uncached loss: SimilarityPreservation(model, FocalInfoNCE(model), ...)."
            )
        if not callable(getattr(loss, "compute_loss_from_embeddings", None)):
            raise ValueError(
                f"{name}: the wrapped loss {type(loss).__name__} has no compute_loss_from_embeddings(...)."
            )
        if getattr(loss, "model", None) is not model:
            raise ValueError(
                f"{name}: the wrapped {type(loss).__name__} must be built on the same model as {name}."
            )
        if model is not None and has_static_embedding_input(model):
            raise ValueError(
                f"{name}: a StaticEmbedding model's inputs cannot be split into mini-batches; use the uncached loss."
            )
        self.model = model
        self.loss = loss
        self.mini_batch_size = mini_batch_size
        self.show_progress_bar = show_progress_bar

    # -- forward ---------------------------------------------------------------------------------
    def forward(
        self, sentence_features: Iterable[dict[str, Tensor]], labels: Tensor | None = None
    ) -> LossOutput:
        if self.model is None:
            raise ValueError(
                f"{type(self).__name__} was built with model=None: call compute_loss_from_embeddings(...) "
                "with embeddings, or pass a SentenceTransformer to train."
            )
        _refuse_adaptive_layer(self.model, type(self).__name__)
        features = _input_columns(self.loss, list(sentence_features))
        grad_enabled = torch.is_grad_enabled()
        # Fixed before any forward: modules may edit the features in place, and step 3 replays step 1.
        core.check_not_empty(min(map(_num_rows, features), default=0), type(self).__name__)
        ranges = [_minibatch_ranges(feature, self.mini_batch_size) for feature in features]
        extra = self._guide_kwargs(features, ranges[0])

        # Step 1: embed without gradients, keeping each mini-batch's random state for the replay.
        reps: list[list[Tensor]] = []
        random_states: list[list[RandContext | None]] = []
        for feature, column_ranges in zip(features, ranges):
            chunks, states = [], []
            for chunk, state in self.embed_minibatch_iter(
                feature, with_grad=False, copy_random_state=grad_enabled, ranges=column_ranges
            ):
                chunks.append(chunk.detach().requires_grad_(grad_enabled))
                states.append(state)
            reps.append(chunks)
            random_states.append(states)
        decorated = "calculate_loss" in vars(self)  # MatryoshkaLoss replaced it with its per-dimension loop
        if not grad_enabled:
            if decorated:
                return self.calculate_loss(reps, labels, **extra)
            return self.loss.compute_loss_from_embeddings([torch.cat(column) for column in reps], labels, **extra)

        # Step 2: the loss on the whole batch, and the gradients of each part w.r.t. the embeddings.
        if decorated:
            output = self.calculate_loss(reps, labels, with_backward=True, **extra)
            parts = {_SINGLE: output}
            caches = [[torch.cat([_grad_or_zeros(rep) for rep in column]) for column in reps]]
        else:
            embeddings = [torch.cat(column) for column in reps]
            output = self.loss.compute_loss_from_embeddings(embeddings, labels, **extra)
            parts = output if isinstance(output, dict) else {_SINGLE: output}
            caches = _embedding_gradients(list(parts.values()), embeddings, type(self).__name__)
        values = torch.stack([part.detach() for part in parts.values()]).requires_grad_()

        # Step 3, deferred to the backward pass: a hook on the part values re-embeds and back-propagates.
        values.register_hook(
            partial(
                self._replay, features=features, caches=caches, random_states=random_states, ranges=ranges
            )
        )
        if not isinstance(output, dict):
            return values[0]
        return dict(zip(parts, values.unbind()))

    def _replay(
        self,
        part_gradients: Tensor,
        features: list[dict[str, Tensor]],
        caches: list[list[Tensor | None]],
        random_states: list[list[RandContext | None]],
        ranges: list[list[tuple[int, int]]],
    ) -> None:
        """Backward hook: combine the parts' cached gradients with their outer weights, then re-embed."""
        combined = []
        for column, column_ranges in enumerate(ranges):
            gradient = sum(
                weight * cache[column]
                for weight, cache in zip(part_gradients, caches)
                if cache[column] is not None
            )
            combined.append([gradient[begin:end] for begin, end in column_ranges])
        unit = torch.ones((), dtype=part_gradients.dtype, device=part_gradients.device)
        _backward_hook(
            unit, features, loss_obj=self, cache=combined, random_states=random_states, ranges=ranges
        )

    def _guide_kwargs(
        self, features: list[dict[str, Tensor]], ranges: list[tuple[int, int]]
    ) -> dict[str, Any]:
        """A live guide model (InstanceWeightedMNRL) embeds once, in mini-batches, without gradients.

        ``ranges`` are the first column's: row-count mini-batches are the same for every column.
        """
        if getattr(self.loss, "guide", None) is None:
            return {}
        chunks = [
            self.loss._embed_with_guide([_create_minibatch(feature, begin, end) for feature in features])
            for begin, end in ranges
        ]
        return {"guide_embeddings": [torch.cat(column) for column in zip(*chunks)]}

    def calculate_loss(
        self, reps: list[list[Tensor]], labels: Tensor | None = None, *, with_backward: bool = False, **kwargs: Any
    ) -> Tensor:
        """The wrapped loss (its parts summed) on mini-batch embeddings: the hook MatryoshkaLoss decorates.

        The contract of sentence-transformers' cached losses: ``reps`` holds each column's mini-batch
        embeddings, and ``with_backward=True`` back-propagates the loss into them (their ``.grad``) and
        returns it detached. :class:`MatryoshkaLoss` replaces this method on the instance by a loop that
        calls it once per dimension with truncated embeddings; :meth:`forward` then takes the cached
        gradients from ``reps``.
        """
        output = self.loss.compute_loss_from_embeddings([torch.cat(column) for column in reps], labels, **kwargs)
        loss = combine_parts(output, return_parts=False) if isinstance(output, dict) else output
        if with_backward:
            if loss.requires_grad:
                loss.backward()
            loss = loss.detach()
        return loss

    # -- math --------------------------------------------------------------------------------------
    def compute_loss_from_embeddings(
        self, embeddings: list[Tensor], labels: Tensor | None = None, **kwargs: Any
    ) -> LossOutput:
        """The wrapped loss on ready embeddings (caching only changes how they are computed)."""
        return self.loss.compute_loss_from_embeddings(embeddings, labels, **kwargs)

    def get_config_dict(self) -> dict[str, Any]:
        inner = self.loss.get_config_dict() if hasattr(self.loss, "get_config_dict") else {}
        if type(self) is CachedLoss:
            # The generic wrapper names the loss it wraps; the named classes (CachedFocalInfoNCE, ...) do not need to.
            return {
                "loss": type(self.loss).__name__,
                **{f"loss.{k}": v for k, v in inner.items()},
                "mini_batch_size": self.mini_batch_size,
            }
        return {**inner, "mini_batch_size": self.mini_batch_size}

    @property
    def temperature(self) -> float:
        """The wrapped loss's temperature, ``1 / scale``."""
        return self.loss.temperature

    @property
    def citation(self) -> str:
        return (getattr(self.loss, "citation", "") or "") + GRADCACHE_CITATION


def _input_columns(loss: nn.Module, features: list[dict[str, Tensor]]) -> list[dict[str, Tensor]]:
    """The columns the wrapped loss embeds: MarginNegationLoss(contrastive="dropout") adds a second view of each
    of its ``dropout_columns``."""
    return loss.input_columns(features) if isinstance(loss, MarginNegationLoss) else features


def _grad_or_zeros(rep: Tensor) -> Tensor:
    """A mini-batch's cached gradient (zeros where the loss did not reach it)."""
    return rep.grad if rep.grad is not None else torch.zeros_like(rep)


def _refuse_adaptive_layer(model: Any, name: str) -> None:
    """AdaptiveLayerLoss patches the transformer's forward only while its own forward runs; a cached loss
    re-embeds during the backward pass, after the patch is gone (sentence-transformers' cached losses fail
    the same way, with ``KeyError: 'all_layer_embeddings'``)."""
    from sentence_transformers.sentence_transformer.losses.adaptive_layer import TransformerDecorator

    if isinstance(getattr(model[0], "forward", None), TransformerDecorator):
        raise ValueError(
            f"{name} cannot run inside AdaptiveLayerLoss: it re-embeds during the backward pass, after "
            "AdaptiveLayerLoss has restored the model's forward. Use AdaptiveLayerLoss around the uncached loss."
        )


def _num_rows(feature: dict[str, Any]) -> int:
    """Rows in one column's model inputs (0 for an empty batch, whose inputs may hold no tensor at all)."""
    return next((value.size(0) for value in feature.values() if isinstance(value, Tensor)), 0)


def _embedding_gradients(
    parts: list[Tensor], embeddings: list[Tensor], name: str
) -> list[list[Tensor | None]]:
    """Per part, the gradient w.r.t. each column's embeddings (``None`` where the part ignores a column)."""
    caches: list[list[Tensor | None]] = []
    for part in parts:
        if not part.requires_grad:
            caches.append([None] * len(embeddings))
            continue
        caches.append(list(torch.autograd.grad(part, embeddings, retain_graph=True, allow_unused=True)))
    unused = [str(index) for index in range(len(embeddings)) if all(cache[index] is None for cache in caches)]
    if unused:
        raise ValueError(
            f"{name}: the loss did not use input column(s) {', '.join(unused)}; every column is embedded twice "
            "with gradient caching, so remove unused columns from the dataset."
        )
    return caches


class CachedFocalInfoNCE(CachedLoss):
    def __init__(
        self,
        model: Any | None,
        mini_batch_size: int = 32,
        show_progress_bar: bool = False,
        **loss_kwargs: Any,
    ) -> None:
        r""":class:`FocalInfoNCE` with GradCache: the same loss and gradients at any batch size, in memory set mostly by the
        mini-batch (:class:`CachedLoss`).

        See :class:`CachedLoss` for how the caching works and :class:`FocalInfoNCE` for the loss.

        Args:
            model: the SentenceTransformer to train, or ``None`` for :meth:`compute_loss_from_embeddings`.
            mini_batch_size: rows per forward pass (sets the memory), default 32.
            show_progress_bar: show a progress bar over the mini-batches.
            **loss_kwargs: :class:`FocalInfoNCE`'s arguments (``scale``, ``margin``, ``gather_across_devices``).

        References:
            - Hou & Li, Findings of EMNLP 2023 (Focal-InfoNCE). https://arxiv.org/abs/2310.06918
            - Gao et al., RepL4NLP 2021 (GradCache). https://arxiv.org/abs/2101.06983

        Inputs:
            +-------------------------------------------------+--------+
            | Texts                                           | Labels |
            +=================================================+========+
            | (anchor, positive) pairs                        | none   |
            +-------------------------------------------------+--------+
            | (anchor, positive, negative_1, ..., negative_n) | none   |
            +-------------------------------------------------+--------+

        Example:
            ::

                from datasets import Dataset
                from sentence_transformers import SentenceTransformer, SentenceTransformerTrainer
                from st_debias.losses import CachedFocalInfoNCE
                from st_debias.paths import resolve_model_name

                model = SentenceTransformer(resolve_model_name())
                texts = ["A man is playing a guitar.", "The cat sleeps on the sofa.", "Stocks fell sharply."]
                train_dataset = Dataset.from_dict({"anchor": texts, "positive": texts})
                loss = CachedFocalInfoNCE(model, mini_batch_size=2, margin=0.3)
                SentenceTransformerTrainer(model=model, train_dataset=train_dataset, loss=loss).train()
        """
        super().__init__(model, FocalInfoNCE(model, **loss_kwargs), mini_batch_size, show_progress_bar)


class CachedInstanceWeightedMNRL(CachedLoss):
    def __init__(
        self,
        model: Any | None,
        mini_batch_size: int = 32,
        show_progress_bar: bool = False,
        **loss_kwargs: Any,
    ) -> None:
        r""":class:`InstanceWeightedMNRL` (DCLR) with GradCache: the same loss and gradients in memory set mostly by the
        mini-batch (:class:`CachedLoss`).

        A live ``guide`` embeds once per step, in mini-batches and without gradients; guide embeddings
        in the label column (``labels="guide_embeddings"``) are used as they are. Noise negatives are
        drawn once per step, on the whole cached batch. See :class:`CachedLoss`.

        Args:
            model: the SentenceTransformer to train, or ``None`` for :meth:`compute_loss_from_embeddings`.
            mini_batch_size: rows per forward pass (sets the memory), default 32.
            show_progress_bar: show a progress bar over the mini-batches.
            **loss_kwargs: :class:`InstanceWeightedMNRL`'s arguments (``guide``, ``scale``, ``threshold``,
                ``labels``, ``noise_ratio``, ...).

        References:
            - Zhou et al., ACL 2022 (DCLR). https://arxiv.org/abs/2205.00656
            - Gao et al., RepL4NLP 2021 (GradCache). https://arxiv.org/abs/2101.06983

        Inputs:
            +-------------------------------------------------+-----------------------------------------+
            | Texts                                           | Labels                                  |
            +=================================================+=========================================+
            | (anchor, positive) pairs                        | none, weight, guide embeddings, or both |
            +-------------------------------------------------+-----------------------------------------+
            | (anchor, positive, negative_1, ..., negative_n) | none, weight, guide embeddings, or both |
            +-------------------------------------------------+-----------------------------------------+

        Example:
            ::

                from datasets import Dataset
                from sentence_transformers import SentenceTransformer, SentenceTransformerTrainer
                from st_debias.losses import CachedInstanceWeightedMNRL
                from st_debias.paths import resolve_model_name

                model = SentenceTransformer(resolve_model_name())
                guide = SentenceTransformer(resolve_model_name())
                texts = ["A man is playing a guitar.", "A man plays the guitar.", "Stocks fell sharply."]
                train_dataset = Dataset.from_dict({"anchor": texts, "positive": texts})
                loss = CachedInstanceWeightedMNRL(model, mini_batch_size=2, guide=guide, noise_ratio=1.0)
                SentenceTransformerTrainer(model=model, train_dataset=train_dataset, loss=loss).train()
        """
        super().__init__(
            model, InstanceWeightedMNRL(model, **loss_kwargs), mini_batch_size, show_progress_bar
        )

    from_recipe = classmethod(InstanceWeightedMNRL.from_recipe.__func__)  # the guide and weights, as the uncached loss


class CachedDebiasInfoNCE(CachedLoss):
    def __init__(
        self,
        model: Any | None,
        mini_batch_size: int = 32,
        show_progress_bar: bool = False,
        **loss_kwargs: Any,
    ) -> None:
        r""":class:`DebiasInfoNCE` (DebCSE) with GradCache: the same loss and gradients in memory set mostly by the
        mini-batch (:class:`CachedLoss`).

        Batch normalisation uses the statistics of the whole batch, as uncached: step 2 of
        :class:`CachedLoss` sees every embedding. See :class:`CachedLoss`.

        Args:
            model: the SentenceTransformer to train, or ``None`` for :meth:`compute_loss_from_embeddings`.
            mini_batch_size: rows per forward pass (sets the memory), default 32.
            show_progress_bar: show a progress bar over the mini-batches.
            **loss_kwargs: :class:`DebiasInfoNCE`'s arguments (``scale``, ``in_batch_negatives``,
                ``batch_norm``, ...).

        References:
            - Miao et al., CIKM 2023 (DebCSE). https://arxiv.org/abs/2309.07396
            - Gao et al., RepL4NLP 2021 (GradCache). https://arxiv.org/abs/2101.06983

        Inputs:
            +-------------------------------------------------+--------+
            | Texts                                           | Labels |
            +=================================================+========+
            | (anchor, positive) pairs                        | none   |
            +-------------------------------------------------+--------+
            | (anchor, positive, negative_1, ..., negative_m) | none   |
            +-------------------------------------------------+--------+

        Example:
            ::

                from datasets import Dataset
                from sentence_transformers import SentenceTransformer, SentenceTransformerTrainer
                from st_debias.losses import CachedDebiasInfoNCE
                from st_debias.paths import resolve_model_name

                model = SentenceTransformer(resolve_model_name())
                train_dataset = Dataset.from_dict({
                    "anchor": ["A man is playing a guitar.", "The cat sleeps on the sofa."],
                    "positive": ["A man plays the guitar.", "On the sofa, the cat is sleeping."],
                    "negative_1": ["A man is playing a piano.", "The dog sleeps on the sofa."],
                })
                loss = CachedDebiasInfoNCE(model, mini_batch_size=1)
                SentenceTransformerTrainer(model=model, train_dataset=train_dataset, loss=loss).train()
        """
        super().__init__(model, DebiasInfoNCE(model, **loss_kwargs), mini_batch_size, show_progress_bar)


class CachedMarginNegationLoss(CachedLoss):
    logs_parts = MarginNegationLoss.logs_parts
    def __init__(
        self,
        model: Any | None,
        mini_batch_size: int = 32,
        show_progress_bar: bool = False,
        **loss_kwargs: Any,
    ) -> None:
        r""":class:`MarginNegationLoss` (OssCSE) with GradCache: the same parts and gradients in memory set mostly by the
        mini-batch (:class:`CachedLoss`).

        Returns what :class:`MarginNegationLoss` returns: the sum of its parts, or with
        ``return_parts=True`` the dict ``{"margin": λ·l_m, "contrastive": w·l_c}``, each part with its exact
        gradient. With ``contrastive="dropout"`` the second dropout view of each of ``dropout_columns``
        (the anchor by default) is embedded as an extra column. For OssCSE's recall term, wrap this loss: ``RecallRegularizer(model, CachedMarginNegationLoss(model))``.
        See :class:`CachedLoss`.

        Args:
            model: the SentenceTransformer to train, or ``None`` for :meth:`compute_loss_from_embeddings`.
            mini_batch_size: rows per forward pass (sets the memory), default 32.
            show_progress_bar: show a progress bar over the mini-batches.
            **loss_kwargs: :class:`MarginNegationLoss`'s arguments (``alpha``, ``beta``, ``margin_weight``,
                ``contrastive``, ``scale``, ``gather_across_devices``, ``dropout_columns``,
                ``contrastive_weight``).

        References:
            - Shi et al., EMNLP 2023 (OssCSE).
            - Gao et al., RepL4NLP 2021 (GradCache). https://arxiv.org/abs/2101.06983

        Inputs:
            +----------------------------------+--------+
            | Texts                            | Labels |
            +==================================+========+
            | (anchor, paraphrase, negation)   | none   |
            +----------------------------------+--------+

        Example:
            ::

                from datasets import Dataset
                from sentence_transformers import SentenceTransformer, SentenceTransformerTrainer
                from st_debias.losses import CachedMarginNegationLoss, RecallRegularizer
                from st_debias.paths import resolve_model_name

                model = SentenceTransformer(resolve_model_name())
                train_dataset = Dataset.from_dict({
                    "anchor": ["The committee approved the budget.", "She likes the new design."],
                    "paraphrase": ["The budget was approved by the committee.", "The new design is liked by her."],
                    "negation": ["The committee did not approve the budget.", "She does not like the new design."],
                })
                loss = RecallRegularizer(model, CachedMarginNegationLoss(model, mini_batch_size=1), gamma=2e-3)
                SentenceTransformerTrainer(model=model, train_dataset=train_dataset, loss=loss).train()
        """
        super().__init__(model, MarginNegationLoss(model, **loss_kwargs), mini_batch_size, show_progress_bar)
