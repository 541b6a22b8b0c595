"""``loss.teacher_ramp``: a teacher term brought in over part of the schedule, the lab's recipe setting (through
st_debias's recipe-extension seam, ``st_debias.recipe_extensions`` in ``benchmarks/pyproject.toml``).

With ``teacher_ramp: [start, end]`` (fractions of the run's optimiser steps, 0 ≤ start < end ≤ 1) a loss's
``teacher_weight`` w is scaled at step k of K (k = 0 … K − 1) by

    clip((k / K − start) / (end − start), 0, 1),

so it is zero up to ``start`` of the schedule, rises linearly, and is the recipe's w from ``end`` on (with ``end``
1, the last step takes 1 − 1/((1 − start) K) of it). The floor at full weight from the first step took STS-B dev
under the start model around the learning rate's peak on a 500-step run; ``[0.1, 0.5]`` starts it when the
warm-up ends and gives it full weight once the rate is down to about 0.56 of its peak. The step is the trainer's,
so a resumed run takes the weight of the step it resumes at. At weight zero the teacher still embeds its rows, and
the student draws the same dropout masks as the run with the term throughout. The ramp finds the loss's
``teacher_weight`` inside the wrappers other settings put around it (``loss.preservation_weight``).
"""

from __future__ import annotations

import inspect
import math
from typing import TYPE_CHECKING, Any

from st_debias.recipes.extensions import RecipeExtension
from st_debias.recipes.losses import loss_class

if TYPE_CHECKING:
    from st_debias.recipes import Recipe

# Recipes load this module to learn its key, so it imports no torch: the callback imports it where it is made.


def ramp_share(step: int, max_steps: int, start: float, end: float) -> float:
    """The teacher weight's share at optimiser step ``step`` (0-based) of ``max_steps`` (module docstring)."""
    return min(1.0, max(0.0, (step / max_steps - start) / (end - start)))


def ramp_callback(loss: Any, start: float, end: float) -> Any:
    """A trainer callback that, before each optimiser step, sets ``loss.teacher_weight`` to its weight when the
    callback was made × :func:`ramp_share` of the trainer's step."""
    from transformers import TrainerCallback

    full_weight = float(loss.teacher_weight)

    class TeacherRampCallback(TrainerCallback):
        def on_step_begin(self, args, state, control, **kwargs):  # noqa: ANN001 - the TrainerCallback signature
            loss.teacher_weight = full_weight * ramp_share(state.global_step, state.max_steps, start, end)

    return TeacherRampCallback()


class TeacherRamp(RecipeExtension):
    """``loss.teacher_ramp``: ``[start, end]`` of the schedule over which the loss's teacher term rises to its
    ``teacher_weight`` (module docstring); None: the full weight throughout."""

    section = "loss"
    defaults = {"teacher_ramp": None}

    def __init__(self, **values: Any) -> None:
        super().__init__(**values)
        self.loss: Any = None

    def check(self, recipe: Recipe) -> None:
        ramp = self.values["teacher_ramp"]
        if ramp is None:
            return
        numbers = isinstance(ramp, list | tuple) and len(ramp) == 2 and all(
            isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x) for x in ramp)
        if not numbers or not 0 <= ramp[0] < ramp[1] <= 1:
            raise ValueError(f"loss.teacher_ramp must be [start, end] with 0 <= start < end <= 1, got {ramp!r}.")
        if "teacher_weight" not in inspect.signature(loss_class(recipe.loss.name)).parameters:
            raise ValueError(f"loss.teacher_ramp scales a loss's teacher_weight, which {recipe.loss.name} does not take.")

    def wrap_loss(self, loss: Any, model: Any) -> Any:
        """The loss unchanged; the ramp holds the loss that owns ``teacher_weight``, inside any wrappers.

        Raises:
            ValueError: neither the loss nor a loss it wraps has ``teacher_weight``.
        """
        if self.values["teacher_ramp"] is None:
            return loss
        owner = loss
        while not hasattr(owner, "teacher_weight") and hasattr(owner, "loss"):
            owner = owner.loss
        if not hasattr(owner, "teacher_weight"):
            raise ValueError(f"loss.teacher_ramp: the run's loss ({type(loss).__name__}) has no teacher_weight to ramp.")
        self.loss = owner
        return loss

    def callbacks(self) -> list[Any]:
        ramp = self.values["teacher_ramp"]
        if ramp is None:
            return []
        if self.loss is None:
            raise ValueError("loss.teacher_ramp: the run built its callbacks before its loss (wrap_loss).")
        return [ramp_callback(self.loss, float(ramp[0]), float(ramp[1]))]
