"""MTEB path: local AbsTaskSTS tasks, identical scores to MTEB's registered task on identical data, no cache mix-up."""

from __future__ import annotations

import mteb
import pytest
from datasets import Dataset, DatasetDict

from st_debias.evaluation import EmbeddingCache, local_task, run_mteb, spearman_x100
from st_debias.evaluation.bias_data import NEGATION_MEANING_LINES, load_negation_meaning_items
from st_debias.evaluation.mteb_tasks import mteb_model, mteb_tasks
from st_debias.evaluation.sts_data import load_sts
from st_debias.paths import DataNotFoundError
from tests.evaluation.conftest import MINI_CORPUS_LINES, MINI_NEGATION_MEANING_LINES

# mteb 2.26 calls sentence-transformers APIs that 6.2 renamed; not ours to fix
pytestmark = [
    pytest.mark.filterwarnings("ignore:.*get_sentence_embedding_dimension.*:FutureWarning"),
    pytest.mark.filterwarnings("ignore:The fill_missing parameter:DeprecationWarning"),
]


def _score(model, task):
    result = mteb.evaluate(model, task, cache=None, show_progress_bar=False, encode_kwargs={"batch_size": 32})
    return result.task_results[0].get_score()


def test_local_task_equals_registered_task_on_identical_data(tiny_model, mini_data):
    """Hub path and local path share MTEB's scoring: the registered STS16 task fed the local rows scores the same."""
    local = local_task("STS16", mini_data)
    registered = mteb.get_task("STS16")
    data = load_sts("STS16", mini_data)
    registered.dataset = DatasetDict(
        {
            "test": Dataset.from_dict(
                {"sentence1": data.sentences1, "sentence2": data.sentences2, "score": data.scores}
            )
        }
    )
    registered.data_loaded = True
    wrapper = mteb_model(tiny_model, "tiny")
    assert _score(wrapper, local) == _score(wrapper, registered)


def test_local_task_metadata_and_fast_path_agree(tiny_model, mini_data):
    task = local_task("SICK-R", mini_data)
    assert task.metadata.name == "SICK-R-local"
    assert task.metadata.main_score == "cosine_spearman"
    result = run_mteb(tiny_model, ["SICK-R"], data="local", data_dir=mini_data, label="tiny")
    data = load_sts("SICK-R", mini_data)
    fast = spearman_x100(EmbeddingCache(tiny_model).cosine(data.sentences1, data.sentences2), data.scores)
    assert result["scores"]["SICK-R"] == pytest.approx(fast, abs=1e-4)
    assert result["data"] == "local"
    assert result["sources"]["SICK-R"]["pairs"] == len(data) == 60


def test_sick_r_pair_count_is_the_real_one(tiny_model, mini_data):
    """Issue 13: mteb_tasks overwrote SICK-R's pair count with 4,927, so 60 pairs were reported as 4,927."""
    result = run_mteb(tiny_model, ["SICK-R"], data="local", data_dir=mini_data, label="tiny")
    assert result["sources"]["SICK-R"]["pairs"] == 60
    assert "4,927" not in result["sources"]["SICK-R"].get("note", "")


def test_cache_never_mixes_checkpoints(tiny_model, tiny_model_other, mini_data, tmp_path):
    """Two checkpoints saved under the same label must not read each other's cached MTEB results."""
    first = run_mteb(
        tiny_model, ["STS13"], data="local", data_dir=mini_data, label="run/final", mteb_cache_dir=tmp_path
    )
    second = run_mteb(
        tiny_model_other, ["STS13"], data="local", data_dir=mini_data, label="run/final", mteb_cache_dir=tmp_path
    )
    assert first["model_name"] == second["model_name"]
    assert first["revision"] != second["revision"]
    assert first["scores"]["STS13"] != second["scores"]["STS13"]
    again = run_mteb(
        tiny_model, ["STS13"], data="local", data_dir=mini_data, label="run/final", mteb_cache_dir=tmp_path
    )
    assert again["scores"]["STS13"] == pytest.approx(
        first["scores"]["STS13"], abs=1e-3
    )  # cache stores rounded
    assert len(list(tmp_path.rglob("STS13-local.json"))) == 2


