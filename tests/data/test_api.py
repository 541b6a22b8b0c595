"""Package exports, one-call builders and the ``st-debias build`` subcommand."""

from __future__ import annotations

import json

import pytest

import st_debias.data as data


def test_lazy_exports_resolve():
    for name in data.__all__:
        assert getattr(data, name) is not None
    with pytest.raises(AttributeError):
        data.not_a_builder  # noqa: B018


def test_build_negation_dataset_and_cli(negator, wiki, tmp_path, monkeypatch):
    rows, report = data.build_negation_dataset(wiki[:30], negator=negator, return_report=True,
                                               on_missing_paraphrase="anchor")
    assert rows.column_names == ["anchor", "paraphrase", "negation"] and report.rows == len(rows)

    from st_debias.cli import main

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(wiki[:12] + ["", "No verb here at all."]) + "\n")
    monkeypatch.setenv("ST_DEBIAS_SPACY_MODEL", negator.model)
    assert main(["build", "negation", "-i", str(corpus), "-o", str(tmp_path / "out")]) == 0
    saved = json.loads((tmp_path / "out" / "report.json").read_text())
    assert saved["inputs"] == 14 and saved["skipped"]["empty"] == 1
    assert saved["anchors"] + sum(saved["skipped"].values()) == 14
    assert set(saved["generators"]) == {"syntactic"}  # the recipes' paraphraser, not word edits


def test_cli_build_generator_flag(negator, wiki, tmp_path, monkeypatch):
    """Failure mode: ``st-debias build negation`` always used word-edit paraphrases; ``--generator`` now chooses."""
    from datasets import load_from_disk

    from st_debias.cli import main

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(wiki[:12]) + "\n")
    monkeypatch.setenv("ST_DEBIAS_SPACY_MODEL", negator.model)
    assert main(["build", "negation", "-i", str(corpus), "-o", str(tmp_path / "edits"), "--generator", "edits"]) == 0
    assert set(json.loads((tmp_path / "edits" / "report.json").read_text())["generators"]) == {"edit_chain"}
    assert main(["build", "negation", "-i", str(corpus), "-o", str(tmp_path / "drop"), "--generator", "dropout"]) == 0
    rows = load_from_disk(str(tmp_path / "drop" / "dataset"))
    assert len(rows) > 0 and rows["anchor"] == rows["paraphrase"]
    with pytest.raises(SystemExit):
        main(["build", "negation", "-i", str(corpus), "-o", str(tmp_path / "x"), "--generator", "magic"])
