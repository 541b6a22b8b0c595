"""The extension seam: losses, data kinds and ``data.mix`` sources added from outside st_debias, through Python
entry points (an installed package) or the ``register_*`` functions, and what a loss declares instead of being
named in the recipe machinery."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from st_debias.data.kinds import DATA_KINDS
from st_debias.recipes.losses import LOSSES
from st_debias.recipes.mix_sources import MIX_SOURCES
from st_debias.registry import Registry, register_data_kind, register_loss, register_mix_source

REPO = Path(__file__).resolve().parents[1]

PLUGIN = '''
from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss
from st_debias.recipes.mix_sources import MixSource


class ThirdPartyLoss(MultipleNegativesRankingLoss):
    """MultipleNegativesRankingLoss that leaves a mark each time it is built for training."""

    def __init__(self, model, scale: float = 20.0, mark: str = "") -> None:
        super().__init__(model, scale=scale)
        if model is not None and mark:
            open(mark, "a").write("built\\n")


def _rows(*, data_dir=None, sentences=None, cache_dir=None):
    return [("A third-party row.", "A row from a plugin.", "Nothing like it.")] * 4, {"rows": 4}


THIRD_PARTY_SOURCE = MixSource(_rows, reads_corpus=False)
'''


def _install_plugin(root: Path) -> Path:
    """A package installed the way pip leaves one (module + ``*.dist-info`` with ``entry_points.txt``) under
    ``root``, for a process that has ``root`` on its path."""
    root.mkdir()
    (root / "third_party_plugin.py").write_text(PLUGIN, encoding="utf-8")
    info = root / "third_party_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: third-party-plugin\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(
        "[st_debias.losses]\nThirdPartyLoss = third_party_plugin:ThirdPartyLoss\n\n"
        "[st_debias.mix_sources]\nthird_party = third_party_plugin:THIRD_PARTY_SOURCE\n",
        encoding="utf-8",
    )
    return root


def test_a_loss_and_a_mix_source_of_an_installed_package_train_through_the_cli(tiny_bert_dir: Path, tmp_path: Path) -> None:
    """A package declares its loss and its ``data.mix`` source as entry points; ``st-debias train --recipe its.yaml``
    in a fresh process finds both, builds the loss for training and mixes the rows in. st_debias is not touched."""
    plugin = _install_plugin(tmp_path / "site")
    mark = tmp_path / "built.txt"
    recipe = tmp_path / "its.yaml"
    recipe.write_text(textwrap.dedent(f"""\
        name: third-party
        version: 1
        data:
          kind: minimal_pairs
          mix: {{third_party: 0.5}}
        loss:
          name: ThirdPartyLoss
          params: {{scale: 10.0, mark: {json.dumps(str(mark))}}}
        training:
          steps: 2
          batch_size: 4
        """), encoding="utf-8")
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("".join(f"The house number {n} is large and old.\n" for n in range(40)), encoding="utf-8")
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(plugin), str(REPO)])}
    command = [sys.executable, "-m", "st_debias.cli", "train", "--recipe", str(recipe), "--model", str(tiny_bert_dir),
               "--corpus", str(corpus), "--output", str(tmp_path / "run"), "--cache-dir", str(tmp_path / "cache"),
               "--max-seq-length", "16", "--no-eval"]
    done = subprocess.run(command, env=environment, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert mark.read_text(encoding="utf-8").count("built") == 1
    report = json.loads((tmp_path / "run" / "data_report.json").read_text(encoding="utf-8"))
    assert report["mix"]["third_party"]["rows"] > 0
    assert json.loads((tmp_path / "run" / "run.json").read_text(encoding="utf-8"))["loss"]["name"] == "ThirdPartyLoss"


def test_an_entry_point_cannot_replace_st_debias_s_own(tmp_path: Path, monkeypatch, caplog) -> None:
    """An entry point named like a built-in loss is ignored, with a warning naming it; the built-in stays."""
    root = tmp_path / "site"
    root.mkdir()
    (root / "shadow.py").write_text("class FocalInfoNCE:\n    pass\n", encoding="utf-8")
    info = root / "shadow-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: shadow\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[st_debias.test_group]\nFocalInfoNCE = shadow:FocalInfoNCE\n"
                                           "Other = shadow:FocalInfoNCE\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(root))
    registry = Registry("loss", "st_debias.test_group", {"FocalInfoNCE": "st_debias.losses:FocalInfoNCE"})
    assert sorted(registry) == ["FocalInfoNCE", "Other"]
    assert registry["FocalInfoNCE"].__module__.startswith("st_debias.losses")
    assert "shadow:FocalInfoNCE" in caplog.text and "st_debias has its own" in caplog.text
    assert registry.builtin() == ["FocalInfoNCE"]


def test_register_functions_check_what_they_are_given() -> None:
    """The register functions refuse the wrong sort of entry and a taken name, and never replace a built-in."""
    import torch

    class Plain(torch.nn.Module):
        pass

    with pytest.raises(TypeError, match="torch.nn.Module subclass"):
        register_loss(object)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="already registered"):
        register_loss(Plain, "MarginNegationLoss", replace=True)
    with pytest.raises(TypeError, match="DataKind named"):
        register_data_kind("minimal_pairs")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="MixSource"):
        register_mix_source("rows", lambda **_: ([], {}))  # type: ignore[arg-type]
    register_loss(Plain)
    try:
        assert LOSSES["Plain"] is Plain
        with pytest.raises(ValueError, match="already registered"):
            register_loss(Plain)
        register_loss(Plain, replace=True)
    finally:
        LOSSES.unregister("Plain")
    assert "Plain" not in LOSSES
    with pytest.raises(ValueError, match="st_debias's own"):
        LOSSES.unregister("FocalInfoNCE")


def test_a_registered_data_kind_is_built_by_st_debias_build(tmp_path: Path) -> None:
    """A kind added with ``register_data_kind`` is a choice of ``st-debias build`` (its summary generated from the
    registry) and builds there like st_debias's own."""
    import dataclasses

    from st_debias.cli import main

    kind = dataclasses.replace(DATA_KINDS["simcse"], name="echo", description="(anchor, anchor) pairs, again")
    register_data_kind(kind)
    try:
        corpus = tmp_path / "corpus.txt"
        corpus.write_text("One sentence.\nAnother sentence.\n", encoding="utf-8")
        assert main(["build", "echo", "--input", str(corpus), "--output", str(tmp_path / "rows")]) == 0
        assert (tmp_path / "rows" / "dataset_info.json").is_file() or any((tmp_path / "rows").iterdir())
    finally:
        DATA_KINDS.unregister("echo")


def test_the_recipe_machinery_names_no_loss_and_no_data_kind() -> None:
    """What a loss or a data kind needs is declared by it (``from_recipe``, ``logs_parts``, ``text_columns``, the
    kind's fields): no condition in the recipe machinery compares with a registered name."""
    names = set(LOSSES.builtin()) | set(DATA_KINDS.builtin()) | set(MIX_SOURCES.builtin())
    found = []
    for path in (REPO / "st_debias" / "recipes" / "losses.py", REPO / "st_debias" / "recipes" / "train.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.If | ast.IfExp | ast.While | ast.Assert | ast.comprehension | ast.BoolOp | ast.Compare):
                for leaf in ast.walk(node):
                    if isinstance(leaf, ast.Constant) and leaf.value in names:
                        found.append(f"{path.name}:{leaf.lineno} {leaf.value!r}")
    assert not found, found
