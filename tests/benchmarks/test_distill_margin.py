"""The lab loss ``TeacherDistillMarginLoss`` (benchmarks/negation_teacher/distill_margin.py): version 6's margin
beside a teacher's within-row margin (MarginMSELoss) or ranking (DistillKLDivLoss), against float64 references
written from the two equations, with gradcheck, its row selection on real negation-meaning rows, and through the
recipe registry."""

from __future__ import annotations

import math

import pytest
import torch
from sentence_transformers.util import pairwise_cos_sim

from benchmarks.negation_teacher.distill_margin import TeacherDistillMarginLoss
from st_debias.losses import MarginNegationLoss
from tests.benchmarks.conftest import recipe_built_lab_loss
from tests.reference import cosine


def _scores(columns: list[list[list[float]]], row: int) -> tuple[float, float]:
    return cosine(columns[0][row], columns[1][row]), cosine(columns[0][row], columns[2][row])


def margin_mse_reference(student: list[torch.Tensor], teacher: torch.Tensor) -> float:
    """mean_i ((s(a_i, p_i) − s(a_i, n_i)) − (t(a_i, p_i) − t(a_i, n_i)))², in float64."""
    s = [c.detach().double().tolist() for c in student]
    t = [c.double().tolist() for c in teacher.chunk(3)]
    rows = len(s[0])
    return sum(((lambda a, b: a - b)(*_scores(s, i)) - (lambda a, b: a - b)(*_scores(t, i))) ** 2 for i in range(rows)) / rows


def margin_floor_reference(student: list[torch.Tensor], teacher: torch.Tensor) -> float:
    """mean_i max(0, (t(a_i, p_i) − t(a_i, n_i)) − (s(a_i, p_i) − s(a_i, n_i)))², in float64."""
    s = [c.detach().double().tolist() for c in student]
    t = [c.double().tolist() for c in teacher.chunk(3)]
    rows = len(s[0])
    return sum(max(0.0, (lambda a, b: a - b)(*_scores(t, i)) - (lambda a, b: a - b)(*_scores(s, i))) ** 2
               for i in range(rows)) / rows


def kl_reference(student: list[torch.Tensor], teacher: torch.Tensor, tau: float) -> float:
    """τ² · mean_i KL(softmax(t_i/τ) ‖ softmax(s_i/τ)) over each row's (p, n), in float64 (sentence-transformers'
    DistillKLDivLoss scales by τ² so that the gradient keeps its size across temperatures)."""
    s = [c.detach().double().tolist() for c in student]
    t = [c.double().tolist() for c in teacher.chunk(3)]
    total = 0.0
    for i in range(len(s[0])):
        sp = [math.exp(x / tau) for x in _scores(s, i)]
        tp = [math.exp(x / tau) for x in _scores(t, i)]
        sp, tp = [x / sum(sp) for x in sp], [x / sum(tp) for x in tp]
        total += sum(q * math.log(q / r) for q, r in zip(tp, sp, strict=True))
    return tau**2 * total / len(s[0])


REFERENCES = {
    "margin_mse": lambda student, teacher: margin_mse_reference(student, teacher),
    "kl_div": lambda student, teacher: kl_reference(student, teacher, 0.5),
    "margin_floor": lambda student, teacher: margin_floor_reference(student, teacher),
    "margin_floor_push": lambda student, teacher: margin_floor_reference(student, teacher),
    "margin_floor_pull": lambda student, teacher: margin_floor_reference(student, teacher),
}


