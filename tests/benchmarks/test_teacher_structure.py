"""The lab loss ``TeacherStructureMarginLoss`` (benchmarks/teachers_preservation/teacher_structure.py): the margin beside the squared
difference from a frozen teacher's in-batch cosines, against a float64 reference written from the equation, with
gradcheck, on real sentences through a tiny student and a tiny teacher, and through the recipe registry."""

from __future__ import annotations

import pytest
import torch

from benchmarks.teachers_preservation.teacher_structure import TeacherStructureMarginLoss
from st_debias import core
from st_debias.losses import MarginNegationLoss
from tests.benchmarks.conftest import recipe_built_lab_loss
from tests.conftest import first_sentences
from tests.reference import cosine, similarity_drift_reference


def structure_reference(student: list[torch.Tensor], teacher: torch.Tensor) -> float:
    """1/(N(N−1)) Σ_{i≠j} (cos(h_i, h_j) − cos(t_i, t_j))² over the three columns stacked (N = 3B), in float64."""
    return similarity_drift_reference(torch.cat(student), teacher)


def test_matches_the_float64_reference_and_passes_gradcheck() -> None:
    generator = torch.Generator().manual_seed(0)
    columns = [torch.randn(4, 6, generator=generator, dtype=torch.float64, requires_grad=True) for _ in range(4)]
    teacher = torch.randn(12, 10, generator=generator, dtype=torch.float64)  # another width than the student's
    loss = TeacherStructureMarginLoss(None, teacher_weight=0.7, alpha=0.1, beta=0.3, margin_weight=0.5, scale=5.0)
    parts = loss.compute_loss_from_embeddings(columns, teacher=teacher)
    plain = MarginNegationLoss(None, alpha=0.1, beta=0.3, margin_weight=0.5, scale=5.0, return_parts=True)
    expected = plain.compute_loss_from_embeddings(columns)
    assert set(parts) == {*expected, "teacher"}
    for name, value in expected.items():
        assert parts[name].item() == pytest.approx(value.item(), rel=1e-12)
    assert parts["teacher"].item() == pytest.approx(0.7 * structure_reference(columns[:3], teacher), rel=1e-10)
    assert parts["teacher"].item() > 1e-3, "random teachers disagree: the term is not trivially zero"
    assert torch.autograd.gradcheck(
        lambda *c: loss.compute_loss_from_embeddings(list(c), teacher=teacher)["teacher"], tuple(columns)
    )
    # The dropout view (fourth column) is not distilled: it changes the contrastive part only.
    moved = [*columns[:3], columns[3] + 1.0]
    assert loss.compute_loss_from_embeddings(moved, teacher=teacher)["teacher"].item() == pytest.approx(parts["teacher"].item())


def rows_reference(student: list[torch.Tensor], teacher: torch.Tensor) -> float:
    """1/(3B) Σ_i Σ over (a, p), (a, n), (p, n) of (cos(x_i, y_i) − cos(x*_i, y*_i))², in float64."""
    columns = [column.detach().double().tolist() for column in student]
    targets = [column.tolist() for column in teacher.double().chunk(3)]
    rows = len(columns[0])
    total = sum((cosine(columns[x][i], columns[y][i]) - cosine(targets[x][i], targets[y][i])) ** 2
                for i in range(rows) for x, y in ((0, 1), (0, 2), (1, 2)))
    return total / (3 * rows)


def test_rows_only_matches_its_reference_and_ignores_other_rows() -> None:
    generator = torch.Generator().manual_seed(2)
    columns = [torch.randn(5, 6, generator=generator, dtype=torch.float64, requires_grad=True) for _ in range(4)]
    teacher = torch.randn(15, 9, generator=generator, dtype=torch.float64)
    loss = TeacherStructureMarginLoss(None, teacher_weight=0.4, teacher_pairs="rows")
    term = loss.compute_loss_from_embeddings(columns, teacher=teacher)["teacher"]
    assert term.item() == pytest.approx(0.4 * rows_reference(columns[:3], teacher), rel=1e-10)
    assert term.item() != pytest.approx(0.4 * structure_reference(columns[:3], teacher), rel=1e-3)
    assert torch.autograd.gradcheck(
        lambda *c: loss.compute_loss_from_embeddings(list(c), teacher=teacher)["teacher"], tuple(columns)
    )
    # Rows are compared within themselves: the same rows in another order give the same term.
    order = torch.tensor([4, 2, 0, 3, 1])
    shuffled = [c[order] for c in columns]
    shuffled_teacher = torch.cat([t[order] for t in teacher.chunk(3)])
    moved = loss.compute_loss_from_embeddings(shuffled, teacher=shuffled_teacher)["teacher"]
    assert moved.item() == pytest.approx(term.item(), rel=1e-12)
    with pytest.raises(ValueError, match="teacher_pairs"):
        TeacherStructureMarginLoss(None, teacher_pairs="pairs")


