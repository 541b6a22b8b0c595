"""Run a recipe end to end, in four phases: prepare (run folder, start model, corpus), rows and loss (cached rows,
the start model's evaluation), train and select (SentenceTransformerTrainer; :mod:`~st_debias.recipes.selection`),
publish (the kept model with its card, reports, the evaluation after training)."""

from __future__ import annotations

import copy
import functools
import inspect
import json
import logging
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from st_debias.data.io.rows import check_row_sources
from st_debias.data.kinds import DATA_KINDS
from st_debias.files import (
    atomic_write_json,
    atomic_write_text,
    hold_output_folder,
    no_space_error,
    staged_folder,
)
from st_debias.paths import check_model_folder, load_model, portable_path, position_limit, resolve_model_name
from st_debias.progress import announce, torch_threads

from .config import Recipe, TrainingConfig
from .data import build_rows, read_corpus, read_user_rows, user_rows
from .extensions import recipe_extensions
from .losses import build_loss
from .run_folder import RUN_FILE, prepare_output, resume_checkpoint, run_identity
from .selection import BEST_METRIC, StartCandidate, select_weights

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer
    from sentence_transformers import SentenceTransformerTrainingArguments as TrainingArguments

logger = logging.getLogger(__name__)


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
    if "source" in report:  # the user's --rows
        made, more = f"The rows of {report['source']} are {len(rows)}", "more rows"
    else:
        made = (f"Recipe {recipe.name!r} built {len(rows)} training rows from {sentences} corpus sentences "
                f"(skipped by reason: {reasons})")
        more = "more sentences (--sentences, a larger --corpus)"
    raise ValueError(
        f"{made}, fewer than one batch of {batch_size}"
        + (f" ({processes} processes x {recipe.training.batch_size})" if processes > 1 else "")
        + ": no training step can run. "
        f"Use {more} or a smaller --batch-size."
    )


def _holding_run_folder(train: Callable[..., TrainResult]) -> Callable[..., TrainResult]:
    """``train`` run holding the lock on its ``output_dir`` (global rank 0 only), so that a second run into the
    folder is refused while this one runs (:func:`~st_debias.files.hold_output_folder`)."""
    signature = inspect.signature(train)

    @functools.wraps(train)
    def holding(*args: Any, **kwargs: Any) -> TrainResult:
        if not is_main_process():
            return train(*args, **kwargs)
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        with hold_output_folder(Path(bound.arguments["output_dir"])):
            return train(*args, **kwargs)

    return holding