@pytest.mark.parametrize("distill", sorted(REFERENCES))
def test_matches_the_float64_reference_and_passes_gradcheck(distill: str) -> None:
    generator = torch.Generator().manual_seed(0)
    columns = [torch.randn(5, 6, generator=generator, dtype=torch.float64, requires_grad=True) for _ in range(4)]
    teacher = torch.randn(15, 10, generator=generator, dtype=torch.float64)  # another width than the student's
    loss = TeacherDistillMarginLoss(None, teacher_weight=0.7, distill=distill, temperature=0.5, alpha=0.1, beta=0.3,
                                    margin_weight=0.5, scale=5.0)
    parts = loss.compute_loss_from_embeddings(columns, teacher=teacher)
    plain = MarginNegationLoss(None, alpha=0.1, beta=0.3, margin_weight=0.5, scale=5.0, return_parts=True)
    for name, value in plain.compute_loss_from_embeddings(columns).items():
        assert parts[name].item() == pytest.approx(value.item(), rel=1e-12)
    reference = REFERENCES[distill](columns[:3], teacher)
    assert parts["teacher"].item() == pytest.approx(0.7 * reference, rel=1e-9)
    assert parts["teacher"].item() > 1e-4, "random teachers disagree: the term is not trivially zero"
    if distill in ("margin_floor_push", "margin_floor_pull"):  # one cosine held (their own test); exact on the other
        moved = 2 if distill == "margin_floor_push" else 1

        def through_moved(column: torch.Tensor) -> torch.Tensor:
            inputs = list(columns)
            inputs[moved] = column
            return loss.compute_loss_from_embeddings(inputs, teacher=teacher)["teacher"]

        assert torch.autograd.gradcheck(through_moved, (columns[moved],))
        return
    assert torch.autograd.gradcheck(lambda *c: loss.compute_loss_from_embeddings(list(c), teacher=teacher)["teacher"],
                                    tuple(columns))


def test_the_negation_columns_view_is_the_librarys_and_leaves_the_teacher_term() -> None:
    """``dropout_columns``/``contrastive_weight`` reach ``MarginNegationLoss``: its parts are the library loss's with the
    same arguments, and the floor is the same as with the anchor's view (the views are not distilled)."""
    generator = torch.Generator().manual_seed(1)
    columns = [torch.randn(5, 6, generator=generator, dtype=torch.float64, requires_grad=True) for _ in range(4)]
    teacher = torch.randn(15, 10, generator=generator, dtype=torch.float64)
    options = {"alpha": 0.1, "beta": 0.3, "margin_weight": 0.5, "scale": 5.0}
    viewed = TeacherDistillMarginLoss(None, teacher_weight=0.7, distill="margin_floor", dropout_columns=["negation"],
                                      contrastive_weight=0.5, **options)
    parts = viewed.compute_loss_from_embeddings(columns, teacher=teacher)
    library = MarginNegationLoss(None, dropout_columns=["negation"], contrastive_weight=0.5, return_parts=True, **options)
    expected = library.compute_loss_from_embeddings(columns)
    assert set(parts) == {*expected, "teacher"}
    for name, value in expected.items():
        assert parts[name].item() == pytest.approx(value.item(), rel=1e-12)
    anchor_view = TeacherDistillMarginLoss(None, teacher_weight=0.7, distill="margin_floor", **options)
    assert parts["teacher"].item() == pytest.approx(
        anchor_view.compute_loss_from_embeddings(columns, teacher=teacher)["teacher"].item(), rel=1e-12)
    assert parts["contrastive_negation"].item() == pytest.approx(
        0.5 * MarginNegationLoss(None, dropout_columns=["negation"], return_parts=True, **options)
        .compute_loss_from_embeddings(columns)["contrastive_negation"].item(), rel=1e-12)
    config = viewed.get_config_dict()
    assert config["dropout_columns"] == ["negation"] and config["contrastive_weight"] == 0.5


