"""The lab's ``loss.teacher_ramp`` (``benchmarks.negation_teacher.teacher_ramp``): a recipe setting through the
recipe-extension seam that brings a loss's teacher term in over part of the schedule, by the trainer's step."""

from __future__ import annotations

import pytest
from transformers import TrainerCallback

from benchmarks.negation_teacher.distill_margin import TeacherDistillMarginLoss
from benchmarks.negation_teacher.teacher_ramp import TeacherRamp, ramp_share
from st_debias.recipes import load_recipe
from st_debias.recipes.extensions import RECIPE_EXTENSIONS
from tests.conftest import train_tiny


def test_the_share_is_zero_before_start_linear_between_and_one_after_end() -> None:
    shares = [ramp_share(step, 10, 0.2, 0.6) for step in range(10)]
    assert shares == pytest.approx([0, 0, 0, 0.25, 0.5, 0.75, 1, 1, 1, 1])
    assert ramp_share(0, 5, 0.0, 1.0) == 0.0 and ramp_share(4, 5, 0.0, 1.0) == pytest.approx(0.8)


class RecordTeacherWeight(TrainerCallback):
    """The loss's teacher weight at each optimiser step (read after the ramp set it, before the next)."""

    def __init__(self, loss: TeacherDistillMarginLoss) -> None:
        self.loss, self.weights = loss, {}

    def on_step_end(self, args, state, control, **kwargs):
        self.weights[state.global_step - 1] = self.loss.teacher_weight


def _ramped_run(tiny_model, tiny_model_other, tmp_path, steps: int, resume: str | None = None, **arguments) -> dict:
    loss = TeacherDistillMarginLoss(tiny_model, teacher="unused: set below", teacher_weight=0.1, distill="margin_floor")
    loss._teacher.append(tiny_model_other)
    ramp = TeacherRamp(teacher_ramp=[0.25, 0.75])
    assert ramp.wrap_loss(loss, tiny_model) is loss
    recorder = RecordTeacherWeight(loss)
    train_tiny(tiny_model, tmp_path, [*ramp.callbacks(), recorder], steps=steps, resume=resume, loss=loss, **arguments)
    return recorder.weights


def test_the_ramp_sets_the_teacher_weight_by_the_trainers_step(tiny_model, tiny_model_other, tmp_path) -> None:
    weights = _ramped_run(tiny_model, tiny_model_other, tmp_path, steps=4)
    assert weights == pytest.approx({0: 0.0, 1: 0.0, 2: 0.05, 3: 0.1})


def test_a_resumed_run_takes_the_weight_of_the_step_it_resumes_at(tiny_model, tiny_model_other, tmp_path) -> None:
    """Failure mode: a ramp counting its own calls starts a resumed run from zero again."""
    _ramped_run(tiny_model, tiny_model_other, tmp_path, steps=4, save_strategy="steps", save_steps=2)
    resumed = _ramped_run(tiny_model, tiny_model_other, tmp_path, steps=4, resume=str(tmp_path / "checkpoint-2"))
    assert resumed == pytest.approx({2: 0.05, 3: 0.1})


RECIPE = """name: r
version: 1
description: d
data: {kind: minimal_pairs}
loss:
  name: %s
  params: %s
  teacher_ramp: %s
"""


def test_teacher_ramp_is_a_recipe_setting_and_bad_values_are_refused(tmp_path) -> None:
    assert "teacher_ramp" in RECIPE_EXTENSIONS and "teacher_ramp" not in RECIPE_EXTENSIONS.builtin()
    path = tmp_path / "r.yaml"
    path.write_text(RECIPE % ("TeacherDistillMarginLoss", "{teacher: a/teacher}", "[0.1, 0.5]"), encoding="utf-8")
    assert load_recipe(path).extensions == {"teacher_ramp": {"teacher_ramp": [0.1, 0.5]}}
    for bad in ("[0.5, 0.1]", "[0.1, 1.5]", "[0.1]", "0.3", "[true, 0.5]"):
        path.write_text(RECIPE % ("TeacherDistillMarginLoss", "{teacher: a/teacher}", bad), encoding="utf-8")
        with pytest.raises(ValueError, match=r"loss.teacher_ramp must be \[start, end\]"):
            load_recipe(path)
    path.write_text(RECIPE % ("MarginNegationLoss", "{}", "[0.1, 0.5]"), encoding="utf-8")
    with pytest.raises(ValueError, match="teacher_weight, which MarginNegationLoss does not take"):
        load_recipe(path)


def test_a_run_whose_loss_has_no_teacher_weight_is_refused() -> None:
    ramp = TeacherRamp(teacher_ramp=[0.1, 0.5])
    ramp.wrap_loss(object(), None)
    with pytest.raises(ValueError, match="no teacher_weight to ramp"):
        ramp.callbacks()
    assert TeacherRamp().callbacks() == [], "without the setting no callback is added"
