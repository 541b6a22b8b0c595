"""Best-checkpoint selection counts the start model as checkpoint 0: a run that only made the model worse on
STS-B dev saves the start model's weights, says so, and records the scores it compared."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch
from sentence_transformers import SentenceTransformer
from sentence_transformers.base.evaluation import SentenceEvaluator

import st_debias.evaluation
from st_debias.recipes import load_recipe, override, train_recipe


class ScriptedDevEvaluator(SentenceEvaluator):
    """Stands in for the STS-B dev evaluator: returns the given scores in order, one per call, records the
    sequence length it was called at and fills the model card as the real one does."""

    def __init__(self, scores: list[float]) -> None:
        super().__init__()
        self.scores = list(scores)
        self.calls = 0
        self.lengths: list[int] = []
        self.sentences1 = ["a"] * 3
        self.primary_metric = "sts-dev_spearman_cosine"

    def __call__(self, model, output_path=None, epoch: int = -1, steps: int = -1) -> dict[str, float]:
        score = self.scores[min(self.calls, len(self.scores) - 1)]
        self.calls += 1
        self.lengths.append(model.max_seq_length)
        metrics = {"sts-dev_spearman_cosine": score}
        self.store_metrics_in_model_card_data(model, metrics, epoch, steps)
        return metrics


def _weights(model: SentenceTransformer) -> dict[str, torch.Tensor]:
    return {name: tensor.detach().clone() for name, tensor in model.state_dict().items()}


def _train(tiny_bert_dir: Path, tmp_path: Path, monkeypatch, scores: list[float], keep: str = "best", **kwargs):
    evaluator = ScriptedDevEvaluator(scores)
    monkeypatch.setattr(st_debias.evaluation, "sts_dev_evaluator", lambda data_dir=None: evaluator)
    # A learning rate this high moves the weights visibly in 4 steps, so "kept the start" shows in them.
    recipe = override(load_recipe("simcse"), steps=4, batch_size=8, eval_steps=2, max_seq_length=16,
                      learning_rate=1e-2, keep=keep)
    result = train_recipe(recipe, model=tiny_bert_dir, output_dir=tmp_path / "run", evaluate=False,
                          cache_dir=tmp_path / "cache", show_progress_bar=False, **kwargs)
    return result, evaluator


@pytest.fixture
def start_weights(tiny_bert_dir: Path) -> dict[str, torch.Tensor]:
    return _weights(SentenceTransformer(str(tiny_bert_dir)))


def _same(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[name], b[name]) for name in a)


def test_start_model_is_kept_when_no_checkpoint_beats_it(
    tiny_bert_dir: Path, tmp_path: Path, monkeypatch, start_weights, caplog
) -> None:
    result, evaluator = _train(tiny_bert_dir, tmp_path, monkeypatch, scores=[0.80, 0.50, 0.60])
    assert evaluator.calls == 3, "the start model and the two checkpoints (steps 2 and 4) are scored"
    assert evaluator.lengths == [16, 16, 16], "the start is scored at the training length, as the checkpoints"
    assert result.best_checkpoint == "start"
    assert result.selection == {
        "metric": "eval_sts-dev_spearman_cosine",
        "keep": "best",
        "best_checkpoint": str(tmp_path / "run" / "checkpoints" / "checkpoint-4"),
        "best_checkpoint_score": 0.60,
        "start_score": 0.80,
        "kept": "start",
    }
    assert _same(_weights(SentenceTransformer(str(result.model_dir))), start_weights)
    assert "No checkpoint beat the start model on STS-B dev (start 0.8000, best checkpoint 0.6000" in caplog.text
    assert caplog.text.count("No checkpoint beat the start model") == 1
    card = (result.model_dir / "README.md").read_text()
    assert "start weights kept" in card
    assert "| **0** | **0** |" in card, "the card's training log bolds step 0, the weights saved"
    assert json.loads((tmp_path / "run" / "selection.json").read_text()) == result.selection


@pytest.mark.parametrize(
    ("scores", "held"),
    [([0.5, 0.5, 0.5], 0.5), ([0.8, math.nan, math.nan], None)],
    ids=["tie", "nan"],
)
def test_a_tie_or_a_nan_keeps_the_start_model(
    tiny_bert_dir: Path, tmp_path: Path, monkeypatch, start_weights, scores: list[float], held: float | None
) -> None:
    result, _ = _train(tiny_bert_dir, tmp_path, monkeypatch, scores=scores)
    assert result.best_checkpoint == "start"
    assert result.selection["best_checkpoint_score"] == held
    assert _same(_weights(SentenceTransformer(str(result.model_dir))), start_weights)


def test_a_checkpoint_that_beats_the_start_model_is_kept(
    tiny_bert_dir: Path, tmp_path: Path, monkeypatch, start_weights, caplog
) -> None:
    result, _ = _train(tiny_bert_dir, tmp_path, monkeypatch, scores=[0.40, 0.50, 0.45])
    checkpoint = str(tmp_path / "run" / "checkpoints" / "checkpoint-2")
    assert result.best_checkpoint == checkpoint
    assert result.selection["kept"] == checkpoint and result.selection["start_score"] == 0.40
    saved = _weights(SentenceTransformer(str(result.model_dir)))
    assert not _same(saved, start_weights)
    assert _same(saved, _weights(SentenceTransformer(checkpoint)))
    assert "No checkpoint beat the start model" not in caplog.text


def test_start_candidate_can_be_switched_off(tiny_bert_dir: Path, tmp_path: Path, monkeypatch, start_weights) -> None:
    result, evaluator = _train(tiny_bert_dir, tmp_path, monkeypatch, scores=[0.50, 0.60], start_as_candidate=False)
    assert evaluator.calls == 2, "only the checkpoints are scored"
    assert result.best_checkpoint == str(tmp_path / "run" / "checkpoints" / "checkpoint-4")
    assert "start_score" not in result.selection
    assert not _same(_weights(SentenceTransformer(str(result.model_dir))), start_weights)


def test_keep_last_saves_the_final_weights_over_a_better_mid_run_checkpoint(
    tiny_bert_dir: Path, tmp_path: Path, monkeypatch, start_weights, caplog
) -> None:
    """``training.keep: last``: a checkpoint that peaked mid-run on STS-B dev is recorded, not saved."""
    result, evaluator = _train(tiny_bert_dir, tmp_path, monkeypatch, scores=[0.40, 0.60, 0.50], keep="last")
    checkpoints = tmp_path / "run" / "checkpoints"
    assert evaluator.calls == 3
    assert result.best_checkpoint == str(checkpoints / "checkpoint-4")
    assert result.selection == {
        "metric": "eval_sts-dev_spearman_cosine",
        "keep": "last",
        "best_checkpoint": str(checkpoints / "checkpoint-2"),
        "best_checkpoint_score": 0.60,
        "last_checkpoint": str(checkpoints / "checkpoint-4"),
        "last_checkpoint_score": 0.50,
        "kept": str(checkpoints / "checkpoint-4"),
        "start_score": 0.40,
    }
    saved = _weights(SentenceTransformer(str(result.model_dir)))
    assert _same(saved, _weights(SentenceTransformer(str(checkpoints / "checkpoint-4"))))
    assert not _same(saved, _weights(SentenceTransformer(str(checkpoints / "checkpoint-2"))))
    assert "| **4** |" in (result.model_dir / "README.md").read_text(), "the card bolds the step saved"
    assert "beat the start model" not in caplog.text


def test_keep_last_still_falls_back_to_the_start_model(
    tiny_bert_dir: Path, tmp_path: Path, monkeypatch, start_weights, caplog
) -> None:
    result, _ = _train(tiny_bert_dir, tmp_path, monkeypatch, scores=[0.55, 0.60, 0.50], keep="last")
    assert result.best_checkpoint == "start"
    assert result.selection["last_checkpoint_score"] == 0.50 and result.selection["best_checkpoint_score"] == 0.60
    assert _same(_weights(SentenceTransformer(str(result.model_dir))), start_weights)
    assert "The last checkpoint did not beat the start model on STS-B dev (start 0.5500, last checkpoint 0.5000" in (
        caplog.text
    )


def test_cli_keep_last(tiny_bert_dir: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    from st_debias.cli import main

    monkeypatch.setattr(st_debias.evaluation, "sts_dev_evaluator",
                        lambda data_dir=None: ScriptedDevEvaluator([0.9, 0.95, 0.1]))
    args = ["train", "--recipe", "simcse", "--model", str(tiny_bert_dir), "--steps", "4", "--eval-steps", "2",
            "--batch-size", "8", "--max-seq-length", "16", "--cache-dir", str(tmp_path / "cache"), "--no-eval"]
    assert main([*args, "--output", str(tmp_path / "run"), "--keep", "last"]) == 0
    assert "(the start model's weights: the last checkpoint did not beat its STS-B dev score 0.9000; the last " \
        "reached 0.1000)" in capsys.readouterr().out
    with pytest.raises(SystemExit) as refused:
        main([*args, "--output", str(tmp_path / "other"), "--keep", "final"])
    assert refused.value.code == 2 and "--keep: invalid choice: 'final'" in capsys.readouterr().err
    assert not (tmp_path / "other").exists()


def test_cli_says_the_start_model_was_saved(tiny_bert_dir: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    from st_debias.cli import main

    monkeypatch.setattr(st_debias.evaluation, "sts_dev_evaluator", lambda data_dir=None: ScriptedDevEvaluator([0.9, 0.1]))
    code = main([
        "train", "--recipe", "simcse", "--model", str(tiny_bert_dir), "--steps", "2", "--batch-size", "8",
        "--max-seq-length", "16", "--output", str(tmp_path / "run"), "--cache-dir", str(tmp_path / "cache"), "--no-eval",
    ])
    assert code == 0
    assert "(the start model's weights: no checkpoint beat its STS-B dev score 0.9000; the best reached 0.1000)" in (
        capsys.readouterr().out
    )


def test_the_trained_score_is_that_of_the_weights_held() -> None:
    """A resumed run whose best checkpoint was deleted holds the last weights: compare the start with their score."""
    from transformers import TrainerState

    from st_debias.recipes.selection import BEST_METRIC, held_dev_score

    history = [{BEST_METRIC: 0.7}, {"loss": 1.0}, {BEST_METRIC: 0.5}]
    assert held_dev_score(TrainerState(best_model_checkpoint="run/checkpoint-2", best_metric=0.7,
                                        log_history=history)) == 0.7
    assert held_dev_score(TrainerState(best_model_checkpoint=None, best_metric=0.7, log_history=history)) == 0.5
    assert held_dev_score(TrainerState(log_history=[{"loss": 1.0}])) is None
    assert held_dev_score(TrainerState(best_model_checkpoint="run/checkpoint-2", best_metric=0.7,
                                        log_history=history), keep="last") == 0.5