def test_weight_zero_is_the_plain_margin_and_bad_settings_are_refused(tiny_model) -> None:
    generator = torch.Generator().manual_seed(1)
    columns = [torch.randn(3, 5, generator=generator, dtype=torch.float64) for _ in range(4)]
    teacher = torch.randn(9, 7, generator=generator, dtype=torch.float64)
    loss = TeacherStructureMarginLoss(None, teacher_weight=0.0, return_parts=False)
    plain = MarginNegationLoss(None).compute_loss_from_embeddings(columns)
    assert loss.compute_loss_from_embeddings(columns, teacher=teacher).item() == pytest.approx(plain.item(), rel=1e-12)
    with pytest.raises(ValueError, match="teacher="):
        loss.compute_loss_from_embeddings(columns)
    with pytest.raises(ValueError, match="teacher_weight"):
        TeacherStructureMarginLoss(None, teacher_weight=-1.0)
    with pytest.raises(ValueError, match="name the teacher"):
        TeacherStructureMarginLoss(tiny_model)


def test_the_teacher_embeds_the_students_sentences_once_each(tiny_model, tiny_model_other) -> None:
    """On real corpus sentences: the teacher sees the text the student's ids decode to (lower-cased by the uncased
    tokenizer), the term is the drift against those embeddings, and a repeated sentence is embedded once."""
    sentences = first_sentences(6)
    anchor, paraphrase, negation = sentences[:2], sentences[2:4], sentences[4:6]
    negation[1] = anchor[0]  # the same text twice in one batch
    loss = TeacherStructureMarginLoss(tiny_model, teacher="unused: the teacher is set below", teacher_weight=1.0)
    loss._teacher.append(tiny_model_other)
    tiny_model.eval()  # no dropout: the student's embeddings can be taken again below
    encoded: list[list[str]] = []
    original = tiny_model_other.encode

    def counting_encode(texts, **kwargs):
        encoded.append(list(texts))
        return original(texts, **kwargs)

    tiny_model_other.encode = counting_encode
    try:
        features = [tiny_model.tokenize(column) for column in (anchor, paraphrase, negation)]
        parts = loss(features)
        texts = [t for column in features for t in loss.decoded_texts(column)]
        for text, sentence in zip(texts[:2], anchor):  # lower-cased, and cut where the student's length cuts it
            assert text and sentence.lower().replace(" ", "").startswith(text.replace(" ", ""))
        assert len(encoded) == 1 and len(encoded[0]) == 5, "six texts, one of them twice: five embedded"
        loss(features)
        assert len(encoded) == 1, "a second call with the same sentences embeds nothing again"
    finally:
        del tiny_model_other.encode
    with torch.no_grad():
        targets = original(texts, convert_to_tensor=True)
        student = torch.cat([tiny_model(tiny_model.tokenize(c))["sentence_embedding"] for c in (anchor, paraphrase, negation)])
    assert parts["teacher"].item() == pytest.approx(core.similarity_drift(student, targets).item(), rel=1e-5)
    assert parts["teacher"].item() > 0.0
    parts["teacher"].backward()
    assert any(p.grad is not None and p.grad.abs().sum() > 0 for p in tiny_model.parameters())


def test_a_recipe_can_name_it(tiny_model) -> None:
    loss = recipe_built_lab_loss("TeacherStructureMarginLoss", {"teacher": "a/teacher", "teacher_weight": 0.3}, tiny_model)
    assert loss.get_config_dict()["teacher_weight"] == 0.3 and loss.get_config_dict()["teacher"] == "a/teacher"
    assert not loss._teacher, "the teacher is loaded on the first training call, not when the recipe is built"
