"""Run a recipe end to end: build (cached) rows, train with SentenceTransformerTrainer, evaluate before/after."""

from __future__ import annotations

import copy
import functools
import inspect
import logging
import math
import os
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from st_debias.files import atomic_write_json, atomic_write_text, no_space_error
from st_debias.paths import load_model, resolve_model_name
from st_debias.progress import announce, torch_threads

from .config import Recipe, TrainingConfig
from .data import build_rows, read_corpus
from .losses import build_loss
from .run_folder import STAGING_MODEL, hold_run_folder, prepare_output, resume_checkpoint, run_identity

if TYPE_CHECKING:
    import torch
    from sentence_transformers import SentenceTransformer
    from transformers import TrainerState

logger = logging.getLogger(__name__)
BEST_METRIC = "eval_sts-dev_spearman_cosine"

#: Corpus sentences read per wanted row, by data kind: builders that skip sentences need more than one each.
CORPUS_OVERSAMPLE = {"negation": 3, "minimal_pairs": 2}


@dataclass
class TrainResult:
    """Where the trained model went and what changed."""

    output_dir: Path
    model_dir: Path
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    table: str | None
    data_report: dict[str, Any] = field(default_factory=dict)
    best_checkpoint: str | None = None
    log_history: list[dict[str, Any]] = field(default_factory=list)
    selection: dict[str, Any] = field(default_factory=dict)


def load_start_model(name_or_path: str | os.PathLike[str] | None):
    """Load the model to fine-tune: a hub id, a local folder (checked), or the packaged default."""
    return load_model(name_or_path)


def is_main_process() -> bool:
    """True outside ``torchrun``/``accelerate launch`` and on global rank 0 under them."""
    return int(os.environ.get("RANK", "0")) == 0


def check_budget(training: TrainingConfig) -> None:
    """Refuse a training budget that cannot run a single step, naming the setting."""
    for name in ("steps", "batch_size", "eval_steps"):
        value = getattr(training, name)
        if value < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be at least 1, got {value}: no training step would run.")
    if training.sentences is not None and training.sentences < 1:
        raise ValueError(f"--sentences must be at least 1, got {training.sentences}.")


def check_rows_fill_a_batch(recipe: Recipe, rows: Any, report: dict[str, Any], sentences: int, processes: int = 1) -> None:
    """Refuse rows that cannot fill one batch per process (the trainer drops incomplete batches: 0 steps)."""
    batch_size = recipe.training.batch_size * processes
    if len(rows) >= batch_size:
        return
    skipped = report.get("skipped") or {}
    reasons = ", ".join(f"{reason}: {count}" for reason, count in sorted(skipped.items())) or "none"
    raise ValueError(
        f"Recipe {recipe.name!r} built {len(rows)} training rows from {sentences} corpus sentences "
        f"(skipped by reason: {reasons}), fewer than one batch of {batch_size}"
        + (f" ({processes} processes x {recipe.training.batch_size})" if processes > 1 else "")
        + ": no training step can run. "
        "Use more sentences (--sentences, a larger --corpus) or a smaller --batch-size."
    )


def _holding_run_folder(train: Callable[..., TrainResult]) -> Callable[..., TrainResult]:
    """``train`` run holding the lock on its ``output_dir`` (global rank 0 only), so that a second run into the
    folder is refused while this one runs (:func:`~st_debias.recipes.run_folder.hold_run_folder`)."""
    signature = inspect.signature(train)

    @functools.wraps(train)
    def holding(*args: Any, **kwargs: Any) -> TrainResult:
        if not is_main_process():
            return train(*args, **kwargs)
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        with hold_run_folder(Path(bound.arguments["output_dir"])):
            return train(*args, **kwargs)

    return holding