@_holding_run_folder
def train_recipe(
    recipe: Recipe,
    *,
    model: str | os.PathLike[str] | None = None,
    corpus: str | os.PathLike[str] | None = None,
    rows: str | os.PathLike[str] | None = None,
    row_columns: Sequence[str] | None = None,
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
    num_proc: int | None = None,
    callbacks: Sequence[Any] = (),
) -> TrainResult:
    """Train ``recipe`` from ``model`` on ``corpus`` and return the saved model's folder and before/after scores.

    Args:
        recipe: a loaded recipe (:func:`st_debias.recipes.load_recipe`), training fields already overridden.
        model: start model (hub id or folder); default: all-MiniLM-L6-v2 (packaged copy offline).
        corpus: a text file with one sentence per line; default ``$ST_DEBIAS_DATA/corpus/wiki_sentences.txt``.
        rows: the user's own training rows instead of rows built from a corpus: a CSV/TSV/JSONL/Parquet file or a
            saved ``datasets`` folder of (anchor, positive[, negative…]) text columns
            (:func:`~st_debias.recipes.data.read_user_rows`); the recipe's ``data.mix`` rows join them, built from
            their anchors.
        row_columns: the text columns of ``rows`` in (anchor, positive, negative…) order (default: every text
            column in the file's order).
        output_dir: run folder: ``checkpoints/``, ``model/`` (the best checkpoint, or the last with
            ``training.keep: last``; the start model when that one did not beat it on STS-B dev; with model card),
            ``selection.json`` (the dev scores compared), ``eval/``.
        data_dir: data folder for evaluation (default ``$ST_DEBIAS_DATA``).
        resume_from_checkpoint: True (newest complete checkpoint in ``output_dir/checkpoints``) or a checkpoint
            path; the folder's ``run.json`` must name the same recipe, model, corpus and seed.
        evaluate: run the STS suite and bias probes before and after training.
        eval_tasks: evaluation groups (``sts``, ``bias``, ``mteb``, ``transfer``).
        quick_eval: score STS-B and SICK-R test only (plus the bias probes), labelled as such, instead of the STS-7.
        sts_tasks: the STS sets to score, overriding ``quick_eval`` (``train --sts-tasks``; e.g.
            ``("STSBenchmark",)`` for a large model on a CPU); any set other than the STS-7 is labelled in the
            results and the report.
        cache_dir: where built rows and evaluations are cached (default ``$ST_DEBIAS_CACHE`` or ~/.cache/st_debias).
        show_progress_bar: tqdm bars while building, training and evaluating.
        gradient_share_every: log each loss part's share of the gradient norm every this many steps
            (``train --log-gradient-shares``; :class:`~st_debias.recipes.callbacks.GradientShareCallback`; 0 = off).
        overwrite: replace a run already in ``output_dir`` (without it, such a folder is refused).
        start_as_candidate: score the start model on STS-B dev too, as checkpoint 0: when no checkpoint scores
            above it, the saved model is the start model, with a warning (``best_checkpoint`` is ``"start"``).
            Training too long or too fast then cannot return a model worse on dev than the one it began with.
        num_proc: workers that build the rows (``train --num-proc``; None: every usable core): processes for a
            kind built in blocks, threads for the negative draws of ``ipw``; any number gives the same rows.
        callbacks: more ``transformers.TrainerCallback`` objects for the trainer, after st_debias's own (which
            stop on a signal or a non-finite loss and find the best checkpoint).

    Raises:
        ValueError: a budget or data that cannot train a step, an output folder holding another run or in use by a
            live one, or a ``--resume`` checkpoint that is incomplete or from another run.
        TrainingInterrupted: SIGTERM/SIGINT stopped training after saving a checkpoint.
        TrainingDiverged: the loss or the gradient turned non-finite; no model was saved.

    Under ``torchrun``, global rank 0 locks and checks the output folder, builds the rows (the other ranks wait, then
    read them from the cache), evaluates and saves; every rank trains.
    """
    run = _prepare(
        recipe, model, corpus, Path(output_dir), data_dir, resume_from_checkpoint, overwrite,
        evaluate=evaluate, eval_tasks=eval_tasks, quick_eval=quick_eval, sts_tasks=sts_tasks, cache_dir=cache_dir,
        show_progress_bar=show_progress_bar, num_proc=num_proc, rows=rows, row_columns=row_columns,
    )
    before = _evaluate(run, f"{run.start_label} (start)") if run.evaluate and run.main_process else None
    if run.evaluate and run.main_process and {"bias", "mteb"} & set(run.eval_tasks):
        _load_probe_items(run)
    with training_length(run.model, recipe.training.max_seq_length):
        rows, data_report, loss = _rows_and_loss(run)
        trainer = _train(run, rows, loss, gradient_share_every, start_as_candidate, callbacks)
    if not run.main_process:
        return TrainResult(run.output_dir, run.output_dir / "model", None, None, None, data_report,
                           trainer.state.best_model_checkpoint, list(trainer.state.log_history))
    return _publish(run, trainer, before, data_report)


@dataclass
class _Run:
    """What the phases of one :func:`train_recipe` call share."""

    recipe: Recipe
    output_dir: Path
    data_dir: str | None
    cache: Path | None
    main_process: bool
    model: SentenceTransformer
    start_label: str
    sentences: list[str]
    mix_sentences: list[str] | None
    rows_wanted: int
    checkpoint: str | None
    run_id: str | None
    args: TrainingArguments
    evaluate: bool
    eval_tasks: tuple[str, ...]
    sts_tasks: tuple[str, ...]
    show_progress_bar: bool
    num_proc: int | None = None
    user_rows: Any = None
    rows_source: str | None = None
    start: StartCandidate | None = None
    dev_evaluator: Any = None
    extensions: list[Any] = field(default_factory=list)  # the recipe's RecipeExtension objects


