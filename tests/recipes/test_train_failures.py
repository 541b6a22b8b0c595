"""``st-debias train`` failure modes: each test names the silent failure it guards against."""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from st_debias.cli import main
from st_debias.progress import STAGE_PREFIX
from st_debias.recipes import load_recipe, override
from st_debias.recipes.data import build_rows, read_corpus
from tests.recipes.conftest import copy_run, train_args

REPO = Path(__file__).resolve().parents[2]


def test_resume_refuses_another_recipes_run(
    focal_run: Path, tiny_bert_dir: Path, tmp_path: Path, capsys
) -> None:
    """Failure: resuming a focal folder with --recipe simcse ran no step and saved the focal model as simcse, exit 0."""
    run = copy_run(focal_run, tmp_path)
    model_before = (run / "model" / "model.safetensors").read_bytes()
    code = main(
        train_args(
            tiny_bert_dir, run, tmp_path / "cache", "--recipe", "simcse", "--steps", "60", "--resume"
        )
    )
    assert code == 2
    err = capsys.readouterr().err
    assert "holds a different run" in err and "'focal'" in err and "'simcse'" in err
    assert (run / "model" / "model.safetensors").read_bytes() == model_before
    assert json.loads((run / "run.json").read_text())["recipe"] == "focal"


def test_resume_refuses_another_seed(focal_run: Path, tiny_bert_dir: Path, tmp_path: Path, capsys) -> None:
    """Failure: a resumed run with another seed silently mixed two runs' data orders."""
    run = copy_run(focal_run, tmp_path)
    code = main(train_args(tiny_bert_dir, run, tmp_path / "cache", "--recipe", "focal", "--steps", "6", "--seed", "7",
                            "--resume"))  # fmt: skip
    assert code == 2
    assert "seed: folder has 42, this run has 7" in capsys.readouterr().err


def test_rerun_without_resume_refuses_then_overwrite_replaces(
    focal_run: Path, tiny_bert_dir: Path, tmp_path: Path, capsys
) -> None:
    """Failure: a second run into the same --output silently overwrote the first run's model and checkpoints."""
    run = copy_run(focal_run, tmp_path)
    args = train_args(tiny_bert_dir, run, tmp_path / "cache", "--recipe", "simcse", "--steps", "2")
    assert main(args) == 2
    assert "already holds a run" in capsys.readouterr().err
    assert json.loads((run / "run.json").read_text())["recipe"] == "focal"
    assert main([*args, "--overwrite"]) == 0
    assert json.loads((run / "run.json").read_text())["recipe"] == "simcse"
    assert sorted(p.name for p in (run / "checkpoints").glob("checkpoint-*")) == ["checkpoint-2"], (
        "old checkpoints kept"
    )


@pytest.mark.slow  # a resumed training run; the skip itself: test_an_incomplete_checkpoint_is_named_and_skipped
def test_resume_skips_a_partial_checkpoint(
    focal_run: Path, tiny_bert_dir: Path, tmp_path: Path, caplog
) -> None:
    """Failure: a checkpoint cut short by a kill/full disk (only config.json) made every --resume fail."""
    run = copy_run(focal_run, tmp_path)
    partial = run / "checkpoints" / "checkpoint-5"
    partial.mkdir()
    shutil.copy(run / "checkpoints" / "checkpoint-4" / "config.json", partial / "config.json")
    with caplog.at_level(logging.WARNING):
        code = main(train_args(tiny_bert_dir, run, tmp_path / "cache", "--recipe", "focal", "--steps", "6",
                                "--eval-steps", "2", "--resume"))  # fmt: skip
    assert code == 0
    assert (
        f"Skipped incomplete checkpoint(s) {partial} (no trainer_state.json); resuming from "
        f"{run / 'checkpoints' / 'checkpoint-4'}" in caplog.text
    )
    state = json.loads((run / "checkpoints" / "checkpoint-6" / "trainer_state.json").read_text())
    assert state["global_step"] == 6


