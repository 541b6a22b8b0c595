"""Every loss trains a tiny model through SentenceTransformerTrainer and through legacy ``model.fit``.

Guards against a loss that computes fine on tensors but breaks in the real training loop (label column
handling, dict outputs, the model being swapped for a wrapped one, the no-duplicates sampler).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import torch
from datasets import Dataset
from sentence_transformers import SentenceTransformerTrainer, SentenceTransformerTrainingArguments
from sentence_transformers.base.sampler import BatchSamplers
from sentence_transformers.sentence_transformer.datasets import NoDuplicatesDataLoader
from sentence_transformers.sentence_transformer.readers import InputExample

from st_debias.losses import (
    DebiasInfoNCE,
    FocalInfoNCE,
    InstanceWeightedMNRL,
    MarginNegationLoss,
    RecallRegularizer,
)

ROWS = 32
BATCH = 16


def _columns(sentences: list[str], layout: str) -> dict[str, list[str]]:
    """Training columns built from real sentences (simple deterministic rewrites, enough for mechanics)."""
    anchors = sentences[:ROWS]
    shifted = sentences[ROWS : 2 * ROWS]
    if layout == "simcse":
        return {"anchor": anchors, "positive": anchors}
    if layout == "triplet":
        return {"anchor": anchors, "positive": [" ".join(s.split()[1:]) for s in anchors], "negative_1": shifted}
    if layout == "negation":
        return {
            "anchor": anchors,
            "paraphrase": [" ".join(s.split()[:-1]) + "." for s in anchors],
            "negation": ["It is not true that " + s[0].lower() + s[1:] for s in anchors],
        }
    raise ValueError(layout)


CASES: dict[str, tuple[str, Callable]] = {
    "focal": ("simcse", lambda model, guide: FocalInfoNCE(model)),
    "focal-hard-negatives": ("triplet", lambda model, guide: FocalInfoNCE(model)),
    "dclr": ("simcse", lambda model, guide: InstanceWeightedMNRL(model, guide=guide, threshold=_median_guide_cosine(guide), noise_ratio=1.0)),
    "debcse": ("triplet", lambda model, guide: DebiasInfoNCE(model)),
    "osscse": ("negation", lambda model, guide: MarginNegationLoss(model, margin_weight=1.0, return_parts=True)),
    "recall": (
        "simcse",
        lambda model, guide: RecallRegularizer(model, FocalInfoNCE(model), gamma=2e-3, return_parts=True),
    ),
}


def _median_guide_cosine(guide) -> float:
    """A threshold that masks about half of the candidates under a random guide (all of them at 0.9)."""
    from tests.conftest import first_sentences

    embeddings = guide.encode(first_sentences(BATCH), convert_to_tensor=True)
    similarity = torch.nn.functional.cosine_similarity(embeddings[:, None], embeddings[None], dim=-1)
    return float(similarity[~torch.eye(BATCH, dtype=torch.bool)].median())


def _total(output) -> torch.Tensor:
    return sum(output.values()) if isinstance(output, dict) else output


def _fixed_batch_loss(model, loss, columns: dict[str, list[str]]) -> float:
    """The loss on the first batch with a fixed dropout seed, so before/after differ only by the weights."""
    features = [model.preprocess(values[:BATCH]) for values in columns.values()]
    torch.manual_seed(123)
    model.train()
    with torch.no_grad():
        return float(_total(loss(features, None)))


@pytest.mark.parametrize("case", list(CASES))
def test_trainer_lowers_the_loss(case: str, tiny_model, tiny_bert_dir: Path, wiki_sentences, tmp_path: Path) -> None:
    """A few trainer steps with the no-duplicates sampler lower the loss on a fixed batch."""
    from tests.conftest import load_tiny_model

    layout, make_loss = CASES[case]
    columns = _columns(wiki_sentences, layout)
    loss = make_loss(tiny_model, load_tiny_model(tiny_bert_dir))
    before = _fixed_batch_loss(tiny_model, loss, columns)
    args = SentenceTransformerTrainingArguments(
        output_dir=str(tmp_path),
        per_device_train_batch_size=BATCH,
        num_train_epochs=2,
        learning_rate=5e-4,
        batch_sampler=BatchSamplers.NO_DUPLICATES,
        save_strategy="no",
        report_to="none",
        logging_steps=1,
        seed=0,
        disable_tqdm=True,
    )
    trainer = SentenceTransformerTrainer(model=tiny_model, args=args, train_dataset=Dataset.from_dict(columns), loss=loss)
    trainer.train()
    after = _fixed_batch_loss(tiny_model, loss, columns)
    assert after < before, f"{case}: loss did not go down ({before:.4f} -> {after:.4f})"
    if isinstance(loss, (MarginNegationLoss, RecallRegularizer)):
        logged = {key for entry in trainer.state.log_history for key in entry}
        expected = {"margin", "contrastive"} if isinstance(loss, MarginNegationLoss) else {"recall"}
        assert expected <= logged, f"loss parts not logged: {logged}"


@pytest.mark.parametrize("case", ["focal", "debcse", "osscse", "recall"])
def test_legacy_fit_with_input_examples(case: str, tiny_model, wiki_sentences, tmp_path: Path, monkeypatch) -> None:
    """Legacy ``model.fit`` with InputExamples and NoDuplicatesDataLoader trains and lowers the loss."""
    monkeypatch.chdir(tmp_path)
    layout, make_loss = CASES[case]
    columns = _columns(wiki_sentences, layout)
    loss = make_loss(tiny_model, None)
    before = _fixed_batch_loss(tiny_model, loss, columns)
    examples = [InputExample(texts=list(texts)) for texts in zip(*columns.values())]
    loader = NoDuplicatesDataLoader(examples, batch_size=BATCH)
    tiny_model.fit(train_objectives=[(loader, loss)], epochs=3, optimizer_params={"lr": 5e-4}, show_progress_bar=False)
    after = _fixed_batch_loss(tiny_model, loss, columns)
    assert after < before, f"{case}: loss did not go down under model.fit ({before:.4f} -> {after:.4f})"


def test_legacy_fit_reads_instance_weights(tiny_model, wiki_sentences, tmp_path: Path, monkeypatch) -> None:
    """InputExample labels reach InstanceWeightedMNRL as row weights (a zero weight must change the loss)."""
    monkeypatch.chdir(tmp_path)
    columns = _columns(wiki_sentences, "simcse")
    weights = [0.0 if i % 2 else 2.0 for i in range(ROWS)]
    loss = InstanceWeightedMNRL(tiny_model, labels="weights")
    examples = [InputExample(texts=list(t), label=w) for t, w in zip(zip(*columns.values()), weights)]
    tiny_model.fit(train_objectives=[(NoDuplicatesDataLoader(examples, batch_size=BATCH), loss)], epochs=1, show_progress_bar=False)
    features = [tiny_model.preprocess(values[:BATCH]) for values in columns.values()]
    tiny_model.eval()
    with torch.no_grad():
        weighted = loss(features, torch.tensor(weights[:BATCH]))
        unweighted = loss(features, torch.ones(BATCH))
    assert not torch.isclose(weighted, unweighted)


def test_guide_with_another_tokenizer(tiny_model, wiki_sentences, tmp_path: Path) -> None:
    """A guide whose vocabulary differs from the model's gets re-tokenized text, not foreign token ids."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Pooling, Transformer
    from transformers import BertConfig, BertModel, BertTokenizer

    from st_debias.data.text import words

    vocabulary = sorted({w for s in wiki_sentences for w in words(s)})[:3000]
    vocab_file = tmp_path / "vocab.txt"
    vocab_file.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *vocabulary]) + "\n")
    guide_dir = tmp_path / "guide"
    tokenizer = BertTokenizer(str(vocab_file))
    tokenizer.save_pretrained(str(guide_dir))
    torch.manual_seed(1)
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=64, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64)
    BertModel(config).save_pretrained(str(guide_dir))
    transformer = Transformer(str(guide_dir), max_seq_length=32)
    guide = SentenceTransformer(modules=[transformer, Pooling(64, "mean")], device="cpu")
    assert guide.tokenizer.get_vocab() != tiny_model.tokenizer.get_vocab()

    # Short sentences, so that neither tokenizer truncates (truncation would differ between them).
    texts = [s for s in wiki_sentences if len(s.split()) <= 12][:BATCH]
    guide_embeddings = guide.encode(texts, convert_to_tensor=True)
    loss = InstanceWeightedMNRL(tiny_model, guide=guide, threshold=_median_guide_cosine(guide))
    assert loss._retokenize
    tiny_model.eval()  # no dropout: the two paths below must agree exactly
    features = [tiny_model.preprocess(texts), tiny_model.preprocess(texts)]
    with torch.no_grad():
        value = loss(features, None)
        model_embeddings = tiny_model.encode(texts, convert_to_tensor=True)
        expected = loss.compute_loss_from_embeddings(
            [model_embeddings, model_embeddings], None, guide_embeddings=[guide_embeddings, guide_embeddings]
        )
        unmasked = InstanceWeightedMNRL(None).compute_loss_from_embeddings([model_embeddings, model_embeddings])
    assert torch.isclose(value, expected, atol=1e-5), (value, expected)
    assert not torch.isclose(value, unmasked, atol=1e-5), "the guide masked nothing: the check above proves nothing"