def _prepare(
    recipe: Recipe, model: Any, corpus: Any, output_dir: Path, data_dir: str | None, resume: bool | str | None,
    overwrite: bool, *, evaluate: bool, eval_tasks: tuple[str, ...], quick_eval: bool,
    sts_tasks: Sequence[str] | None, cache_dir: Any, show_progress_bar: bool, num_proc: int | None,
    rows: Any = None, row_columns: Sequence[str] | None = None,
) -> _Run:
    """Check the budget, read the corpus (or the user's rows), load the start model (as the recipe's extensions
    prepare it) and claim the run folder. A bad corpus or rows file, or a model an extension cannot take, is
    refused before the folder is claimed."""
    from st_debias.evaluation import QUICK_STS_TASKS, STS_TASKS

    training = recipe.training
    check_budget(training)
    extensions = recipe_extensions(recipe)
    main_process = is_main_process()
    check_row_sources(corpus, rows, row_columns, training.sentences)
    user = read_user_rows(recipe, rows, row_columns) if rows is not None else None
    rows_wanted = training.rows_wanted()
    # The rows' source is read before the model loads and the folder is claimed: a bad file leaves nothing behind.
    if user is not None:
        sentences, mix_sentences = [], None
    else:
        sentences = read_corpus(corpus, training.sentences or DATA_KINDS[recipe.data.kind].oversample * rows_wanted)
        mix_count = next((n for e in extensions if (n := e.mix_corpus_sentences()) is not None), None)
        mix_sentences = read_corpus(corpus, mix_count) if mix_count else None
    if recipe.loss.guide not in (None, "start"):  # a missing guide folder is named before any long work
        guide = resolve_model_name(recipe.loss.guide)
        if Path(guide).exists():
            check_model_folder(guide)
    start_model = load_start_model(model)
    limit = position_limit(start_model)
    if limit is not None and training.max_seq_length > limit:
        raise ValueError(
            f"--max-seq-length (training.max_seq_length) {training.max_seq_length} is above the position limit of "
            f"model {resolve_model_name(model)}: {limit} tokens; pass --max-seq-length {limit} or less."
        )
    for extension in extensions:
        extension.prepare_model(start_model)
    identity = run_identity(recipe, resolve_model_name(model), corpus if rows is None else rows, start_model)
    if row_columns:
        identity["row_columns"] = list(row_columns)
    run_id = None
    if main_process:
        run_id = prepare_output(output_dir, identity, resume=bool(resume), overwrite=overwrite)
    checkpoint = None
    if resume:
        if not main_process:  # rank 0 checked the folder; the others read the run it records
            run_id = json.loads((output_dir / RUN_FILE).read_text(encoding="utf-8")).get("run_id")
        checkpoint = resume_checkpoint(output_dir / "checkpoints", resume, identity, run_id, steps=training.steps)
    if sts_tasks is None:
        sts_tasks = QUICK_STS_TASKS if quick_eval else STS_TASKS
    return _Run(
        recipe=recipe, output_dir=output_dir, data_dir=data_dir, cache=Path(cache_dir) if cache_dir else None,
        main_process=main_process, model=start_model, start_label=str(model or "all-MiniLM-L6-v2"),
        sentences=sentences, mix_sentences=mix_sentences, rows_wanted=rows_wanted, checkpoint=checkpoint, run_id=run_id,
        args=_training_arguments(training, output_dir, show_progress_bar), evaluate=evaluate,
        eval_tasks=tuple(eval_tasks), sts_tasks=tuple(sts_tasks), show_progress_bar=show_progress_bar,
        num_proc=num_proc, user_rows=user, rows_source=str(rows) if rows is not None else None,
        extensions=extensions,
    )