def test_margin_floor_is_zero_where_the_student_separates_more_than_the_teacher() -> None:
    """A row the student separates more than the teacher adds nothing (no pull back toward the teacher's margin);
    a row it separates less adds the squared shortfall, as MarginMSE would."""
    anchor = torch.tensor([[1.0, 0.0], [1.0, 0.0]], dtype=torch.float64)
    student = [anchor, torch.tensor([[1.0, 0.1], [1.0, 1.0]], dtype=torch.float64),
               torch.tensor([[0.0, 1.0], [1.0, 0.2]], dtype=torch.float64)]
    student = [c.clone().requires_grad_(True) for c in student]
    teacher = torch.cat([anchor, torch.tensor([[1.0, 0.5], [1.0, 0.5]]), torch.tensor([[1.0, 1.0], [1.0, 1.0]])]).double()
    floor = TeacherDistillMarginLoss(None, distill="margin_floor").compute_loss_from_embeddings([*student, student[0]],
                                                                                              teacher=teacher)
    mse = TeacherDistillMarginLoss(None).compute_loss_from_embeddings([*student, student[0]], teacher=teacher)
    first, second = (margin_mse_reference([c[i : i + 1] for c in student],
                                          torch.cat([c[i : i + 1] for c in teacher.chunk(3)])) for i in range(2))
    assert _scores([c.tolist() for c in student], 0)[0] - _scores([c.tolist() for c in student], 0)[1] > 0.5
    assert floor["teacher"].item() == pytest.approx(second / 2, rel=1e-9), "only the second row is below its floor"
    assert mse["teacher"].item() == pytest.approx((first + second) / 2, rel=1e-9)


@pytest.mark.parametrize(("distill", "held"), [("margin_floor_push", 1), ("margin_floor_pull", 2)])
def test_the_push_and_pull_floors_move_one_side_only(distill: str, held: int) -> None:
    """Same value as the floor; no gradient reaches the held column (the positive for the push, the negative for the
    pull), and the others' gradients are the float64 gradient of
    mean_i max(0, t-margin_i − s(a_i, p_i) + s(a_i, n_i))² with the held column's cosine constant."""
    generator = torch.Generator().manual_seed(2)
    columns = [torch.randn(5, 6, generator=generator, dtype=torch.float64, requires_grad=True) for _ in range(4)]
    teacher = torch.randn(15, 10, generator=generator, dtype=torch.float64)
    one_side = TeacherDistillMarginLoss(None, distill=distill).compute_loss_from_embeddings(columns, teacher=teacher)
    floor = TeacherDistillMarginLoss(None, distill="margin_floor").compute_loss_from_embeddings(columns, teacher=teacher)
    assert one_side["teacher"].item() == pytest.approx(floor["teacher"].item(), rel=1e-12) and floor["teacher"].item() > 1e-4
    gradients = torch.autograd.grad(one_side["teacher"], columns[:3], allow_unused=True)
    assert gradients[held] is None or torch.count_nonzero(gradients[held]) == 0
    assert torch.count_nonzero(gradients[3 - held]) > 0, "the moved side gets a gradient"
    anchor, positive, negative = (c.detach().clone().requires_grad_(True) for c in columns[:3])
    t = teacher.chunk(3)
    floors = pairwise_cos_sim(t[0], t[1]) - pairwise_cos_sim(t[0], t[2])
    cosines = [pairwise_cos_sim(anchor, positive), pairwise_cos_sim(anchor, negative)]
    cosines[held - 1] = cosines[held - 1].detach()
    reference = torch.relu(floors - cosines[0] + cosines[1]).pow(2).mean()
    moved = negative if held == 1 else positive
    expected = torch.autograd.grad(reference, [anchor, moved])
    assert torch.allclose(gradients[0], expected[0], atol=1e-12)
    assert torch.allclose(gradients[3 - held], expected[1], atol=1e-12)


def test_rows_mask_distills_the_selected_rows_only_and_zero_rows_give_zero() -> None:
    generator = torch.Generator().manual_seed(1)
    columns = [torch.randn(4, 6, generator=generator, dtype=torch.float64, requires_grad=True) for _ in range(4)]
    teacher = torch.randn(12, 8, generator=generator, dtype=torch.float64)
    loss = TeacherDistillMarginLoss(None, teacher_weight=1.0)
    rows = torch.tensor([True, False, True, False])
    kept = [c[rows] for c in columns[:3]]
    kept_teacher = torch.cat([c[rows] for c in teacher.chunk(3)])  # the teacher embeds the kept rows only
    term = loss.compute_loss_from_embeddings(columns, teacher=kept_teacher, rows=rows)["teacher"]
    assert term.item() == pytest.approx(margin_mse_reference(kept, kept_teacher), rel=1e-9)
    none = loss.compute_loss_from_embeddings(columns, teacher=teacher[:0], rows=torch.zeros(4, dtype=torch.bool))["teacher"]
    assert none.item() == 0.0
    none.backward()


