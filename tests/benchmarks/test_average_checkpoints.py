"""``negation_meaning/average_checkpoints.py`` and ``probe_direction.py``: the probe without the negated sentences' common
direction, checkpoint averages, and their refusals."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.benchmarks.test_scripts import BENCHMARKS, _load


def test_the_dev_probe_reads_the_figures_without_the_direction_from_the_library(monkeypatch) -> None:
    """The lab's ``*_wo_dir`` columns are the library probe's ``without_negation_direction`` block, key for key (the
    block itself is tested in tests/evaluation/test_bias.py)."""
    import st_debias.evaluation

    figures = {"paraphrase_over_affirmative": 0.5, "paraphrase_over_negated_antonym": 0.25, "polarity_cluster": 0.04}
    removed = {"paraphrase_over_affirmative": 0.3, "paraphrase_over_negated_antonym": 0.2, "polarity_cluster": 0.002,
               "direction_length": 0.17}
    monkeypatch.setattr(st_debias.evaluation, "load_negation_meaning_items", lambda: "items")
    monkeypatch.setattr(st_debias.evaluation, "negation_meaning_probe", lambda cache, items: {
        **figures, "by_antonym_kind": {}, "without_negation_direction": removed,
    })
    module = _load(BENCHMARKS / "selection" / "dev_probes.py", monkeypatch)
    assert module.negation_meaning_scores(cache=None) == {
        "nm_over_affirmative": 0.5, "nm_over_negated_antonym": 0.25, "nm_polarity_cluster": 0.04,
        "i_wo_dir": 0.3, "ii_wo_dir": 0.2, "iii_wo_dir": 0.002, "negation_direction_norm": 0.17,
    }


def test_an_average_of_checkpoints_is_the_mean_of_their_weights(
    tiny_model, tiny_model_other, tmp_path: Path, monkeypatch
) -> None:
    module = _load(BENCHMARKS / "negation_meaning" / "average_checkpoints.py", monkeypatch)
    folders = [tmp_path / "weights" / f"checkpoint-{step}" for step in (25, 50)]
    for model, folder in zip((tiny_model, tiny_model_other), folders, strict=True):
        model.save(str(folder))
    assert module.kept_checkpoints(tmp_path) == {25: folders[0], 50: folders[1]}
    mean = module.averaged(folders, length=48)
    assert mean.max_seq_length == 48
    first, second = tiny_model.state_dict(), tiny_model_other.state_dict()
    for name, value in mean.state_dict().items():
        if value.is_floating_point():
            assert np.allclose(value.numpy(), (first[name].numpy() + second[name].numpy()) / 2, atol=1e-6), name
    alone = module.averaged(folders[:1], length=48).state_dict()
    assert all(alone[name].equal(value) for name, value in first.items())


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--average", "75:1"], "no 1 checkpoint(s) ending at step 75"),
        (["--average", "100:1"], "no 1 checkpoint(s) ending at step 100"),
        (["--average", "50:3"], "no 3 checkpoint(s) ending at step 50"),
        (["--average", "50-2"], "expected STEP:K"),
    ],
)
def test_bad_arguments_exit_2_before_any_work(tiny_st_dir: Path, tmp_path: Path, argv, says, monkeypatch, capsys) -> None:
    module = _load(BENCHMARKS / "negation_meaning" / "average_checkpoints.py", monkeypatch)
    for name in ("checkpoint-25", "checkpoint-50", "checkpoint-75.partial"):  # 75: an interrupted link
        (tmp_path / "weights" / name).mkdir(parents=True)
    out = tmp_path / "average.md"
    with pytest.raises(SystemExit) as refused:
        module.main([str(tmp_path), *argv, "--out", str(out)])
    assert refused.value.code == 2 and says in capsys.readouterr().err
    assert not out.exists()
    with pytest.raises(SystemExit) as refused:
        module.main([str(tiny_st_dir), "--out", str(out)])
    assert refused.value.code == 2 and "no kept checkpoint" in capsys.readouterr().err


def test_probe_direction_refuses_a_folder_that_is_no_model(tmp_path: Path, monkeypatch, capsys) -> None:
    module = _load(BENCHMARKS / "negation_meaning" / "probe_direction.py", monkeypatch)
    out = tmp_path / "direction.md"
    with pytest.raises(SystemExit) as refused:
        module.main([str(tmp_path), "--out", str(out)])
    assert refused.value.code == 2 and "not a saved sentence-transformers model" in capsys.readouterr().err
    assert not out.exists()