def test_resume_given_a_partial_checkpoint_names_it(
    focal_run: Path, tiny_bert_dir: Path, tmp_path: Path, capsys
) -> None:
    """Failure: --resume PATH at a partial checkpoint failed deep in transformers ("Unrecognized model")."""
    run = copy_run(focal_run, tmp_path)
    (run / "checkpoints" / "checkpoint-4" / "trainer_state.json").unlink()
    code = main(train_args(tiny_bert_dir, run, tmp_path / "cache", "--recipe", "focal", "--steps", "6",
                            "--resume", str(run / "checkpoints" / "checkpoint-4")))  # fmt: skip
    assert code == 2
    assert "not a complete checkpoint" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("extra", "corpus_lines", "message"),
    [
        (["--sentences", "5"], None, "built 5 training rows from 5 corpus sentences (skipped by reason: none), fewer than one batch of 8"),
        (["--batch-size", "64", "--sentences", "40"], None, "built 40 training rows from 40 corpus sentences (skipped by reason: none), fewer than one batch of 64"),
        ([], ["The same sentence again."] * 20, "built 1 training rows from 16 corpus sentences (skipped by reason: duplicate: 15)"),
    ],
    ids=["sentences-5", "batch-larger-than-rows", "all-but-one-skipped"],
)  # fmt: skip
def test_zero_training_steps_is_an_error(
    extra: list[str],
    corpus_lines: list[str] | None,
    message: str,
    tiny_bert_dir: Path,
    tmp_path: Path,
    capsys,
) -> None:
    """Failure: too few rows for one batch trained 0 steps, saved the start model unchanged and exited 0."""
    args = train_args(
        tiny_bert_dir, tmp_path / "run", tmp_path / "cache", "--recipe", "simcse", "--steps", "2", *extra
    )
    if corpus_lines is not None:
        corpus = tmp_path / "corpus.txt"
        corpus.write_text("\n".join(corpus_lines) + "\n")
        args += ["--corpus", str(corpus)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert message in err and "no training step can run" in err
    assert not (tmp_path / "run" / "model").exists()


def test_steps_zero_names_the_step_count(tiny_bert_dir: Path, tmp_path: Path, capsys) -> None:
    """Failure: --steps 0 reported 'Corpus default has no non-empty sentence.' instead of the step count."""
    code = main(
        train_args(
            tiny_bert_dir, tmp_path / "run", tmp_path / "cache", "--recipe", "simcse", "--steps", "0"
        )
    )
    assert code == 2
    assert "training.steps must be > 0, got 0" in capsys.readouterr().err


def test_unwritable_output_is_found_before_training(
    tiny_bert_dir: Path, tmp_path: Path, capsys, monkeypatch
) -> None:
    """Failure: an unwritable --output was found only after the whole run (model loaded, rows built, trained)."""
    from st_debias.recipes import train

    def fail(*args, **kwargs):
        raise AssertionError("loaded the model before checking --output")

    monkeypatch.setattr(train, "load_start_model", fail)
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    code = main(
        train_args(tiny_bert_dir, blocker / "run", tmp_path / "cache", "--recipe", "simcse", "--steps", "2")
    )
    assert code == 2
    assert f"--output {blocker / 'run'} is not writable" in capsys.readouterr().err


def test_row_cache_rebuilds_a_truncated_report(tmp_path: Path, tiny_model, caplog) -> None:
    """Failure: a report.json truncated by a full disk made every later run fail ('Unterminated string'), no path."""
    recipe = override(load_recipe("simcse"), steps=2, batch_size=8)
    sentences = read_corpus(None, 16)
    rows, _ = build_rows(recipe, sentences, tiny_model, cache_dir=tmp_path, show_progress_bar=False)
    (entry,) = (tmp_path / "rows").iterdir()
    report = entry / "report.json"
    report.write_text(report.read_text()[:40])
    with caplog.at_level(logging.WARNING):
        again, again_report = build_rows(
            recipe, sentences, tiny_model, cache_dir=tmp_path, show_progress_bar=False
        )
    assert f"Row cache entry {entry} is unreadable" in caplog.text
    assert again["anchor"] == rows["anchor"] and again_report["rows_used"] == 16
    assert json.loads(report.read_text())["rows_used"] == 16, "the corrupt entry was not rewritten"


def _cached_arrow(cache: Path) -> Path:
    (entry,) = (cache / "rows").iterdir()
    (arrow,) = (entry / "dataset").glob("*.arrow")
    return arrow


def test_row_cache_rebuilds_an_entry_with_a_flipped_sentence_byte(tmp_path: Path, tiny_model, caplog) -> None:
    """Failure: one flipped byte in a cached sentence was reused silently and changed the trained model."""
    recipe = override(load_recipe("simcse"), steps=2, batch_size=8)
    sentences = read_corpus(None, 16)
    rows, _ = build_rows(recipe, sentences, tiny_model, cache_dir=tmp_path, show_progress_bar=False)
    arrow = _cached_arrow(tmp_path)
    data = arrow.read_bytes()
    where = data.index(rows["anchor"][3].encode())
    arrow.write_bytes(data[:where] + bytes([data[where] ^ 0x20]) + data[where + 1 :])  # one letter's case
    with caplog.at_level(logging.WARNING):
        again, _ = build_rows(recipe, sentences, tiny_model, cache_dir=tmp_path, show_progress_bar=False)
    assert "is unreadable (ValueError: its rows do not match their checksum" in caplog.text
    assert again["anchor"] == rows["anchor"]


def test_row_cache_rebuilds_an_entry_with_damaged_offsets(tmp_path: Path, tiny_model, caplog) -> None:
    """Failure: a flipped byte in a cached column's offsets crashed every run (SystemError), never rebuilt."""
    import struct

    recipe = override(load_recipe("simcse"), steps=2, batch_size=8)
    sentences = read_corpus(None, 16)
    rows, _ = build_rows(recipe, sentences, tiny_model, cache_dir=tmp_path, show_progress_bar=False)
    arrow = _cached_arrow(tmp_path)
    data = bytearray(arrow.read_bytes())
    ends = [0]
    for text in rows["anchor"][:3]:
        ends.append(ends[-1] + len(text.encode()))
    where = data.index(struct.pack("<4i", *ends))
    data[where + 7] ^= 0x7F  # the second offset's high byte: far past the column's data
    arrow.write_bytes(bytes(data))
    with caplog.at_level(logging.WARNING):
        again, _ = build_rows(recipe, sentences, tiny_model, cache_dir=tmp_path, show_progress_bar=False)
    assert "is unreadable (ArrowInvalid" in caplog.text
    assert again["anchor"] == rows["anchor"]


def test_row_cache_reads_back_an_entry_of_zero_rows(tmp_path: Path, caplog) -> None:
    """Failure: a cache entry of 0 rows (an ipw build that kept none) was 'unreadable; rebuilding' on every rerun."""
    from datasets import Dataset

    from st_debias.recipes.data import _read_cached_rows, _write_cached_rows

    empty = Dataset.from_dict({"anchor": [], "positive": [], "weight": []})
    _write_cached_rows(tmp_path / "entry", empty, {"rows_used": 0})
    with caplog.at_level(logging.WARNING):
        rows, report = _read_cached_rows(tmp_path / "entry")
    assert caplog.text == "" and len(rows) == 0 and rows.column_names == ["anchor", "positive", "weight"]
    assert report == {"rows_used": 0}


def test_row_cache_write_failure_leaves_no_entry(tmp_path: Path, tiny_model, monkeypatch) -> None:
    """Failure: a full disk while writing the cache left a half entry under the final name, read as valid later."""
    from st_debias.recipes import data

    recipe = override(load_recipe("simcse"), steps=2, batch_size=8)
    sentences = read_corpus(None, 16)

    def disk_full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(data, "atomic_write_json", disk_full)
    with pytest.raises(OSError, match="No space left"):
        build_rows(recipe, sentences, tiny_model, cache_dir=tmp_path, show_progress_bar=False)
    assert list((tmp_path / "rows").iterdir()) == [], "a partial cache entry was left behind"


def _env() -> dict[str, str]:
    env = dict(
        os.environ,
        PYTHONPATH=str(REPO),
        OMP_NUM_THREADS="1",
        MKL_NUM_THREADS="1",
        TOKENIZERS_PARALLELISM="false",
    )
    env.pop("RANK", None)
    return env


def test_sigterm_saves_a_checkpoint_and_exits_non_zero(tiny_bert_dir: Path, tmp_path: Path) -> None:
    """Failure: SIGTERM (a pre-empted job) ended training with no checkpoint, losing every step since the last one."""
    run = tmp_path / "run"
    command = [sys.executable, "-m", "st_debias.cli",
               *train_args(tiny_bert_dir, run, tmp_path / "cache", "--recipe", "simcse", "--steps", "100000",
                            "--eval-steps", "50000", "--sentences", "64")]  # fmt: skip
    process = subprocess.Popen(
        command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=_env(), cwd=REPO
    )
    err: list[str] = []

    def read() -> None:
        for line in process.stderr:
            err.append(line)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and process.poll() is None:
            if any(line.startswith(f"{STAGE_PREFIX} Training:") for line in err):
                time.sleep(2)  # let a few steps run
                break
            time.sleep(0.5)
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=120)
    finally:
        process.kill()
    reader.join(timeout=10)
    err_text = "".join(err)
    assert process.returncode == 128 + signal.SIGTERM, err_text[-3000:]
    assert "interrupted by SIGTERM at step" in err_text and "--resume" in err_text
    (checkpoint,) = (run / "checkpoints").glob("checkpoint-*")
    state = json.loads((checkpoint / "trainer_state.json").read_text())
    assert checkpoint.name == f"checkpoint-{state['global_step']}" and state["global_step"] >= 1
    assert not (run / "model").exists(), "an interrupted run must not publish a model"


