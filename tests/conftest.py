"""Shared fixtures: tiny random BERT models (fast, offline) and real sentences.

``tiny_bert_dir`` is a raw ``transformers`` BERT folder; ``tiny_st_dir`` is a saved sentence-transformers
folder; ``tiny_model`` (fresh per test), ``session_tiny_model`` (shared, read-only) and
``tiny_model_other`` (other weights) are loaded models. ``shared_data`` is the real data folder.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parents[1]
os.environ.setdefault("ST_DEBIAS_DATA", str((REPO.parent / "shared" / "data").resolve()))
os.environ.setdefault("NLTK_DATA", str(Path(os.environ["ST_DEBIAS_DATA"]) / "nltk_data"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The real data folder ($ST_DEBIAS_DATA); tests using it are skipped when it is not set."""
    from st_debias.paths import DataNotFoundError, data_dir

    try:
        return data_dir()
    except DataNotFoundError as error:
        pytest.skip(f"shared data folder not available: {error}")


def build_tiny_model_dir(target: Path, seed: int = 0, hidden: int = 128, layers: int = 2) -> Path:
    """Save a randomly initialised 2-layer BERT with the packaged all-MiniLM-L6-v2 tokenizer to ``target``."""
    from transformers import AutoTokenizer, BertConfig, BertModel

    from st_debias.paths import packaged_model_path

    tokenizer = AutoTokenizer.from_pretrained(str(packaged_model_path()))
    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=2,
        intermediate_size=2 * hidden,
        max_position_embeddings=128,
    )
    BertModel(config).save_pretrained(str(target))
    tokenizer.save_pretrained(str(target))
    return target


def load_tiny_model(model_dir: Path, max_seq_length: int = 32):
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.base.modules import Transformer
    from sentence_transformers.sentence_transformer.modules import Pooling

    transformer = Transformer(str(model_dir), max_seq_length=max_seq_length)
    pooling = Pooling(transformer.get_embedding_dimension(), "mean")
    return SentenceTransformer(modules=[transformer, pooling], device="cpu")


@pytest.fixture(scope="session")
def tiny_bert_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A raw ``transformers`` BERT folder (random weights, seed 0) with the packaged tokenizer."""
    return build_tiny_model_dir(tmp_path_factory.mktemp("tiny-bert"))


@pytest.fixture
def tiny_model(tiny_bert_dir: Path):
    """A fresh tiny SentenceTransformer (2 layers, 128 wide, random weights) for each test."""
    torch.manual_seed(0)
    return load_tiny_model(tiny_bert_dir)


@pytest.fixture(scope="session")
def session_tiny_model(tiny_bert_dir: Path):
    """One tiny SentenceTransformer for the whole session (read-only use: encoding)."""
    model = load_tiny_model(tiny_bert_dir)
    model.eval()
    return model


@pytest.fixture(scope="session")
def tiny_model_other(tmp_path_factory: pytest.TempPathFactory):
    """A second tiny model with different random weights (seed 1): a 'checkpoint' of the same shape."""
    model = load_tiny_model(build_tiny_model_dir(tmp_path_factory.mktemp("tiny-bert-1"), seed=1))
    model.eval()
    return model


@pytest.fixture(scope="session")
def tiny_st_dir(tmp_path_factory: pytest.TempPathFactory, session_tiny_model) -> Path:
    """The tiny model saved with ``SentenceTransformer.save``: what a training run leaves on disk."""
    folder = tmp_path_factory.mktemp("tiny-st") / "final"
    session_tiny_model.save(str(folder))
    return folder


def first_sentences(count: int) -> list[str]:
    """The first ``count`` sentences of the shared Wikipedia corpus (a uniform random sample)."""
    from st_debias.paths import data_file

    with open(data_file("corpus/wiki_sentences.txt"), encoding="utf-8") as handle:
        return [next(handle).rstrip("\n") for _ in range(count)]


@pytest.fixture(scope="session")
def wiki_sentences() -> list[str]:
    return first_sentences(512)


def train_tiny(model, output_dir: Path, callbacks: list, steps: int = 3, resume: str | None = None, loss=None,
               **arguments) -> None:
    """A few steps of ``loss`` (default: MarginNegationLoss) on four fixed rows at learning rate 1e-2 (constant),
    with ``callbacks`` (``arguments``: more training arguments; ``resume``: a checkpoint to continue from)."""
    from datasets import Dataset
    from sentence_transformers import SentenceTransformerTrainer, SentenceTransformerTrainingArguments

    from st_debias.losses import MarginNegationLoss

    rows = Dataset.from_dict({
        "anchor": ["the cat sat on the mat", "stocks fell sharply today", "a man plays a guitar", "rain is expected"],
        "positive": ["the mat had a cat on it", "shares dropped steeply", "a guitar is played by a man", "rain is due"],
        "negative": ["the cat did not sit", "stocks rose sharply today", "a guitar plays a man", "rain is not expected"],
    })
    args = SentenceTransformerTrainingArguments(
        output_dir=str(output_dir), max_steps=steps, per_device_train_batch_size=4, learning_rate=1e-2,
        lr_scheduler_type="constant", report_to="none", disable_tqdm=True, **({"save_strategy": "no"} | arguments),
    )
    if loss is None:
        loss = MarginNegationLoss(model, alpha=0.5, beta=0.6, margin_weight=1.0)
    trainer = SentenceTransformerTrainer(model=model, args=args, train_dataset=rows, loss=loss, callbacks=callbacks)
    trainer.train(resume_from_checkpoint=resume)
