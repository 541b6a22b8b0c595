"""What produced a result: git commit, package versions and rule-based builder versions.

Every benchmark result file carries :func:`stamp` under ``"provenance"`` (:func:`write_stamped_json` writes
one); :func:`stamp_differences` says why an old result no longer matches the code, so scripts rerun it
instead of silently reusing it. Timed scripts wrap the timed part in :class:`LoadWatch`, which records the
machine load before and after, the CPU other processes used meanwhile and the peak memory, and says whether
the figure may be reported (:meth:`LoadWatch.refuse_if_loaded`).
"""

from __future__ import annotations

import os
import resource
import shlex
import subprocess
import sys
import time
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

from st_debias.files import atomic_write_json, atomic_write_text

PACKAGES = ("st_debias", "sentence-transformers", "torch", "transformers")
"""Packages whose versions are stamped."""

COMPARED = ("commit", "dirty", "packages", "builders")
"""Stamp fields that must agree for a result to be reused (``created`` is informative only)."""


#: Benchmark scripts write their results inside the checkout; those files are outputs, not code.
RESULT_FILES = ":(top,exclude,glob)**/results/**"


def _git(*args: str, cwd: Path | None = None) -> str | None:
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd or Path(__file__).resolve().parent,
            capture_output=True,
            text=True,
            timeout=10,
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
    """Versions of the row generators whose code decides the rows."""
    from st_debias.data.kinds import generator_versions

    return generator_versions()


def uncommitted_changes(cwd: Path | None = None) -> bool | None:
    """Whether tracked files other than results (:data:`RESULT_FILES`) differ from the commit; None outside git."""
    status = _git("status", "--porcelain", "--untracked-files=no", "--", ":(top)", RESULT_FILES, cwd=cwd)
    return bool(status) if status is not None else None


#: The commit that a copy of the code run elsewhere (a device machine's ``git archive`` of it) was made from,
#: as the caller states it; it replaces what git says about the folder around the copy.
STATED_COMMIT = "ST_DEBIAS_BENCH_COMMIT"


def stamp() -> dict[str, Any]:
    """The provenance of a result made now: commit (None outside a git checkout; the one :data:`STATED_COMMIT`
    states when set, marked ``commit_stated``), whether the work tree had uncommitted changes (result files aside;
    None when unknown), package versions, builder versions and the UTC time."""
    stated = os.environ.get(STATED_COMMIT)
    return {
        "commit": stated or _git("rev-parse", "HEAD"),
        **({"commit_stated": True} if stated else {}),
        "dirty": None if stated else uncommitted_changes(),
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


REPOSITORY = Path(__file__).resolve().parents[2]


def command_line(script: str | os.PathLike[str], argv: list[str] | None = None) -> str:
    """How ``script`` ran, as typed from the repository root: ``python <path in the repository> <arguments>``
    (``argv``, else the process's own arguments), so a result file names no folder of the machine."""
    path = Path(script).resolve()
    shown = path.relative_to(REPOSITORY) if path.is_relative_to(REPOSITORY) else Path(path.name)
    return shlex.join(["python", str(shown), *(sys.argv[1:] if argv is None else argv)])


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
    """Write ``result`` plus ``"provenance": provenance or stamp()`` as JSON to ``path`` with
    :func:`st_debias.files.atomic_write_json` (a temporary file in the same folder, then a rename), creating
    the folder; return the path."""
    return atomic_write_json(path, {**result, "provenance": provenance or stamp()}, indent=indent)


def write_table(out: str | os.PathLike[str], lines: list[str], result: dict[str, Any]) -> None:
    """Write a Markdown table (``lines``) to ``out`` atomically, ``result`` stamped beside it as ``out`` with a
    ``.json`` suffix (:func:`write_stamped_json`), and print the table."""
    atomic_write_text(out, "\n".join(lines) + "\n")
    write_stamped_json(Path(out).with_suffix(".json"), result)
    print("\n".join(lines))


MAX_LOAD = 1.5
"""A timed run is discarded when the 1-minute load average exceeded this before it started."""

MAX_FOREIGN_CORES = 0.5
"""... or when other processes kept more than this many cores busy, on average, while it ran."""


def _busy_cpu_seconds() -> float | None:
    """CPU seconds all processes of the machine have spent busy since boot (``/proc/stat``), None elsewhere."""
    try:
        fields = Path("/proc/stat").read_text(encoding="ascii").splitlines()[0].split()[1:]
        user, nice, system, _idle, _iowait, irq, softirq, steal = (int(x) for x in fields[:8])
    except (OSError, ValueError, IndexError):
        return None
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def _live_descendants_cpu_seconds() -> float:
    """CPU seconds of this process's live descendants (e.g. joblib's worker pool, which outlives each call and
    is never reaped, so ``RUSAGE_CHILDREN`` misses it), from ``/proc``; 0 elsewhere."""
    parent_of: dict[int, int] = {}
    cpu_of: dict[int, float] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text(encoding="latin-1").rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # the process ended meanwhile
        pid = int(stat.parent.name)
        parent_of[pid] = int(fields[1])
        # utime, stime and the children it reaped (cutime, cstime)
        cpu_of[pid] = sum(int(value) for value in fields[11:15]) / os.sysconf("SC_CLK_TCK")
    ours = {os.getpid()}
    grew = True
    while grew:
        found = {pid for pid, parent in parent_of.items() if parent in ours} - ours
        grew = bool(found)
        ours |= found
    return sum(cpu_of[pid] for pid in ours if pid != os.getpid())


def _own_cpu_seconds() -> float:
    """CPU seconds of this process, of its finished children and of its live descendants."""
    return _live_descendants_cpu_seconds() + sum(
        usage.ru_utime + usage.ru_stime
        for usage in (resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN))
    )


