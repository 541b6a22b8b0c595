"""The one model loader: local folders are checked first and every error names the path."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from st_debias.paths import InvalidModelError, check_model_folder, ensure_model, load_model


@pytest.fixture(scope="module")
def saved_model(tiny_bert_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny random BERT saved as a full SentenceTransformer folder (modules.json, model.safetensors, ...)."""
    from tests.conftest import load_tiny_model

    folder = tmp_path_factory.mktemp("saved") / "model"
    load_tiny_model(tiny_bert_dir).save_pretrained(str(folder))
    return folder


def _copy(saved_model: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(saved_model, tmp_path / "copy"))


def test_good_folder_loads(saved_model):
    model = load_model(saved_model, device="cpu")
    assert model.encode(["The cat sleeps."]).shape == (1, 128)
    assert ensure_model(model) is model


def test_file_instead_of_folder_is_named(saved_model):
    """Failure mode: a weights file passed as the model gave a NotADirectoryError traceback from deep inside."""
    weights = saved_model / "model.safetensors"
    with pytest.raises(InvalidModelError, match=rf"{weights.resolve()} is a file, not a folder"):
        load_model(weights)


def test_empty_folder_is_named(tmp_path):
    """Failure mode: an empty folder gave "Unrecognized model ... should have a `model_type` key"."""
    (tmp_path / "empty").mkdir()
    with pytest.raises(InvalidModelError, match=rf"{tmp_path / 'empty'} is empty"):
        load_model(tmp_path / "empty")


def test_missing_weights_are_named(saved_model, tmp_path):
    """Failure mode: a folder without its weights file failed with a traceback that did not say what was missing."""
    copy = _copy(saved_model, tmp_path)
    (copy / "model.safetensors").unlink()
    with pytest.raises(InvalidModelError, match=rf"{copy} is missing a weights file \(model.safetensors"):
        load_model(copy)


@pytest.mark.parametrize("damage", ["truncated", "random bytes"])
def test_broken_weights_are_named(saved_model, tmp_path, damage):
    """Failure mode: truncated or overwritten weights gave ``SafetensorError: Error while deserializing header``
    with no path."""
    copy = _copy(saved_model, tmp_path)
    weights = copy / "model.safetensors"
    content = weights.read_bytes()
    weights.write_bytes(content[: len(content) // 2] if damage == "truncated" else os.urandom(len(content)))
    with pytest.raises(InvalidModelError, match=rf"{copy}: weights file model.safetensors is unreadable"):
        load_model(copy)
    with pytest.raises(InvalidModelError, match="truncated or not a safetensors file"):
        check_model_folder(copy)


def test_missing_path_offline_is_named(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(FileNotFoundError, match="not-there"):
        load_model(tmp_path / "not-there")


def test_portable_path_hides_this_machines_folders(tmp_path, monkeypatch):
    """Failure mode: result files committed with the data folder's absolute path of the machine that ran them."""
    from st_debias.paths import portable_path

    data = tmp_path / "shared" / "data"
    (data / "sts").mkdir(parents=True)
    monkeypatch.setenv("ST_DEBIAS_DATA", str(data))
    assert portable_path(data / "sts" / "sts12.jsonl") == "$ST_DEBIAS_DATA/sts/sts12.jsonl"
    monkeypatch.chdir(tmp_path)
    assert portable_path(tmp_path / "runs" / "pairs.jsonl") == "runs/pairs.jsonl"
    assert portable_path("hub:mteb/stsbenchmark-sts:test") == "hub:mteb/stsbenchmark-sts:test"
    assert portable_path("/elsewhere/file.tsv") == "/elsewhere/file.tsv"
    home = tmp_path.parent / f"{tmp_path.name}-home"  # outside the working directory
    monkeypatch.setenv("HOME", str(home))  # a reused evaluation's cache file lives under the home folder
    assert portable_path(home / ".cache" / "st_debias" / "eval" / "ab.json") == "~/.cache/st_debias/eval/ab.json"


def test_max_seq_length_above_the_position_limit_is_named(saved_model, tmp_path):
    """Failure: a saved max_seq_length above the model's position embeddings loaded, then crashed mid-run on the
    first long line (an index error deep in the embeddings)."""
    import json

    folder = _copy(saved_model, tmp_path)
    config = folder / "sentence_bert_config.json"
    config.write_text(json.dumps({**json.loads(config.read_text()), "max_seq_length": 512}))
    with pytest.raises(InvalidModelError, match=rf"Model {folder.resolve()}: max_seq_length 512 .* above its position limit of 128"):
        load_model(folder)