def _start_training(model_dir: Path, run: Path, cache: Path) -> subprocess.Popen:
    """A long `st-debias train` in a child process, stopped (SIGSTOP) once it holds the run folder's lock and has
    recorded its run."""
    command = [sys.executable, "-m", "st_debias.cli",
               *train_args(model_dir, run, cache, "--recipe", "simcse", "--steps", "100000", "--sentences", "64")]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=_env(), cwd=REPO)
    lock = run / ".run.lock"
    deadline = time.monotonic() + 240
    while not (lock.is_file() and lock.read_text().strip() and (run / "run.json").is_file()):
        assert process.poll() is None and time.monotonic() < deadline, "the first run never took the lock"
        time.sleep(0.05)
    process.send_signal(signal.SIGSTOP)
    return process


def test_a_run_folder_in_use_is_refused_and_a_dead_holders_lock_is_taken_over(
    tiny_bert_dir: Path, tmp_path: Path, capsys, caplog
) -> None:
    """Failure: a second run into a folder in use deleted the first run's run.json as leftovers (even without
    --overwrite), both exited 0 and the folder ended with one recipe's weights under the other's run.json."""
    run = tmp_path / "run"
    first = _start_training(tiny_bert_dir, run, tmp_path / "cache")
    try:
        holder = json.loads((run / ".run.lock").read_text())
        assert holder["pid"] == first.pid
        for extra in ([], ["--overwrite"]):
            code = main(train_args(tiny_bert_dir, run, tmp_path / "cache", "--recipe", "focal", "--steps", "2",
                                    *extra))  # fmt: skip
            assert code == 2
            err = capsys.readouterr().err
            assert f"{run} is in use by another st-debias train (pid {first.pid} " in err
            assert f"started {holder['started']}" in err
            assert json.loads((run / "run.json").read_text())["recipe"] == "simcse", "the live run's files were touched"
    finally:
        first.kill()  # SIGKILL: the holder dies without releasing anything itself
        first.wait(timeout=60)
    with caplog.at_level(logging.WARNING):
        code = main(train_args(tiny_bert_dir, run, tmp_path / "cache", "--recipe", "focal", "--steps", "2",
                                "--overwrite"))  # fmt: skip
    assert code == 0
    assert f"taking over the lock of a st-debias train that is no longer running (pid {first.pid} " in caplog.text
    assert json.loads((run / "run.json").read_text())["recipe"] == "focal"
    assert (run / ".run.lock").read_text() == "", "a finished run must leave the lock free"