@_holding_run_folder
def train_recipe(
    recipe: Recipe,
    *,
    model: str | os.PathLike[str] | None = None,
    corpus: str | os.PathLike[str] | None = None,
    output_dir: str | os.PathLike[str] = "outputs/run",
    data_dir: str | None = None,
    resume_from_checkpoint: bool | str | None = None,
    evaluate: bool = True,
    eval_tasks: tuple[str, ...] = ("sts", "bias"),
    quick_eval: bool = False,
    sts_tasks: Sequence[str] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    show_progress_bar: bool = True,
    overwrite: bool = False,
    gradient_share_every: int = 0,
    start_as_candidate: bool = True,
) -> TrainResult:
    """Train ``recipe`` from ``model`` on ``corpus`` and return the saved model's folder and before/after scores.

    Args:
        recipe: a loaded recipe (:func:`st_debias.recipes.load_recipe`), training fields already overridden.
        model: start model (hub id or folder); default: all-MiniLM-L6-v2 (packaged copy offline).
        corpus: a text file with one sentence per line; default ``$ST_DEBIAS_DATA/corpus/wiki_sentences.txt``.
        output_dir: run folder: ``checkpoints/``, ``model/`` (the best checkpoint, or the start model when none beat
            it on STS-B dev; with model card), ``selection.json`` (the dev scores compared), ``eval/``.
        data_dir: data folder for evaluation (default ``$ST_DEBIAS_DATA``).
        resume_from_checkpoint: True (newest complete checkpoint in ``output_dir/checkpoints``) or a checkpoint
            path; the folder's ``run.json`` must name the same recipe, model, corpus and seed.
        evaluate: run the STS suite and bias probes before and after training.
        eval_tasks: evaluation groups (``sts``, ``bias``, ``mteb``).
        quick_eval: score STS-B and SICK-R test only (plus the bias probes), labelled as such, instead of the STS-7.
        sts_tasks: the STS sets to score, overriding ``quick_eval`` (e.g. ``("STSBenchmark",)`` for a large model
            on a CPU); any set other than the STS-7 is labelled in the results and the report.
        cache_dir: where built rows and evaluations are cached (default ``$ST_DEBIAS_CACHE`` or ~/.cache/st_debias).
        show_progress_bar: tqdm bars while building, training and evaluating.
        gradient_share_every: log each loss part's share of the gradient norm every this many steps
            (:class:`~st_debias.recipes.callbacks.GradientShareCallback`; 0 = off).
        overwrite: replace a run already in ``output_dir`` (without it, such a folder is refused).
        start_as_candidate: score the start model on STS-B dev too, as checkpoint 0: when no checkpoint scores
            above it, the saved model is the start model, with a warning (``best_checkpoint`` is ``"start"``).
            Training too long or too fast then cannot return a model worse on dev than the one it began with.

    Raises:
        ValueError: a budget or data that cannot train a step, an output folder holding another run or in use by a
            live one, or a ``--resume`` checkpoint that is incomplete or from another run.
        TrainingInterrupted: SIGTERM/SIGINT stopped training after saving a checkpoint.
        TrainingDiverged: the loss or the gradient turned non-finite; no model was saved.

    Under ``torchrun``, global rank 0 locks and checks the output folder, builds the rows (the other ranks wait, then
    read them from the cache), evaluates and saves; every rank trains.
    """
    import torch
    from sentence_transformers import SentenceTransformerTrainer, SentenceTransformerTrainingArguments
    from sentence_transformers.base.sampler import BatchSamplers

    from st_debias.evaluation import (
        QUICK_STS_TASKS,
        STS_TASKS,
        compare_table,
        evaluate_or_reuse,
        sts_dev_evaluator,
        write_report,
        write_results,
    )
    from st_debias.recipes.callbacks import FindBestCheckpoint, GradientShareCallback

    from .stopping import SaveAndStopOnSignal, StopOnNonFinite, TrainingInterrupted

    training = recipe.training
    check_budget(training)
    output_dir = Path(output_dir)
    cache = Path(cache_dir) if cache_dir else None
    main_process = is_main_process()
    identity = run_identity(recipe, resolve_model_name(model), corpus)
    if main_process:
        prepare_output(output_dir, identity, resume=bool(resume_from_checkpoint), overwrite=overwrite)
    checkpoint = (
        resume_checkpoint(output_dir / "checkpoints", resume_from_checkpoint, identity)
        if resume_from_checkpoint
        else None
    )
    start_model = load_start_model(model)
    inference_length = start_model.max_seq_length  # evaluation and the saved model keep the model's own length
    start_label = str(model or "all-MiniLM-L6-v2")
    # --batch-size is per process: under torchrun every step consumes batch_size rows on each process.
    rows_wanted = training.steps * training.batch_size * int(os.environ.get("WORLD_SIZE", "1"))
    # The negation builder skips sentences with no negation or no paraphrase: read more than the rows needed.
    oversample = CORPUS_OVERSAMPLE.get(recipe.data.kind, 1)
    sentences = read_corpus(corpus, training.sentences or oversample * rows_wanted)
    if sts_tasks is None:
        sts_tasks = QUICK_STS_TASKS if quick_eval else STS_TASKS
    sts_tasks = tuple(sts_tasks)
    args = SentenceTransformerTrainingArguments(
        output_dir=str(output_dir / "checkpoints"),
        max_steps=training.steps,
        per_device_train_batch_size=training.batch_size,
        learning_rate=training.learning_rate,
        warmup_steps=int(training.warmup_ratio * training.steps),
        seed=training.seed,
        data_seed=training.seed,
        batch_sampler=BatchSamplers.NO_DUPLICATES,
        eval_strategy="steps",
        eval_steps=training.eval_steps,
        save_strategy="steps",
        save_steps=training.eval_steps,
        save_total_limit=2,
        load_best_model_at_end=True,
        metric_for_best_model=BEST_METRIC,
        greater_is_better=True,
        logging_steps=max(1, training.eval_steps // 5),
        logging_nan_inf_filter=False,  # a NaN loss is logged as NaN (the default logs the running average)
        report_to="none",
        disable_tqdm=not show_progress_bar,
        dataloader_drop_last=True,
        dataloader_pin_memory=torch.accelerator.is_available(),  # on a CPU, pinning only warns
        # torchrun without an accelerator: transformers only goes multi-process (gloo) when told to use the CPU.
        use_cpu=int(os.environ.get("WORLD_SIZE", "1")) > 1 and not torch.accelerator.is_available(),
    )
    before = None
    # Rank 0 first: it evaluates the start model and builds (and caches) the rows; the others then read the cache.
    with args.main_process_first(local=False, desc="st-debias: building training rows"):
        if evaluate and main_process:
            before = evaluate_or_reuse(
                start_model, eval_tasks, data_dir, label=f"{start_label} (start)", cache_dir=cache,
                show_progress_bar=show_progress_bar, sts_tasks=sts_tasks,
            )
        start_model.max_seq_length = training.max_seq_length
        rows, data_report = build_rows(
            recipe, sentences, start_model, cache_dir=cache, show_progress_bar=show_progress_bar, max_rows=rows_wanted,
            data_dir=data_dir,
        )
    check_rows_fill_a_batch(recipe, rows, data_report, len(sentences), processes=args.world_size)
    guide = None
    if recipe.loss.guide is not None:
        guide = copy.deepcopy(start_model) if recipe.loss.guide == "start" else load_start_model(recipe.loss.guide)
        guide.max_seq_length = training.max_seq_length
        guide.requires_grad_(False)
        guide.eval()
    loss, rows = build_loss(recipe, start_model, rows, guide=guide, show_progress_bar=show_progress_bar)

    dev_evaluator = sts_dev_evaluator(data_dir)
    start_candidate = None
    if start_as_candidate and main_process:
        # The start model competes with the checkpoints: its dev score at the training length (as theirs) and a
        # CPU copy of its weights to restore if it wins.
        announce(
            f"Scoring the start model on STS-B dev ({len(dev_evaluator.sentences1):,} pairs, up to "
            f"{training.max_seq_length} tokens) as checkpoint 0 of the selection…",
            show_progress_bar,
        )
        start_candidate = _StartCandidate.score(start_model, dev_evaluator)
    stop_on_signal = SaveAndStopOnSignal()
    trainer = SentenceTransformerTrainer(
        model=start_model,
        args=args,
        train_dataset=rows,
        loss=loss,
        evaluator=dev_evaluator,
        callbacks=[stop_on_signal, StopOnNonFinite(loss, output_dir / "checkpoints"),
                   FindBestCheckpoint(output_dir / "checkpoints")]
        + ([GradientShareCallback(loss, every=gradient_share_every)] if gradient_share_every else []),
    )
    if main_process:
        announce(
            f"Training: {training.steps} steps of {training.batch_size} rows ({', '.join(rows.column_names)}; up to "
            f"{training.max_seq_length} tokens) from {len(rows)} rows, STS-B dev every {training.eval_steps} steps "
            f"to keep the best checkpoint ({torch_threads()}) -> {output_dir}…",
            show_progress_bar,
        )
    with stop_on_signal:
        try:
            trainer.train(resume_from_checkpoint=checkpoint)
        except Exception as error:  # a full disk while saving a checkpoint: say where, and how much
            full = no_space_error(error, output_dir / "checkpoints", 3 * _state_bytes(start_model))
            if full is None:
                raise
            raise full from error
    step = trainer.state.global_step
    if stop_on_signal.received is not None:
        saved = output_dir / "checkpoints" / f"checkpoint-{step}"
        raise TrainingInterrupted(stop_on_signal.received, step, str(saved) if saved.is_dir() else None)
    if step == 0:
        raise ValueError(
            f"Training ran 0 steps ({len(rows)} rows, batch size {training.batch_size}); no model was saved."
        )

    start_model.max_seq_length = inference_length
    model_dir = output_dir / "model"
    after = table = None
    if not main_process:
        return TrainResult(output_dir, model_dir, None, None, None, data_report,
                           trainer.state.best_model_checkpoint, list(trainer.state.log_history))
    best_checkpoint = trainer.state.best_model_checkpoint
    held_score = _held_dev_score(trainer.state)
    selection: dict[str, Any] = {
        "metric": BEST_METRIC,
        "best_checkpoint": best_checkpoint,
        "best_checkpoint_score": held_score if held_score is not None and math.isfinite(held_score) else None,
    }
    card = start_model.model_card_data
    card.add_tags(["st-debias", f"st-debias-recipe-{recipe.name}"])
    card.model_name = f"{start_label} fine-tuned with the st_debias '{recipe.name}' recipe (v{recipe.version})"
    trained_label = f"{recipe.name} (trained)"
    if start_candidate is not None:
        selection["start_score"] = start_candidate.dev_score
        if start_candidate.holds_against(held_score):
            start_candidate.restore(start_model)
            best_checkpoint = "start"
            card.model_name = (f"{start_label} (start weights kept: no '{recipe.name}' checkpoint beat them on "
                               "STS-B dev)")
            card.set_best_model_step(0)
            card.eval_results_dict[dev_evaluator] = start_candidate.metrics
            trained_label = f"{recipe.name} (start weights kept)"
            logger.warning(
                "No checkpoint beat the start model on STS-B dev (start %.4f, best checkpoint %s at %s): the saved "
                "model is the start model. Train fewer steps or at a lower --learning-rate.",
                start_candidate.dev_score, "NaN" if selection["best_checkpoint_score"] is None
                else f"{held_score:.4f}", trainer.state.best_model_checkpoint or "the last step",
            )
    selection["kept"] = best_checkpoint
    _save_model(start_model, recipe, model_dir)
    atomic_write_json(output_dir / "data_report.json", data_report)
    atomic_write_json(output_dir / "selection.json", selection)

    if evaluate:
        after = evaluate_or_reuse(
            start_model, eval_tasks, data_dir, label=trained_label, cache_dir=cache,
            show_progress_bar=show_progress_bar, sts_tasks=sts_tasks,
        )
        after["recipe"] = recipe.to_dict()
        after["best_checkpoint"] = best_checkpoint
        after["selection"] = selection
        write_results([before, after], output_dir / "eval")
        write_report([before, after], output_dir / "eval")
        table = compare_table([before, after])
    return TrainResult(
        output_dir=output_dir,
        model_dir=model_dir,
        before=before,
        after=after,
        table=table,
        data_report=data_report,
        best_checkpoint=best_checkpoint,
        log_history=list(trainer.state.log_history),
        selection=selection,
    )


def _held_dev_score(state: TrainerState) -> float | None:
    """STS-B dev score of the weights the model holds after training: the best checkpoint's when it was loaded,
    else (a resumed run whose best checkpoint is gone, or no score ever above -inf) the last one logged."""
    if state.best_model_checkpoint is not None and state.best_metric is not None:
        return float(state.best_metric)
    logged = [entry[BEST_METRIC] for entry in state.log_history if BEST_METRIC in entry]
    return float(logged[-1]) if logged else None


@dataclass
class _StartCandidate:
    """The start model as checkpoint 0 of the best-checkpoint selection: its dev metrics and its weights."""

    metrics: dict[str, float]
    state: dict[str, torch.Tensor]

    @property
    def dev_score(self) -> float:
        return float(self.metrics[BEST_METRIC.removeprefix("eval_")])

    @classmethod
    def score(cls, model: SentenceTransformer, evaluator: Callable[..., dict[str, float]]) -> _StartCandidate:
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


def _state_bytes(model: Any) -> int:
    """Bytes of the model's weights: what saving it needs (a checkpoint needs about 3x: weights, Adam's moments)."""
    return sum(tensor.numel() * tensor.element_size() for tensor in model.state_dict().values())


# Embedded before a model is saved: a model with non-finite weights is never published.
_SAVE_CHECK_SENTENCES = ("A man is playing a guitar.", "The weather is not cold today.")


def _save_model(model: Any, recipe: Recipe, model_dir: Path) -> None:
    """Save into a staging folder, then swap it in: a crash leaves the previous model (or none), never half of one."""
    from st_debias.evaluation.embeddings import EmbeddingCache

    EmbeddingCache(model).prefetch(_SAVE_CHECK_SENTENCES)  # refuses a model with non-finite embeddings
    staging = model_dir.with_name(STAGING_MODEL)
    shutil.rmtree(staging, ignore_errors=True)
    try:
        model.save_pretrained(str(staging))
        atomic_write_text(staging / "st_debias_recipe.yaml", yaml.safe_dump(recipe.to_dict(), sort_keys=False))
    except Exception as error:
        shutil.rmtree(staging, ignore_errors=True)
        full = no_space_error(error, model_dir, _state_bytes(model))
        if full is None:
            raise
        raise full from error
    if model_dir.exists():
        shutil.rmtree(model_dir)
    os.replace(staging, model_dir)