def test_auto_uses_local_when_a_folder_is_set(mini_data, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    tasks, source = mteb_tasks(["STS12"], data="auto", data_dir=mini_data)
    assert source == "local" and tasks[0].metadata.name == "STS12-local"
    with pytest.raises(ValueError, match="'auto', 'local' or 'hub'"):
        mteb_tasks(["STS12"], data="web")
    with pytest.raises(DataNotFoundError, match="offline mode"):
        mteb_tasks(["STS12"], data="hub")
    with pytest.raises(DataNotFoundError, match=f"'STS22' has no local copy in the data folder {mini_data}"):
        local_task("STS22", mini_data)


def test_run_mteb_accepts_a_model_path(tiny_model, tiny_st_dir, mini_data):
    """Issue 12: run_mteb('path/to/model') failed with "'str' object has no attribute 'state_dict'"."""
    from_path = run_mteb(str(tiny_st_dir), ["STS13"], data="local", data_dir=mini_data)
    from_model = run_mteb(tiny_model, ["STS13"], data="local", data_dir=mini_data, label="tiny")
    assert from_path["scores"]["STS13"] == pytest.approx(from_model["scores"]["STS13"], abs=1e-6)
    assert from_path["model_name"] == "st-debias/final" and from_path["revision"] == from_model["revision"]


def test_cont_oppn_tasks_score_like_the_bias_block(tiny_model, mini_data):
    """STSBenchmark-Cont/-Oppn through mteb.evaluate give the Cont/Oppn Spearman of cont_oppn_scores."""
    from st_debias.evaluation import cont_oppn_scores

    result = run_mteb(
        tiny_model, ["STSBenchmark-Cont", "STSBenchmark-Oppn"], data="local", data_dir=mini_data, label="tiny"
    )
    data = load_sts("STSBenchmark", mini_data)
    block = cont_oppn_scores(data, EmbeddingCache(tiny_model).cosine(data.sentences1, data.sentences2))
    assert block["eligible"]
    assert result["scores"]["STSBenchmark-Cont"] == pytest.approx(block["cont"]["spearman"], abs=1e-4)
    assert result["scores"]["STSBenchmark-Oppn"] == pytest.approx(block["oppn"]["spearman"], abs=1e-4)
    assert result["sources"]["STSBenchmark-Oppn"]["pairs"] == block["oppn"]["pairs"]
    task = local_task("STSBenchmark-Oppn", mini_data)
    meta = task.metadata
    assert meta.type == "STS" and meta.main_score == "cosine_spearman"
    assert (
        meta.reference.startswith("https://aclanthology.org/")
        and meta.license
        and "OssCSE" in meta.bibtex_citation
    )
    assert meta.dataset["path"].endswith("stsb_test.jsonl") and len(meta.dataset["revision"]) == 64
    with pytest.raises(ValueError, match="STS12-Cont"):
        local_task("STS12-Cont", mini_data)


def test_pair_classification_probe_tasks(tiny_model, mini_data):
    """CANNOT negations and word-order shuffles (label 0) against STS-B paraphrases (label 1), cosine AP."""
    import numpy as np
    from sklearn.metrics import average_precision_score

    from st_debias.evaluation.mteb_probes import PARAPHRASE_THRESHOLD

    names = ["CANNOTNegationPC", "WikiWordOrderPC"]
    result = run_mteb(tiny_model, names, data="local", data_dir=mini_data, label="tiny")
    assert set(result["scores"]) == {*names, "avg"}  # one metric kind: one average
    cache = EmbeddingCache(tiny_model)
    stsb = load_sts("STSBenchmark", mini_data)
    para = [i for i, s in enumerate(stsb.scores) if s > PARAPHRASE_THRESHOLD]
    for name in names:
        task = local_task(name, mini_data)
        task.load_data()
        rows = task.dataset["test"]
        labels = np.asarray(rows["labels"])
        assert labels.sum() == len(para) and (labels == 0).sum() > 0
        assert task.metadata.type == "PairClassification" and task.metadata.main_score == "cosine_ap"
        expected = average_precision_score(labels, cache.cosine(rows["sentence1"], rows["sentence2"]))
        assert result["scores"][name] == pytest.approx(100 * expected, abs=1e-3)
    assert (
        result["sources"]["WikiWordOrderPC"]["lines"][1]
        == NEGATION_MEANING_LINES[0] + MINI_NEGATION_MEANING_LINES + MINI_CORPUS_LINES
        and result["sources"]["WikiWordOrderPC"]["seed"] == 0
    )


def test_negation_meaning_pair_task(tiny_model, mini_data):
    """'not A' beside its paraphrase 'B' (label 1) and beside 'A' and 'not B' (label 0); MTEB's cosine AP."""
    import numpy as np
    from sklearn.metrics import average_precision_score

    items = load_negation_meaning_items(mini_data)
    task = local_task("WikiNegationMeaningPC", mini_data)
    task.load_data()
    rows = task.dataset["test"]
    labels = np.asarray(rows["labels"])
    assert labels.sum() == len(items) and (labels == 0).sum() == 2 * len(items)
    assert rows["sentence1"][: len(items)] == items.negated and rows["sentence2"][: len(items)] == items.antonym
    assert task.st_debias_source["chance_ap"] == pytest.approx(1 / 3)
    result = run_mteb(tiny_model, ["WikiNegationMeaningPC"], data="local", data_dir=mini_data, label="tiny")
    expected = average_precision_score(labels, EmbeddingCache(tiny_model).cosine(rows["sentence1"], rows["sentence2"]))
    assert result["scores"]["WikiNegationMeaningPC"] == pytest.approx(100 * expected, abs=1e-3)


def test_mteb_model_keeps_two_local_models_apart_in_one_result_cache(
    tiny_model, tiny_model_other, mini_data, tmp_path
):
    """A plain local SentenceTransformer is filed under no_model_name_available/no_revision_available, so a
    second local model read the first one's cached score; wrapped by mteb_model, each gets its own."""
    from mteb.cache import ResultCache

    cache = ResultCache(cache_path=str(tmp_path))
    scores = []
    for model in (tiny_model, tiny_model_other):
        tasks, _ = mteb_tasks(["STSBenchmark-Oppn"], data="local", data_dir=mini_data)
        result = mteb.evaluate(mteb_model(model), tasks, cache=cache, show_progress_bar=False)
        scores.append(result.task_results[0].get_score())
    fresh, _ = mteb_tasks(["STSBenchmark-Oppn"], data="local", data_dir=mini_data)
    uncached = mteb.evaluate(mteb_model(tiny_model_other), fresh, cache=None, show_progress_bar=False)
    assert scores[0] != scores[1]
    assert scores[1] == pytest.approx(uncached.task_results[0].get_score(), abs=1e-4)
    assert not list(tmp_path.rglob("no_model_name_available"))


@pytest.mark.parametrize("probe", ["STSBenchmark-Oppn", "WikiWordOrderPC", "STS12"])
def test_a_plain_local_model_cannot_leave_a_probe_score_for_another(
    probe, tiny_model, tiny_model_other, mini_data, tmp_path
):
    """Followed as MTEB documents it (a plain SentenceTransformer and a ResultCache), the second local model got
    the first one's STS16-Oppn and WikiWordOrderPC scores, filed under no_model_name_available, with no warning.
    A probe task now refuses a model without an MTEB name, naming mteb_model, before anything is scored or
    cached; wrapped, each model gets its own score."""
    from mteb.cache import ResultCache

    cache = ResultCache(cache_path=str(tmp_path))
    for model in (tiny_model, tiny_model_other):
        tasks, _ = mteb_tasks([probe], data="local", data_dir=mini_data)
        with pytest.raises(ValueError, match="mteb_model"):
            mteb.evaluate(model, tasks, cache=cache, show_progress_bar=False)
    assert not list(tmp_path.rglob("no_model_name_available"))
    scores = []
    for model in (tiny_model, tiny_model_other):
        tasks, _ = mteb_tasks([probe], data="local", data_dir=mini_data)
        scores.append(mteb.evaluate(mteb_model(model), tasks, cache=cache, show_progress_bar=False).task_results[0].get_score())
    assert scores[0] != scores[1]


def test_averages_are_per_metric_kind_and_pair_tasks_carry_chance(tiny_model, mini_data):
    """'MTEB avg of 3 tasks' averaged one Spearman with two average precisions; CANNOTNegationPC's score
    was printed without its chance level (the share of paraphrase pairs)."""
    from st_debias.evaluation import compare_table

    names = ["STSBenchmark-Oppn", "CANNOTNegationPC", "WikiWordOrderPC"]
    result = run_mteb(tiny_model, names, data="local", data_dir=mini_data, label="tiny")
    scores = result["scores"]
    assert "avg" not in scores
    assert scores["avg cosine_spearman"] == pytest.approx(scores["STSBenchmark-Oppn"])
    assert scores["avg cosine_ap"] == pytest.approx((scores["CANNOTNegationPC"] + scores["WikiWordOrderPC"]) / 2)
    for name in ("CANNOTNegationPC", "WikiWordOrderPC"):
        task = local_task(name, mini_data)
        task.load_data()
        labels = task.dataset["test"]["labels"]
        assert result["chance"][name] == pytest.approx(100 * sum(labels) / len(labels))
    assert "STSBenchmark-Oppn" not in result["chance"]
    entry = {"model": "tiny", "mteb": scores, "sources": {"mteb": result}}
    table = compare_table([entry])
    assert "MTEB avg of" not in table
    assert "MTEB avg cosine_ap of 2 tasks" in table and "MTEB avg cosine_spearman of 1 task " in table
    assert f"MTEB CANNOTNegationPC (chance {result['chance']['CANNOTNegationPC']:.1f})" in table


def test_one_metric_kind_keeps_a_single_average():
    from st_debias.evaluation.mteb_tasks import average_by_metric

    assert average_by_metric({"a": 1.0, "b": 3.0}, {"a": "cosine_spearman", "b": "cosine_spearman"}) == {"avg": 2.0}


def test_the_docs_mteb_evaluate_example_runs_and_names_the_model(mini_data, tmp_path, monkeypatch):
    """The probe-task page's Python examples run as written; the mteb.evaluate one caches under st-debias/."""
    import re
    from pathlib import Path

    page = (Path(__file__).resolve().parents[2] / "docs" / "mteb_probes.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", page, flags=re.S)
    assert len(blocks) == 2 and "mteb_model(" in blocks[1]
    monkeypatch.setenv("ST_DEBIAS_DATA", str(mini_data))
    monkeypatch.chdir(tmp_path)
    for block in blocks:
        exec(compile(block, "docs/mteb_probes.md", "exec"), {})  # noqa: S102 - the page's own example
    saved = {path.parent.parent.name for path in (tmp_path / "mteb-cache").rglob("CANNOTNegationPC.json")}
    assert saved == {"st-debias__all-MiniLM-L6-v2"}


def test_the_mteb_cache_has_one_name_in_python_and_on_the_command_line(tmp_path):
    """It was --mteb-cache on the command line, mteb_cache_dir in evaluate_model and cache_dir in run_mteb."""
    import inspect

    from st_debias.cli import build_parser
    from st_debias.evaluation import evaluate_model

    assert "mteb_cache_dir" in inspect.signature(run_mteb).parameters
    assert "mteb_cache_dir" in inspect.signature(evaluate_model).parameters
    for flag in ("--mteb-cache-dir", "--mteb-cache"):  # the older spelling still parses
        args = build_parser("eval").parse_args(["eval", "m", "--output", str(tmp_path), flag, "x"])
        assert args.mteb_cache_dir == "x"


def test_the_lazy_package_keeps_mteb_tasks_the_function_once_its_module_is_imported():
    """Importing st_debias.evaluation.mteb_tasks (the module) bound it on the lazy package under the function's
    name, so ``from st_debias.evaluation import mteb_tasks`` returned a module ('module' object is not callable)."""
    import importlib
    import types

    importlib.import_module("st_debias.evaluation.mteb_tasks")
    from st_debias.evaluation import mteb_tasks as exported

    assert callable(exported) and not isinstance(exported, types.ModuleType)