def test_negated_anchor_rows_are_the_negation_meaning_rows(tiny_model, tiny_model_other) -> None:
    """On real rows: the negation-meaning rows of a corpus sentence are selected, a minimal pair is not."""
    from st_debias.recipes.mix_sources import meaning_rows

    quadruple = ("The house is large.", "The house is not large.", "The house is small.", "The house is not small.")
    rows = [*meaning_rows([quadruple]), ("The house is large.", "The house is big.", "The house is not large.")]
    loss = TeacherDistillMarginLoss(tiny_model, teacher="unused: set below", distill_rows="negated_anchor")
    loss._teacher.append(tiny_model_other)
    seen: list[torch.Tensor | None] = []
    original = loss.compute_loss_from_embeddings

    def recording(embeddings, labels=None, teacher=None, rows=None, row_weights=None):
        seen.append(rows)
        return original(embeddings, labels, teacher=teacher, rows=rows, row_weights=row_weights)

    loss.compute_loss_from_embeddings = recording
    embedded: list[list[str]] = []
    original_embeddings = loss.teacher_embeddings
    loss.teacher_embeddings = lambda texts: embedded.append(list(texts)) or original_embeddings(texts)
    features = [tiny_model.tokenize([row[i] for row in rows]) for i in range(3)]
    parts = loss(features)
    assert seen[0].tolist() == [True, True, False]
    assert len(embedded[0]) == 6, "the teacher embeds the two selected rows' three columns, not the minimal pair"
    assert parts["teacher"].item() >= 0.0


def test_negation_rows_and_the_rest_split_every_row_in_two() -> None:
    """``negation`` takes the negation-meaning rows and the negation edits, ``no_negation`` the other edits; each
    row is in exactly one of the two."""
    from benchmarks.negation_teacher.distill_margin import distilled_row
    from st_debias.recipes.mix_sources import meaning_rows

    quadruple = ("The house is large.", "The house is not large.", "The house is small.", "The house is not small.")
    rows = [
        *meaning_rows([quadruple]),
        ("The house is large.", "The house is big.", "The house is not large."),  # a negation edit
        ("He never sleeps.", "He does not ever sleep.", "He sleeps."),  # a negation removed
        ("The house is large.", "The house is big.", "The house is small."),  # an antonym edit
        ("No one came to the two parties.", "Nobody came to the two parties.", "No one came to the three parties."),
        ("The house is not large.", "The house is small.", "The house is large."),  # an affirmative-negative row
    ]
    negation = [distilled_row(*row, "negation") for row in rows]
    assert negation == [True, True, True, True, False, False, True]
    assert [distilled_row(*row, "negated_anchor") for row in rows] == [True, True, False, False, False, False, False]
    assert [distilled_row(*row, "no_negation") for row in rows] == [not kept for kept in negation]