LAST_BATCH_CASES: dict[str, tuple[str, Callable]] = {
    "focal": ("simcse", lambda model: FocalInfoNCE(model)),
    "dclr": ("simcse", lambda model: InstanceWeightedMNRL(model, noise_ratio=0.0)),
    "osscse": ("negation", lambda model: MarginNegationLoss(model, return_parts=True)),
}


def _train_rows(model, loss, columns: dict[str, list[str]], rows: int, tmp_path: Path, drop_last: bool = False):
    args = SentenceTransformerTrainingArguments(
        output_dir=str(tmp_path),
        per_device_train_batch_size=4,
        num_train_epochs=1,
        save_strategy="no",
        report_to="none",
        dataloader_drop_last=drop_last,
        seed=0,
        disable_tqdm=True,
    )
    dataset = Dataset.from_dict({key: values[:rows] for key, values in columns.items()})
    return SentenceTransformerTrainer(model=model, args=args, train_dataset=dataset, loss=loss).train()


@pytest.mark.parametrize("case", list(LAST_BATCH_CASES))
def test_last_batch_of_one_row_trains_like_mnrl(case: str, tiny_model, wiki_sentences, tmp_path: Path) -> None:
    """Guards against the crash at the end of an epoch whose last batch holds one row (5 rows, batch 4:
    the trainer keeps the remainder by default), where MultipleNegativesRankingLoss trains on."""
    layout, make_loss = LAST_BATCH_CASES[case]
    output = _train_rows(tiny_model, make_loss(tiny_model), _columns(wiki_sentences, layout), 5, tmp_path)
    assert output.global_step == 2


def test_debias_last_batch_of_one_row_names_drop_last(tiny_model, wiki_sentences, tmp_path: Path) -> None:
    """Guards against an unexplained crash on a one-row last batch, where BatchNorm is undefined: the
    error names ``dataloader_drop_last``, and setting it trains."""
    columns = _columns(wiki_sentences, "triplet")
    with pytest.raises(ValueError, match="dataloader_drop_last=True"):
        _train_rows(tiny_model, DebiasInfoNCE(tiny_model), columns, 5, tmp_path)
    output = _train_rows(tiny_model, DebiasInfoNCE(tiny_model), columns, 5, tmp_path, drop_last=True)
    assert output.global_step == 1
