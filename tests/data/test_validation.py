"""Bad input to the data builders fails early with a message naming where; any iterable of sentences works."""

from __future__ import annotations

import pytest

from st_debias.data.io.corpus import read_sentences
from st_debias.datafiles import DataFileError


def test_non_utf8_corpus_names_file_line_and_byte(data_root, tmp_path):
    """Failure mode: a Latin-1 corpus gave ``'utf-8' codec can't decode byte 0xe9 in position 1366``, no file, no line."""
    lines = (data_root / "corpus" / "wiki_sentences.txt").read_text(encoding="utf-8").splitlines()[:40]
    encoded = [line.encode("utf-8") for line in lines]
    encoded[29] = "Caf\u00e9 society ".encode("latin-1") + encoded[29]  # one Latin-1 line in a UTF-8 file
    corpus = tmp_path / "latin1.txt"
    corpus.write_bytes(b"\n".join(encoded))
    with pytest.raises(DataFileError, match=r"latin1.txt:30: is not valid UTF-8: byte 0xe9 at column 4"):
        read_sentences(corpus)


def test_a_byte_order_mark_is_removed_with_a_warning(tmp_path, caplog):
    """Failure: a UTF-8 byte-order mark began the first sentence, silently."""
    import logging

    corpus = tmp_path / "bom.txt"
    corpus.write_bytes("\ufeffThe first sentence.\nThe second one.\n".encode())
    with caplog.at_level(logging.WARNING):
        assert read_sentences(corpus) == ["The first sentence.", "The second one."]
    assert f"{corpus} starts with a UTF-8 byte-order mark; it was removed." in caplog.text


def test_a_nul_byte_names_file_line_and_column(tmp_path):
    """Failure: NUL bytes ended up in the training rows, silently."""
    corpus = tmp_path / "nul.txt"
    corpus.write_bytes(b"A sentence.\nAnother one.\nBad\x00line.\n")
    with pytest.raises(DataFileError, match=rf"^{corpus}:3: holds a NUL byte at column 4"):
        read_sentences(corpus)


def test_negate_one_string_gives_one_result(negator):
    """Failure mode: ``Negator().negate("The cat sleeps.")`` treated the string as 15 one-character sentences."""
    result = negator.negate("The cat sleeps.")
    assert result.text == "The cat does not sleep." and result.rule == "do_vbz"
    many = negator.negate(sentence for sentence in ["The cat sleeps.", "It is raining."])
    assert [r.text for r in many] == ["The cat does not sleep.", "It is not raining."]


@pytest.mark.parametrize("weight", [float("nan"), -1.0, float("inf"), "1.0"])
def test_ipw_weight_rejected_at_construction(weight):
    """Failure mode: ``IPWBuilder(weight=nan)`` or ``weight=-1`` wrote NaN/-1 labels that failed only at training."""
    from st_debias.data.ipw.builder import IPWBuilder

    with pytest.raises(ValueError, match="weight must be a finite number >= 0"):
        IPWBuilder(weight=weight)


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ({"negative_range": (0.75, 0.25)}, "negative_range must satisfy"),
        ({"temperature": 0.0}, "temperature must be a finite number > 0"),
        ({"lambda_n": 1.5}, r"lambda_n must be in \[0, 1\]"),
        ({"pool_size": 1, "num_negatives": 2}, r"pool_size \(1\) must be >= num_negatives"),
    ],
)
def test_ipw_options_rejected_at_construction(option, message):
    """Failure mode: out-of-range sampling options were accepted and failed (or silently misbehaved) mid-build."""
    from st_debias.data.ipw.builder import IPWBuilder

    with pytest.raises(ValueError, match=message):
        IPWBuilder(**option)


def test_ipw_callable_weight_checked_per_row(session_tiny_model, cache_dir, wiki):
    """Failure mode: a weight function returning NaN wrote NaN labels; now the build stops naming the anchor."""
    from st_debias.data.ipw.builder import IPWBuilder
    from st_debias.data.paraphrase.edits import WordDeletion

    builder = IPWBuilder(
        session_tiny_model,
        positive_generators=[WordDeletion()],
        negative_range=(0.9, 0.99),
        pool_size=8,
        weight=lambda row: float("nan"),
        cache_dir=cache_dir,
        show_progress_bar=False,
    )
    with pytest.raises(
        ValueError, match=r"weight\(row of anchor .*\) returned must be a finite number >= 0, got nan"
    ):
        builder.build(wiki[:60])


