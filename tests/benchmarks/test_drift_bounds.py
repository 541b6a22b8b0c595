"""``select_dev.py --lora-rank``: only low-rank updates to the attention's query and value train, merged into a plain
model when training ends. (``--decay-to-start`` is the lab's recipe setting ``training.decay_to_start``: test_recipe_knobs.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from benchmarks.selection.low_rank import LowRankAdapters
from tests.conftest import train_tiny


def test_low_rank_adapters_change_query_and_value_by_rank_r_and_leave_a_plain_model(tiny_model, tmp_path: Path) -> None:
    start = {n: p.detach().clone() for n, p in tiny_model.state_dict().items()}
    train_tiny(tiny_model, tmp_path, [LowRankAdapters(rank=2)])
    trained = tiny_model.state_dict()
    assert type(tiny_model[0].auto_model).__name__ == "BertModel", "adapters merged and removed"
    assert trained.keys() == start.keys()
    changed = {n for n in start if not torch.equal(trained[n], start[n])}
    adapted = {n for n in start if n.endswith(("query.weight", "value.weight"))}
    assert changed == adapted and len(adapted) == 4  # two layers, query and value
    for name in adapted:
        assert torch.linalg.matrix_rank((trained[name] - start[name]).double(), rtol=1e-5).item() <= 2


def test_low_rank_adapters_refuse_a_best_checkpoint_and_a_rank_below_one(tiny_model, tmp_path: Path) -> None:
    from sentence_transformers import SentenceTransformerTrainingArguments

    args = SentenceTransformerTrainingArguments(
        output_dir=str(tmp_path), load_best_model_at_end=True, eval_strategy="steps", save_strategy="steps",
        report_to="none",
    )
    with pytest.raises(ValueError, match="training.keep: last"):
        LowRankAdapters(rank=2).on_init_end(args, None, None, model=tiny_model)
    assert type(tiny_model[0].auto_model).__name__ == "BertModel", "refused before any adapter was added"
    with pytest.raises(ValueError, match="must be >= 1"):
        LowRankAdapters(0)
    assert repr(LowRankAdapters(8)) == "LowRankAdapters(rank=8, alpha=16, targets=['query', 'value'])"
