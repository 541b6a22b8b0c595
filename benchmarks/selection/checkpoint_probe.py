"""Lab callbacks for following a run between its kept checkpoints (``select_dev.py --probe-every-eval``,
``--constant-lr``, ``--keep-weights``).

* :class:`ProbeAtEval` scores the negation-meaning probe ((i), (ii), (iii)) and word order every time the trainer
  scores STS-B dev, at the start model's own length (as the kept models are scored), and adds them to the run's
  log history (``probe/<figure>`` at that step), so a run's result file holds the probe at every checkpoint.
  Scoring does not change the training: it encodes in eval mode and draws no random numbers.
* :class:`ConstantRate` makes the learning rate constant after the recipe's warmup instead of decaying linearly
  to zero, so a run's last model is not annealed (a lab knob; recipes have no scheduler setting).
* :class:`KeepWeights` hard-links every checkpoint's model files (not its optimizer state) into
  ``<run>/weights/checkpoint-N``, where the trainer's rotation (two checkpoints kept) does not delete them, so
  any checkpoint, or an average of several, can be scored after the run (``average_checkpoints.py``).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from transformers import TrainerCallback

TRAINER_ONLY_FILES = ("optimizer.pt", "scheduler.pt", "scaler.pt", "rng_state*.pth", "trainer_state.json")


class ProbeAtEval(TrainerCallback):
    def __init__(self, length: int) -> None:
        self.length = length

    def __repr__(self) -> str:  # recorded in a run's started.json
        return f"ProbeAtEval(length={self.length})"

    def on_evaluate(self, args, state, control, model=None, **kwargs):
        from benchmarks.selection.dev_probes import negation_meaning_scores, word_order_scores
        from st_debias.evaluation import EmbeddingCache
        from st_debias.recipes.train import training_length  # sets a length for the block, then restores it

        with training_length(model, self.length):
            cache = EmbeddingCache(model)
            scores = {**negation_meaning_scores(cache), **word_order_scores(cache)}
        # Saved with the checkpoint that follows, so a resumed run keeps the earlier steps' figures.
        state.log_history.append({"step": state.global_step, **{f"probe/{key}": value for key, value in scores.items()}})
        print(
            f"[probe] step {state.global_step}: (i) {scores['nm_over_affirmative']:.3f} "
            f"(ii) {scores['nm_over_negated_antonym']:.3f} (iii) {scores['nm_polarity_cluster']:.4f} "
            f"word order {scores['word_order_cos']:.4f}",
            flush=True,
        )


class ConstantRate(TrainerCallback):
    def __repr__(self) -> str:
        return "ConstantRate()"

    def on_init_end(self, args, state, control, **kwargs):
        # The trainer builds its scheduler from these arguments when training starts, after this call.
        args.lr_scheduler_type = "constant_with_warmup"


class KeepWeights(TrainerCallback):
    def __repr__(self) -> str:
        return "KeepWeights()"

    def on_train_begin(self, args, state, control, **kwargs):
        # A fresh run (no checkpoint to resume from) must not inherit an earlier run's weights.
        if not list(Path(args.output_dir).glob("checkpoint-*")):
            shutil.rmtree(Path(args.output_dir).parent / "weights", ignore_errors=True)

    def on_save(self, args, state, control, **kwargs):
        # Every complete checkpoint not yet kept: the one just saved, and the one a resumed run started from, whose
        # linking an interruption may have cut short.
        weights = Path(args.output_dir).parent / "weights"
        for checkpoint in Path(args.output_dir).glob("checkpoint-*"):
            kept = weights / checkpoint.name
            if kept.is_dir() or not (checkpoint / "trainer_state.json").is_file():
                continue
            partial = kept.with_name(kept.name + ".partial")
            shutil.rmtree(partial, ignore_errors=True)
            shutil.copytree(
                checkpoint, partial, copy_function=os.link, ignore=shutil.ignore_patterns(*TRAINER_ONLY_FILES)
            )
            partial.rename(kept)
