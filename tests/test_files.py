"""Crash-safe writes: what a killed writer leaves behind is removed by the next run."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import time
from pathlib import Path

from st_debias.files import STALE_AFTER_S, remove_stale_staging
from st_debias.recipes.run_folder import prepare_output


def _dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def _age(path: Path, seconds: float) -> Path:
    then = time.time() - seconds
    os.utime(path, (then, then))
    return path


def test_a_killed_writers_cache_staging_is_removed_on_the_next_run(tmp_path: Path, caplog) -> None:
    """Failure: staging folders and arrays of a killed run stayed in the cache forever."""
    dead = _dead_pid()
    (tmp_path / f".rows-key.{dead}.tmp").mkdir()
    (tmp_path / f".rows-key.{dead}.tmp" / "dataset").mkdir()
    stale = [_age(tmp_path / f".rows-key.{dead}.tmp", 2 * STALE_AFTER_S)]
    stale.append(tmp_path / f"emb-key.{dead}.tmp.npy")
    stale[-1].write_bytes(b"\x93NUMPY")
    _age(stale[-1], 2 * STALE_AFTER_S)
    recent = tmp_path / f".other-key.{dead}.tmp"  # maybe another host's writer: kept until it is old
    recent.mkdir()
    running = tmp_path / f".mine.{os.getpid()}.tmp"
    running.mkdir()
    _age(running, 2 * STALE_AFTER_S)
    entry = tmp_path / "rows-key"
    entry.mkdir()
    with caplog.at_level(logging.WARNING):
        removed = remove_stale_staging(tmp_path)
    assert sorted(removed) == sorted(stale)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([recent.name, running.name, entry.name])
    assert f"Removed {stale[0]}, left by a killed writer (pid {dead})" in caplog.text


def test_a_killed_runs_staging_in_its_folder_is_removed_on_the_next_run(tmp_path: Path, caplog) -> None:
    """Failure: a run killed while saving left its staged model and temporary files in --output."""
    run = tmp_path / "run"
    (run / ".model.4242.tmp").mkdir(parents=True)
    (run / ".model.4242.tmp" / "model.safetensors").write_bytes(b"\0" * 8)
    (run / ".selection.json.x1y2.tmp").write_text("{")
    with caplog.at_level(logging.WARNING):
        prepare_output(run, {"recipe": "simcse"}, resume=False, overwrite=False)
    assert sorted(p.name for p in run.iterdir()) == ["run.json"]
    assert f"Removed {run / '.model.4242.tmp'}, left half-written" in caplog.text


def test_staged_folder_publishes_whole_or_not_at_all(tmp_path: Path) -> None:
    from st_debias.files import staged_folder

    target = tmp_path / "model"
    target.mkdir()
    (target / "old.txt").write_text("old")
    with staged_folder(target) as staging:
        assert not target.joinpath("new.txt").exists() and staging.parent == tmp_path
        staging.mkdir()
        (staging / "new.txt").write_text("new")
    assert sorted(p.name for p in target.iterdir()) == ["new.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]  # nothing staged or retired left over

    try:
        with staged_folder(target) as staging:
            staging.mkdir()
            (staging / "half.txt").write_text("half")
            raise RuntimeError("killed mid-write")
    except RuntimeError:
        pass
    assert sorted(p.name for p in target.iterdir()) == ["new.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]


def test_staged_folder_without_replace_keeps_the_first_writers_entry(tmp_path: Path) -> None:
    from st_debias.files import staged_folder

    target = tmp_path / "entry"
    target.mkdir()
    (target / "first.txt").write_text("first")
    with staged_folder(target, replace=False) as staging:
        staging.mkdir()
        (staging / "second.txt").write_text("second")
    assert sorted(p.name for p in target.iterdir()) == ["first.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["entry"]


def test_atomic_path_keeps_the_suffix_and_leaves_nothing_on_failure(tmp_path: Path) -> None:
    import numpy as np

    from st_debias.files import atomic_path

    target = tmp_path / "array.npy"
    with atomic_path(target) as temporary:
        assert temporary.suffix == ".npy" and temporary != target
        np.save(temporary, np.arange(3))
    assert np.load(target).tolist() == [0, 1, 2]
    try:
        with atomic_path(target) as temporary:
            temporary.write_bytes(b"half")
            raise RuntimeError("killed")
    except RuntimeError:
        pass
    assert np.load(target).tolist() == [0, 1, 2] and sorted(p.name for p in tmp_path.iterdir()) == ["array.npy"]


def test_atomic_writes_are_readable_like_a_plain_file(tmp_path: Path) -> None:
    """mkstemp makes 0600 files; a cache or package file written atomically is as readable as one written by open."""
    from st_debias.files import atomic_write_json

    path = atomic_write_json(tmp_path / "entry.json", {"name": "STS12–16"})
    umask = os.umask(0)
    os.umask(umask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask
    assert "STS12–16" in path.read_text(encoding="utf-8")


def test_every_write_of_the_library_goes_through_files_py() -> None:
    """Atomic writes had several homes (evaluation/reuse.py, evaluation/report.py with a fixed temporary name,
    the provenance stamp, the row cache, the model save, st-debias build): renames and temporary files belong to
    st_debias/files.py alone."""
    import st_debias

    root = Path(st_debias.__file__).parent
    offenders = [
        f"{path.relative_to(root)}: {marker}"
        for path in sorted(root.rglob("*.py"))
        if path.name != "files.py"
        for marker in ("os.replace(", "os.rename(", "mkstemp(", "NamedTemporaryFile(", 'with_name(f".')
        if marker in path.read_text(encoding="utf-8")
    ]
    assert offenders == []
