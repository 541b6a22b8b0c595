"""Which weights a run keeps: the best checkpoint on STS-B dev or the last one, or the start model when it scores
at least as high."""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

    import torch
    from sentence_transformers import SentenceTransformer
    from transformers import TrainerState

logger = logging.getLogger(__name__)

#: The trainer's metric for the best checkpoint: Spearman of cosine on STS-B dev.
BEST_METRIC = "eval_sts-dev_spearman_cosine"

#: The values of ``training.keep``: the checkpoint with the best STS-B dev score, or the final step's weights.
KEEP_CHOICES = ("best", "last")


def held_dev_score(state: TrainerState, keep: str = "best") -> float | None:
    """STS-B dev score of the weights the model holds after training: the best checkpoint's when it was loaded,
    else (``keep="last"``, a resumed run whose best checkpoint is gone, or no score ever above -inf) the last one
    logged, which the trainer scores at the final step."""
    if keep == "best" and state.best_model_checkpoint is not None and state.best_metric is not None:
        return float(state.best_metric)
    logged = [entry[BEST_METRIC] for entry in state.log_history if BEST_METRIC in entry]
    return float(logged[-1]) if logged else None


@dataclass
class StartCandidate:
    """The start model as checkpoint 0 of the best-checkpoint selection: its dev metrics and its weights."""

    metrics: dict[str, float]
    state: dict[str, torch.Tensor]

    @property
    def dev_score(self) -> float:
        return float(self.metrics[BEST_METRIC.removeprefix("eval_")])

    @classmethod
    def score(cls, model: SentenceTransformer, evaluator: Callable[..., dict[str, float]]) -> StartCandidate:
        # epoch/steps 0: the model card's training log shows the start as step 0, not as -1.
        metrics = evaluator(model, epoch=0, steps=0)
        key = BEST_METRIC.removeprefix("eval_")
        if key not in metrics:
            raise KeyError(f"the STS-B dev evaluator returned {sorted(metrics)}, not {key!r}")
        state = {name: tensor.detach().to("cpu", copy=True) for name, tensor in model.state_dict().items()}
        return cls(dict(metrics), state)

    def holds_against(self, trained_score: float | None) -> bool:
        """True when the trained weights scored no higher than the start model (a tie keeps the unchanged model,
        a NaN score loses); False when nothing was scored, as nothing then says the training made it worse."""
        if trained_score is None or not math.isfinite(self.dev_score):
            return False
        return not math.isfinite(trained_score) or self.dev_score >= trained_score

    def restore(self, model: SentenceTransformer) -> None:
        model.load_state_dict(self.state)


def _finite(score: float | None) -> float | None:
    return float(score) if score is not None and math.isfinite(score) else None


def select_weights(
    state: TrainerState,
    model: SentenceTransformer,
    start: StartCandidate | None,
    evaluator: Any,
    *,
    keep: str,
    checkpoints_dir: Path,
) -> dict[str, Any]:
    """Settle which weights ``model`` keeps and return the selection record (``selection.json``).

    With ``keep="best"`` the trainer has loaded the best checkpoint; with ``keep="last"`` the model holds the final
    step's weights (``checkpoints_dir/checkpoint-<step>``). When ``start`` (the start model, scored before
    training) scores at least as high on STS-B dev as the weights held, its weights are restored, with a warning,
    and ``kept`` is ``"start"``.
    """
    held = held_dev_score(state, keep)  # NaN when the held weights scored NaN: the start model then wins
    recorded = _finite(held)
    selection: dict[str, Any] = {"metric": BEST_METRIC, "keep": keep, "best_checkpoint": state.best_model_checkpoint}
    if keep == "last":
        held_checkpoint = str(checkpoints_dir / f"checkpoint-{state.global_step}")
        selection["best_checkpoint_score"] = _finite(state.best_metric) if state.best_model_checkpoint else None
        selection["last_checkpoint"] = held_checkpoint
        selection["last_checkpoint_score"] = recorded
        model.model_card_data.set_best_model_step(state.global_step)
    else:  # the best checkpoint's score, or the last one's when a resumed run lost its best checkpoint
        held_checkpoint = state.best_model_checkpoint
        selection["best_checkpoint_score"] = recorded
    selection["kept"] = held_checkpoint
    if start is None:
        return selection
    selection["start_score"] = start.dev_score
    if start.holds_against(held):
        start.restore(model)
        selection["kept"] = "start"
        model.model_card_data.set_best_model_step(0)
        model.model_card_data.eval_results_dict[evaluator] = start.metrics
        logger.warning(
            "%s the start model on STS-B dev (start %.4f, %s checkpoint %s at %s): the saved model is the start "
            "model. Train fewer steps or at a lower --learning-rate.",
            "No checkpoint beat" if keep == "best" else "The last checkpoint did not beat",
            start.dev_score, keep, "NaN" if recorded is None else f"{recorded:.4f}", held_checkpoint or "the last step",
        )
    return selection
