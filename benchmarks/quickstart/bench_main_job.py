"""Time the README's main job from cold caches, stage by stage.

Runs the README's first command (after setup) as a subprocess, with every cache it could warm pointed at
fresh empty folders: ``ST_DEBIAS_CACHE`` (built rows, evaluations), ``HF_HOME`` (hub, datasets),
``MPLCONFIGDIR`` (matplotlib's font cache). The run folder (``outputs/quickstart``) is created inside a
temporary working directory, so an earlier run cannot be resumed or reused. The operating system's page
cache is not dropped (that needs root): run once after a reboot for a fully cold disk.

Each long stage of ``st-debias train`` prints one ``[st-debias] …`` line before its progress bar; the
script timestamps every output line as it arrives and reports the wall time between stage lines, plus
the package versions, torch threads and the machine load before and after. Writes ``results/<name>.json``
(stamped with the commit and versions, :func:`benchmarks.harness.provenance.stamp`) and ``results/<name>.md``.

Usage (repository root, after ``. scripts/setup.sh``, on an otherwise idle machine)::

    python benchmarks/quickstart/bench_main_job.py --name main_job_2core

``--dry`` prints the command and environment without running; ``--train-args`` replaces the README's
arguments (e.g. a tiny model for a smoke test of this script).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from benchmarks.harness.provenance import stamp, uptime, write_stamped_json
from st_debias.files import atomic_write_text

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
README_ARGS = "train --recipe st-debias --steps 20 --eval-steps 10 --quick-eval --output outputs/quickstart"
TARGET_S = 300.0
STAGE_PREFIX = "[st-debias]"
PACKAGES = ("st-debias", "sentence-transformers", "torch", "transformers", "tokenizers", "datasets")


@dataclass
class Line:
    """One output line (the final state of a progress bar that redraws itself with ``\\r``) and its arrival time."""

    t: float
    text: str


def stage_name(announcement: str) -> str:
    """Short name of the stage an ``[st-debias]`` line opens."""
    if "(start)" in announcement:
        return "evaluation before (start model)"
    if "(trained)" in announcement or "(start weights kept)" in announcement:
        return "evaluation after (trained model) + report"
    if announcement.startswith("Scoring the start model"):
        return "start model on STS-B dev (selection)"
    if announcement.startswith("Building rows") or (
        announcement.startswith("Reusing") and " rows " in announcement
    ):
        return "rows"
    if announcement.startswith("Training"):
        return "training"
    if announcement.startswith("Not reusing"):
        return "evaluation before (start model)"
    return announcement[:60]


def stages(lines: list[Line], end: float) -> list[dict[str, Any]]:
    """Wall time of each stage: from its first ``[st-debias]`` line to the next stage's, the last to ``end``.

    Time before the first stage line is ``startup`` (imports, model load, corpus read). Consecutive lines
    of one stage (e.g. "Not reusing …" then "Evaluating …") stay one stage.
    """
    found: list[dict[str, Any]] = [{"stage": "startup (imports, model load)", "start_s": 0.0, "lines": []}]
    for line in lines:
        if not line.text.startswith(STAGE_PREFIX):
            continue
        announcement = line.text[len(STAGE_PREFIX) :].strip()
        name = stage_name(announcement)
        if found[-1]["stage"] != name:
            found.append({"stage": name, "start_s": line.t, "lines": []})
        found[-1]["lines"].append(announcement)
    for current, following in zip(found, [*found[1:], None]):
        current["end_s"] = following["start_s"] if following else end
        current["wall_s"] = round(current["end_s"] - current["start_s"], 2)
        current["start_s"] = round(current["start_s"], 2)
        current["end_s"] = round(current["end_s"], 2)
    return found


def read_lines(process: subprocess.Popen, started: float, echo: bool) -> list[Line]:
    """Every ``\\n``-terminated line of the merged output, timestamped on arrival (seconds since start)."""
    lines: list[Line] = []
    pending = b""
    assert process.stdout is not None
    while True:
        chunk = os.read(process.stdout.fileno(), 65536)
        if not chunk:
            break
        if echo:
            sys.stdout.buffer.write(chunk)
            sys.stdout.flush()
        pending += chunk
        *complete, pending = pending.split(b"\n")
        now = time.perf_counter() - started
        for raw in complete:
            text = raw.decode("utf-8", "replace").split("\r")
            final = next((part for part in reversed(text) if part.strip()), "")
            lines.append(Line(now, final.rstrip()))
    if pending.strip():
        lines.append(
            Line(time.perf_counter() - started, pending.decode("utf-8", "replace").split("\r")[-1].rstrip())
        )
    return lines


def versions() -> dict[str, str | None]:
    found: dict[str, str | None] = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = None
    return found


def cold_environment(scratch: Path) -> dict[str, str]:
    """The caller's environment with every cache the job could have warmed pointed at empty folders."""
    env = dict(os.environ)
    for variable, folder in (
        ("ST_DEBIAS_CACHE", "st_debias"),
        ("HF_HOME", "hf"),
        ("MPLCONFIGDIR", "matplotlib"),
    ):
        (scratch / folder).mkdir(parents=True)
        env[variable] = str(scratch / folder)
    for variable in ("HF_DATASETS_CACHE", "HF_HUB_CACHE", "TRANSFORMERS_CACHE", "SENTENCE_TRANSFORMERS_HOME"):
        env.pop(variable, None)
    # Relative data paths and PYTHONPATH entries must survive the change of working directory.
    for variable in ("ST_DEBIAS_DATA", "NLTK_DATA"):
        if env.get(variable):
            env[variable] = str(Path(env[variable]).resolve())
    if env.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.pathsep.join(
            str(Path(p).resolve()) for p in env["PYTHONPATH"].split(os.pathsep) if p
        )
    env["PYTHONUNBUFFERED"] = "1"
    return env


