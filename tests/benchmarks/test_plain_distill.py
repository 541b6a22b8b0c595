"""The lab's plain distillation baseline ``TeacherMSELoss`` (benchmarks/negation_teacher/plain_distill.py):
sentence-transformers' ``MSELoss`` on a teacher's embeddings put in the rows by ``from_recipe``, its projection when
the widths differ, against a float64 reference with gradcheck, on real corpus sentences and through the recipe
registry."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from datasets import Dataset

from benchmarks.negation_teacher.plain_distill import TeacherMSELoss, least_squares_projection
from tests.conftest import build_tiny_model_dir, load_tiny_model


@pytest.fixture(scope="module")
def wide_teacher_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny teacher twice as wide as the tiny student (256 against 128), saved as a SentenceTransformer folder."""
    teacher = load_tiny_model(build_tiny_model_dir(tmp_path_factory.mktemp("wide-bert"), seed=3, hidden=256))
    folder = tmp_path_factory.mktemp("wide-teacher") / "teacher"
    teacher.save(str(folder))
    return folder


def test_from_recipe_labels_each_sentence_with_the_teachers_embedding(tiny_model, wide_teacher_dir, wiki_sentences) -> None:
    from sentence_transformers import SentenceTransformer

    sentences = wiki_sentences[:12]
    rows = Dataset.from_dict({"anchor": sentences, "positive": sentences})
    loss, labelled = TeacherMSELoss.from_recipe(tiny_model, rows, {"teacher": str(wide_teacher_dir)},
                                                show_progress_bar=False)
    assert labelled.column_names == ["anchor", "label"]
    teacher = SentenceTransformer(str(wide_teacher_dir), device="cpu")
    teacher.max_seq_length = tiny_model.max_seq_length
    expected = teacher.encode(sentences, convert_to_tensor=True)
    assert torch.allclose(torch.tensor(labelled["label"]), expected, atol=1e-5)
    assert loss.projection is not None and tuple(loss.projection.weight.shape) == (256, 128)
    assert loss.get_config_dict()["projection_dim"] == 256


def test_matches_the_float64_reference_and_passes_gradcheck(tiny_model) -> None:
    """mean over rows and dimensions of (W s_i − t_i)², with W the loss's projection."""
    loss = TeacherMSELoss(tiny_model, teacher="a/teacher", projection_dim=6).double()
    generator = torch.Generator().manual_seed(0)
    student = torch.randn(5, 128, generator=generator, dtype=torch.float64, requires_grad=True)
    teacher = torch.randn(5, 6, generator=generator, dtype=torch.float64)
    weight, bias = loss.projection.weight.detach().tolist(), loss.projection.bias.detach().tolist()
    reference = 0.0
    for row, target in zip(student.detach().tolist(), teacher.tolist(), strict=True):
        for j, t in enumerate(target):
            projected = sum(w * x for w, x in zip(weight[j], row, strict=True)) + bias[j]
            reference += (projected - t) ** 2
    reference /= 5 * 6
    value = loss.compute_loss_from_embeddings([student], [teacher])
    assert value.item() == pytest.approx(reference, rel=1e-10)
    assert torch.autograd.gradcheck(lambda s: loss.compute_loss_from_embeddings([s], [teacher]), (student,))


def test_the_least_squares_projection_solves_the_normal_equations() -> None:
    """[S 1]ᵀ[S 1] [Wᵀ; b] = [S 1]ᵀ T, solved in float64 apart from scikit-learn; an exact linear map is recovered."""
    generator = torch.Generator().manual_seed(1)
    student = torch.randn(40, 5, generator=generator, dtype=torch.float64)
    teacher = torch.randn(40, 3, generator=generator, dtype=torch.float64)
    weight, bias = least_squares_projection(student, teacher)
    design = torch.cat([student, torch.ones(40, 1, dtype=torch.float64)], dim=1)
    reference = torch.linalg.solve(design.T @ design, design.T @ teacher)
    assert torch.allclose(weight, reference[:-1].T, atol=1e-10) and torch.allclose(bias, reference[-1], atol=1e-10)
    exact = student @ torch.tensor([[1.0, -2.0, 0.5, 0.0, 3.0]] * 3, dtype=torch.float64).T + 0.25
    weight, bias = least_squares_projection(student, exact)
    assert torch.allclose(student @ weight.T + bias, exact, atol=1e-10)


