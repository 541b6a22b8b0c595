"""Which weights a run keeps: the best checkpoint on STS-B dev, or the start model when none beats it."""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch
    from sentence_transformers import SentenceTransformer
    from transformers import TrainerState

logger = logging.getLogger(__name__)

#: The trainer's metric for the best checkpoint: Spearman of cosine on STS-B dev.
BEST_METRIC = "eval_sts-dev_spearman_cosine"


def held_dev_score(state: TrainerState) -> float | None:
    """STS-B dev score of the weights the model holds after training: the best checkpoint's when it was loaded,
    else (a resumed run whose best checkpoint is gone, or no score ever above -inf) the last one logged."""
    if state.best_model_checkpoint is not None and state.best_metric is not None:
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


def select_weights(
    state: TrainerState, model: SentenceTransformer, start: StartCandidate | None, evaluator: Any
) -> dict[str, Any]:
    """Settle which weights ``model`` keeps and return the selection record (``selection.json``).

    The trainer has loaded the best checkpoint; when ``start`` (the start model, scored before training) scores at
    least as high on STS-B dev, its weights are restored, with a warning, and ``kept`` is ``"start"``.
    """
    held = held_dev_score(state)
    selection: dict[str, Any] = {
        "metric": BEST_METRIC,
        "best_checkpoint": state.best_model_checkpoint,
        "best_checkpoint_score": held if held is not None and math.isfinite(held) else None,
        "kept": state.best_model_checkpoint,
    }
    if start is None:
        return selection
    selection["start_score"] = start.dev_score
    if start.holds_against(held):
        start.restore(model)
        selection["kept"] = "start"
        model.model_card_data.set_best_model_step(0)
        model.model_card_data.eval_results_dict[evaluator] = start.metrics
        logger.warning(
            "No checkpoint beat the start model on STS-B dev (start %.4f, best checkpoint %s at %s): the saved "
            "model is the start model. Train fewer steps or at a lower --learning-rate.",
            start.dev_score, "NaN" if selection["best_checkpoint_score"] is None else f"{held:.4f}",
            state.best_model_checkpoint or "the last step",
        )
    return selection
