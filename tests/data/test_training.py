"""Builder output trains through SentenceTransformerTrainer with sentence-transformers' own losses."""

from __future__ import annotations

import torch

from st_debias.data.ipw.builder import IPWBuilder
from st_debias.data.negation.builder import OssCSEBuilder
from st_debias.data.paraphrase.edits import WordDeletion


def _train(model, dataset, loss, tmp_path) -> float:
    from sentence_transformers.sentence_transformer import (
        SentenceTransformerTrainer,
        SentenceTransformerTrainingArguments,
    )

    before = [p.detach().clone() for p in model.parameters()]
    args = SentenceTransformerTrainingArguments(
        output_dir=str(tmp_path), per_device_train_batch_size=8, max_steps=2, learning_rate=1e-3,
        report_to=[], save_strategy="no", logging_steps=1, use_cpu=True, seed=0,
    )
    trainer = SentenceTransformerTrainer(model=model, args=args, train_dataset=dataset, loss=loss)
    trainer.train()
    change = sum((p.detach() - b).abs().sum().item() for p, b in zip(model.parameters(), before))
    return change


def test_ipw_rows_train_with_mnrl(tiny_model, cache_dir, wiki, tmp_path):
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss

    builder = IPWBuilder(tiny_model, positive_generators=[WordDeletion()], pool_size=16,
                         negative_range=(0.93, 0.97), cache_dir=cache_dir, show_progress_bar=False, weight=1.0)
    dataset = builder.build(wiki[:40])
    assert len(dataset) >= 16
    # MNRL takes no labels: train on the text columns; the `label` column is for weighted losses
    change = _train(tiny_model, dataset.remove_columns("label"), MultipleNegativesRankingLoss(tiny_model), tmp_path)
    assert change > 0 and torch.isfinite(torch.tensor(change))


def test_osscse_rows_train_with_triplet_loss(tiny_model, negator, wiki, tmp_path):
    from sentence_transformers.sentence_transformer.losses import TripletLoss

    dataset = OssCSEBuilder(negator, on_missing_paraphrase="anchor").build(wiki[:24])
    assert dataset.column_names == ["anchor", "paraphrase", "negation"]
    change = _train(tiny_model, dataset, TripletLoss(tiny_model, triplet_margin=0.1), tmp_path)
    assert change > 0
