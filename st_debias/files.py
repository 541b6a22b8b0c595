"""Crash-safe file writes and early output checks shared by every command.

A write goes to a temporary name in the same folder and is renamed into place (``os.replace``), so an
interrupted or failed write (a kill, a full disk) never leaves a truncated file under the final name.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import re
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

__all__ = [
    "atomic_write_json",
    "atomic_write_text",
    "check_writable_folder",
    "no_space_error",
    "publish_folder",
    "remove_stale_staging",
]

# A staging name that records its writer: ``.<entry>.<pid>.tmp`` (folders) or ``<key>.<pid>.tmp.npy`` (arrays).
_STAGING_PID = re.compile(r"\.(\d+)\.tmp(\.npy)?$")
STALE_AFTER_S = 3600
"""A staging entry of a dead writer is removed only once this old: a cache may be shared with other hosts,
whose pids mean nothing here."""


def atomic_write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` through a temporary file in the same folder, then rename it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException as error:
        Path(temporary).unlink(missing_ok=True)
        full = no_space_error(error, path, len(text.encode("utf-8")))
        if full is not None:
            raise full from error
        raise
    return path


def atomic_write_json(path: str | os.PathLike[str], data: Any, indent: int | None = 2) -> Path:
    """:func:`atomic_write_text` of ``data`` as JSON (non-JSON values written with ``str``)."""
    return atomic_write_text(path, json.dumps(data, indent=indent, default=str) + "\n")


def publish_folder(staging: Path, target: Path) -> bool:
    """Rename a fully written ``staging`` folder to ``target``; False (staging removed) if another process won.

    Two processes building the same cache entry both finish; the first rename wins and the second
    discards its own copy rather than overwriting a folder another process may be reading.
    """
    try:
        os.replace(staging, target)
    except OSError:
        if not target.exists():
            raise
        shutil.rmtree(staging, ignore_errors=True)
        return False
    return True


def check_writable_folder(path: str | os.PathLike[str], what: str = "--output") -> Path:
    """Create ``path`` if needed and prove a file can be written there; raise ``OSError`` naming it otherwise.

    Commands call this before any long work, so an unwritable output is reported in seconds, not after
    the run.
    """
    folder = Path(path)
    if folder.exists() and not folder.is_dir():
        raise NotADirectoryError(f"{what} {folder} is a file, not a folder.")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle, probe = tempfile.mkstemp(dir=folder, prefix=".write-check-")
        os.close(handle)
        os.unlink(probe)
    except OSError as error:
        raise OSError(f"{what} {folder} is not writable: {error.strerror or error}.") from error
    return folder


def no_space_error(error: BaseException, path: str | os.PathLike[str], needed: int) -> OSError | None:
    """For a full-disk ``error``, an ``OSError`` naming ``path``, the bytes needed and the bytes free; else None.

    A full disk surfaces as ``OSError`` ``ENOSPC`` without a path, or inside another library's error
    (safetensors: ``IoError(... StorageFull ...)``); callers re-raise this one in its place.
    """
    if getattr(error, "errno", None) != errno.ENOSPC and "No space left on device" not in str(error):
        return None
    folder = Path(path)
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    try:
        free = f", {shutil.disk_usage(folder).free:,} bytes free"
    except OSError:
        free = ""
    return OSError(errno.ENOSPC, f"No space left on device writing {path}: {needed:,} bytes needed{free}")


def remove_stale_staging(folder: str | os.PathLike[str]) -> list[Path]:
    """Remove the staging entries in ``folder`` left by writers that were killed; return them.

    A staging entry is named after its writer's pid (``.<entry>.<pid>.tmp``, ``<key>.<pid>.tmp.npy``); it is
    stale when that process is not running here and the entry has not changed for :data:`STALE_AFTER_S`.
    Each removal is logged.
    """
    removed = []
    folder = Path(folder)
    for path in folder.iterdir() if folder.is_dir() else []:
        match = _STAGING_PID.search(path.name)
        if match is None or _running(int(match.group(1))):
            continue
        try:
            if time.time() - path.stat().st_mtime < STALE_AFTER_S:
                continue
            shutil.rmtree(path) if path.is_dir() else path.unlink()
        except FileNotFoundError:  # removed meanwhile by another run
            continue
        logger.warning("Removed %s, left by a killed writer (pid %s).", path, match.group(1))
        removed.append(path)
    return removed


def _running(pid: int) -> bool:
    """True when a process ``pid`` runs on this machine (or cannot be checked)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # e.g. another user's process
        return True
    return True
