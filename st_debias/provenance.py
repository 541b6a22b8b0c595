"""What produced a result: git commit, package versions and rule-based builder versions.

Every benchmark result file carries :func:`stamp` under ``"provenance"`` (:func:`write_stamped_json` writes
one); :func:`stamp_differences` says why an old result no longer matches the code, so scripts rerun it
instead of silently reusing it. Timed scripts also record the machine load with :func:`uptime` before and
after the timed part.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

PACKAGES = ("st_debias", "sentence-transformers", "torch", "transformers")
"""Packages whose versions are stamped."""

COMPARED = ("commit", "dirty", "packages", "builders")
"""Stamp fields that must agree for a result to be reused (``created`` is informative only)."""


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", *args], cwd=Path(__file__).resolve().parent, capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def builder_versions() -> dict[str, int]:
    """Versions of the rule-based generators whose output rows depend on their rules."""
    from st_debias.data.paraphrase.syntactic import SyntacticParaphraser

    return {"syntactic": SyntacticParaphraser.version}


def stamp() -> dict[str, Any]:
    """The provenance of a result made now: commit (None outside a git checkout), whether the work tree had
    uncommitted changes, package versions, builder versions and the UTC time."""
    status = _git("status", "--porcelain", "--untracked-files=no")
    return {
        "commit": _git("rev-parse", "HEAD"),
        "dirty": bool(status) if status is not None else None,
        "packages": {name: _version(name) for name in PACKAGES},
        "builders": builder_versions(),
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }


def stamp_differences(old: dict[str, Any] | None, new: dict[str, Any]) -> list[str]:
    """The :data:`COMPARED` fields in which ``old`` (a result's stamp, None when it has none) differs from
    ``new``; empty when the result can be reused. A dirty tree never matches (its code is unknown)."""
    if not old:
        return ["no provenance stamp"]
    differences = [
        f"{key}: {old.get(key)!r} -> {new.get(key)!r}" for key in COMPARED if old.get(key) != new.get(key)
    ]
    if not differences and new.get("dirty"):
        differences.append("uncommitted changes in the work tree")
    return differences


def uptime() -> dict[str, Any]:
    """The machine load now: 1/5/15-minute load averages (``/proc/loadavg``, else ``os.getloadavg``; None
    where neither exists), running/total scheduling entities where Linux reports them, CPU count, UTC time."""
    load: list[float] | None = None
    running: str | None = None
    try:
        fields = Path("/proc/loadavg").read_text(encoding="ascii").split()
        load, running = [float(x) for x in fields[:3]], fields[3]
    except (OSError, ValueError, IndexError):
        try:
            load = list(os.getloadavg())
        except (OSError, AttributeError):
            load = None
    return {
        "loadavg": load,
        "running": running,
        "cpus": os.cpu_count(),
        "at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }


def write_stamped_json(
    path: str | os.PathLike[str],
    result: dict[str, Any],
    provenance: dict[str, Any] | None = None,
    indent: int = 2,
) -> Path:
    """Write ``result`` plus ``"provenance": provenance or stamp()`` as JSON to ``path``, atomically (a temporary
    file in the same folder, then ``os.replace``), creating the folder; return the path."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps({**result, "provenance": provenance or stamp()}, indent=indent, default=str) + "\n"
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return target
