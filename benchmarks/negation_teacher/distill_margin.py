"""An experimental margin beside a teacher's ranking within each row, through sentence-transformers' own
distillation losses.

``TeacherStructureMarginLoss`` (``../teachers_preservation/teacher_structure.py``) matched all-mpnet-base-v2's cosines
themselves, over the batch or within rows, and cost the dev Oppn split: the two models' cosines sit at different
levels, so matching them moves the student's whole geometry. ``TeacherDistillMarginLoss`` keeps version 6's loss
and adds only the teacher's *ranking* of each row's two candidates, which a level shift does not change:

* ``distill: margin_mse`` — sentence-transformers' ``MarginMSELoss`` (Hofstätter et al., 2020):
  w · mean_i ((s(a_i, p_i) − s(a_i, n_i)) − (t(a_i, p_i) − t(a_i, n_i)))²;
* ``distill: kl_div`` — ``DistillKLDivLoss``: w · KL(softmax(t(a, ·)/τ) ‖ softmax(s(a, ·)/τ)) over (p, n);
* ``distill: margin_floor`` — the teacher's margin as a floor, never a ceiling:
  w · mean_i max(0, (t(a_i, p_i) − t(a_i, n_i)) − (s(a_i, p_i) − s(a_i, n_i)))². Where the student already separates
  a row's candidates more than the teacher (the minimal pairs, where the hinge asks for more), the term is zero, so
  it cannot pull an edit back toward its original the way ``margin_mse`` does.
* ``distill: margin_floor_push`` — the same value, with the gradient through s(a_i, n_i) only: a row below its
  floor pushes its negative away from its anchor and never pulls its positive closer. On a negation-meaning row
  ("X is not A", "X is B", "X is not B") the plain floor can be met by pulling "X is not A" toward the affirmative
  "X is B", which moves negated sentences toward affirmative ones; this form can only separate "not A" from "not B".
* ``distill: margin_floor_pull`` — the mirror: the gradient through s(a_i, p_i) only, so a row below its floor pulls
  its positive in and never pushes its negative away (``../teacher_dip/``: before the STS-B dev dip, dev pairs that
  share most of their words and are scored similar fall in rank). On the negation-meaning rows it can only pull
  "X is not A" toward "X is B", and on rows whose positive is the anchor only align two dropout passes.

With ``embedding_weight`` w_e > 0, the teacher's embeddings themselves are distilled beside the margin term, as
the plain baseline does (``plain_distill.py``): w_e · mean_i ‖W s(x_i) + b − t(x_i)‖² / d_t over the rows' anchors
(``embedding_columns: anchor``) or all three columns (``all``), on the same rows as the margin term (with
``distill_rows: negated_anchor``, only those). W and b are frozen at scikit-learn's least-squares fit of the
teacher's embeddings on the start model's over ``projection_sentences`` of the rows' texts, taken row by row
through the chosen columns and decoded from the student's tokens as in training (``from_recipe``). The student
then moves only where the best linear image of it still misses the teacher.

s is the student's cosine (dropout on), t the teacher's, on every row of the batch (the minimal pairs and the
negation-meaning rows, where the teacher knows which words are opposites), or with ``distill_rows:
negated_anchor`` only on the rows whose anchor holds a negation and whose positive does not while their negative
does: the negation-meaning rows ("X is not A", "X is B", "X is not B"), leaving the minimal pairs to the margin. With
``distill_rows: negation`` on those rows, on the rows whose negated anchor sits between two affirmative candidates
and on the minimal pairs whose negative adds or removes a negation (the negation edits), and with ``no_negation`` on
every other row (the antonym, argument, phrase, number and co-hyponym edits): the two halves of ``all``.
``group_weights`` weighs the floor per row group instead (:func:`row_group`: meaning rows, affirmative-negative
rows, negation edits, other edits), summed over the batch's rows, so each group keeps the every-row floor's push
per row at weight 1 and takes none at 0. The teacher embeds the text the student's token ids decode to, once per
text (``TeacherStructureMarginLoss.teacher_embeddings``).

With ``hinge_cap`` c, a row's floor grows linearly past a gap of c (Huber): g² for g = max(0, …) ≤ c, else
c · (2g − c), so no row's gradient exceeds that of a gap of c. A single row far under its floor (a gap of about
0.5) can otherwise carry half a batch's push.

The lab's entry points (``benchmarks/pyproject.toml``) add the class to the recipe loss registry.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import torch
from sentence_transformers.sentence_transformer.losses import DistillKLDivLoss, MarginMSELoss
from sentence_transformers.util import pairwise_cos_sim
from torch import Tensor

from benchmarks.negation_meaning.meaning_weight import rejoin_contractions
from benchmarks.teachers_preservation.teacher_structure import STRUCTURE_COLUMNS, TeacherStructureMarginLoss
from st_debias import core
from st_debias.data.negation.negator import negation_count
from st_debias.losses import MarginNegationLoss
from st_debias.losses.base import LossOutput, combine_parts

DISTILL = ("margin_mse", "kl_div", "margin_floor", "margin_floor_push", "margin_floor_pull")
DISTILL_ROWS = ("all", "negated_anchor", "negation", "no_negation")
EMBEDDING_COLUMNS = ("anchor", "all")


ROW_GROUPS = ("meaning", "affirmative", "negation_edit", "other")


def row_group(anchor: str, positive: str, negative: str) -> str:
    """A row's group, by its columns' counts of negation words: ``meaning`` — a negation-meaning row (negated anchor
    and negative, affirmative positive); ``affirmative`` — a negated anchor between two affirmative candidates (the
    rows of ``negation_meaning_affirmative``: "X is not A", "X is B", "X is A"); ``negation_edit`` — any other row
    whose negative's count differs from the anchor's (the negation edits); ``other`` — every other row (the
    antonym, argument, phrase, number and co-hyponym edits, but for the few of them that change the count). Texts
    decoded from a tokenizer's ids ("doesn ' t") count as written ("doesn't"); a row is grouped on the text the
    student sees, so an edit cut off at its length does not count."""
    counts = tuple(negation_count(rejoin_contractions(text)) for text in (anchor, positive, negative))
    if counts[0] and not counts[1]:
        return "meaning" if counts[2] else "affirmative"
    return "negation_edit" if counts[0] != counts[2] else "other"


def row_floor(teacher_margin: Tensor, student_margin: Tensor, hinge_cap: float | None = None) -> Tensor:
    """Each row's floor max(0, t-margin − s-margin)², linear past a gap of ``hinge_cap`` (module docstring)."""
    gap = torch.relu(teacher_margin - student_margin)
    if hinge_cap is None:
        return gap.pow(2)
    return torch.where(gap <= hinge_cap, gap.pow(2), hinge_cap * (2 * gap - hinge_cap))


