"""MarginNegationLoss: keep a negation related but below the paraphrase (OssCSE, Shi et al. 2023)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Literal

import torch
from sentence_transformers.util import cos_sim, similarity_fct_name
from torch import Tensor

from st_debias import core

from .base import EmbeddingLoss, LossOutput, combine_parts

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

Contrastive = Literal["dropout", "paraphrase"] | None

#: The three text columns of a row, in order.
COLUMNS = ("anchor", "paraphrase", "negation")


class MarginNegationLoss(EmbeddingLoss):
    text_columns = (len(COLUMNS), len(COLUMNS))
    logs_parts = True  # recipes build it with return_parts=True, so that the trainer logs each term

    def __init__(
        self,
        model: SentenceTransformer | None,
        alpha: float = 0.05,
        beta: float = 0.2,
        margin_weight: float = 1e-3,
        contrastive: Contrastive = "dropout",
        scale: float = 20.0,
        similarity_fct: core.SimilarityFct = cos_sim,
        gather_across_devices: bool = False,
        return_parts: bool = False,
        dropout_columns: Sequence[str] = ("anchor",),
        contrastive_weight: float = 1.0,
    ) -> None:
        r"""Two-way hinge that ranks a paraphrase above a negation, within a window (OssCSE eq. 3, 5).

        Use it to stop a model from treating a sentence and its negation as near-identical, without
        teaching it that "not" means "unrelated". For rows (anchor :math:`h_i`, paraphrase
        :math:`h_i^p`, negation :math:`h_i^n`), with similarity :math:`s` (cosine by default):

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

        With ``dropout_columns``, the ``"dropout"`` term is taken on other columns than the anchor: for
        each named column :math:`c`, InfoNCE between :math:`c` and its second dropout view, the
        negatives being the same column's other rows, and :math:`l_c` is the sum over the named
        columns. ``("negation",)`` spreads the negated sentences apart from each other, which the
        margin alone does not: it scores each negation against its own anchor only.
        ``contrastive_weight`` scales :math:`l_c`: the loss is
        :math:`w\,l_c + \lambda l_m`.

        Negations never enter :math:`l_c` as hard negatives: as unbounded negatives they teach
        "not ⇒ different" and cost STS accuracy (docs/losses/margin_negation.md).

        Returns the scalar :math:`w\,l_c + \lambda l_m`, usable wherever a sentence-transformers loss is
        (MatryoshkaLoss, AdaptiveLayerLoss, ``model.old_fit``). With ``return_parts=True`` it returns
        the dict ``{"margin": λ·l_m, "contrastive": w·l_c}`` instead (``"contrastive"`` absent when
        ``contrastive=None``; one ``"contrastive_<column>"`` per column when ``dropout_columns`` is not
        the anchor alone): SentenceTransformerTrainer sums the parts and logs each one.

        A batch of one row has no in-batch negative: its :math:`l_c` is 0, as in
        MultipleNegativesRankingLoss, and its margin term counts as usual.

        Reduction to MultipleNegativesRankingLoss: ``margin_weight=0`` with ``contrastive="paraphrase"``
        is MNRL on (anchor, paraphrase); with ``"dropout"`` (the anchor's view, ``contrastive_weight=1``)
        it is unsupervised SimCSE, and with ``dropout_columns=("negation",)`` it is w times SimCSE on the
        negations.

        Args:
            model: the SentenceTransformer to train, or ``None`` for :meth:`compute_loss_from_embeddings`.
            alpha: minimum lead of the paraphrase over the negation, ≥ 0; paper 0.05.
            beta: maximum lead, ≥ ``alpha``; paper 0.2.
            margin_weight: λ, ≥ 0; paper 1e-3 (chosen on STS-B dev). Use 1.0 for the margin alone.
            contrastive: ``"dropout"``, ``"paraphrase"`` or ``None`` (see above).
            scale: 1/τ of the contrastive part; paper τ = 0.05 (20).
            similarity_fct: similarity between embeddings, as in MultipleNegativesRankingLoss:
                ``util.cos_sim`` (default; the paper's) or e.g. ``util.dot_score`` (``alpha`` and
                ``beta`` are then in dot-product units). Computed in float32 for float16/bfloat16
                embeddings.
            gather_across_devices: gather the contrastive part's candidates from all processes (DDP).
            return_parts: return the named parts (for the trainer's per-part logging) instead of
                their sum. Leave it False inside MatryoshkaLoss, AdaptiveLayerLoss or ``old_fit``,
                which need a tensor.
            dropout_columns: the columns that ``"dropout"`` embeds twice, among ``"anchor"``,
                ``"paraphrase"`` and ``"negation"``; default the anchor (OssCSE). Only with
                ``contrastive="dropout"``.
            contrastive_weight: w, the weight of :math:`l_c`, ≥ 0; default 1 (OssCSE).

        Raises:
            ValueError: ``alpha`` or ``beta`` negative, ``beta`` < ``alpha``, a negative ``margin_weight`` or
                ``contrastive_weight``, a non-positive ``scale``, an unknown ``contrastive``; ``dropout_columns``
                empty, repeated, naming something other than a text column, or set without ``contrastive="dropout"``;
                ``contrastive_weight`` set with ``contrastive=None``.

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
                loss = RecallRegularizer(
                    model, MarginNegationLoss(model, return_parts=True), gamma=2e-3, return_parts=True
                )
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
        columns = [dropout_columns] if isinstance(dropout_columns, str) else list(dropout_columns)
        if not columns or len(set(columns)) != len(columns) or any(c not in COLUMNS for c in columns):
            raise ValueError(f"{name}: dropout_columns must name distinct columns of {list(COLUMNS)}, got {columns!r}.")
        if contrastive != "dropout" and columns != ["anchor"]:
            raise ValueError(f"{name}: dropout_columns={columns!r} needs contrastive='dropout', got {contrastive!r}.")
        core.check_non_negative(contrastive_weight, "contrastive_weight", name)
        if contrastive is None and contrastive_weight != 1.0:
            raise ValueError(f"{name}: contrastive_weight={contrastive_weight} weighs nothing with contrastive=None.")
        self.alpha = float(alpha)
        self.beta = float(beta)
        self.margin_weight = float(margin_weight)
        self.contrastive = contrastive
        self.scale = float(scale)
        self.similarity_fct = similarity_fct
        self.gather_across_devices = gather_across_devices
        self.return_parts = return_parts
        self.dropout_columns = tuple(columns)
        self.contrastive_weight = float(contrastive_weight)
        self._views: dict[str, tuple[dict[str, Tensor], dict[str, Tensor]]] = {}

    def forward(self, sentence_features: Iterable[dict[str, Tensor]], labels: Tensor | None = None) -> LossOutput:
        return self.compute_loss_from_embeddings(self.embed(self.input_columns(list(sentence_features))), labels)

    def input_columns(self, features: list[dict[str, Tensor]]) -> list[dict[str, Tensor]]:
        """The columns to embed: the dataset's three text columns, then (``contrastive="dropout"``) a second
        dropout view of each of ``dropout_columns``, in their order.

        Raises:
            ValueError: the dataset does not give exactly three text columns (a fourth would otherwise be
                taken for the anchor's dropout view).
        """
        if len(features) != 3:
            raise ValueError(
                f"MarginNegationLoss expects 3 text columns (anchor, paraphrase, negation), got {len(features)}. "
                "The dropout views are made by the loss itself; remove extra columns (ids, metadata)."
            )
        if self.contrastive == "dropout":
            return [*features, *(self._dropout_view(c, features[COLUMNS.index(c)]) for c in self.dropout_columns)]
        return features

    def _dropout_view(self, column: str, source: dict[str, Tensor]) -> dict[str, Tensor]:
        """A copy of a column's features (the model writes its outputs into the dict it embeds), made once
        per source dict. MatryoshkaLoss and AdaptiveLayerLoss call the loss several times with the same
        dicts and pass state through them (cached outputs, per-layer embeddings): a fresh copy per call
        would carry the source's state instead of the view's, or change how the columns are batched."""
        held = self._views.get(column)
        if held is None or held[0] is not source:
            held = self._views[column] = (source, dict(source))
        return held[1]

    def compute_loss_from_embeddings(self, embeddings: list[Tensor], labels: Tensor | None = None) -> LossOutput:
        """``embeddings`` = [anchor, paraphrase, negation], then with ``contrastive="dropout"`` the second view of
        each of ``dropout_columns``."""
        views = self.dropout_columns if self.contrastive == "dropout" else ()
        expected = self.text_columns[0] + len(views)
        layout = ", ".join([*COLUMNS, *(f"{c} dropout view" for c in views)])
        core.check_num_columns(embeddings, expected, expected, "MarginNegationLoss", layout)
        # Upcast once per column, so that a column used twice sums its gradient in float32, not float16.
        embeddings = [core.at_least_float32(e) for e in embeddings]
        anchor, paraphrase, negation = embeddings[:3]
        # (part name, queries, positives): each query's positive is the same row; the other rows are its negatives.
        pairs = []
        if self.contrastive == "paraphrase":
            pairs.append(("contrastive", anchor, paraphrase))
        for column, view in zip(views, embeddings[len(COLUMNS) :]):
            part = "contrastive" if views == ("anchor",) else f"contrastive_{column}"
            pairs.append((part, embeddings[COLUMNS.index(column)], view))
        parts: dict[str, Tensor] = {"margin": self.margin_weight * self.margin_term(anchor, paraphrase, negation)}
        for part, queries, positives in pairs:
            (gathered,), offset = core.gather_rows([positives], self.gather_across_devices)
            # A batch of one leaves the positive alone: l_c = 0, as in MNRL.
            logits = core.scaled(core.similarity_matrix(queries, gathered, self.similarity_fct), self.scale)
            positive = core.positive_index(queries.size(0), offset, queries.device)
            parts[part] = self.contrastive_weight * core.infonce(logits, positive)
        return combine_parts(parts, self.return_parts)

    def margin_term(self, anchor: Tensor, paraphrase: Tensor, negation: Tensor) -> Tensor:
        """:math:`l_m`, unweighted: the mean over rows of :meth:`row_margins`."""
        return self.row_margins(anchor, paraphrase, negation).mean()

    def row_margins(self, anchor: Tensor, paraphrase: Tensor, negation: Tensor) -> Tensor:
        """:math:`U_m^i` of each row: the two-way hinge on s(anchor, paraphrase) − s(anchor, negation)."""
        gap = core.rowwise_similarity(anchor, paraphrase, self.similarity_fct) - core.rowwise_similarity(
            anchor, negation, self.similarity_fct
        )
        return torch.relu(self.alpha - gap) + torch.relu(gap - self.beta)

    def get_config_dict(self) -> dict[str, Any]:
        return {
            "alpha": self.alpha,
            "beta": self.beta,
            "margin_weight": self.margin_weight,
            "contrastive": self.contrastive,
            "scale": self.scale,
            "similarity_fct": similarity_fct_name(self.similarity_fct),
            "gather_across_devices": self.gather_across_devices,
            "dropout_columns": list(self.dropout_columns),
            "contrastive_weight": self.contrastive_weight,
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