def test_resume_refuses_a_checkpoint_from_another_run(
    focal_run: Path, tiny_bert_dir: Path, tmp_path: Path, capsys
) -> None:
    """Failure: a focal run resumed from a simcse run's checkpoint exited 0 with the simcse weights as "focal"."""
    other = tmp_path / "simcse-run"
    assert main(train_args(tiny_bert_dir, other, tmp_path / "cache", "--recipe", "simcse", "--steps", "2")) == 0
    capsys.readouterr()
    run = copy_run(focal_run, tmp_path)
    model_before = (run / "model" / "model.safetensors").read_bytes()
    foreign = other / "checkpoints" / "checkpoint-2"
    code = main(train_args(tiny_bert_dir, run, tmp_path / "cache", "--recipe", "focal", "--steps", "6",
                            "--resume", str(foreign)))  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err
    assert f"--resume {foreign}: {other} holds a different run" in err and "recipe: folder has 'simcse'" in err
    assert (run / "model" / "model.safetensors").read_bytes() == model_before


#: (file of checkpoint-4 cut short, bytes kept, why it is incomplete); None: a partial checkpoint-5 (config.json only).
CUT_SHORT = [
    ("trainer_state.json", 0, "trainer_state.json does not parse (Expecting value: line 1 column 1 (char 0))"),
    ("model.safetensors", -1000, "model.safetensors is cut short"),
    ("optimizer.pt", 100, "optimizer.pt is not a whole torch file"),
]


