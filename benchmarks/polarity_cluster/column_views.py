"""The lab name of ``MarginNegationLoss``'s dropout views on chosen columns, as the selection runs named it.

``MarginNegationLoss(contrastive="dropout")`` embeds the anchor column twice and trains InfoNCE between the two
dropout views, with the other anchors as in-batch negatives (unsupervised SimCSE). In the ``st-debias`` rows most
anchors are affirmative, and the negated sentences sit in the negation column, where nothing keeps them apart
from each other. The selection runs gave SimCSE's term to other columns through ``ColumnViewsMarginLoss``::

    L = λ · l_m + w · Σ_{c ∈ view_columns} InfoNCE(c, c')

which the library now has as ``MarginNegationLoss(dropout_columns=view_columns, contrastive_weight=w)``. This
class keeps the lab recipes' names (``view_columns``, ``view_weight``) and maps them onto it, so that the
committed lab YAMLs still load and train the same loss.

The lab's entry points (``benchmarks/pyproject.toml``) add the class to the recipe loss registry, so
that a lab recipe YAML can name it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from st_debias.losses import MarginNegationLoss

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer


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
        """``MarginNegationLoss(contrastive="dropout", dropout_columns=view_columns, contrastive_weight=view_weight)``
        (module docstring)."""
        super().__init__(
            model,
            alpha=alpha,
            beta=beta,
            margin_weight=margin_weight,
            contrastive="dropout",
            scale=scale,
            return_parts=return_parts,
            dropout_columns=view_columns,
            contrastive_weight=view_weight,
        )

    @property
    def view_columns(self) -> tuple[str, ...]:
        return self.dropout_columns

    @property
    def view_weight(self) -> float:
        return self.contrastive_weight

    def get_config_dict(self) -> dict[str, Any]:
        config = super().get_config_dict()
        renamed = {"dropout_columns": "view_columns", "contrastive_weight": "view_weight"}
        return {renamed.get(k, k): v for k, v in config.items() if k != "contrastive"}
