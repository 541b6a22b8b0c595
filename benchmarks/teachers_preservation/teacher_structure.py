"""An experimental margin beside the in-batch similarity structure of a stronger frozen model (a teacher).

Every margin tried on all-MiniLM-L6-v2 trades one dev figure against another: separating "not A" from "A" moves
negated sentences together (the polarity cluster), holding the cluster gives the separation back, and the Oppn
split is lost on its low-overlap side, which no training row targets. all-mpnet-base-v2 is already on the right
side of every one of those figures at once. ``TeacherStructureMarginLoss`` adds to ``MarginNegationLoss`` the
squared difference between the student's cosines and the teacher's over every pair of sentences in the batch,
the three columns together (so "X is not A" against its own "X is A" and "X is B", and against every other row):

    L = L_margin + w · 1/(N(N−1)) Σ_{i≠j} (s(h_i, h_j) − s(t_i, t_j))²,    N = 3B

with h the student's embeddings (dropout on) and t the teacher's (no gradient). With ``teacher_pairs: rows`` only
the three pairs within each row are compared, the relations the margin acts on:

    L = L_margin + w · 1/(3B) Σ_i Σ_{(x, y) ∈ {(a, p), (a, n), (p, n)}} (s(x_i, y_i) − s(x*_i, y*_i))²

so the teacher sets how close "X is not A" is to its own "X is A" and "X is B", and leaves unrelated sentences
alone. Only cosines are compared, so the
teacher may have another width and another tokeniser: it embeds the text the student's token ids decode to
(lower-cased for an uncased student, and cut where the student's sequence length cut it). Teacher embeddings are
kept per text, since the rows repeat over a long budget; the recipe machinery precomputes a frozen model's
embeddings into the rows (``st_debias.data.guide.attach_guide_embeddings``) for ``InstanceWeightedMNRL``'s guide
only, so a lab loss embeds them on its first sight of each text instead. The batch form's maths is
``st_debias.core.similarity_drift``, the core of ``SimilarityPreservation``, which compares the anchors only and
needs a reference with the student's tokenizer.

The lab's entry points (``benchmarks/pyproject.toml``) add the class to the recipe loss registry, so
a lab recipe YAML can name it
with ``teacher: <model path>``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import torch
from torch import Tensor

from st_debias import core
from st_debias.losses import MarginNegationLoss
from st_debias.losses.base import LossOutput, combine_parts

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

STRUCTURE_COLUMNS = 3  # anchor, paraphrase, negation: the dropout views are not distilled
ROW_PAIRS = ((0, 1), (0, 2), (1, 2))  # (anchor, paraphrase), (anchor, negation), (paraphrase, negation)
TEACHER_PAIRS = ("batch", "rows")


class TeacherStructureMarginLoss(MarginNegationLoss):
    def __init__(
        self,
        model: SentenceTransformer | None,
        teacher: str | None = None,
        teacher_weight: float = 1.0,
        teacher_max_seq_length: int = 64,
        teacher_pairs: str = "batch",
        alpha: float = 0.05,
        beta: float = 0.2,
        margin_weight: float = 1e-3,
        scale: float = 20.0,
        contrastive: str = "dropout",
        return_parts: bool = True,
        dropout_columns: Sequence[str] = ("anchor",),
        contrastive_weight: float = 1.0,
    ) -> None:
        """``MarginNegationLoss`` with the same arguments, plus the teacher's structure term (module docstring).

        Args:
            teacher: a SentenceTransformer name or folder, loaded on the first training call (never with
                ``model=None``, so that the recipe check stays cheap).
            teacher_weight: w ≥ 0; 0 leaves ``MarginNegationLoss`` (plus a ``teacher`` part of 0).
            teacher_max_seq_length: the teacher's token limit for the decoded text (its tokeniser may need more
                tokens than the student's for the same words).
            teacher_pairs: ``"batch"`` (every pair of the 3B sentences) or ``"rows"`` (the three pairs within each
                row; module docstring).

        Raises:
            ValueError: a negative ``teacher_weight``, an unknown ``teacher_pairs``, or a model to train without a
                ``teacher``.
        """
        super().__init__(model, alpha=alpha, beta=beta, margin_weight=margin_weight, scale=scale,
                         contrastive=contrastive, return_parts=return_parts, dropout_columns=dropout_columns,
                         contrastive_weight=contrastive_weight)
        core.check_non_negative(teacher_weight, "teacher_weight", "TeacherStructureMarginLoss")
        if model is not None and not teacher:
            raise ValueError("TeacherStructureMarginLoss: name the teacher model (teacher: <name or folder>).")
        if teacher_pairs not in TEACHER_PAIRS:
            raise ValueError(f"TeacherStructureMarginLoss: teacher_pairs must be one of {TEACHER_PAIRS}, got {teacher_pairs!r}.")
        self.teacher_pairs = teacher_pairs
        self.teacher_name = teacher
        self.teacher_weight = float(teacher_weight)
        self.teacher_max_seq_length = int(teacher_max_seq_length)
        self._teacher: list[Any] = []  # a list, so the teacher is neither a submodule nor saved with the student
        self._teacher_cache: dict[str, Tensor] = {}

    @property
    def teacher(self) -> Any:
        if not self._teacher:
            from st_debias.paths import load_model

            teacher = load_model(self.teacher_name, device=str(next(self.model.parameters()).device))
            teacher.max_seq_length = self.teacher_max_seq_length
            teacher.requires_grad_(False)
            teacher.eval()
            self._teacher.append(teacher)
        return self._teacher[0]

    def decoded_texts(self, features: dict[str, Tensor]) -> list[str]:
        """The text the student's token ids of one column stand for (special and padding tokens dropped)."""
        return self.model.tokenizer.batch_decode(features["input_ids"], skip_special_tokens=True)

    def teacher_embeddings(self, texts: list[str]) -> Tensor:
        """The teacher's embeddings of ``texts`` (one row each), embedded once per distinct text."""
        missing = list(dict.fromkeys(t for t in texts if t not in self._teacher_cache))
        if missing:
            with torch.no_grad():
                embedded = self.teacher.encode(missing, batch_size=len(missing), convert_to_tensor=True,
                                               show_progress_bar=False)
            self._teacher_cache.update(zip(missing, embedded.float().cpu()))
        return torch.stack([self._teacher_cache[t] for t in texts])

    def forward(self, sentence_features: Iterable[dict[str, Tensor]], labels: Tensor | None = None) -> LossOutput:
        features = list(sentence_features)
        texts = [text for column in features[:STRUCTURE_COLUMNS] for text in self.decoded_texts(column)]
        embeddings = self.embed(self.input_columns(features))
        return self.compute_loss_from_embeddings(embeddings, labels, teacher=self.teacher_embeddings(texts))

    def compute_loss_from_embeddings(
        self, embeddings: list[Tensor], labels: Tensor | None = None, teacher: Tensor | None = None
    ) -> LossOutput:
        """``MarginNegationLoss``'s parts, plus ``teacher``: the structure term against ``teacher``, the teacher's
        embeddings of the anchor, paraphrase and negation columns stacked in that order (3B rows)."""
        if teacher is None:
            raise ValueError("TeacherStructureMarginLoss.compute_loss_from_embeddings needs teacher= embeddings.")
        output = super().compute_loss_from_embeddings(embeddings, labels)
        parts = dict(output) if isinstance(output, dict) else {"MarginNegationLoss": output}
        student = [core.at_least_float32(e) for e in embeddings[:STRUCTURE_COLUMNS]]
        teacher = core.at_least_float32(teacher.to(student[0].device))
        if self.teacher_pairs == "batch":
            term = core.similarity_drift(torch.cat(student), teacher)
        else:
            targets = teacher.chunk(STRUCTURE_COLUMNS)
            term = torch.stack([
                (core.rowwise_similarity(student[x], student[y]) - core.rowwise_similarity(targets[x], targets[y])).pow(2)
                for x, y in ROW_PAIRS
            ]).mean()
        parts["teacher"] = self.teacher_weight * term
        return combine_parts(parts, self.return_parts)

    def get_config_dict(self) -> dict[str, Any]:
        return {**super().get_config_dict(), "teacher": self.teacher_name, "teacher_weight": self.teacher_weight,
                "teacher_max_seq_length": self.teacher_max_seq_length, "teacher_pairs": self.teacher_pairs}
