"""Inference backends: torch's figures from ONNX Runtime and OpenVINO, never mixed up, never silently torch.

A backend whose runtime is not installed is skipped with the extra that installs it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

import st_debias.evaluation.backends as backends_module
import st_debias.evaluation.embeddings as embeddings_module
import st_debias.evaluation.evaluate as evaluate_module
import st_debias.evaluation.runtimes as runtimes
from st_debias.cli import build_parser, main
from st_debias.evaluation.backends import (
    AUTO_CPU_ORDER,
    BACKEND_ENV,
    BACKENDS,
    FP32_BACKENDS,
    BackendUnavailable,
    backend_info,
    check_backend,
    model_backend,
    resolve_backend,
)
from st_debias.evaluation.evaluate import evaluate_model
from st_debias.evaluation.reuse import evaluate_or_reuse, evaluation_key
from st_debias.evaluation.runtimes import FP32_MIN_COSINE, FP32_TOLERANCE, BackendMismatch, backend_model
from st_debias.evaluation.sts_data import load_sts
from st_debias.fingerprint import model_fingerprint
from tests.evaluation.conftest import leaves

TASKS = ("sts", "bias")
CONVERTED = ("onnx", "openvino")


def require(backend: str) -> None:
    """Skip, naming the extra, when ``backend``'s runtime is not installed."""
    try:
        check_backend(backend)
    except BackendUnavailable as error:
        pytest.skip(str(error))


@pytest.fixture
def conversions(monkeypatch) -> list[str]:
    """Counts the conversions :func:`backend_model` makes."""
    calls: list[str] = []
    real = runtimes.convert

    def spy(model, transformer, info, folder, fingerprint):
        calls.append(info.name)
        return real(model, transformer, info, folder, fingerprint)

    monkeypatch.setattr(runtimes, "convert", spy)
    return calls


def sts_sentences(count: int = 300) -> list[str]:
    """Real STS-B test sentences, from a few words to past the tiny model's 32 tokens."""
    data = load_sts("STSBenchmark")
    return list(dict.fromkeys(data.sentences1 + data.sentences2))[:count]


# ---------------------------------------------------------------------------------------------------
# Choosing a backend
# ---------------------------------------------------------------------------------------------------


