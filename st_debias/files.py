"""Crash-safe file writes and early output checks shared by every command.

A write goes to a temporary name in the same folder and is renamed into place (``os.replace``), so an
interrupted or failed write (a kill, a full disk) never leaves a truncated file under the final name. Every
write of st_debias goes through this module: :func:`atomic_write_text` and :func:`atomic_write_json` for text,
:func:`atomic_path` for what another library writes to a path (a plot, an array), :func:`staged_folder` for a
whole folder (a dataset, a model).
"""

from __future__ import annotations

import errno
import json
import logging
import os
import re
import shutil
import socket
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

__all__ = [
    "LOCK_FILE",
    "atomic_path",
    "atomic_write_json",
    "atomic_write_text",
    "check_writable_folder",
    "hold_output_folder",
    "no_space_error",
    "publish_folder",
    "remove_stale_staging",
    "staged_folder",
]

# A staging name that records its writer: ``.<entry>.<pid>.tmp`` (folders) or ``.<stem>.<pid>.tmp.<suffix>``
# (files written by another library, which reads the format from the suffix).
_STAGING_PID = re.compile(r"\.(\d+)\.tmp(\.\w+)?$")
# Held (flock) by the command writing into an output folder; never removed, so every command locks the same file.
LOCK_FILE = ".run.lock"
STALE_AFTER_S = 3600
"""A staging entry of a dead writer is removed only once this old: a cache may be shared with other hosts,
whose pids mean nothing here."""


def _readable_mode() -> int:
    """The mode a plain ``open`` would give a new file (``mkstemp`` makes 0600; a cache or package file is shared)."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


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
        os.chmod(temporary, _readable_mode())
        os.replace(temporary, path)
    except BaseException as error:
        Path(temporary).unlink(missing_ok=True)
        full = no_space_error(error, path, len(text.encode("utf-8")))
        if full is not None:
            raise full from error
        raise
    return path


def atomic_write_json(path: str | os.PathLike[str], data: Any, indent: int | None = 2) -> Path:
    """:func:`atomic_write_text` of ``data`` as UTF-8 JSON (non-JSON values written with ``str``)."""
    return atomic_write_text(path, json.dumps(data, indent=indent, ensure_ascii=False, default=str) + "\n")


@contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """A temporary path beside ``path`` (same suffix) for another library to write; renamed to ``path`` when the
    block ends, removed when it raises (a write the disk refused is re-raised as :func:`no_space_error`'s
    ``OSError`` naming ``path``).

    Example:
        >>> with atomic_path(folder / "plot.png") as temporary:  # doctest: +SKIP
        ...     figure.savefig(temporary)
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.stem}.{os.getpid()}.tmp{path.suffix}")
    try:
        yield temporary
        os.replace(temporary, path)
    except BaseException as error:
        temporary.unlink(missing_ok=True)
        failed = no_space_error(error, path, None)
        if failed is not None:
            raise failed from error
        raise


