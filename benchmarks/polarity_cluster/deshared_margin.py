"""An experimental margin that cannot separate a sentence from its negation along the direction every row shares.

``MarginNegationLoss`` ranks the paraphrase above the negation with a two-way hinge on s(a, p) − s(a, n). One way
to widen that gap for every negation row at once is to move all negated sentences the same way: a negation
direction shared by the batch. That is the polarity cluster of the dev negation probe (figure (iii): negated
sentences with different content drift together), and a SimCSE view on the negation column, which spreads them
again, gives that separation back (figure (i) falls).

``DesharedMarginLoss`` scores each negation with its difference from its anchor along the batch's common
difference direction taken out. With d_i = n_i − a_i and u = sg(mean_i d_i / ‖mean_i d_i‖) (sg: no gradient
through it),

    ñ_i = n_i − (d_i · u) u,        L = l_c + λ · mean_i [max(s(a_i, ñ_i) − s(a_i, p_i) + α, 0) + max(s(a_i, p_i) − s(a_i, ñ_i) − β, 0)]

so ñ_i's component along u is the anchor's own, and the margin's gradient on n_i has no component along u. The
margin must be met by what is particular to each row. Everything else is ``MarginNegationLoss`` (the contrastive
part l_c included; the negation never enters it). A batch of one row has no common direction apart from its own
difference (ñ = a); the loss is meant for training batches of many rows from several families.

The lab's entry points (``benchmarks/pyproject.toml``) add the class to the recipe loss registry, so
that a lab recipe YAML can name it,
with ``DesharedColumnViewsLoss``: the same margin under ``ColumnViewsMarginLoss``'s
views (``column_views.py``); ``EarlyViewsDesharedLoss``, those views over the first training steps only; and
``DesharedClusterCapLoss``, the same margin beside ``ClusterCapMarginLoss``'s cap or hold on the negated rows' cluster
(``cluster_cap.py``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import torch
from torch import Tensor

from benchmarks.polarity_cluster.cluster_cap import ClusterCapMarginLoss
from benchmarks.polarity_cluster.column_views import ColumnViewsMarginLoss
from st_debias.losses import MarginNegationLoss
from st_debias.losses.base import LossOutput

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer


def common_direction(anchor: Tensor, negation: Tensor) -> Tensor | None:
    """u: the unit mean of the rows' differences n_i − a_i, without gradient; None when that mean is zero."""
    common = (negation - anchor).mean(dim=0).detach()
    length = common.norm()
    return None if length == 0 else common / length


def without_direction(anchor: Tensor, negation: Tensor, direction: Tensor | None) -> Tensor:
    """ñ_i = n_i − ((n_i − a_i) · u) u: each negation with its difference from its anchor along ``direction`` taken
    out (unchanged for None)."""
    if direction is None:
        return negation
    return negation - ((negation - anchor) @ direction).unsqueeze(1) * direction


class DesharedMarginLoss(MarginNegationLoss):
    """``MarginNegationLoss`` whose margin scores each negation without the batch's common difference direction
    (module docstring). The same arguments, checks and parts; the contrastive part sees the negations as they are."""

    def margin_term(self, anchor: Tensor, paraphrase: Tensor, negation: Tensor) -> Tensor:
        deshared = without_direction(anchor, negation, common_direction(anchor, negation))
        return super().margin_term(anchor, paraphrase, deshared)


class DesharedColumnViewsLoss(ColumnViewsMarginLoss, DesharedMarginLoss):
    """``ColumnViewsMarginLoss`` (the margin plus SimCSE on chosen columns) whose margin is
    ``DesharedMarginLoss``'s. The views see the negations as they are; only the margin scores them deshared."""


class EarlyViewsDesharedLoss(DesharedColumnViewsLoss):
    """``DesharedColumnViewsLoss`` whose views weigh ``view_weight`` over the first ``view_steps`` training steps and
    nothing after: the view spreads the negated sentences early on (on version 6's traced run the polarity cluster is at
    its highest at the first checkpoint, step 25), then leaves them, so that over a long budget it does not go on
    taking away the direction they share.

    With ``view_fade=True`` the weight falls linearly instead, from ``view_weight`` at the first step to zero at step
    ``view_steps``: over a run of ``view_steps`` steps it falls as the learning rate does after its warm-up.

    The steps are counted as the loss is called with gradients on (one call per optimiser step, without gradient
    accumulation); a resumed run counts from zero again, so it gets the views for ``view_steps`` more steps. At weight
    zero the views are still embedded, so that dropout draws the same masks as in the run with the views throughout.
    """

    def __init__(
        self,
        model: SentenceTransformer | None,
        view_steps: int = 100,
        view_fade: bool = False,
        view_columns: Sequence[str] = ("negation",),
        view_weight: float = 1.0,
        alpha: float = 0.05,
        beta: float = 0.2,
        margin_weight: float = 1e-3,
        scale: float = 20.0,
        return_parts: bool = False,
    ) -> None:
        """``DesharedColumnViewsLoss`` with the same arguments, its views on for ``view_steps`` steps (class
        docstring).

        Raises:
            ValueError: a negative ``view_steps``.
        """
        super().__init__(model, view_columns=view_columns, view_weight=view_weight, alpha=alpha, beta=beta,
                         margin_weight=margin_weight, scale=scale, return_parts=return_parts)
        if view_steps < 0:
            raise ValueError(f"EarlyViewsDesharedLoss: view_steps must be >= 0, got {view_steps}.")
        self.view_steps = int(view_steps)
        self.view_fade = bool(view_fade)
        self.full_view_weight = self.contrastive_weight
        self.training_calls = 0

    def forward(self, sentence_features: Iterable[dict[str, Tensor]], labels: Tensor | None = None) -> LossOutput:
        if torch.is_grad_enabled():
            step = self.training_calls
            if self.view_fade:
                share = max(0.0, 1.0 - step / self.view_steps) if self.view_steps else 0.0
            else:
                share = float(step < self.view_steps)
            self.contrastive_weight = self.full_view_weight * share
            self.training_calls += 1
        return super().forward(sentence_features, labels)

    def get_config_dict(self) -> dict[str, Any]:
        return {**super().get_config_dict(), "view_weight": self.full_view_weight, "view_steps": self.view_steps,
                "view_fade": self.view_fade}


class DesharedClusterCapLoss(ClusterCapMarginLoss, DesharedMarginLoss):
    """``ClusterCapMarginLoss`` (the margin plus a cap or a hold on the negation column's cluster, against the start
    model on the same rows) whose margin is ``DesharedMarginLoss``'s. The cap sees the negations as they are; only the
    margin scores them deshared: it separates by what is particular to each row, which a hold on the cluster does not
    bound (under the plain margin, the hold left the margin nothing to separate with)."""
