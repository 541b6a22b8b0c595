"""A resumed run is the same run by content: its checkpoints, start model, corpus and learning rate."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from safetensors.torch import load_file, save_file

from st_debias.cli import main
from tests.conftest import build_tiny_model_dir
from tests.recipes.conftest import copy_run, train_args


def _same_weights(a: Path, b: Path) -> bool:
    left, right = load_file(a / "model.safetensors"), load_file(b / "model.safetensors")
    return left.keys() == right.keys() and all(left[key].equal(right[key]) for key in left)


def _resume(model: Path | str, run: Path, tmp_path: Path, *extra: str) -> list[str]:
    return train_args(model, run, tmp_path / "cache", "--recipe", "focal", "--eval-steps", "2", "--resume", *extra)


def test_resume_finds_the_best_checkpoint_by_step_not_by_its_recorded_path(
    focal_run: Path, tiny_bert_dir: Path, tmp_path: Path
) -> None:
    """Failure: the best checkpoint was loaded through its recorded path; after the run folder was renamed and
    another run started under the old name, a resumed run saved that other run's weights, exit 0."""
    run = copy_run(focal_run, tmp_path)
    shutil.rmtree(run / "model")  # a kill during the final save
    decoy = tmp_path / "old-name" / "checkpoints" / "checkpoint-2"  # another run at the recorded path
    shutil.copytree(run / "checkpoints" / "checkpoint-2", decoy)
    weights = load_file(decoy / "model.safetensors")
    save_file({key: tensor + 1 for key, tensor in weights.items()}, decoy / "model.safetensors")
    state_file = run / "checkpoints" / "checkpoint-4" / "trainer_state.json"
    state = json.loads(state_file.read_text())
    assert state["best_global_step"] == 2, "the fixture's best checkpoint is no longer the earlier one"
    state["best_model_checkpoint"] = str(decoy)
    state_file.write_text(json.dumps(state))
    assert main(_resume(tiny_bert_dir, run, tmp_path, "--steps", "4", "--no-start-as-candidate")) == 0
    assert _same_weights(run / "model", run / "checkpoints" / "checkpoint-2")


def test_resume_from_another_folder_keeps_that_folders_best_checkpoint(
    focal_run: Path, tiny_bert_dir: Path, tmp_path: Path
) -> None:
    """Failure: resumed from another run folder's checkpoint, the trainer looked the best step up in this folder,
    whose checkpoint of that step holds other weights, and saved those."""
    source = tmp_path / "source"
    shutil.copytree(focal_run, source)
    run = copy_run(focal_run, tmp_path)
    shutil.rmtree(run / "model")
    own = run / "checkpoints" / "checkpoint-2"  # this folder's step 2: other weights than the source's best
    weights = load_file(own / "model.safetensors")
    save_file({key: tensor + 1 for key, tensor in weights.items()}, own / "model.safetensors")
    args = _resume(tiny_bert_dir, run, tmp_path, "--steps", "6", "--no-start-as-candidate")
    args[-3:-3] = [str(source / "checkpoints" / "checkpoint-4")]  # --resume PATH
    assert main(args) == 0
    best = json.loads((run / "checkpoints" / "checkpoint-6" / "trainer_state.json").read_text())["best_global_step"]
    kept = source / "checkpoints" / "checkpoint-2" if best == 2 else run / "checkpoints" / f"checkpoint-{best}"
    assert _same_weights(run / "model", kept)


def test_resume_with_steps_below_the_checkpoint_is_refused(
    focal_run: Path, tiny_bert_dir: Path, tmp_path: Path, capsys
) -> None:
    """Failure: --resume with --steps below the newest checkpoint trained nothing and published, exit 0."""
    run = copy_run(focal_run, tmp_path)
    shutil.rmtree(run / "model")
    assert main(_resume(tiny_bert_dir, run, tmp_path, "--steps", "2")) == 2
    assert "the checkpoint is at step 4, past --steps 2" in capsys.readouterr().err
    assert not (run / "model").exists()