@pytest.mark.parametrize(("damaged", "keep", "reason"), [*CUT_SHORT, (None, 0, "no trainer_state.json")])
def test_an_incomplete_checkpoint_is_named_and_skipped(
    damaged: str | None, keep: int, reason: str, focal_run: Path, tmp_path: Path, caplog
) -> None:
    """Failure: a checkpoint cut short by a kill or a full disk counted as complete, so --resume failed deep in
    transformers instead of naming it, or resuming from the newest complete one."""
    from st_debias.recipes.run_folder import checkpoint_problem, resume_checkpoint

    checkpoints = copy_run(focal_run, tmp_path) / "checkpoints"
    assert checkpoint_problem(checkpoints / "checkpoint-4") is None
    if damaged is None:
        bad, good = checkpoints / "checkpoint-5", checkpoints / "checkpoint-4"
        bad.mkdir()
        shutil.copy(good / "config.json", bad / "config.json")
    else:
        bad, good = checkpoints / "checkpoint-4", checkpoints / "checkpoint-2"
        (bad / damaged).write_bytes((bad / damaged).read_bytes()[:keep])
    assert checkpoint_problem(bad).startswith(reason)
    with pytest.raises(ValueError, match=f"--resume {re.escape(str(bad))}: not a complete checkpoint"):
        resume_checkpoint(checkpoints, str(bad))
    with caplog.at_level(logging.WARNING):
        assert resume_checkpoint(checkpoints, True) == str(good)
    assert f"Skipped incomplete checkpoint(s) {bad} ({reason}" in caplog.text and f"resuming from {good}." in caplog.text


_SLOW = pytest.mark.slow  # a resumed training run each; every damage is checked fast above


@pytest.mark.parametrize(
    ("damaged", "keep", "reason"), [CUT_SHORT[0], *(pytest.param(*case, marks=_SLOW) for case in CUT_SHORT[1:])]
)
def test_resume_falls_back_past_a_checkpoint_cut_short(
    damaged: str, keep: int, reason: str, focal_run: Path, tiny_bert_dir: Path, tmp_path: Path, capsys, caplog
) -> None:
    """Failure: a checkpoint file cut short by a full disk counted as complete, and every --resume then failed
    ("Expecting value: line 1 column 1", no file named) instead of resuming from the previous good checkpoint."""
    run = copy_run(focal_run, tmp_path)
    newest = run / "checkpoints" / "checkpoint-4"
    path = newest / damaged
    path.write_bytes(path.read_bytes()[:keep])
    args = train_args(tiny_bert_dir, run, tmp_path / "cache", "--recipe", "focal", "--steps", "4", "--eval-steps", "2")
    assert main([*args, "--resume", str(newest)]) == 2
    assert f"--resume {newest}: not a complete checkpoint ({reason}" in capsys.readouterr().err
    with caplog.at_level(logging.WARNING):
        assert main([*args, "--resume"]) == 0
    assert (
        f"Skipped incomplete checkpoint(s) {newest} ({reason}" in caplog.text
        and f"resuming from {run / 'checkpoints' / 'checkpoint-2'}." in caplog.text
    )
    assert json.loads((newest / "trainer_state.json").read_text())["global_step"] == 4