@contextmanager
def staged_folder(target: str | os.PathLike[str], *, replace: bool = True) -> Iterator[Path]:
    """A staging folder path beside ``target`` (``.<name>.<pid>.tmp``, not yet created) to write a whole folder
    into; when the block ends it is renamed to ``target``, and when it raises it is removed (a write the disk
    refused is re-raised as :func:`no_space_error`'s ``OSError`` naming ``target``).

    Args:
        target: the folder to publish.
        replace: replace an existing ``target`` (a saved model, a dataset); with False the first writer wins and
            a later one discards its copy (:func:`publish_folder`: a cache entry another process may be reading).

    Example:
        >>> with staged_folder(output / "dataset") as staging:  # doctest: +SKIP
        ...     rows.save_to_disk(str(staging))
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_staging(target.parent)
    staging = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    shutil.rmtree(staging, ignore_errors=True)
    try:
        yield staging
    except BaseException as error:
        shutil.rmtree(staging, ignore_errors=True)
        failed = no_space_error(error, target, None)
        if failed is not None:
            raise failed from error
        raise
    if replace and target.exists():
        retired = target.with_name(f".{target.name}.old.{os.getpid()}.tmp")
        os.replace(target, retired)
        os.replace(staging, target)
        shutil.rmtree(retired, ignore_errors=True)
    else:
        publish_folder(staging, target)


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


#: Errors of a write that the disk refused: full, over quota, file too large, read-only, failing.
_WRITE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EIO})
#: How other libraries report a full disk (safetensors) or a failed write (torch.save), without an errno.
_FULL_DISK_TEXT = ("No space left on device", "StorageFull")
_FAILED_WRITE_TEXT = ("PytorchStreamWriter failed writing", "file write failed")


def no_space_error(error: BaseException, path: str | os.PathLike[str], needed: int | None) -> OSError | None:
    """For a write the disk refused (full, over quota, read-only, failing), an ``OSError`` naming ``path``, the
    bytes needed (when known) and the bytes free; else None.

    A full disk surfaces as ``OSError`` ``ENOSPC`` without a path, or inside another library's error
    (safetensors: ``IoError(... StorageFull ...)``; ``torch.save``: ``PytorchStreamWriter failed writing file …``);
    callers re-raise this one in its place.
    """
    code = getattr(error, "errno", None)
    text = str(error)
    full = code == errno.ENOSPC or any(marker in text for marker in _FULL_DISK_TEXT)
    if not full and code not in _WRITE_ERRNOS and not any(marker in text for marker in _FAILED_WRITE_TEXT):
        return None
    folder = Path(path)
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    sizes = [f"{needed:,} bytes needed"] if needed is not None else []
    try:
        sizes.append(f"{shutil.disk_usage(folder).free:,} bytes free")
    except OSError:
        pass
    sizes_text = f": {', '.join(sizes)}" if sizes else ""
    if full:
        return OSError(errno.ENOSPC, f"No space left on device writing {path}{sizes_text}")
    reason = getattr(error, "strerror", None) or (text.strip().splitlines() or [type(error).__name__])[-1]
    return OSError(code or errno.EIO, f"Could not write {path} ({reason}){sizes_text}")


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


@contextmanager
def hold_output_folder(output_dir: str | os.PathLike[str], command: str = "train") -> Iterator[None]:
    """Hold an exclusive lock on ``output_dir`` while a command writes into it (``train`` for its whole run,
    ``eval``), so that no second command writes into it meanwhile.

    The lock is an ``flock`` on ``output_dir/.run.lock``: the kernel releases it when the holder exits, however
    it exits, so a lock left by a killed run is taken over (with a warning naming it). The file records the
    holder's command, pid, host and start time for the refusal message.

    A run refused before it claimed a folder that the lock created (a model that cannot train, say) removes that
    folder again, so that nothing is left behind.

    Raises:
        ValueError: another live process holds the folder (named by pid and start time).
        OSError: the folder cannot be written.
    """
    output_dir = Path(output_dir)
    created = not output_dir.exists()
    try:
        yield from _locked(output_dir, command)
    except BaseException:
        if created and output_dir.is_dir() and {entry.name for entry in output_dir.iterdir()} <= {LOCK_FILE}:
            shutil.rmtree(output_dir, ignore_errors=True)
        raise


def _locked(output_dir: Path, command: str) -> Iterator[None]:
    """The body of :func:`hold_output_folder`: create and lock ``output_dir/.run.lock`` while the caller runs."""
    check_writable_folder(output_dir)
    try:
        import fcntl
    except ImportError:  # not a POSIX system (Windows): no flock
        logger.warning("No file locking on this platform: nothing stops a second run into %s.", output_dir)
        yield
        return
    handle = open(output_dir / LOCK_FILE, "a+", encoding="utf-8")  # noqa: SIM115 - held until the run ends
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder, details = _holder(handle) or ("command", "pid unknown: it is starting")
            raise ValueError(
                f"{output_dir} is in use by another st-debias {holder} ({details}); wait for it to finish, stop it, "
                "or choose another --output."
            ) from None
        previous = _holder(handle)
        if previous:
            logger.warning(
                "%s: taking over the lock of a st-debias %s that is no longer running (%s).", output_dir, *previous
            )
        handle.seek(0)
        handle.truncate()
        started = datetime.now(timezone.utc).isoformat(timespec="seconds")
        json.dump({"command": command, "pid": os.getpid(), "host": socket.gethostname(), "started": started}, handle)
        handle.flush()
        try:
            yield
        finally:
            handle.seek(0)
            handle.truncate()  # an empty lock file: the run ended normally
    finally:
        handle.close()  # releases the flock


def _holder(handle: Any) -> tuple[str, str] | None:
    """The command recorded in an open lock file and its pid, host and start time in words; None when empty."""
    handle.seek(0)
    try:
        holder = json.loads(handle.read() or "null")
    except ValueError:
        holder = None
    if not isinstance(holder, dict):
        return None
    # lock files of older versions name no command: only train took them
    details = f"pid {holder.get('pid')} on {holder.get('host')}, started {holder.get('started')}"
    return str(holder.get("command", "train")), details