def test_resume_refuses_a_foreign_checkpoint_copied_into_the_run(
    focal_run: Path, tiny_bert_dir: Path, tmp_path: Path, capsys
) -> None:
    """Failure: another run's checkpoint copied into checkpoints/ was resumed, exit 0; with --keep last the saved
    model was the foreign one while run.json named the start model (and one of another width crashed with a
    state_dict error)."""
    other, narrow = tmp_path / "other", build_tiny_model_dir(tmp_path / "narrow", hidden=64)
    assert main(train_args(narrow, other, tmp_path / "cache", "--recipe", "focal", "--steps", "2")) == 0
    run = copy_run(focal_run, tmp_path)
    foreign = run / "checkpoints" / "checkpoint-6"
    shutil.copytree(other / "checkpoints" / "checkpoint-2", foreign)
    capsys.readouterr()
    assert main(_resume(tiny_bert_dir, run, tmp_path, "--steps", "6", "--keep", "last")) == 2
    err = capsys.readouterr().err
    assert f"checkpoint {foreign} does not belong to this run" in err
    assert not (run / "checkpoints" / "checkpoint-8").exists()


def test_resume_refuses_a_start_model_replaced_at_the_same_path(
    focal_run: Path, tmp_path: Path, capsys
) -> None:
    """Failure: a start-model folder replaced by other weights at the same path resumed, exit 0."""
    run = copy_run(focal_run, tmp_path)
    replaced = build_tiny_model_dir(tmp_path / "model", seed=1)
    record = json.loads((run / "run.json").read_text())
    record["model"] = str(replaced.resolve())  # the run was started from this path, with the seed-0 weights
    (run / "run.json").write_text(json.dumps(record))
    assert main(_resume(replaced, run, tmp_path, "--steps", "6")) == 2
    assert "Differences: model_weights: folder has" in capsys.readouterr().err


def test_resume_refuses_a_corpus_edited_at_the_same_path(
    focal_run: Path, tiny_bert_dir: Path, tmp_path: Path, capsys
) -> None:
    """Failure: a corpus file edited in place resumed the run on other sentences, exit 0."""
    run = copy_run(focal_run, tmp_path)
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("".join(f"Sentence number {i} of the edited corpus.\n" for i in range(64)))
    record = json.loads((run / "run.json").read_text())
    record["corpus"] = str(corpus.resolve())  # the run was started on this path, with the default corpus's lines
    (run / "run.json").write_text(json.dumps(record))
    assert main(_resume(tiny_bert_dir, run, tmp_path, "--steps", "6", "--corpus", str(corpus))) == 2
    assert "Differences: corpus_sha256: folder has" in capsys.readouterr().err


def test_resume_accepts_a_relative_model_path(
    focal_run: Path, tiny_bert_dir: Path, tmp_path: Path, monkeypatch
) -> None:
    """Failure: the same start model given by a relative path was refused as another model."""
    run = copy_run(focal_run, tmp_path)
    shutil.rmtree(run / "model")
    monkeypatch.chdir(tiny_bert_dir.parent)
    assert main(_resume(tiny_bert_dir.name, run, tmp_path, "--steps", "4")) == 0
    assert (run / "model" / "model.safetensors").is_file()


def _logged_rates(checkpoint: Path) -> dict[int, float]:
    history = json.loads((checkpoint / "trainer_state.json").read_text())["log_history"]
    return {entry["step"]: entry["learning_rate"] for entry in history if "learning_rate" in entry}


def test_resume_applies_a_changed_learning_rate(
    focal_run: Path, tiny_bert_dir: Path, tmp_path: Path
) -> None:
    """Failure: --resume --learning-rate X kept the old rate's schedule (the checkpoint was bit-identical to the
    old rate's) while the model card recorded X."""
    same, changed = tmp_path / "same", tmp_path / "changed"
    shutil.copytree(focal_run, same)
    shutil.copytree(focal_run, changed)
    old_rate = _logged_rates(focal_run / "checkpoints" / "checkpoint-4")
    assert main(_resume(tiny_bert_dir, same, tmp_path, "--steps", "6")) == 0
    assert main(_resume(tiny_bert_dir, changed, tmp_path, "--steps", "6", "--learning-rate", "1e-3")) == 0
    before, after = _logged_rates(same / "checkpoints" / "checkpoint-6"), _logged_rates(changed / "checkpoints" / "checkpoint-6")
    assert all(after[step] == before[step] == old_rate[step] for step in old_rate), "the first steps' log changed"
    base = 3e-5  # the focal recipe's rate
    for step in (5, 6):
        assert after[step] == pytest.approx(before[step] * 1e-3 / base, rel=1e-6)
    assert not _same_weights(same / "checkpoints" / "checkpoint-6", changed / "checkpoints" / "checkpoint-6")