def test_resume_from_another_directory_keeps_the_best_checkpoint(
    focal_run: Path, tiny_bert_dir: Path, tmp_path: Path, monkeypatch
) -> None:
    """Failure: a run started with a relative --output records its best checkpoint relative to where it was
    started; resumed from elsewhere (after a kill during the final save), it saved the last checkpoint."""
    from safetensors.torch import load_file

    run = copy_run(focal_run, tmp_path)
    shutil.rmtree(run / "model")  # the kill during the final save
    last = run / "checkpoints" / "checkpoint-4" / "trainer_state.json"
    state = json.loads(last.read_text())
    assert state["best_global_step"] == 2, "the fixture's best checkpoint is no longer the earlier one"
    state["best_model_checkpoint"] = "run/checkpoints/checkpoint-2"  # as recorded by `--output run`
    last.write_text(json.dumps(state))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    code = main(train_args(tiny_bert_dir, run, tmp_path / "cache", "--recipe", "focal", "--steps", "4",
                            "--eval-steps", "2", "--no-start-as-candidate", "--resume"))  # fmt: skip
    assert code == 0
    saved = load_file(run / "model" / "model.safetensors")
    best = load_file(run / "checkpoints" / "checkpoint-2" / "model.safetensors")
    assert saved.keys() == best.keys() and all(saved[k].equal(best[k]) for k in saved)


@pytest.mark.parametrize("selection", [[], ["--no-start-as-candidate"]], ids=["start-as-candidate", "best-checkpoint"])
def test_a_diverged_run_stops_with_exit_3(
    selection: list[str], tiny_bert_dir: Path, tmp_path: Path, monkeypatch, capsys
) -> None:
    """Failure: a run whose loss turned NaN logged it as 0 and exited 0 saving a NaN model (or, keeping the start
    model, crashed in the success message with a TypeError)."""
    from st_debias.recipes import train

    build_loss = train.build_loss

    def nan_from_step_3(*args, **kwargs):
        loss, rows = build_loss(*args, **kwargs)
        forward, calls = loss.forward, []

        def poisoned(*inputs, **options):
            calls.append(1)
            value = forward(*inputs, **options)
            return value * float("nan") if len(calls) >= 3 else value

        loss.forward = poisoned
        return loss, rows

    monkeypatch.setattr(train, "build_loss", nan_from_step_3)
    run = tmp_path / "run"
    code = main(train_args(tiny_bert_dir, run, tmp_path / "cache", "--recipe", "simcse", "--steps", "4",
                            "--eval-steps", "2", *selection))  # fmt: skip
    assert code == 3
    err = capsys.readouterr().err
    last = run / "checkpoints" / "checkpoint-2"
    assert "training diverged at step 3: loss nan, gradient norm nan" in err
    assert f"the last checkpoint, saved before it, is {last}" in err
    assert not (run / "model").exists()
    assert sorted(path.name for path in (run / "checkpoints").glob("checkpoint-*")) == ["checkpoint-2"]
    from safetensors.torch import load_file

    assert all(tensor.isfinite().all() for tensor in load_file(last / "model.safetensors").values())


def test_a_model_with_nan_embeddings_is_never_saved(tiny_model, tmp_path: Path) -> None:
    """Failure: a model whose weights held a NaN was saved as the run's model, exit 0."""
    import torch

    from st_debias.evaluation.embeddings import NonFiniteEmbeddings
    from st_debias.recipes.train import _save_model

    with torch.no_grad():
        next(tiny_model.parameters()).fill_(float("nan"))  # every word embedding, as after a diverged step
    with pytest.raises(NonFiniteEmbeddings, match="non-finite"):
        _save_model(tiny_model, load_recipe("simcse"), tmp_path / "model")
    assert list(tmp_path.iterdir()) == []


def _disk_full(*args, **kwargs):
    raise OSError(28, "No space left on device")


