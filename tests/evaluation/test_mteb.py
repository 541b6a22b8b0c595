"""MTEB path: local AbsTaskSTS tasks, identical scores to MTEB's registered task on identical data, no cache mix-up."""

from __future__ import annotations

import mteb
import pytest
from datasets import Dataset, DatasetDict

from st_debias.evaluation import EmbeddingCache, local_task, run_mteb, spearman_x100
from st_debias.evaluation.mteb_tasks import _mteb_model, mteb_tasks
from st_debias.evaluation.sts_data import load_sts
from st_debias.paths import DataNotFoundError

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
    wrapper = _mteb_model(tiny_model, "tiny")
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
    assert result["sources"]["SICK-R"]["pairs"] == 4927 and "4,927" in result["sources"]["SICK-R"]["note"]


def test_cache_never_mixes_checkpoints(tiny_model, tiny_model_other, mini_data, tmp_path):
    """Two checkpoints saved under the same label must not read each other's cached MTEB results."""
    first = run_mteb(
        tiny_model, ["STS13"], data="local", data_dir=mini_data, label="run/final", cache_dir=tmp_path
    )
    second = run_mteb(
        tiny_model_other, ["STS13"], data="local", data_dir=mini_data, label="run/final", cache_dir=tmp_path
    )
    assert first["model_name"] == second["model_name"]
    assert first["revision"] != second["revision"]
    assert first["scores"]["STS13"] != second["scores"]["STS13"]
    again = run_mteb(
        tiny_model, ["STS13"], data="local", data_dir=mini_data, label="run/final", cache_dir=tmp_path
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
    with pytest.raises(ValueError, match="Unknown STS task"):
        local_task("STS22", mini_data)