def test_eval_parses_every_backend_and_defaults_to_auto(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv(BACKEND_ENV, raising=False)
    parser = build_parser("eval")
    assert parser.parse_args(["eval", "m", "-o", str(tmp_path)]).backend == "auto"
    for backend in BACKENDS:
        assert parser.parse_args(["eval", "m", "-o", str(tmp_path), "--backend", backend]).backend == backend
    monkeypatch.setenv(BACKEND_ENV, "onnx")
    assert build_parser("eval").parse_args(["eval", "m", "-o", str(tmp_path)]).backend == "onnx"


def test_auto_is_the_first_installed_of_its_order_on_a_cpu_and_torch_on_an_accelerator(monkeypatch) -> None:
    import torch

    monkeypatch.setattr(torch.accelerator, "is_available", lambda: False)
    installed = [b for b in AUTO_CPU_ORDER if b == "torch" or _installed(b)]
    assert resolve_backend("auto") == installed[0]
    assert AUTO_CPU_ORDER[-1] == "torch" and set(AUTO_CPU_ORDER) <= set(FP32_BACKENDS), "auto never picks int8"
    for backend in AUTO_CPU_ORDER[:-1]:
        for module in backends_module.REQUIREMENTS[backend][0]:
            monkeypatch.setitem(sys.modules, module, None)  # as if not installed
    assert resolve_backend("auto") == "torch", "with no runtime installed, auto is torch, never an error"
    monkeypatch.setattr(torch.accelerator, "is_available", lambda: True)
    assert resolve_backend("auto") == "torch"
    monkeypatch.undo()
    installed = [b for b in CONVERTED if _installed(b)]
    if installed:  # a CPU order that tries a runtime first: still torch on an accelerator
        monkeypatch.setattr(backends_module, "AUTO_CPU_ORDER", (installed[0], "torch"))
        monkeypatch.setattr(torch.accelerator, "is_available", lambda: True)
        assert resolve_backend("auto") == "torch"
        monkeypatch.setattr(torch.accelerator, "is_available", lambda: False)
        assert resolve_backend("auto") == installed[0]


def _installed(backend: str) -> bool:
    try:
        check_backend(backend)
    except BackendUnavailable:
        return False
    return True


def test_auto_evaluates_with_torch_when_the_conversion_fails_its_check(
    session_tiny_model, mini_data: Path, tmp_path: Path, monkeypatch, caplog
) -> None:
    """Under ``auto`` a conversion that fails the equality check falls back to torch, labelled torch; a backend
    asked for by name raises instead."""
    import torch

    monkeypatch.setattr(torch.accelerator, "is_available", lambda: False)
    installed = [backend for backend in CONVERTED if _installed(backend)]
    if not installed:
        pytest.skip("neither onnxruntime nor openvino is installed: pip install 'st-debias[onnx]'")
    # A CPU where a converted backend was measured faster: auto tries it first.
    monkeypatch.setattr(backends_module, "AUTO_CPU_ORDER", (installed[0], "torch"))
    chosen = resolve_backend("auto")
    assert chosen == installed[0]

    def mismatch(model, backend, cache_dir=None):
        if backend == "torch":
            return model
        raise BackendMismatch(f"{backend} does not give torch's embeddings (test)")

    monkeypatch.setattr(evaluate_module, "backend_model", mismatch)
    entry = evaluate_model(session_tiny_model, ("sts",), mini_data, backend="auto", show_progress_bar=False,
                           sts_tasks=("STSBenchmark",), cache_dir=tmp_path)  # fmt: skip
    assert entry["backend"]["name"] == "torch" and "[" not in entry["model"]
    assert f"backend auto: {chosen} is not torch's" in caplog.text
    with pytest.raises(BackendMismatch):
        evaluate_model(session_tiny_model, ("sts",), mini_data, backend=chosen, show_progress_bar=False,
                       sts_tasks=("STSBenchmark",), cache_dir=tmp_path)  # fmt: skip


def test_eval_refuses_an_unknown_backend(tmp_path: Path, capsys) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["eval", "m", "-o", str(tmp_path), "--backend", "tensorrt"])
    assert stopped.value.code == 2
    assert "invalid choice: 'tensorrt'" in capsys.readouterr().err


def test_an_unknown_backend_is_refused_through_the_api() -> None:
    with pytest.raises(ValueError, match="Unknown backend 'tensorrt'"):
        check_backend("tensorrt")


@pytest.mark.parametrize("backend, module, extra", [("onnx", "onnxruntime", "onnx"), ("openvino", "openvino", "openvino")])
def test_a_missing_runtime_exits_2_naming_the_extra_before_any_model_loads(
    backend: str, module: str, extra: str, tiny_st_dir: Path, mini_data: Path, tmp_path: Path, monkeypatch, capsys
) -> None:
    """Failure: ``--backend onnx`` without onnxruntime ran torch and labelled the figures onnx, or failed only after
    loading the model and minutes of work."""
    monkeypatch.setitem(sys.modules, module, None)  # import fails as if not installed

    def no_load(*args, **kwargs):
        raise AssertionError("a model was loaded although the backend is missing")

    monkeypatch.setattr(embeddings_module, "load_any_model", no_load)
    out = tmp_path / "eval"
    code = main(["eval", str(tiny_st_dir), "--tasks", "sts", "--output", str(out), "--data-dir", str(mini_data),
                 "--backend", backend, "--no-progress"])  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err
    assert f"pip install 'st-debias[{extra}]'" in err and module in err
    assert not (out / "results.json").exists()
    with pytest.raises(BackendUnavailable, match=rf"st-debias\[{extra}\]"):
        evaluate_model(str(tiny_st_dir), ("sts",), mini_data, backend=backend, show_progress_bar=False)


# ---------------------------------------------------------------------------------------------------
# Cache keys and conversion cache
# ---------------------------------------------------------------------------------------------------


