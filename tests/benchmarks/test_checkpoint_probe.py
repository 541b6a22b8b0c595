"""``select_dev.py --probe-every-eval``, ``--constant-lr`` and ``--keep-weights``: the probe lands in the log history
at the model's own length, the rate stays at its peak after the warmup, and every checkpoint's weights outlive the
trainer's rotation."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.selection import dev_probes
from benchmarks.selection.checkpoint_probe import ConstantRate, KeepWeights, ProbeAtEval


def _rates(model, output_dir: Path, callbacks: list, **saving) -> list[float]:
    from datasets import Dataset
    from sentence_transformers import SentenceTransformerTrainer, SentenceTransformerTrainingArguments
    from sentence_transformers.losses import MultipleNegativesRankingLoss

    rows = Dataset.from_dict({
        "anchor": ["the cat sat on the mat", "stocks fell sharply today"],
        "positive": ["the mat had a cat on it", "shares dropped steeply"],
    })
    args = SentenceTransformerTrainingArguments(
        output_dir=str(output_dir), max_steps=6, per_device_train_batch_size=2, learning_rate=1e-3, warmup_steps=2,
        lr_scheduler_type="linear", logging_steps=1, report_to="none", disable_tqdm=True,
        **(saving or {"save_strategy": "no"}),
    )
    trainer = SentenceTransformerTrainer(
        model=model, args=args, train_dataset=rows, loss=MultipleNegativesRankingLoss(model), callbacks=callbacks
    )
    trainer.train()
    return [entry["learning_rate"] for entry in trainer.state.log_history if "learning_rate" in entry]


def test_constant_rate_holds_the_peak_after_the_warmup_where_the_default_decays(tiny_model, tmp_path: Path) -> None:
    decaying = _rates(tiny_model, tmp_path / "linear", [])
    constant = _rates(tiny_model, tmp_path / "constant", [ConstantRate()])
    assert decaying[0] == constant[0] < 1e-3  # the same warmup
    assert constant[2:] == [pytest.approx(1e-3)] * 4
    assert decaying[2:] == sorted(decaying[2:], reverse=True) and decaying[-1] < 0.5e-3
    assert repr(ConstantRate()) == "ConstantRate()"


def test_probe_at_eval_scores_at_the_given_length_and_logs_under_the_step(tiny_model, monkeypatch, capsys) -> None:
    from transformers import TrainerState

    lengths = []

    def meaning(cache):
        lengths.append(cache.model.max_seq_length)
        return {"nm_over_affirmative": 0.5, "nm_over_negated_antonym": 0.25, "nm_polarity_cluster": 0.01}

    monkeypatch.setattr(dev_probes, "negation_meaning_scores", meaning)
    monkeypatch.setattr(dev_probes, "word_order_scores", lambda cache: {"word_order_cos": 0.9})
    tiny_model.max_seq_length = 16  # the training length
    state = TrainerState()
    state.global_step = 25
    ProbeAtEval(length=64).on_evaluate(None, state, None, model=tiny_model)
    assert lengths == [64] and tiny_model.max_seq_length == 16
    assert state.log_history == [{
        "step": 25, "probe/nm_over_affirmative": 0.5, "probe/nm_over_negated_antonym": 0.25,
        "probe/nm_polarity_cluster": 0.01, "probe/word_order_cos": 0.9,
    }]
    assert "[probe] step 25: (i) 0.500" in capsys.readouterr().out

    monkeypatch.setattr(dev_probes, "word_order_scores", lambda cache: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        ProbeAtEval(length=64).on_evaluate(None, state, None, model=tiny_model)
    assert tiny_model.max_seq_length == 16, "the training length comes back when scoring fails"
    assert len(state.log_history) == 1
    assert repr(ProbeAtEval(64)) == "ProbeAtEval(length=64)"


def test_keep_weights_links_every_checkpoints_model_past_the_rotation(tiny_model, tmp_path: Path) -> None:
    from safetensors.torch import load_file

    _rates(tiny_model, tmp_path / "checkpoints", [KeepWeights()], save_strategy="steps", save_steps=2, save_total_limit=1)
    assert [path.name for path in (tmp_path / "checkpoints").iterdir()] == ["checkpoint-6"]  # rotated
    kept = sorted((tmp_path / "weights").iterdir())
    assert [path.name for path in kept] == ["checkpoint-2", "checkpoint-4", "checkpoint-6"]
    for folder in kept:
        assert (folder / "model.safetensors").is_file() and (folder / "modules.json").is_file()
        assert not list(folder.glob("optimizer.pt")) and not list(folder.glob("rng_state*"))
    first, last = (load_file(folder / "model.safetensors") for folder in (kept[0], kept[-1]))
    assert any(not first[name].equal(last[name]) for name in first), "each step's own weights"
    assert (kept[-1] / "model.safetensors").stat().st_ino == (
        tmp_path / "checkpoints" / "checkpoint-6" / "model.safetensors"
    ).stat().st_ino, "linked, not copied"
    assert repr(KeepWeights()) == "KeepWeights()"


def _checkpoint(folder: Path, complete: bool = True) -> Path:
    folder.mkdir(parents=True)
    (folder / "model.safetensors").write_text(folder.name)
    (folder / "optimizer.pt").write_text("state")
    if complete:
        (folder / "trainer_state.json").write_text("{}")
    return folder


def test_keep_weights_starts_clean_and_links_what_an_interruption_left_unlinked(tmp_path: Path) -> None:
    from types import SimpleNamespace

    args = SimpleNamespace(output_dir=str(tmp_path / "checkpoints"))
    weights = tmp_path / "weights"
    _checkpoint(weights / "checkpoint-99")  # an earlier run's
    KeepWeights().on_train_begin(args, None, None)
    assert not weights.exists(), "a fresh run drops an earlier run's weights"

    _checkpoint(tmp_path / "checkpoints" / "checkpoint-25")  # the run resumes from here, its link cut short
    _checkpoint(weights / "checkpoint-25.partial", complete=False)
    KeepWeights().on_train_begin(args, None, None)
    _checkpoint(tmp_path / "checkpoints" / "checkpoint-50")
    _checkpoint(tmp_path / "checkpoints" / "checkpoint-75", complete=False)  # still being written
    KeepWeights().on_save(args, None, None)
    assert sorted(path.name for path in weights.iterdir()) == ["checkpoint-25", "checkpoint-50"]
    assert (weights / "checkpoint-25" / "model.safetensors").read_text() == "checkpoint-25"
    assert not (weights / "checkpoint-50" / "optimizer.pt").exists()
