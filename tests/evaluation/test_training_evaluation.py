"""The evaluation a training run does before and after: the STS sets it is told to score, labelled as a subset."""

from __future__ import annotations

from pathlib import Path

import pytest

from st_debias.recipes import load_recipe, override, train_recipe


def test_training_scores_only_the_sts_sets_asked_for(tiny_bert_dir: Path, mini_data: Path, tmp_path: Path) -> None:
    """A large model on a CPU is scored on STS-B test alone; neither entry may pass for an STS-7 evaluation."""
    recipe = override(load_recipe("simcse"), steps=2, batch_size=8, eval_steps=2, max_seq_length=16)
    result = train_recipe(
        recipe, model=tiny_bert_dir, corpus=mini_data / "corpus" / "wiki_sentences.txt", output_dir=tmp_path / "run",
        data_dir=str(mini_data), sts_tasks=("STSBenchmark",), cache_dir=tmp_path / "cache", show_progress_bar=False,
    )
    for entry in (result.before, result.after):
        assert entry["evaluation"] == {"sts_tasks": ["STSBenchmark"], "full": False}
        assert set(entry["sts"]) == {"STSBenchmark", "avg"}
        assert {"cont_oppn", "negation", "word_order"} <= set(entry["bias"])
        assert set(entry["bias"]["cont_oppn"]) == {"STSBenchmark"}
    assert "STS-7" not in result.table


def test_probe_items_that_cannot_be_built_stop_the_run_before_training(tiny_bert_dir: Path, mini_data: Path,
                                                                      tmp_path: Path, monkeypatch) -> None:
    """A start model whose evaluation is reused reads none of the probes' items; the items the final evaluation needs
    (built with spaCy, once) are loaded before training, so a machine without spaCy fails before the long work."""
    import st_debias.evaluation.bias_data as bias_data
    import st_debias.recipes.train as train

    def unbuildable(*args, **kwargs):
        raise ModuleNotFoundError("No module named 'spacy'")

    trained: list[bool] = []
    monkeypatch.setattr(bias_data, "load_negation_meaning_items", unbuildable)
    monkeypatch.setattr(train, "_evaluate", lambda run, label: {"model": label, "reused_from": {"kind": "packaged"}})
    monkeypatch.setattr(train, "_train", lambda *args, **kwargs: trained.append(True))
    recipe = override(load_recipe("simcse"), steps=2, batch_size=8, eval_steps=2, max_seq_length=16)
    with pytest.raises(ModuleNotFoundError, match="spacy"):
        train_recipe(recipe, model=tiny_bert_dir, corpus=mini_data / "corpus" / "wiki_sentences.txt",
                     output_dir=tmp_path / "run", data_dir=str(mini_data), cache_dir=tmp_path / "cache",
                     show_progress_bar=False)
    assert not trained