def test_the_evaluation_key_names_the_backend_and_torch_keys_are_unchanged(tiny_model, mini_data: Path) -> None:
    """Failure: onnx figures reused as torch's (or the reverse) because the key did not name the backend; or every
    stored torch entry missed because adding the backend changed torch keys."""
    require("onnx")
    torch_key = evaluation_key(tiny_model, TASKS, mini_data)
    onnx_key = evaluation_key(tiny_model, TASKS, mini_data, backend="onnx")
    int8_key = evaluation_key(tiny_model, TASKS, mini_data, backend="onnx-int8")
    assert "backend" not in torch_key.as_dict()
    assert len({torch_key.digest(), onnx_key.digest(), int8_key.digest()}) == 3
    assert onnx_key.backend == backend_info("onnx").tag() and "onnxruntime" in onnx_key.backend
    assert onnx_key.mismatch(torch_key).startswith("backend torch ≠ onnx|")
    assert "fp32" in onnx_key.backend and "int8" in int8_key.backend


def test_torch_and_onnx_evaluations_are_never_reused_for_each_other(
    tiny_model, mini_data: Path, tmp_path: Path
) -> None:
    require("onnx")
    cache = tmp_path / "cache"
    kwargs = {"label": "tiny", "cache_dir": cache, "packaged": tmp_path / "none", "show_progress_bar": False}
    torch_entry = evaluate_or_reuse(tiny_model, TASKS, mini_data, **kwargs)
    onnx_entry = evaluate_or_reuse(tiny_model, TASKS, mini_data, backend="onnx", **kwargs)
    assert "reused_from" not in onnx_entry
    assert onnx_entry["backend"]["name"] == "onnx" and onnx_entry["model"] == "tiny [onnx]"
    assert torch_entry["backend"]["name"] == "torch" and torch_entry["model"] == "tiny"
    again = evaluate_or_reuse(tiny_model, TASKS, mini_data, backend="onnx", **kwargs)
    assert again["reused_from"]["kind"] == "cache" and again["backend"]["name"] == "onnx"
    torch_again = evaluate_or_reuse(tiny_model, TASKS, mini_data, **kwargs)
    assert torch_again["reused_from"]["kind"] == "cache" and torch_again["backend"]["name"] == "torch"
    assert len(list((cache / "eval").glob("*.json"))) == 2


@pytest.mark.parametrize("backend", CONVERTED)
def test_a_model_is_converted_once_per_fingerprint(
    backend: str, session_tiny_model, tiny_model_other, tmp_path: Path, conversions
) -> None:
    """Failure: every evaluation re-exported the model (minutes for a large one), or two checkpoints shared one
    conversion."""
    require(backend)
    first = backend_model(session_tiny_model, backend, tmp_path)
    second = backend_model(session_tiny_model, backend, tmp_path)
    assert conversions == [backend]
    other = backend_model(tiny_model_other, backend, tmp_path)
    assert conversions == [backend, backend]
    fingerprints = {model_fingerprint(m) for m in (first, second, other, session_tiny_model, tiny_model_other)}
    assert len(fingerprints) == 4  # the copy names weights and backend; the torch model is untouched
    assert type(session_tiny_model[0].model).__name__ == "BertModel"
    assert model_backend(first).name == backend and model_backend(session_tiny_model).name == "torch"
    stored = json.loads(next((tmp_path / "backends").glob("*/export.json")).read_text(encoding="utf-8"))
    assert stored["backend"]["check"]["max_abs_diff"] <= FP32_TOLERANCE


def test_a_conversion_that_drops_the_attention_mask_is_refused_and_not_cached(
    session_tiny_model, tmp_path: Path, monkeypatch
) -> None:
    """Failure: a converted model that ignores padding (every row shorter than its batch's longest changes) was
    used, and its figures recorded as the model's."""
    require("onnx")
    real = runtimes._session

    def maskless(backend, path):
        run = real(backend, path)
        return lambda inputs: run({**inputs, "attention_mask": np.ones_like(inputs["attention_mask"])})

    monkeypatch.setattr(runtimes, "_session", maskless)
    with pytest.raises(BackendMismatch, match="does not give torch's embeddings"):
        backend_model(session_tiny_model, "onnx", tmp_path)
    assert not list((tmp_path / "backends").glob("*/export.json"))


