"""``recipe_v6/average_checkpoints.py`` and ``probe_direction.py``: the probe without the negated sentences' common
direction, checkpoint averages, and their refusals."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from tests.benchmarks.test_scripts import BENCHMARKS, _load


@dataclass
class _Items:
    negated: list[str]
    affirmative: list[str]
    antonym: list[str]
    negated_antonym: list[str]

    def __len__(self) -> int:
        return len(self.negated)


class _Cache:
    def __init__(self, vectors: dict[str, np.ndarray]) -> None:
        self.vectors = vectors

    def embed(self, sentences: list[str]) -> np.ndarray:
        return np.stack([self.vectors[sentence] for sentence in sentences]).astype(np.float32)


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x)


def test_removing_the_common_direction_shows_the_meaning_under_it(monkeypatch) -> None:
    """"not A" = 0.45·B + 0.2·A + 2u and "not B" = 0.45·A + 0.2·B + 2u, and "A" carries u too: as scored, "not A" is
    nearer "A" and "not B" (the shared u); with u removed, nearer "B". The negated sentences cluster as scored and not
    once u is gone."""
    module = _load(BENCHMARKS / "recipe_v6" / "average_checkpoints.py", monkeypatch)
    rng = np.random.default_rng(0)
    dim, n = 512, 400  # enough items that each half's estimate of u is close to u
    u = _unit(rng.normal(size=dim))
    vectors, columns = {}, {"negated": [], "affirmative": [], "antonym": [], "negated_antonym": []}
    for k in range(n):
        a, b = (_unit(rng.normal(size=dim)) for _ in range(2))
        for column, vector in (
            ("affirmative", a + u), ("antonym", b), ("negated", 0.45 * b + 0.2 * a + 2 * u),
            ("negated_antonym", 0.45 * a + 0.2 * b + 2 * u),
        ):
            vectors[f"{column} {k}"] = _unit(vector)
            columns[column].append(f"{column} {k}")
    cache, items = _Cache(vectors), _Items(**columns)
    quadruples = zip(items.negated, items.affirmative, items.antonym, items.negated_antonym, strict=True)
    as_scored = np.array([
        (vectors[n_] @ vectors[b_] > vectors[n_] @ vectors[a_], vectors[n_] @ vectors[b_] > vectors[n_] @ vectors[nb])
        for n_, a_, b_, nb in quadruples
    ])
    assert as_scored.sum() == 0, "as scored, (i) and (ii) are 0: the shared u wins"

    removed = module.without_common_direction(cache, items)
    assert removed["i_wo_dir"] == 1.0
    assert removed["ii_wo_dir"] == 1.0  # not B = 0.45·A + 0.2·B once u is gone: "not A" is nearer B
    negated = np.stack([vectors[s] for s in items.negated])
    affirmative = np.stack([vectors[s] for s in items.affirmative])
    from st_debias.evaluation.bias import mean_offdiagonal_cosine

    assert mean_offdiagonal_cosine(negated) - mean_offdiagonal_cosine(affirmative) > 0.2
    assert abs(removed["iii_wo_dir"]) < 0.05
    assert removed["negation_direction_norm"] > 0.1


def test_an_average_of_checkpoints_is_the_mean_of_their_weights(
    tiny_model, tiny_model_other, tmp_path: Path, monkeypatch
) -> None:
    module = _load(BENCHMARKS / "recipe_v6" / "average_checkpoints.py", monkeypatch)
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
    module = _load(BENCHMARKS / "recipe_v6" / "average_checkpoints.py", monkeypatch)
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
    module = _load(BENCHMARKS / "recipe_v6" / "probe_direction.py", monkeypatch)
    out = tmp_path / "direction.md"
    with pytest.raises(SystemExit) as refused:
        module.main([str(tmp_path), "--out", str(out)])
    assert refused.value.code == 2 and "not a saved sentence-transformers model" in capsys.readouterr().err
    assert not out.exists()
