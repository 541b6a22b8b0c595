"""An experimental bound on drift: train low-rank adapters (LoRA, through ``peft``) on the encoder's attention
projections instead of every weight (``select_dev.py --lora-rank R``).

The update to each adapted weight matrix W is ``(alpha / r) · B A``, with ``A`` r × d and ``B`` d × r, ``B`` starting at
zero, so training begins at the start model and every other weight stays there. When training ends the adapters are
merged into the weights and removed, so the run saves (and selects, and evaluates) a plain model.

The adapters are added when the trainer is built, before its optimiser exists, so the optimiser holds the adapter
weights alone. A run cannot resume: its trainer checkpoints hold the adapters without the weights they adapt
(an interrupted run's checkpoint, which st_debias names when it stops, is of no use either).
"""

from __future__ import annotations

from transformers import TrainerCallback

#: BERT-style attention projections: query and value, as in the LoRA paper (Hu et al., 2021).
TARGET_MODULES = ("query", "value")


class LowRankAdapters(TrainerCallback):
    def __init__(self, rank: int, alpha: float | None = None, targets: tuple[str, ...] = TARGET_MODULES) -> None:
        if rank < 1:
            raise ValueError(f"--lora-rank must be >= 1, got {rank!r}.")
        self.rank = rank
        self.alpha = float(2 * rank if alpha is None else alpha)
        self.targets = tuple(targets)

    def __repr__(self) -> str:  # recorded in a run's started.json: the same for the same setting
        return f"LowRankAdapters(rank={self.rank}, alpha={self.alpha:g}, targets={list(self.targets)})"

    def on_init_end(self, args, state, control, model=None, **kwargs):
        from peft import LoraConfig, get_peft_model

        if args.load_best_model_at_end:  # the trainer would fail to load an adapter checkpoint, and only log it
            raise ValueError("LowRankAdapters needs training.keep: last; a best checkpoint holds the adapters alone.")
        encoder = model[0]
        encoder.model = get_peft_model(
            encoder.model, LoraConfig(r=self.rank, lora_alpha=self.alpha, lora_dropout=0.0, target_modules=list(self.targets))
        )

    def on_train_begin(self, args, state, control, model=None, **kwargs):
        if state.global_step > 0:
            raise ValueError("LowRankAdapters cannot resume a run: its checkpoints hold the adapters alone.")

    def on_train_end(self, args, state, control, model=None, **kwargs):
        merge_adapters(model)


def merge_adapters(model) -> None:
    """Fold the adapters into the weights they adapt and unwrap the encoder (a no-op without adapters)."""
    from peft import PeftModel

    encoder = model[0]
    if isinstance(encoder.model, PeftModel):
        encoder.model = encoder.model.merge_and_unload()