def test_group_weights_weigh_the_floor_per_row_over_the_whole_batch() -> None:
    """The weighted floor against a float64 reference, Σ_i g_i · max(0, t-margin − s-margin)² / B, with gradcheck;
    all weights 1 is the every-row floor."""
    generator = torch.Generator().manual_seed(3)
    columns = [torch.randn(5, 6, generator=generator, dtype=torch.float64, requires_grad=True) for _ in range(4)]
    # The teacher's margin is 2 on every row (positive = anchor, negative = −anchor): every row is below its floor.
    teacher_anchor = torch.randn(5, 8, generator=generator, dtype=torch.float64)
    teacher = torch.cat([teacher_anchor, teacher_anchor, -teacher_anchor])
    loss = TeacherDistillMarginLoss(None, teacher_weight=1.0, distill="margin_floor", group_weights={"negation_edit": 0})
    weights = torch.tensor([1.0, 0.0, 2.0, 1.0, 0.5], dtype=torch.float64)
    rows = weights > 0
    kept_teacher = torch.cat([c[rows] for c in teacher.chunk(3)])

    def term(*cols: torch.Tensor) -> torch.Tensor:
        return loss.compute_loss_from_embeddings(list(cols), teacher=kept_teacher, rows=rows,
                                                 row_weights=weights[rows])["teacher"]

    s = [c.detach().double().tolist() for c in columns[:3]]
    t = [c.double().tolist() for c in teacher.chunk(3)]
    expected = sum(float(weights[i]) * max(0.0, (lambda a, b: a - b)(*_scores(t, i)) - (lambda a, b: a - b)(*_scores(s, i))) ** 2
                   for i in range(5)) / 5
    assert term(*columns).item() == pytest.approx(expected, rel=1e-9)
    hinges = [max(0.0, 2.0 - (lambda a, b: a - b)(*_scores(s, i))) for i in range(5)]
    assert min(hinges) > 0.1, "every row is below its floor, so every weight counts"
    assert torch.autograd.gradcheck(term, tuple(columns))
    with pytest.raises(ValueError, match="one weight per selected row"):
        loss.compute_loss_from_embeddings(columns, teacher=kept_teacher, rows=rows, row_weights=weights[:1])
    every = loss.compute_loss_from_embeddings(columns, teacher=teacher, rows=torch.ones(5, dtype=torch.bool),
                                              row_weights=torch.ones(5, dtype=torch.float64))["teacher"]
    assert every.item() == pytest.approx(margin_floor_reference(columns[:3], teacher), rel=1e-9)


def test_group_weights_select_rows_by_group_and_refuse_what_they_cannot_weigh(tiny_model, tiny_model_other) -> None:
    from benchmarks.negation_teacher.distill_margin import row_group
    from st_debias.recipes.mix_sources import meaning_rows

    quadruple = ("The house is large.", "The house is not large.", "The house is small.", "The house is not small.")
    rows = [*meaning_rows([quadruple]), ("The house is large.", "The house is big.", "The house is not large."),
            ("The house is large.", "The house is big.", "The house is small."),
            ("He is asleep.", "He is sleeping.", "He isn't asleep."),  # a contraction, decoded as "isn ' t"
            ("He is not asleep.", "He isn't sleeping.", "He is not awake."),
            ("The house is not large.", "The house is small.", "The house is large.")]  # negation_meaning_affirmative
    assert [row_group(*row) for row in rows] == ["meaning", "meaning", "negation_edit", "other", "negation_edit", "other",
                                                 "affirmative"]
    loss = TeacherDistillMarginLoss(tiny_model, teacher="unused: set below", distill="margin_floor",
                                    group_weights={"meaning": 2.0, "negation_edit": 0.0, "affirmative": 3.0})
    loss._teacher.append(tiny_model_other)
    seen = []
    original = loss.compute_loss_from_embeddings
    loss.compute_loss_from_embeddings = lambda *a, **k: seen.append(k) or original(*a, **k)
    loss([tiny_model.tokenize([row[i] for row in rows]) for i in range(3)])
    assert seen[0]["rows"].tolist() == [True, True, False, True, False, True, True]
    assert seen[0]["row_weights"].tolist() == [2.0, 2.0, 1.0, 1.0, 3.0]
    assert loss.get_config_dict()["group_weights"] == {"meaning": 2.0, "negation_edit": 0.0, "affirmative": 3.0}
    for bad, match in (({"group_weights": {"paraphrase": 1}}, "unknown groups"),
                       ({"group_weights": {"meaning": -1}}, "group_weights.meaning"),
                       ({"group_weights": {"meaning": 1}, "distill": "margin_mse"}, "weighs the floor"),
                       ({"group_weights": {"meaning": 1}, "distill": "margin_floor", "distill_rows": "negation"},
                        "weighs the floor"),
                       ({"group_weights": {"meaning": 1}, "embedding_weight": 1.0}, "weighs the floor")):
        with pytest.raises(ValueError, match=match):
            TeacherDistillMarginLoss(None, **{"distill": "margin_floor", **bad})


