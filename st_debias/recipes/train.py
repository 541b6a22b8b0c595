"""Run a recipe end to end: build (cached) rows, train with SentenceTransformerTrainer, evaluate before/after."""

from __future__ import annotations

import copy
import json
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from st_debias.paths import load_model

from .config import Recipe
from .data import build_rows, cache_root, read_corpus
from .losses import build_loss

logger = logging.getLogger(__name__)
BEST_METRIC = "eval_sts-dev_spearman_cosine"


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


def load_start_model(name_or_path: str | os.PathLike[str] | None):
    """Load the model to fine-tune: a hub id, a local folder (checked), or the packaged default."""
    return load_model(name_or_path)


def evaluate_cached(model: Any, tasks: tuple[str, ...], data_dir: str | None, label: str, cache_dir: Path | None) -> dict:
    """``evaluate_model``, memoised on disk by the model's weight fingerprint (the start model is evaluated once)."""
    from st_debias.evaluation import evaluate_model, model_fingerprint

    key = f"{model_fingerprint(model)}-{'-'.join(tasks)}"
    path = (cache_dir or cache_root()) / "eval" / f"{key}.json"
    if path.exists():
        result = json.loads(path.read_text())
    else:
        result = evaluate_model(model, tasks=tasks, data_dir=data_dir, label=label)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(result, default=str))
    result["model"] = label
    return result


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
    cache_dir: str | os.PathLike[str] | None = None,
    show_progress_bar: bool = True,
    gradient_share_every: int = 0,
) -> TrainResult:
    """Train ``recipe`` from ``model`` on ``corpus`` and return the saved model's folder and before/after scores.

    Args:
        recipe: a loaded recipe (:func:`st_debias.recipes.load_recipe`), training fields already overridden.
        model: start model (hub id or folder); default: all-MiniLM-L6-v2 (packaged copy offline).
        corpus: a text file with one sentence per line; default ``$ST_DEBIAS_DATA/corpus/wiki_sentences.txt``.
        output_dir: run folder: ``checkpoints/``, ``model/`` (best checkpoint, with model card), ``eval/``.
        data_dir: data folder for evaluation (default ``$ST_DEBIAS_DATA``).
        resume_from_checkpoint: True (latest in ``output_dir/checkpoints``) or a checkpoint path.
        evaluate: run the STS suite and bias probes before and after training.
        eval_tasks: evaluation groups (``sts``, ``bias``, ``mteb``).
        cache_dir: where built rows and evaluations are cached (default ``$ST_DEBIAS_CACHE`` or ~/.cache/st_debias).
        show_progress_bar: tqdm bars while building, training and evaluating.
        gradient_share_every: log each loss part's share of the gradient norm every this many steps
            (:class:`~st_debias.recipes.callbacks.GradientShareCallback`; 0 = off).
    """
    from sentence_transformers import SentenceTransformerTrainer, SentenceTransformerTrainingArguments
    from sentence_transformers.base.sampler import BatchSamplers

    from st_debias.evaluation import compare_table, sts_dev_evaluator, write_report, write_results
    from st_debias.recipes.callbacks import GradientShareCallback

    training = recipe.training
    output_dir = Path(output_dir)
    cache = Path(cache_dir) if cache_dir else None
    start_model = load_start_model(model)
    inference_length = start_model.max_seq_length  # evaluation and the saved model keep the model's own length
    start_label = str(model or "all-MiniLM-L6-v2")
    # The negation builder skips sentences with no negation or no paraphrase: read more than the rows needed.
    oversample = {"negation": 3, "minimal_pairs": 2}.get(recipe.data.kind, 1)
    sentences = read_corpus(corpus, training.sentences or oversample * training.steps * training.batch_size)

    before = evaluate_cached(start_model, tuple(eval_tasks), data_dir, f"{start_label} (start)", cache) if evaluate else None

    start_model.max_seq_length = training.max_seq_length
    rows, data_report = build_rows(recipe, sentences, start_model, cache_dir=cache, show_progress_bar=show_progress_bar)
    guide = None
    if recipe.loss.guide is not None:
        guide = copy.deepcopy(start_model) if recipe.loss.guide == "start" else load_start_model(recipe.loss.guide)
        guide.max_seq_length = training.max_seq_length
        guide.requires_grad_(False)
        guide.eval()
    loss, rows = build_loss(recipe, start_model, rows, guide=guide, show_progress_bar=show_progress_bar)

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
        report_to="none",
        disable_tqdm=not show_progress_bar,
        dataloader_drop_last=True,
    )
    trainer = SentenceTransformerTrainer(
        model=start_model,
        args=args,
        train_dataset=rows,
        loss=loss,
        evaluator=sts_dev_evaluator(data_dir),
        callbacks=[GradientShareCallback(loss, every=gradient_share_every)] if gradient_share_every else None,
    )
    trainer.train(resume_from_checkpoint=resume_from_checkpoint or None)

    start_model.max_seq_length = inference_length
    model_dir = output_dir / "model"
    card = start_model.model_card_data
    card.add_tags(["st-debias", f"st-debias-recipe-{recipe.name}"])
    card.model_name = f"{start_label} fine-tuned with the st_debias '{recipe.name}' recipe (v{recipe.version})"
    start_model.save_pretrained(str(model_dir))
    (model_dir / "st_debias_recipe.yaml").write_text(yaml.safe_dump(recipe.to_dict(), sort_keys=False))
    (output_dir / "data_report.json").parent.mkdir(parents=True, exist_ok=True)
    (output_dir / "data_report.json").write_text(json.dumps(data_report, indent=2, default=str))

    after = table = None
    if evaluate:
        after = evaluate_cached(start_model, tuple(eval_tasks), data_dir, f"{recipe.name} (trained)", cache)
        after["recipe"] = recipe.to_dict()
        after["best_checkpoint"] = trainer.state.best_model_checkpoint
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
        best_checkpoint=trainer.state.best_model_checkpoint,
        log_history=list(trainer.state.log_history),
    )
