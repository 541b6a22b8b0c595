"""The lab's ``loss.teacher_ramp`` (``benchmarks.negation_teacher.teacher_ramp``): a recipe setting through the
recipe-extension seam that brings a loss's teacher term in over part of the schedule, by the trainer's step."""

from __future__ import annotations

import pytest
from transformers import TrainerCallback

from benchmarks.negation_teacher.distill_margin import TeacherDistillMarginLoss
from benchmarks.negation_teacher.teacher_ramp import TeacherRamp, ramp_share
from st_debias.losses import MarginNegationLoss, SimilarityPreservation
from st_debias.recipes import load_recipe
from st_debias.recipes.extensions import RECIPE_EXTENSIONS
from tests.conftest import train_tiny


def test_the_share_is_zero_before_start_linear_between_and_one_after_end() -> None:
    shares = [ramp_share(step, 10, 0.2, 0.6) for step in range(10)]
    assert shares == pytest.approx([0, 0, 0, 0.25, 0.5, 0.75, 1, 1, 1, 1])
    assert ramp_share(0, 5, 0.0, 1.0) == 0.0 and ramp_share(4, 5, 0.0, 1.0) == pytest.approx(0.8)


class RecordTeacherWeight(TrainerCallback):
    """The loss's teacher weight at each optimiser step, and the teacher term the trainer logged for it."""

    def __init__(self, loss: TeacherDistillMarginLoss) -> None:
        self.loss, self.weights, self.terms = loss, {}, {}

    def on_step_end(self, args, state, control, **kwargs):
        self.weights[state.global_step - 1] = self.loss.teacher_weight

    def on_log(self, args, state, control, logs=None, **kwargs):
        if logs and "teacher" in logs:
            self.terms[state.global_step - 1] = float(logs["teacher"])


def _ramped_run(tiny_model, tiny_model_other, tmp_path, steps: int, resume: str | None = None,
                **arguments) -> RecordTeacherWeight:
    loss = TeacherDistillMarginLoss(tiny_model, teacher="unused: set below", teacher_weight=1000.0,
                                    distill="margin_floor")
    loss._teacher.append(tiny_model_other)
    ramp = TeacherRamp(teacher_ramp=[0.25, 0.75])
    assert ramp.wrap_loss(loss, tiny_model) is loss
    recorder = RecordTeacherWeight(loss)
    train_tiny(tiny_model, tmp_path, [*ramp.callbacks(), recorder], steps=steps, resume=resume, loss=loss,
               logging_steps=1, **arguments)
    return recorder


def test_the_ramp_sets_the_teacher_weight_by_the_trainers_step(tiny_model, tiny_model_other, tmp_path) -> None:
    recorder = _ramped_run(tiny_model, tiny_model_other, tmp_path, steps=4)
    assert recorder.weights == pytest.approx({0: 0.0, 1: 0.0, 2: 500.0, 3: 1000.0})
    # The term the steps trained with, not only the attribute (a large weight, so that the floor shows at all).
    assert recorder.terms[0] == recorder.terms[1] == 0.0 < recorder.terms[3]


def test_a_resumed_run_takes_the_weight_of_the_step_it_resumes_at(tiny_model, tiny_model_other, tmp_path) -> None:
    """Failure mode: a ramp counting its own calls starts a resumed run from zero again."""
    _ramped_run(tiny_model, tiny_model_other, tmp_path, steps=4, save_strategy="steps", save_steps=2)
    resumed = _ramped_run(tiny_model, tiny_model_other, tmp_path, steps=4, resume=str(tmp_path / "checkpoint-2"))
    assert resumed.weights == pytest.approx({2: 500.0, 3: 1000.0})


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


def test_the_ramp_finds_the_teacher_weight_inside_another_settings_wrapper(tiny_model) -> None:
    """Failure mode: with ``preservation_weight`` before ``teacher_ramp`` in a recipe, the ramp is handed the
    SimilarityPreservation wrapper, which has no teacher_weight of its own."""
    loss = TeacherDistillMarginLoss(tiny_model, teacher="unused", teacher_weight=0.1)
    wrapped = SimilarityPreservation(tiny_model, loss, weight=0.3)
    ramp = TeacherRamp(teacher_ramp=[0.1, 0.5])
    assert ramp.wrap_loss(wrapped, tiny_model) is wrapped and ramp.loss is loss


def test_a_run_whose_loss_has_no_teacher_weight_is_refused_before_training(tiny_model) -> None:
    with pytest.raises(ValueError, match=r"loss \(MarginNegationLoss\) has no teacher_weight to ramp"):
        TeacherRamp(teacher_ramp=[0.1, 0.5]).wrap_loss(MarginNegationLoss(tiny_model), tiny_model)
    with pytest.raises(ValueError, match="callbacks before its loss"):
        TeacherRamp(teacher_ramp=[0.1, 0.5]).callbacks()
    assert TeacherRamp().callbacks() == [], "without the setting no callback is added"