def st_debias_command(train_args: str) -> list[str]:
    """``st-debias <args>`` with the installed entry point, else ``python -m st_debias.cli``."""
    executable = shutil.which("st-debias")
    prefix = [executable] if executable else [sys.executable, "-m", "st_debias.cli"]
    return [*prefix, *shlex.split(train_args)]


def markdown(record: dict[str, Any]) -> str:
    lines = [
        f"# README main job from cold caches: `{record['name']}`",
        "",
        f"Command: `st-debias {record['train_args']}` (exit code {record['returncode']})",
        "",
        f"**Main job wall time: {record['wall_s']:.0f} s** (target ≤ {TARGET_S:.0f} s: "
        f"{'met' if record['target_met'] else 'not met'}); process CPU time {record['cpu_s']:.0f} s.",
        "",
        "| stage | wall (s) | share | announced |",
        "|---|---:|---:|---|",
    ]
    for stage in record["stages"]:
        share = stage["wall_s"] / record["wall_s"] if record["wall_s"] else 0.0
        said = "<br>".join(text.replace("|", "\\|") for text in stage["lines"])
        lines.append(f"| {stage['stage']} | {stage['wall_s']:.1f} | {share:.0%} | {said} |")
    lines += [
        "",
        f"- commit `{record['provenance']['commit']}`"
        f"{' (uncommitted changes)' if record['provenance']['dirty'] else ''}",
        "- versions: " + ", ".join(f"{k} {v}" for k, v in record["versions"].items()),
        f"- machine: {record['machine']['cpu_count']} CPUs, {record['machine']['platform']}",
        f"- load average before: {record['before']['loadavg']} ({record['before']['at']})",
        f"- load average after: {record['after']['loadavg']} ({record['after']['at']})",
        f"- caches: fresh empty {', '.join(record['cold_caches'])}; run folder in a fresh temporary directory",
        "",
        "Final output of the job:",
        "",
        "```",
        *record["output_tail"],
        "```",
        "",
    ]
    return "\n".join(lines)


def repo_relative(value: Any) -> Any:
    """``value`` with every path under this checkout written relative to it, so a result file names no
    folder of the machine that produced it (the job runs in a temporary folder and prints absolute paths)."""
    if isinstance(value, str):
        return value.replace(f"{REPO}{os.sep}", "")
    if isinstance(value, list):
        return [repo_relative(item) for item in value]
    if isinstance(value, dict):
        return {key: repo_relative(item) for key, item in value.items()}
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--name", default="main_job", help="result file stem (results/<name>.json and .md)")
    parser.add_argument(
        "--train-args", default=README_ARGS, help=f"arguments of st-debias (default: {README_ARGS!r})"
    )
    parser.add_argument("--results-dir", default=str(HERE / "results"))
    parser.add_argument("--dry", action="store_true", help="print the command and environment, run nothing")
    parser.add_argument("--quiet", action="store_true", help="do not echo the job's output")
    args = parser.parse_args(argv)

    command = st_debias_command(args.train_args)
    with tempfile.TemporaryDirectory(prefix="st_debias_bench_") as scratch_name:
        scratch = Path(scratch_name)
        env = cold_environment(scratch / "caches")
        workdir = scratch / "work"
        workdir.mkdir()
        if args.dry:
            print("command:", shlex.join(command))
            print("working directory: a fresh temporary folder")
            for variable in ("ST_DEBIAS_CACHE", "HF_HOME", "MPLCONFIGDIR", "ST_DEBIAS_DATA", "PYTHONPATH"):
                print(f"{variable}={env.get(variable, '')}")
            return 0
        before = uptime()
        started_at = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        cpu_before = os.times()
        started = time.perf_counter()
        process = subprocess.Popen(
            command, cwd=workdir, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )
        lines = read_lines(process, started, echo=not args.quiet)
        returncode = process.wait()
        wall = time.perf_counter() - started
        cpu_after = os.times()
        after = uptime()
        results_json = workdir / "outputs" / "quickstart" / "eval" / "results.json"
        scores = json.loads(results_json.read_text()) if results_json.is_file() else None

    record: dict[str, Any] = {
        "name": args.name,
        "train_args": args.train_args,
        "started_at": started_at,
        "returncode": returncode,
        "wall_s": round(wall, 2),
        "cpu_s": round(
            (cpu_after.children_user + cpu_after.children_system)
            - (cpu_before.children_user + cpu_before.children_system),
            2,
        ),
        "target_s": TARGET_S,
        "target_met": returncode == 0 and wall <= TARGET_S,
        "stages": stages(lines, wall),
        "versions": versions(),
        "machine": {"cpu_count": os.cpu_count(), "platform": platform.platform()},
        "before": before,
        "after": after,
        "cold_caches": ["ST_DEBIAS_CACHE", "HF_HOME", "MPLCONFIGDIR"],
        "output_tail": [line.text for line in lines if line.text.strip()][-40:],
        "summary": [
            {
                k: entry.get(k)
                for k in ("model", "fingerprint", "reused_from", "encoded_sentences", "timing_s")
            }
            for entry in scores or []
        ],
    }
    record = repo_relative({**record, "provenance": stamp()})
    results = Path(args.results_dir)
    write_stamped_json(results / f"{args.name}.json", record, record["provenance"])
    atomic_write_text(results / f"{args.name}.md", markdown(record))
    print(f"\nmain job: {wall:.0f} s wall (exit {returncode}); wrote {results / args.name}.json and .md")
    return returncode


if __name__ == "__main__":
    raise SystemExit(main())
