"""An experimental contrastive part for MarginNegationLoss: SimCSE on chosen columns of the rows.

``MarginNegationLoss(contrastive="dropout")`` embeds the anchor column twice and trains InfoNCE between the two
dropout views, with the other anchors as in-batch negatives (unsupervised SimCSE). In the ``st-debias`` rows most
anchors are affirmative, and the negated sentences sit in the negation column, where nothing keeps them apart
from each other. ``ColumnViewsMarginLoss`` gives SimCSE's term to the columns named in ``view_columns``
instead: for each one, a second dropout view of that column and InfoNCE between the two, the in-batch negatives
taken from the same column only (a row's own anchor is never a negative of its negation, so the margin's window
stays the only term that scores that pair directly)::

    L = λ · l_m + w · Σ_{c ∈ view_columns} InfoNCE(c, c')

with w = ``view_weight`` (1 by default, as SimCSE's term in ``MarginNegationLoss``). The views' negatives are
this process's rows only (no gathering across devices).

:func:`register` adds the class to the recipe loss registry, so that a lab recipe YAML can name it
(``select_dev.py`` calls it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from torch import Tensor

from st_debias import core
from st_debias.losses import MarginNegationLoss
from st_debias.losses._base import LossOutput, combine_parts

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

#: The three text columns of a margin row, in order.
COLUMNS = ("anchor", "paraphrase", "negation")


class ColumnViewsMarginLoss(MarginNegationLoss):
    def __init__(
        self,
        model: SentenceTransformer | None,
        view_columns: Sequence[str] = ("negation",),
        view_weight: float = 1.0,
        alpha: float = 0.05,
        beta: float = 0.2,
        margin_weight: float = 1e-3,
        scale: float = 20.0,
        return_parts: bool = False,
    ) -> None:
        """The margin (``MarginNegationLoss`` with ``contrastive=None``) plus one SimCSE term per column in
        ``view_columns`` (module docstring).

        Raises:
            ValueError: an unknown or repeated column, or none; a negative ``view_weight``.
        """
        super().__init__(model, alpha=alpha, beta=beta, margin_weight=margin_weight, contrastive=None, scale=scale)
        columns = list(view_columns)
        unknown = [c for c in columns if c not in COLUMNS]
        if not columns or unknown or len(set(columns)) != len(columns):
            raise ValueError(
                f"ColumnViewsMarginLoss: view_columns must name distinct columns of {list(COLUMNS)}, got {columns!r}."
            )
        core.check_non_negative(view_weight, "view_weight", "ColumnViewsMarginLoss")
        self.view_columns = tuple(columns)
        self.view_weight = float(view_weight)
        self.return_parts = return_parts
        self._views: dict[str, tuple[dict[str, Tensor], dict[str, Tensor]]] = {}

    def input_columns(self, features: list[dict[str, Tensor]]) -> list[dict[str, Tensor]]:
        """The three text columns, then a copy of each column in ``view_columns`` (embedded again, so with its
        own dropout mask), made once per column dict as ``MarginNegationLoss`` makes its anchor view."""
        columns = super().input_columns(features)
        return [*columns, *(self._view_of(column, columns[COLUMNS.index(column)]) for column in self.view_columns)]

    def _view_of(self, column: str, source: dict[str, Tensor]) -> dict[str, Tensor]:
        # A wrapper that calls the loss again with the same dicts (MatryoshkaLoss, AdaptiveLayerLoss) finds
        # its state in them: a fresh copy would carry the source's embeddings instead of the view's.
        held = self._views.get(column)
        if held is None or held[0] is not source:
            held = self._views[column] = (source, dict(source))
        return held[1]

    def compute_loss_from_embeddings(self, embeddings: list[Tensor], labels: Tensor | None = None) -> LossOutput:
        """``embeddings`` = [anchor, paraphrase, negation], then the second view of each of ``view_columns``."""
        expected = len(COLUMNS) + len(self.view_columns)
        layout = ", ".join([*COLUMNS, *(f"{c} dropout view" for c in self.view_columns)])
        core.check_num_columns(embeddings, expected, expected, "ColumnViewsMarginLoss", layout)
        # Upcast once, so that a column scored by the margin and by its view sums its gradient in float32.
        embeddings = [core.at_least_float32(e) for e in embeddings]
        # With contrastive=None the parent's loss is its margin part alone (a dict when return_parts is set).
        margin = super().compute_loss_from_embeddings(embeddings[: len(COLUMNS)], labels)
        parts = dict(margin) if isinstance(margin, dict) else {"margin": margin}
        for column, view in zip(self.view_columns, embeddings[len(COLUMNS) :]):
            source = embeddings[COLUMNS.index(column)]
            logits = core.scaled(core.similarity_matrix(source, view, self.similarity_fct), self.scale)
            positive = core.positive_index(source.size(0), 0, source.device)
            parts[f"contrastive_{column}"] = self.view_weight * core.infonce(logits, positive)
        return combine_parts(parts, self.return_parts)

    def get_config_dict(self) -> dict[str, Any]:
        config = {k: v for k, v in super().get_config_dict().items() if k != "contrastive"}
        return {**config, "view_columns": list(self.view_columns), "view_weight": self.view_weight}


def register() -> None:
    """Add ``ColumnViewsMarginLoss`` to the recipe loss registry (for lab recipes; the library's docs list only
    its own losses)."""
    from st_debias.recipes import losses

    losses.LOSSES.setdefault("ColumnViewsMarginLoss", __name__)