# ---------------------------------------------------------------------------------------------------
# Equality with torch
# ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", CONVERTED)
def test_fp32_backends_give_torchs_embeddings_on_sts_sentences(
    backend: str, session_tiny_model, tmp_path: Path
) -> None:
    """Every embedding of real STS-B sentences (length-sorted batches, padded and truncated rows) within 1e-4 of
    torch's per component, cosine ≥ 0.99999."""
    require(backend)
    sentences = sts_sentences()
    converted = backend_model(session_tiny_model, backend, tmp_path)
    want = session_tiny_model.encode(sentences, batch_size=32, normalize_embeddings=True)
    got = converted.encode(sentences, batch_size=32, normalize_embeddings=True)
    difference = float(np.abs(want - got).max())
    cosine = float(np.einsum("ij,ij->i", want.astype(np.float64), got.astype(np.float64)).min())
    print(f"{backend}: max abs difference {difference:.3g}, min cosine {cosine:.9f} over {len(sentences)} sentences")
    assert difference <= FP32_TOLERANCE and cosine >= FP32_MIN_COSINE
    assert np.abs(want).max() > 0.05  # not a trivially equal pair of empty outputs


def test_evaluate_model_figures_are_torchs_under_every_installed_backend(
    session_tiny_model, mini_data: Path, tmp_path: Path
) -> None:
    """The whole evaluation (STS and bias probes on the small data) under onnx and openvino equals torch's within
    1e-4 in every figure."""
    installed = [backend for backend in CONVERTED if _installed(backend)]
    if not installed:
        pytest.skip("neither onnxruntime nor openvino is installed: pip install 'st-debias[onnx]'")
    kwargs = {"negation_pairs": 20, "show_progress_bar": False, "cache_dir": tmp_path}
    reference = evaluate_model(session_tiny_model, TASKS, mini_data, **kwargs)
    want = {k: v for k, v in leaves(reference).items() if _compared(k, v)}
    assert len(want) > 50
    for backend in installed:
        entry = evaluate_model(session_tiny_model, TASKS, mini_data, backend=backend, **kwargs)
        assert entry["backend"]["name"] == backend and entry["fingerprint"] == reference["fingerprint"]
        got = leaves(entry)
        worst = max(abs(got[k] - v) for k, v in want.items())
        print(f"{backend}: largest figure difference {worst:.3g} over {len(want)} figures")
        assert worst <= 1e-4, backend


def test_mteb_figures_are_torchs_under_every_installed_backend(
    session_tiny_model, mini_data: Path, tmp_path: Path
) -> None:
    """The MTEB tasks encode through the converted model too (never silently through torch), at torch's figures."""
    installed = [backend for backend in CONVERTED if _installed(backend)]
    if not installed:
        pytest.skip("neither onnxruntime nor openvino is installed: pip install 'st-debias[onnx]'")
    kwargs = {"mteb_data": "local", "mteb_tasks": ("STSBenchmark", "SICK-R"), "show_progress_bar": False,
              "cache_dir": tmp_path, "mteb_cache_dir": tmp_path / "mteb"}  # fmt: skip
    reference = evaluate_model(session_tiny_model, ("mteb",), mini_data, **kwargs)
    want = {k: v for k, v in leaves(reference["mteb"]).items() if isinstance(v, float)}
    assert want
    for backend in installed:
        entry = evaluate_model(session_tiny_model, ("mteb",), mini_data, backend=backend, **kwargs)
        assert entry["backend"]["name"] == backend and entry["model"].endswith(f"[{backend}]")
        got = leaves(entry["mteb"])
        assert max(abs(got[k] - v) for k, v in want.items()) <= 1e-4, backend


def test_int8_is_labelled_and_recorded_as_an_approximation(session_tiny_model, tmp_path: Path) -> None:
    require("onnx-int8")
    quantised = backend_model(session_tiny_model, "onnx-int8", tmp_path)
    info = model_backend(quantised)
    assert info.precision == "int8-dynamic" and "check" in info.as_dict()
    assert model_fingerprint(quantised) != model_fingerprint(backend_model(session_tiny_model, "onnx", tmp_path))


def _compared(path: str, value: object) -> bool:
    """A figure of the entry: a number outside timings and the environment."""
    return (
        isinstance(value, float)
        and not path.startswith(("/timing_s", "/environment", "/backend"))
    )