def test_builders_take_generators_and_dataset_columns(negator, session_tiny_model, cache_dir, wiki):
    """Failure mode: a generator raised ``object of type 'generator' has no len()``; Dataset columns were refused."""
    from datasets import Dataset

    from st_debias.data import OssCSEBuilder, build_ipw_dataset
    from st_debias.data.paraphrase.edits import WordDeletion

    sentences = wiki[:30]
    builder = OssCSEBuilder(negator, paraphrase_generators=[], on_missing_paraphrase="anchor")
    expected = builder.build(sentences).to_dict()
    table = Dataset.from_dict({"id": list(range(30)), "text": sentences})
    assert builder.build(s for s in sentences).to_dict() == expected
    assert builder.build(table["text"]).to_dict() == expected
    assert builder.build(table, column="text").to_dict() == expected
    assert builder.build(table.select_columns(["text"])).to_dict() == expected
    with pytest.raises(ValueError, match=r"columns \['id', 'text'\]; pass column="):
        builder.build(table)
    with pytest.raises(ValueError, match="has no column 'sentence'"):
        builder.build(table, column="sentence")
    with pytest.raises(ValueError, match="no sentences given"):
        builder.build(iter([]))

    options = dict(
        positive_generators=[WordDeletion()],
        negative_range=(0.9, 0.99),
        pool_size=8,
        cache_dir=cache_dir,
        show_progress_bar=False,
    )
    rows = build_ipw_dataset(wiki[:60], session_tiny_model, **options)
    assert (
        build_ipw_dataset((s for s in wiki[:60]), session_tiny_model, **options).to_dict() == rows.to_dict()
    )


def test_negation_builder_defaults_to_the_recipes_syntactic_paraphrases(negator, wiki):
    """Failure mode: the builder defaulted to word-edit paraphrases ("Mary was horrified and from Scotland.",
    "There are four early high schools in") while the recipes use the syntactic paraphraser."""
    from st_debias.data import OssCSEBuilder, SyntacticParaphraser

    builder = OssCSEBuilder(negator, mer_range=(0.1, 0.7))
    assert [type(g) for g in builder.paraphrase_generators] == [SyntacticParaphraser]
    assert builder.paraphrase_generators[0].mer_window == (0.1, 0.7)
    rows = builder.build(wiki[:40])
    assert set(builder.report.generators) == {"syntactic"} and len(rows) > 0


def test_probe_tsv_rows_are_checked(data_root, tmp_path):
    """Failure mode: a CANNOT probe row with a missing or empty column was skipped silently (or shifted
    columns); the shared reader names file, line and column."""
    from st_debias.datafiles import tsv_records

    source = data_root / "probes" / "cannot" / "glue_diagnostic.tsv"
    rows = list(tsv_records(source, ["sentence", "negated"], optional=["paraphrase"]))
    assert len(rows) == 154 and rows[0] == (
        2,
        {"sentence": "The cat sat on the mat.", "negated": "The cat did not sit on the mat."},
    )
    lines = source.read_text(encoding="utf-8").splitlines()[:10]
    for broken, message in [
        (lines[6].split("\t")[0], "glue.tsv:7: has 1 tab-separated fields, the header has 2"),
        (lines[6].split("\t")[0] + "\t ", "glue.tsv:7: field 'negated' is empty"),
    ]:
        copy = tmp_path / "glue.tsv"
        copy.write_text("\n".join([*lines[:6], broken, *lines[7:]]) + "\n", encoding="utf-8")
        with pytest.raises(DataFileError, match=message):
            list(tsv_records(copy, ["sentence", "negated"]))
    copy.write_text("text\tnegation\na\tb\n", encoding="utf-8")
    with pytest.raises(DataFileError, match=r"glue.tsv:1: header \['text', 'negation'\] lacks"):
        list(tsv_records(copy, ["sentence", "negated"]))
