"""The plain distillation baseline: the same teacher through sentence-transformers' own ``MSELoss``, no st_debias rows.

The teacher variants of this study add all-mpnet-base-v2's within-row margin to version 6's rows and loss. What
st_debias adds on top of simply distilling the teacher shows only beside the plain form: the student's embedding
of each training sentence regressed onto the teacher's (Reimers & Gurevych, 2020, "Making monolingual sentence
embeddings multilingual using knowledge distillation"),

    L = mean_i ‖W s(x_i) − t(x_i)‖² / d_t,

over the corpus sentences of the ``simcse`` rows (their anchor column). all-MiniLM-L6-v2 has 384 dimensions and
the teacher 768, so W is ``MSELoss``'s own learnable projection (``projection_dim``, trained beside the student
and not saved with it); with equal widths there is none. A projection initialised at random drags the student
toward a random image of the teacher before W has learned anything; with ``fit_projection: true`` W (and its bias)
starts instead at the least-squares fit of the teacher's embeddings on the start model's, over the rows' sentences,
so the first steps move the student only where the best linear map of it still misses the teacher.

The teacher's embeddings are computed once, before training, into the rows' ``label`` column (``from_recipe``,
through ``st_debias.data.guide.attach_guide_embeddings``, each distinct sentence once, at the student's token
limit). The lab's entry points (``benchmarks/pyproject.toml``) add the class to the recipe loss registry.
"""

from __future__ import annotations

from typing import Any

import torch
from sentence_transformers.sentence_transformer.losses import MSELoss
from torch import Tensor


class TeacherMSELoss(MSELoss):
    #: One text column is regressed; the rows' other columns (a SimCSE row's copy of its anchor) are dropped.
    text_columns = (1, None)
    #: ``from_recipe`` fills the ``label`` column from ``teacher``; a recipe's ``loss.guide`` is not read.
    takes_guide = False

    def __init__(self, model: Any, teacher: str | None = None, projection_dim: int | None = None,
                 teacher_batch_size: int = 64, fit_projection: bool = False) -> None:
        """sentence-transformers' ``MSELoss`` on the embeddings of ``teacher`` that ``from_recipe`` puts in the rows.

        Args:
            teacher: a SentenceTransformer name or folder.
            projection_dim: ``MSELoss``'s projection width; ``from_recipe`` sets it to the teacher's width when
                that differs from the student's.
            teacher_batch_size: the teacher's encoding batch size.
            fit_projection: ``from_recipe`` starts the projection at the least-squares fit (module docstring).

        Raises:
            ValueError: no ``teacher`` or a batch size under 1.
        """
        super().__init__(model, projection_dim=projection_dim if model is not None else None)
        if not teacher:
            raise ValueError("TeacherMSELoss: name the teacher model (teacher: <name or folder>).")
        if int(teacher_batch_size) < 1:
            raise ValueError(f"TeacherMSELoss: teacher_batch_size must be at least 1, got {teacher_batch_size}.")
        self.teacher_name = teacher
        self.teacher_batch_size = int(teacher_batch_size)
        self.fit_projection = bool(fit_projection)

    @classmethod
    def from_recipe(cls, model: Any, rows: Any, params: dict[str, Any], guide: Any = None,
                    guide_mode: str = "precomputed", show_progress_bar: bool = True) -> tuple[TeacherMSELoss, Any]:
        """The loss and its rows: the first text column, with the teacher's embedding of it as ``label``."""
        from st_debias.data.guide import attach_guide_embeddings
        from st_debias.paths import load_model

        params = dict(params)
        teacher = load_model(params["teacher"], device=str(next(model.parameters()).device))
        teacher.max_seq_length = model.max_seq_length
        anchor = rows.column_names[0]
        rows = attach_guide_embeddings(rows.select_columns([anchor]), teacher, text_columns=[anchor],
                                       batch_size=int(params.get("teacher_batch_size", 64)),
                                       show_progress_bar=show_progress_bar)
        width = teacher.get_embedding_dimension()
        if params.get("projection_dim") is None and width != model.get_embedding_dimension():
            params["projection_dim"] = width
        loss = cls(model, **params)
        if loss.fit_projection and loss.projection is not None:
            student = model.encode(rows[anchor], batch_size=loss.teacher_batch_size, convert_to_tensor=True,
                                   show_progress_bar=show_progress_bar)
            weight, bias = least_squares_projection(student, torch.tensor(rows["label"]))
            with torch.no_grad():
                loss.projection.weight.copy_(weight)
                loss.projection.bias.copy_(bias)
        return loss, rows

    def get_config_dict(self) -> dict[str, Any]:
        return {**super().get_config_dict(), "teacher": self.teacher_name, "teacher_batch_size": self.teacher_batch_size,
                "fit_projection": self.fit_projection}


def least_squares_projection(student: Tensor, teacher: Tensor) -> tuple[Tensor, Tensor]:
    """The ``(weight, bias)`` of scikit-learn's least-squares ``LinearRegression`` of ``teacher`` on ``student``
    (rows: sentences), in float64."""
    from sklearn.linear_model import LinearRegression

    fitted = LinearRegression().fit(student.detach().double().cpu().numpy(), teacher.detach().double().cpu().numpy())
    return torch.from_numpy(fitted.coef_), torch.from_numpy(fitted.intercept_)