def _training_arguments(training: TrainingConfig, output_dir: Path, show_progress_bar: bool) -> TrainingArguments:
    import torch
    from sentence_transformers import SentenceTransformerTrainingArguments
    from sentence_transformers.base.sampler import BatchSamplers

    return SentenceTransformerTrainingArguments(
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
        load_best_model_at_end=training.keep == "best",  # "last": the final step's weights (always scored)
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


@contextmanager
def training_length(model: SentenceTransformer, length: int) -> Iterator[None]:
    """``model.max_seq_length`` set to ``length`` inside the block, then the model's own again: rows are built and
    training runs at the recipe's ``max_seq_length``; evaluation and the saved model keep the model's own."""
    own = model.max_seq_length
    model.max_seq_length = length
    try:
        yield
    finally:
        model.max_seq_length = own


def _rows_and_loss(run: _Run) -> tuple[Any, dict[str, Any], Any]:
    """The training rows (built on rank 0 and cached) and the loss."""
    # Rank 0 first: it builds (and caches) the rows; the others then read the cache.
    with run.args.main_process_first(local=False, desc="st-debias: building training rows"):
        if run.user_rows is not None:
            rows, data_report = user_rows(
                run.recipe, run.user_rows, run.rows_wanted, data_dir=run.data_dir, cache_dir=run.cache,
                source=portable_path(run.rows_source),
            )
        else:
            rows, data_report = build_rows(
                run.recipe, run.sentences, run.model, cache_dir=run.cache, show_progress_bar=run.show_progress_bar,
                max_rows=run.rows_wanted, data_dir=run.data_dir, num_proc=run.num_proc,
                mix_sentences=run.mix_sentences,
            )
    check_rows_fill_a_batch(run.recipe, rows, data_report, len(run.sentences), processes=run.args.world_size)
    if run.main_process and len(rows) < run.rows_wanted:
        _warn_repeated_rows(run, len(rows))
    loss, rows = build_loss(
        run.recipe.loss, run.model, rows, guide=_guide(run), show_progress_bar=run.show_progress_bar,
        extensions=run.extensions,
    )
    return rows, data_report, loss


def _warn_repeated_rows(run: _Run, rows: int) -> None:
    """Say when the rows are fewer than the budget consumes: training then repeats each about this many times."""
    training = run.recipe.training
    more = (
        f"more rows in {run.rows_source}" if run.rows_source
        else f"more corpus sentences (--sentences, a larger --corpus; {len(run.sentences):,} were read)"
    )
    message = (
        f"The rows are {rows:,} of the {run.rows_wanted:,} that {training.steps} steps of {training.batch_size} rows "
        f"consume: training goes over them about {run.rows_wanted / rows:.1f} times. For distinct rows, give {more} "
        "or fewer --steps."
    )
    logger.warning(message)


def _guide(run: _Run) -> SentenceTransformer | None:
    """The frozen guide model of InstanceWeightedMNRL (``loss.guide``), at the training length; None without one."""
    guide_name = run.recipe.loss.guide
    if guide_name is None:
        return None
    guide = copy.deepcopy(run.model) if guide_name == "start" else load_start_model(guide_name)
    guide.max_seq_length = run.model.max_seq_length
    guide.requires_grad_(False)
    guide.eval()
    return guide


def _load_probe_items(run: _Run) -> None:
    """Load (or build, with spaCy, and cache) the negation-meaning probe's items before training: a start model whose
    evaluation is reused reads none of them, and a machine that cannot build them must fail before the long work,
    not in the evaluation after it."""
    from st_debias.evaluation.bias_data import load_negation_meaning_items

    load_negation_meaning_items(run.data_dir)


def _evaluate(run: _Run, label: str) -> dict[str, Any]:
    """Evaluate ``run.model`` at its own ``max_seq_length`` (the evaluation suite's), not the training length."""
    from st_debias.evaluation import evaluate_or_reuse

    return evaluate_or_reuse(
        run.model, run.eval_tasks, run.data_dir, label=label, cache_dir=run.cache,
        show_progress_bar=run.show_progress_bar, sts_tasks=run.sts_tasks,
    )


def _train(
    run: _Run, rows: Any, loss: Any, gradient_share_every: int, start_as_candidate: bool, extra_callbacks: Sequence[Any] = ()
):
    """Train with STS-B dev checkpoints (rank 0 scores the start model first, as checkpoint 0); return the trainer."""
    from sentence_transformers import SentenceTransformerTrainer

    from st_debias.evaluation import sts_dev_evaluator
    from st_debias.recipes.callbacks import (
        CheckpointOwner,
        FindBestCheckpoint,
        GradientShareCallback,
        ResumedLearningRate,
    )

    from .stopping import SaveAndStopOnSignal, StopOnNonFinite, TrainingInterrupted

    training, checkpoints = run.recipe.training, run.output_dir / "checkpoints"
    run.dev_evaluator = sts_dev_evaluator(run.data_dir)
    if start_as_candidate and run.main_process:
        # The start model competes with the checkpoints: its dev score at the training length (as theirs) and a
        # CPU copy of its weights to restore if it wins.
        announce(
            f"Scoring the start model on STS-B dev ({len(run.dev_evaluator.sentences1):,} pairs, up to "
            f"{training.max_seq_length} tokens) as checkpoint 0 of the selection…",
            run.show_progress_bar,
        )
        run.start = StartCandidate.score(run.model, run.dev_evaluator)
    stop_on_signal = SaveAndStopOnSignal()
    callbacks = [
        stop_on_signal, StopOnNonFinite(loss, checkpoints), FindBestCheckpoint(checkpoints, run.checkpoint),
        CheckpointOwner(run.run_id), ResumedLearningRate(),
    ]
    callbacks.extend(callback for extension in run.extensions for callback in extension.callbacks())
    if gradient_share_every:
        callbacks.append(GradientShareCallback(loss, every=gradient_share_every))
    callbacks.extend(extra_callbacks)
    trainer = SentenceTransformerTrainer(
        model=run.model, args=run.args, train_dataset=rows, loss=loss, evaluator=run.dev_evaluator,
        callbacks=callbacks,
    )
    if run.main_process:
        announce(
            f"Training: {training.steps} steps of {training.batch_size} rows ({', '.join(rows.column_names)}; up to "
            f"{training.max_seq_length} tokens) from {len(rows)} rows, STS-B dev every {training.eval_steps} steps "
            f"to keep the {training.keep} checkpoint ({torch_threads()}) -> {run.output_dir}…",
            run.show_progress_bar,
        )
    with stop_on_signal:
        try:
            trainer.train(resume_from_checkpoint=run.checkpoint)
        except Exception as error:  # a full disk while saving a checkpoint: say where, and how much
            full = no_space_error(error, checkpoints, 3 * _state_bytes(run.model))
            if full is None:
                raise
            raise full from error
    step = trainer.state.global_step
    if stop_on_signal.received is not None:
        saved = checkpoints / f"checkpoint-{step}"
        raise TrainingInterrupted(stop_on_signal.received, step, str(saved) if saved.is_dir() else None)
    if step == 0:
        raise ValueError(
            f"Training ran 0 steps: the no-duplicates batch sampler formed no batch of {training.batch_size} rows from "
            f"the {len(rows)} rows (a batch never holds the same text twice, so rows that share texts cannot fill "
            "one). Give rows with more distinct texts (more corpus sentences, or fewer repeated texts in --rows) or "
            "a smaller --batch-size; no model was saved."
        )
    return trainer


def _publish(run: _Run, trainer: Any, before: dict[str, Any] | None, data_report: dict[str, Any]) -> TrainResult:
    """Keep the selected weights, save them with their model card, write the reports and evaluate after training."""
    from st_debias.evaluation import compare_table, write_report, write_results

    recipe, model = run.recipe, run.model
    card = model.model_card_data
    card.add_tags(["st-debias", f"st-debias-recipe-{recipe.name}"])
    card.model_name = f"{run.start_label} fine-tuned with the st_debias '{recipe.name}' recipe (v{recipe.version})"
    selection = select_weights(
        trainer.state, model, run.start, run.dev_evaluator, keep=recipe.training.keep,
        checkpoints_dir=run.output_dir / "checkpoints",
    )
    best_checkpoint = selection["kept"]
    trained_label = f"{recipe.name} (trained)"
    if best_checkpoint == "start":
        card.model_name = f"{run.start_label} (start weights kept: no '{recipe.name}' checkpoint beat them on STS-B dev)"
        trained_label = f"{recipe.name} (start weights kept)"
    model_dir = run.output_dir / "model"
    _save_model(model, recipe, model_dir)
    atomic_write_json(run.output_dir / "data_report.json", data_report)
    atomic_write_json(run.output_dir / "selection.json", selection)

    after = table = None
    if run.evaluate:
        after = _evaluate(run, trained_label)
        after["recipe"] = recipe.to_dict()
        after["best_checkpoint"] = best_checkpoint
        after["selection"] = selection
        write_results([before, after], run.output_dir / "eval")
        write_report([before, after], run.output_dir / "eval")
        table = compare_table([before, after])
    return TrainResult(
        output_dir=run.output_dir,
        model_dir=model_dir,
        before=before,
        after=after,
        table=table,
        data_report=data_report,
        best_checkpoint=best_checkpoint,
        log_history=list(trainer.state.log_history),
        selection=selection,
    )


def _state_bytes(model: Any) -> int:
    """Bytes of the model's weights: what saving it needs (a checkpoint needs about 3x: weights, Adam's moments)."""
    return sum(tensor.numel() * tensor.element_size() for tensor in model.state_dict().values())


# Embedded before a model is saved: a model with non-finite weights is never published.
_SAVE_CHECK_SENTENCES = ("A man is playing a guitar.", "The weather is not cold today.")


def _save_model(model: Any, recipe: Recipe, model_dir: Path) -> None:
    """Save into a staging folder, then swap it in: a crash leaves the previous model (or none), never half of one."""
    from st_debias.evaluation.embeddings import EmbeddingCache

    EmbeddingCache(model).prefetch(_SAVE_CHECK_SENTENCES)  # refuses a model with non-finite embeddings
    try:
        with staged_folder(model_dir) as staging:
            model.save_pretrained(str(staging))
            atomic_write_text(staging / "st_debias_recipe.yaml", yaml.safe_dump(recipe.to_dict(), sort_keys=False))
    except Exception as error:
        full = no_space_error(error, model_dir, _state_bytes(model))
        if full is None:
            raise
        raise full from error