def distilled_row(anchor: str, positive: str, negative: str, rule: str) -> bool:
    """Whether ``distill_rows: rule`` distills the row (module docstring): ``negated_anchor`` — a ``meaning`` row;
    ``negation`` — any row but an ``other`` one; ``no_negation`` — an ``other`` row (:func:`row_group`)."""
    group = row_group(anchor, positive, negative)
    return {"negated_anchor": group == "meaning", "negation": group != "other", "no_negation": group == "other"}[rule]


class TeacherDistillMarginLoss(TeacherStructureMarginLoss):
    #: ``from_recipe`` fits the embedding term's projection; a recipe's ``loss.guide`` is not read.
    takes_guide = False

    def __init__(
        self,
        model: Any,
        teacher: str | None = None,
        teacher_weight: float = 1.0,
        teacher_max_seq_length: int = 64,
        distill: str = "margin_mse",
        temperature: float = 0.05,
        distill_rows: str = "all",
        alpha: float = 0.05,
        beta: float = 0.2,
        margin_weight: float = 1e-3,
        scale: float = 20.0,
        contrastive: str = "dropout",
        return_parts: bool = True,
        embedding_weight: float = 0.0,
        embedding_columns: str = "anchor",
        projection_sentences: int = 4096,
        group_weights: dict[str, float] | None = None,
        dropout_columns: Sequence[str] = ("anchor",),
        contrastive_weight: float = 1.0,
        hinge_cap: float | None = None,
    ) -> None:
        """``MarginNegationLoss``'s arguments, the teacher's (``TeacherStructureMarginLoss``), and:

        Args:
            distill: ``"margin_mse"``, ``"kl_div"``, ``"margin_floor"``, ``"margin_floor_push"`` or
                ``"margin_floor_pull"`` (module docstring).
            temperature: τ of ``kl_div`` for both models' cosines.
            distill_rows: ``"all"``, ``"negated_anchor"``, ``"negation"`` or ``"no_negation"`` (module docstring).
            embedding_weight: w_e ≥ 0 of the embedding term (module docstring); 0 adds none.
            embedding_columns: ``"anchor"`` or ``"all"``: the columns whose embeddings are distilled.
            projection_sentences: how many of the rows' distinct texts the projection is fitted on.
            group_weights: a floor's weight per row group (:func:`row_group`), a factor of ``teacher_weight``; a
                group left out weighs 1. The term is then w · Σ_i g_i · max(0, …)² / B over the batch's B rows, so
                ``{meaning: 1, negation_edit: 1, other: 1}`` is the every-row floor and a group at 0 takes no push.
            hinge_cap: c > 0: each row's floor is quadratic up to a gap of c and linear past it (module docstring);
                None: quadratic throughout.

        Raises:
            ValueError: an unknown ``distill``, ``distill_rows`` or ``embedding_columns``, a non-positive
                ``temperature``, a negative ``embedding_weight``, or ``projection_sentences`` under 2;
                ``group_weights`` with an unknown group, a negative weight, or beside a form other than the floor,
                another ``distill_rows`` than ``all`` or the embedding term; a ``hinge_cap`` that is not positive, or
                beside a form other than the floor.
        """
        super().__init__(model, teacher=teacher, teacher_weight=teacher_weight, teacher_max_seq_length=teacher_max_seq_length,
                         teacher_pairs="rows", alpha=alpha, beta=beta, margin_weight=margin_weight, scale=scale,
                         contrastive=contrastive, return_parts=return_parts, dropout_columns=dropout_columns,
                         contrastive_weight=contrastive_weight)
        if distill not in DISTILL:
            raise ValueError(f"TeacherDistillMarginLoss: distill must be one of {DISTILL}, got {distill!r}.")
        if distill_rows not in DISTILL_ROWS:
            raise ValueError(f"TeacherDistillMarginLoss: distill_rows must be one of {DISTILL_ROWS}, got {distill_rows!r}.")
        core.check_positive(temperature, "temperature", "TeacherDistillMarginLoss")
        core.check_non_negative(embedding_weight, "embedding_weight", "TeacherDistillMarginLoss")
        if embedding_columns not in EMBEDDING_COLUMNS:
            raise ValueError(f"TeacherDistillMarginLoss: embedding_columns must be one of {EMBEDDING_COLUMNS}, "
                             f"got {embedding_columns!r}.")
        if int(projection_sentences) < 2:
            raise ValueError(f"TeacherDistillMarginLoss: projection_sentences must be at least 2, got {projection_sentences}.")
        if group_weights is not None:
            unknown = sorted(set(group_weights) - set(ROW_GROUPS))
            if unknown:
                raise ValueError(f"TeacherDistillMarginLoss: group_weights: unknown groups {unknown}; choose from {ROW_GROUPS}.")
            for group, weight in group_weights.items():
                core.check_non_negative(weight, f"group_weights.{group}", "TeacherDistillMarginLoss")
            if not distill.startswith("margin_floor") or distill_rows != "all" or embedding_weight:
                raise ValueError("TeacherDistillMarginLoss: group_weights weighs the floor (margin_floor or "
                                 "its push or pull form) over every row, without the embedding term.")
        if hinge_cap is not None:
            core.check_positive(hinge_cap, "hinge_cap", "TeacherDistillMarginLoss")
            if not distill.startswith("margin_floor"):
                raise ValueError("TeacherDistillMarginLoss: hinge_cap caps the floor (margin_floor or "
                                 "its push or pull form).")
        self.hinge_cap = None if hinge_cap is None else float(hinge_cap)
        self.group_weights = None if group_weights is None else {g: float(w) for g, w in group_weights.items()}
        self.embedding_weight = float(embedding_weight)
        self.embedding_columns = embedding_columns
        self.projection_sentences = int(projection_sentences)
        self.projection: tuple[Tensor, Tensor] | None = None  # (W, b), frozen; set by fit_projection
        self.distill_rows = distill_rows
        self.distill = distill
        self.distill_temperature = float(temperature)
        self._distill_loss = (
            DistillKLDivLoss(model, similarity_fct=pairwise_cos_sim, temperature=temperature) if distill == "kl_div"
            else MarginMSELoss(model, similarity_fct=pairwise_cos_sim)
        )

    @classmethod
    def from_recipe(cls, model: Any, rows: Any, params: dict[str, Any], guide: Any = None,
                    guide_mode: str = "precomputed", show_progress_bar: bool = True) -> tuple[TeacherDistillMarginLoss, Any]:
        """The loss, its projection fitted on the rows' texts when it distills embeddings; the rows unchanged."""
        loss = cls(model, **params)
        if loss.embedding_weight > 0:
            columns = rows.column_names[:1 if loss.embedding_columns == "anchor" else STRUCTURE_COLUMNS]
            texts = (text for row in zip(*(rows[column] for column in columns)) for text in row)
            loss.fit_projection(list(dict.fromkeys(texts))[:loss.projection_sentences], show_progress_bar=show_progress_bar)
        return loss, rows

    def fit_projection(self, texts: list[str], show_progress_bar: bool = False) -> None:
        """Fix (W, b) at the least-squares fit of the teacher's embeddings of ``texts`` on the student's, both of the
        text the student's tokens decode to (lower-cased, cut to its length), as the teacher sees it in training."""
        from benchmarks.negation_teacher.plain_distill import least_squares_projection

        decoded = [text for start in range(0, len(texts), 256)
                   for text in self.decoded_texts(self.model.tokenize(texts[start:start + 256]))]
        student = self.model.encode(decoded, convert_to_tensor=True, show_progress_bar=show_progress_bar)
        teacher = torch.cat([self.teacher_embeddings(decoded[start:start + 256]) for start in range(0, len(decoded), 256)])
        weight, bias = least_squares_projection(student, teacher)
        self.projection = (weight, bias)  # float64; cast to the embeddings' dtype where used

    def embedding_term(self, student: list[Tensor], teacher: list[Tensor]) -> Tensor:
        """mean over the chosen columns' rows of ‖W s + b − t‖² / d_t (module docstring)."""
        if self.projection is None:
            raise ValueError("TeacherDistillMarginLoss: embedding_weight > 0 needs a fitted projection "
                             "(from_recipe, or fit_projection(texts)).")
        weight, bias = (tensor.to(student[0].device, student[0].dtype) for tensor in self.projection)
        count = 1 if self.embedding_columns == "anchor" else STRUCTURE_COLUMNS
        projected = torch.cat(student[:count]) @ weight.T + bias
        return (projected - torch.cat(teacher[:count])).pow(2).mean()

    def forward(self, sentence_features: Iterable[dict[str, Tensor]], labels: Tensor | None = None) -> LossOutput:
        features = list(sentence_features)
        columns = [self.decoded_texts(column) for column in features[:STRUCTURE_COLUMNS]]
        embeddings = self.embed(self.input_columns(features))
        rows = weights = None
        if self.group_weights is not None:
            weights = torch.tensor([self.group_weights.get(row_group(*row), 1.0) for row in zip(*columns, strict=True)],
                                   device=embeddings[0].device)
            rows = weights > 0
            weights = weights[rows]
        elif self.distill_rows != "all":
            rows = torch.tensor([distilled_row(a, p, n, self.distill_rows) for a, p, n in zip(*columns, strict=True)],
                                device=embeddings[0].device)
        if rows is not None:
            columns = [[text for text, kept in zip(column, rows.tolist(), strict=True) if kept] for column in columns]
        # The teacher embeds only the rows it is distilled on.
        texts = [text for column in columns for text in column]
        teacher = self.teacher_embeddings(texts) if texts else embeddings[0].new_zeros(0, 1)
        return self.compute_loss_from_embeddings(embeddings, labels, teacher=teacher, rows=rows, row_weights=weights)

    def compute_loss_from_embeddings(
        self, embeddings: list[Tensor], labels: Tensor | None = None, teacher: Tensor | None = None,
        rows: Tensor | None = None, row_weights: Tensor | None = None,
    ) -> LossOutput:
        """``MarginNegationLoss``'s parts plus ``teacher``, the distillation term on the rows where ``rows`` (a boolean
        mask) is true, every row when None, 0 when none is. ``teacher``: the teacher's embeddings of those rows'
        anchor, positive and negative columns, stacked in that order. ``row_weights`` (the floor only): each
        selected row's weight; the floor is then their weighted sum over the whole batch's row count."""
        if teacher is None:
            raise ValueError("TeacherDistillMarginLoss.compute_loss_from_embeddings needs teacher= embeddings.")
        output = MarginNegationLoss.compute_loss_from_embeddings(self, embeddings, labels)
        parts = dict(output) if isinstance(output, dict) else {"MarginNegationLoss": output}
        student = [core.at_least_float32(e) for e in embeddings[:STRUCTURE_COLUMNS]]
        batch_rows = student[0].shape[0]
        if row_weights is not None and (not self.distill.startswith("margin_floor") or self.embedding_weight > 0
                                        or rows is None or row_weights.shape != (int(rows.sum()),)):
            raise ValueError("TeacherDistillMarginLoss: row_weights weigh the floor without the embedding term, one "
                             "weight per selected row.")
        if rows is not None:
            if not bool(rows.any()):
                parts["teacher"] = student[0].sum() * 0.0
                if self.embedding_weight > 0:
                    parts["teacher_embedding"] = student[0].sum() * 0.0
                return combine_parts(parts, self.return_parts)
            student = [column[rows] for column in student]
        targets = core.at_least_float32(teacher.to(student[0].device)).chunk(STRUCTURE_COLUMNS)
        anchor, positive, negative = targets
        scores = (pairwise_cos_sim(anchor, positive), pairwise_cos_sim(anchor, negative))
        if self.distill == "kl_div":
            term = self._distill_loss.compute_loss_from_embeddings(student, torch.stack(scores, dim=1))
        elif self.distill == "margin_mse":
            term = self._distill_loss.compute_loss_from_embeddings(student, scores[0] - scores[1])
        else:
            to_positive = pairwise_cos_sim(student[0], student[1])
            to_negative = pairwise_cos_sim(student[0], student[2])
            if self.distill == "margin_floor_push":
                to_positive = to_positive.detach()
            elif self.distill == "margin_floor_pull":
                to_negative = to_negative.detach()
            squared = row_floor(scores[0] - scores[1], to_positive - to_negative, self.hinge_cap)
            term = squared.mean() if row_weights is None else (row_weights.to(squared.dtype) * squared).sum() / batch_rows
        parts["teacher"] = self.teacher_weight * term
        if self.embedding_weight > 0:
            parts["teacher_embedding"] = self.embedding_weight * self.embedding_term(student, list(targets))
        return combine_parts(parts, self.return_parts)

    def get_config_dict(self) -> dict[str, Any]:
        config = {**super().get_config_dict(), "distill": self.distill, "temperature": self.distill_temperature,
                  "distill_rows": self.distill_rows}
        if self.group_weights is not None:
            config["group_weights"] = dict(self.group_weights)
        if self.hinge_cap is not None:
            config["hinge_cap"] = self.hinge_cap
        if self.embedding_weight > 0:
            config |= {"embedding_weight": self.embedding_weight, "embedding_columns": self.embedding_columns,
                       "projection_sentences": self.projection_sentences}
        config.pop("teacher_pairs", None)
        return config