def test_a_full_disk_while_checkpointing_names_the_folder_and_leaves_no_complete_checkpoint(
    tiny_bert_dir: Path, tmp_path: Path, monkeypatch, capsys
) -> None:
    """Failure: a trainer_state.json cut short by a full disk counted as a complete checkpoint, and the error
    (`[Errno 28]`) named no path."""
    from transformers import TrainerState

    def save_half_then_fail(self, json_path):
        Path(json_path).write_text('{"global_step": ')
        _disk_full()

    monkeypatch.setattr(TrainerState, "save_to_json", save_half_then_fail)
    run = tmp_path / "run"
    args = train_args(tiny_bert_dir, run, tmp_path / "cache", "--recipe", "simcse", "--steps", "2")
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"No space left on device writing {run / 'checkpoints'}: " in err and " bytes needed, " in err
    monkeypatch.undo()
    assert main([*args, "--resume"]) == 2
    err = capsys.readouterr().err
    assert f"no complete checkpoint in {run / 'checkpoints'}" in err
    assert f"{run / 'checkpoints' / 'checkpoint-2'} (trainer_state.json does not parse" in err


def test_a_full_disk_while_saving_the_model_names_it_and_leaves_nothing(tiny_model, tmp_path: Path, monkeypatch) -> None:
    """Failure: a full disk while saving the model gave a SafetensorError traceback naming no path."""
    from st_debias.recipes.train import _save_model

    def save_part_then_fail(folder, *args, **kwargs):
        Path(folder).mkdir(parents=True, exist_ok=True)
        (Path(folder) / "model.safetensors").write_bytes(b"\0" * 64)
        raise RuntimeError('Error while serializing: IoError(Os { code: 28, kind: StorageFull, message: "No space left on device" })')

    monkeypatch.setattr(tiny_model, "save_pretrained", save_part_then_fail)
    with pytest.raises(OSError, match=rf"No space left on device writing {tmp_path / 'model'}: [\d,]+ bytes needed"):
        _save_model(tiny_model, load_recipe("simcse"), tmp_path / "model")
    assert list(tmp_path.iterdir()) == [], "a partial model was left behind"


def test_a_full_disk_in_an_atomic_write_names_the_file_and_bytes(tmp_path: Path, monkeypatch) -> None:
    """Failure: a full disk while writing a JSON file said `[Errno 28] No space left on device`, no path."""
    from st_debias import files

    monkeypatch.setattr(files.os, "fsync", _disk_full)
    target = tmp_path / "out" / "data_report.json"
    with pytest.raises(OSError, match=rf"No space left on device writing {target}: 16 bytes needed"):
        files.atomic_write_json(target, {"rows": 1})
    assert list((tmp_path / "out").iterdir()) == []


@pytest.mark.parametrize("failing", ["optimizer.pt", "rng_state.pth"])
def test_a_full_disk_while_saving_optimizer_or_random_state_is_exit_2(
    failing: str, tiny_bert_dir: Path, tmp_path: Path, monkeypatch, capsys
) -> None:
    """Failure: a full disk while a checkpoint wrote optimizer.pt or rng_state.pth crashed with a traceback
    (torch's `PytorchStreamWriter failed writing file`, no path) instead of exit 2 naming the folder."""
    import torch

    save = torch.save

    def save_part_then_fail(obj, path, *args, **kwargs):
        if str(path).endswith(failing):
            Path(path).write_bytes(b"PK\x03\x04 cut short")
            raise RuntimeError("PytorchStreamWriter failed writing file data/0: file write failed")  # torch's words
        return save(obj, path, *args, **kwargs)

    monkeypatch.setattr(torch, "save", save_part_then_fail)
    run = tmp_path / "run"
    assert main(train_args(tiny_bert_dir, run, tmp_path / "cache", "--recipe", "simcse", "--steps", "2")) == 2
    err = capsys.readouterr().err
    assert f"Could not write {run / 'checkpoints'} (PytorchStreamWriter failed writing file data/0: file write failed)" in err
    assert "Traceback" not in err
    from st_debias.recipes.run_folder import checkpoint_problem

    assert checkpoint_problem(run / "checkpoints" / "checkpoint-2") is not None
    assert not (run / "model").exists()