def test_hinge_cap_makes_each_rows_floor_linear_past_the_cap() -> None:
    """Against a float64 reference (g² up to c, c · (2g − c) past it), with gradcheck; rows under the cap keep the
    plain floor."""
    generator = torch.Generator().manual_seed(6)
    columns = [torch.randn(6, 6, generator=generator, dtype=torch.float64, requires_grad=True) for _ in range(4)]
    teacher_anchor = torch.randn(6, 8, generator=generator, dtype=torch.float64)
    teacher = torch.cat([teacher_anchor, teacher_anchor, -teacher_anchor])  # teacher margin 2: every row under it
    cap = 1.8
    loss = TeacherDistillMarginLoss(None, teacher_weight=1.0, distill="margin_floor", hinge_cap=cap)
    s = [c.detach().double().tolist() for c in columns[:3]]
    gaps = [max(0.0, 2.0 - (lambda a, b: a - b)(*_scores(s, i))) for i in range(6)]
    assert min(gaps) < cap < max(gaps), "rows on both sides of the cap"
    expected = sum(g * g if g <= cap else cap * (2 * g - cap) for g in gaps) / 6

    def term(*cols: torch.Tensor) -> torch.Tensor:
        return loss.compute_loss_from_embeddings(list(cols), teacher=teacher)["teacher"]

    assert term(*columns).item() == pytest.approx(expected, rel=1e-9)
    assert term(*columns).item() < margin_floor_reference(columns[:3], teacher)
    assert torch.autograd.gradcheck(term, tuple(columns))
    assert loss.get_config_dict()["hinge_cap"] == cap
    with pytest.raises(ValueError, match="hinge_cap"):
        TeacherDistillMarginLoss(None, distill="margin_floor", hinge_cap=0.0)
    with pytest.raises(ValueError, match="caps the floor"):
        TeacherDistillMarginLoss(None, distill="margin_mse", hinge_cap=0.1)


def test_bad_settings_are_refused_and_a_recipe_can_name_it(tiny_model) -> None:
    with pytest.raises(ValueError, match="distill must be one of"):
        TeacherDistillMarginLoss(None, distill="mse")
    with pytest.raises(ValueError, match="distill_rows must be one of"):
        TeacherDistillMarginLoss(None, distill_rows="some")
    loss = recipe_built_lab_loss("TeacherDistillMarginLoss", {"teacher": "a/teacher", "distill": "kl_div"}, tiny_model)
    assert loss.get_config_dict()["distill"] == "kl_div" and not loss._teacher


def embedding_reference(student: list[torch.Tensor], teacher: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor,
                        columns: int) -> float:
    """mean over the first ``columns`` columns' rows and the teacher's dimensions of (W s + b − t)², in float64."""
    s = [row for column in student[:columns] for row in column.detach().double().tolist()]
    t = [row for column in teacher.chunk(3)[:columns] for row in column.double().tolist()]
    w, b = weight.double().tolist(), bias.double().tolist()
    total = 0.0
    for x, y in zip(s, t, strict=True):
        total += sum((sum(w[k][j] * x[j] for j in range(len(x))) + b[k] - y[k]) ** 2 for k in range(len(y)))
    return total / (len(s) * len(t[0]))