def test_fit_projection_starts_the_projection_at_the_fit(tiny_model, wide_teacher_dir, wiki_sentences) -> None:
    sentences = wiki_sentences[:300]
    rows = Dataset.from_dict({"anchor": sentences, "positive": sentences})
    fitted, labelled = TeacherMSELoss.from_recipe(tiny_model, rows, {"teacher": str(wide_teacher_dir),
                                                  "fit_projection": True}, show_progress_bar=False)
    plain, _ = TeacherMSELoss.from_recipe(tiny_model, rows, {"teacher": str(wide_teacher_dir)}, show_progress_bar=False)
    student = tiny_model.encode(sentences, convert_to_tensor=True)
    teacher = torch.tensor(labelled["label"])
    with torch.no_grad():
        fitted_value = fitted.compute_loss_from_embeddings([student], [teacher]).item()
        plain_value = plain.compute_loss_from_embeddings([student], [teacher]).item()
    weight, bias = least_squares_projection(student, teacher)
    assert torch.allclose(fitted.projection.weight.detach().double(), weight, atol=1e-5)
    assert torch.allclose(fitted.projection.bias.detach().double(), bias, atol=1e-5)
    assert fitted_value < plain_value and fitted.get_config_dict()["fit_projection"] is True


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="name the teacher"):
        TeacherMSELoss(None)
    with pytest.raises(ValueError, match="teacher_batch_size"):
        TeacherMSELoss(None, teacher="a/teacher", teacher_batch_size=0)


def test_a_recipe_builds_it_and_training_moves_the_student_and_the_projection(
    tiny_model, wide_teacher_dir, wiki_sentences, tmp_path
) -> None:
    """Through the recipe loss registry (the lab's entry point), two steps of sentence-transformers' trainer: the
    projection lives on the loss, and the trainer's optimiser reaches it."""
    from sentence_transformers import SentenceTransformerTrainer, SentenceTransformerTrainingArguments

    from st_debias.recipes.losses import LOSSES, LossConfig, build_loss

    assert "TeacherMSELoss" in LOSSES and "TeacherMSELoss" not in LOSSES.builtin()
    from st_debias.recipes.losses import reads_guide, takes_guide

    assert reads_guide("TeacherMSELoss") and not takes_guide("TeacherMSELoss"), "it reads labels, never loss.guide"
    sentences = wiki_sentences[:8]
    rows = Dataset.from_dict({"anchor": sentences, "positive": sentences})
    loss, rows = build_loss(LossConfig(name="TeacherMSELoss", params={"teacher": str(wide_teacher_dir)}), tiny_model,
                            rows, show_progress_bar=False)
    assert isinstance(loss, TeacherMSELoss) and rows.column_names == ["anchor", "label"]
    projection = loss.projection.weight.detach().clone()
    student = tiny_model[0].auto_model.embeddings.word_embeddings.weight.detach().clone()
    arguments = SentenceTransformerTrainingArguments(
        output_dir=str(tmp_path), max_steps=2, per_device_train_batch_size=4, learning_rate=1e-2,
        report_to="none", save_strategy="no", use_cpu=True,
    )
    SentenceTransformerTrainer(model=tiny_model, args=arguments, train_dataset=rows, loss=loss).train()
    assert not torch.equal(loss.projection.weight.detach(), projection)
    assert not torch.equal(tiny_model[0].auto_model.embeddings.word_embeddings.weight.detach(), student)