def peak_rss_gib() -> float:
    """Peak resident memory of this process or of its largest finished child, in GiB (Linux ``ru_maxrss`` is
    in KiB)."""
    return (
        max(
            resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
            resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
        )
        / 2**20
    )


def wait_for_idle(max_load: float = 1.0, timeout_s: float = 900.0, poll_s: float = 5.0) -> dict[str, Any]:
    """Sleep until the 1-minute load average is at most ``max_load`` (a previous run's load takes a minute or
    two to decay) or ``timeout_s`` passed; return :func:`uptime` at that moment."""
    deadline = time.monotonic() + timeout_s
    while True:
        now = uptime()
        load = now["loadavg"]
        if load is None or load[0] <= max_load or time.monotonic() >= deadline:
            return now
        time.sleep(poll_s)


class LoadWatch:
    """Measures a timed section and whether the machine was quiet enough for its figure to count.

    The load average after a run includes the run's own threads, so "quiet" is judged by the 1-minute load
    before the section (at most :data:`MAX_LOAD`) and by the CPU that *other* processes used during it
    (machine busy time from ``/proc/stat`` minus the CPU time of this process and of all its descendants,
    finished or alive, per wall second; at most :data:`MAX_FOREIGN_CORES`).

    Example:
        ::

            with LoadWatch() as watch:
                run_the_timed_part()
            result["machine"] = watch.record()
            watch.refuse_if_loaded(allow=args.allow_load)
    """

    def __init__(self, max_load: float = MAX_LOAD, max_foreign_cores: float = MAX_FOREIGN_CORES) -> None:
        self.max_load = max_load
        self.max_foreign_cores = max_foreign_cores
        self.before: dict[str, Any] | None = None
        self.after: dict[str, Any] | None = None
        self.wall_s = 0.0
        self.own_cores = 0.0
        self.foreign_cores: float | None = None

    def __enter__(self) -> LoadWatch:
        self.before = uptime()
        self._busy, self._own, self._start = _busy_cpu_seconds(), _own_cpu_seconds(), time.perf_counter()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.wall_s = time.perf_counter() - self._start
        own = _own_cpu_seconds() - self._own
        busy = _busy_cpu_seconds()
        self.own_cores = own / self.wall_s if self.wall_s > 0 else 0.0
        if busy is not None and self._busy is not None and self.wall_s > 0:
            self.foreign_cores = max(0.0, (busy - self._busy - own) / self.wall_s)
        self.after = uptime()

    def reasons_loaded(self) -> list[str]:
        """Why the section's timing must not be reported; empty when the machine was quiet."""
        reasons = []
        load = (self.before or {}).get("loadavg")
        if load is not None and load[0] > self.max_load:
            reasons.append(f"1-minute load {load[0]:.2f} > {self.max_load} before the run")
        if self.foreign_cores is not None and self.foreign_cores > self.max_foreign_cores:
            reasons.append(
                f"other processes used {self.foreign_cores:.2f} cores on average (> {self.max_foreign_cores})"
            )
        return reasons

    def record(self) -> dict[str, Any]:
        """The section's machine facts, for a result file."""
        return {
            "uptime_before": self.before,
            "uptime_after": self.after,
            "wall_s": round(self.wall_s, 2),
            "own_cpu_cores": round(self.own_cores, 2),
            "foreign_cpu_cores": None if self.foreign_cores is None else round(self.foreign_cores, 3),
            "peak_rss_gib": round(peak_rss_gib(), 3),
            "quiet": not self.reasons_loaded(),
            "loaded_because": self.reasons_loaded(),
        }

    def refuse_if_loaded(self, allow: bool = False) -> None:
        """Exit with status 3 and the reasons when the machine was loaded, unless ``allow`` (the result then
        carries ``"quiet": false``)."""
        reasons = self.reasons_loaded()
        if reasons and not allow:
            sys.exit(
                "discarded, machine loaded: " + "; ".join(reasons) + " (rerun alone, or pass --allow-load)"
            )
