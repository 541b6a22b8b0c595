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
