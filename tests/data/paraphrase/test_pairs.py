"""The ``paraphrase`` data kind: each sentence beside one of its syntactic paraphrases, on real sentences."""

from __future__ import annotations

import json

from datasets import load_from_disk

from st_debias.data.kinds import DATA_KINDS
from st_debias.data.paraphrase.pairs import ParaphrasePairBuilder
from st_debias.data.text import match_error_rate


def test_rows_are_paraphrases_in_the_window_and_skips_are_counted(wiki, negator):
    sentences = wiki[:150]
    builder = ParaphrasePairBuilder(seed=4, negator=negator, mer_window=(0.1, 0.5))
    rows = builder.build(sentences)
    report = builder.report
    assert rows.column_names == ["anchor", "positive"] and 0 < len(rows) < len(sentences)
    assert report.rows + report.skipped["no_paraphrase"] == report.inputs - sum(
        v for k, v in report.skipped.items() if k != "no_paraphrase"
    )
    for anchor, positive in zip(rows["anchor"], rows["positive"], strict=True):
        assert anchor in sentences and positive != anchor
        assert 0.1 <= match_error_rate(anchor, positive) <= 0.5
    again = ParaphrasePairBuilder(seed=4, negator=negator, mer_window=(0.1, 0.5)).build(sentences)
    assert again.to_dict() == rows.to_dict()
    other = ParaphrasePairBuilder(seed=5, negator=negator, mer_window=(0.1, 0.5)).build(sentences)
    assert other["positive"] != rows["positive"]


def test_cli_builds_paraphrase_rows(wiki, negator, tmp_path, monkeypatch):
    from st_debias.cli import main

    monkeypatch.setenv("ST_DEBIAS_SPACY_MODEL", negator.model)
    text = tmp_path / "corpus.txt"
    text.write_text("\n".join(wiki[:60]) + "\n", encoding="utf-8")
    out = tmp_path / "rows"
    code = main(["build", "paraphrase", "--input", str(text), "--output", str(out), "--num-proc", "2",
                 "--option", "max_candidates=2", "--cache-dir", str(tmp_path / "cache")])  # fmt: skip
    assert code == 0
    rows = load_from_disk(str(out / "dataset"))
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert rows.column_names == list(DATA_KINDS["paraphrase"].columns) and report["rows"] == len(rows) > 0