@pytest.mark.parametrize("columns", ["anchor", "all"])
def test_embedding_term_matches_the_float64_reference_and_passes_gradcheck(columns: str) -> None:
    generator = torch.Generator().manual_seed(1)
    embeddings = [torch.randn(4, 6, generator=generator, dtype=torch.float64, requires_grad=True) for _ in range(4)]
    teacher = torch.randn(12, 10, generator=generator, dtype=torch.float64)
    weight, bias = torch.randn(10, 6, generator=generator, dtype=torch.float64), torch.randn(10, generator=generator,
                                                                                             dtype=torch.float64)
    loss = TeacherDistillMarginLoss(None, distill="margin_floor", embedding_weight=0.4, embedding_columns=columns)
    with pytest.raises(ValueError, match="needs a fitted projection"):
        loss.compute_loss_from_embeddings(embeddings, teacher=teacher)
    loss.projection = (weight, bias)
    parts = loss.compute_loss_from_embeddings(embeddings, teacher=teacher)
    count = 1 if columns == "anchor" else 3
    assert parts["teacher_embedding"].item() == pytest.approx(
        0.4 * embedding_reference(embeddings, teacher, weight, bias, count), rel=1e-9)
    assert parts["teacher"].item() == pytest.approx(margin_floor_reference(embeddings[:3], teacher), rel=1e-9)
    assert torch.autograd.gradcheck(
        lambda *c: loss.compute_loss_from_embeddings(list(c), teacher=teacher)["teacher_embedding"], tuple(embeddings))
    # With a row mask (distill_rows: negated_anchor) the term covers the masked rows only.
    mask = torch.tensor([True, False, True, True])
    masked = loss.compute_loss_from_embeddings(embeddings, teacher=teacher[torch.cat([mask] * 3)], rows=mask)
    kept = [column[mask] for column in embeddings]
    assert masked["teacher_embedding"].item() == pytest.approx(
        0.4 * embedding_reference(kept, teacher[torch.cat([mask] * 3)], weight, bias, count), rel=1e-9)
    # No row distilled (the negated-anchor mask all false): the part is there, and zero.
    empty = loss.compute_loss_from_embeddings(embeddings, teacher=teacher[:0], rows=torch.zeros(4, dtype=torch.bool))
    assert empty["teacher_embedding"].item() == 0.0


def test_from_recipe_fits_the_projection_on_the_rows_texts(tiny_model, tiny_model_other, shared_data) -> None:
    """On real corpus sentences: fewer distinct texts than the student's width, so the least-squares map, fitted on the
    text the student's tokens decode to (as the teacher sees it in training) row by row through the three columns,
    reproduces the teacher's embeddings of exactly those texts, and the term on them (dropout off) is zero."""
    from datasets import Dataset

    lines = (shared_data / "corpus" / "wiki_sentences.txt").read_text(encoding="utf-8").splitlines()[:30]
    rows = Dataset.from_dict({"anchor": lines[:10], "positive": lines[10:20], "negative": lines[20:]})
    original = TeacherDistillMarginLoss.teacher
    try:
        TeacherDistillMarginLoss.teacher = property(lambda self: tiny_model_other)
        loss, same = TeacherDistillMarginLoss.from_recipe(
            tiny_model, rows, {"teacher": "a/teacher", "distill": "margin_floor", "embedding_weight": 1.0,
                               "embedding_columns": "all"}, show_progress_bar=False)
        tiny_model.eval()
        decoded = {c: loss.decoded_texts(tiny_model.tokenize(rows[c])) for c in ("anchor", "positive", "negative")}
        student = [tiny_model.encode(texts, convert_to_tensor=True) for texts in decoded.values()]
        teacher = torch.cat([tiny_model_other.encode(texts, convert_to_tensor=True) for texts in decoded.values()])
    finally:
        TeacherDistillMarginLoss.teacher = original
    assert same is rows and loss.projection[0].shape == (teacher.shape[1], student[0].shape[1])
    assert loss.embedding_term(student, list(teacher.chunk(3))).item() < 1e-8
    assert TeacherDistillMarginLoss(None).embedding_weight == 0.0 and "embedding_weight" not in \
        TeacherDistillMarginLoss(None).get_config_dict()
    seen: list[list[str]] = []
    original_fit = TeacherDistillMarginLoss.fit_projection
    try:
        TeacherDistillMarginLoss.fit_projection = lambda self, texts, show_progress_bar=False: seen.append(texts)
        TeacherDistillMarginLoss.from_recipe(tiny_model, rows, {"teacher": "a/teacher", "embedding_weight": 1.0,
                                                                "embedding_columns": "all", "projection_sentences": 6})
    finally:
        TeacherDistillMarginLoss.fit_projection = original_fit
    assert seen == [[lines[0], lines[10], lines[20], lines[1], lines[11], lines[21]]], "row by row, every column"
    with pytest.raises(ValueError, match="embedding_columns must be one of"):
        TeacherDistillMarginLoss(None, embedding_columns="negative")
    with pytest.raises(ValueError, match="embedding_weight"):
        TeacherDistillMarginLoss(None, embedding_weight=-1.0)
