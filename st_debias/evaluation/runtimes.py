"""Convert a model's transformer for ONNX Runtime or OpenVINO, and run it inside sentence-transformers.

Only the transformer module (``model[0]``, a sentence-transformers ``Transformer``) is converted: the exported
graph maps ``input_ids``, ``attention_mask`` (and ``token_type_ids`` where the tokenizer gives them), with
dynamic batch and sequence axes, to the last hidden state. sentence-transformers' own tokenizer, Pooling,
Dense and Normalize modules run on its output as they do under torch, so :func:`backend_model` returns a
SentenceTransformer that ``encode``, MTEB and the transfer tasks use unchanged. The user's model and folder are
never modified: the returned model is a copy that shares every module but the transformer.

A conversion is made once per model (weights fingerprint, inference settings) and backend (runtime and
exporter versions, opset, precision), in ``<cache>/backends/<digest>/`` (:func:`st_debias.paths.cache_root`),
published atomically. Before it is published, the converted model encodes a fixed check set of sentences of
varying lengths in one padded batch and must give torch's unit-norm embeddings within
:data:`FP32_TOLERANCE` (max abs difference per component) and :data:`FP32_MIN_COSINE`; otherwise
:class:`BackendMismatch` is raised and nothing is cached. Three ways a conversion silently differs from
torch, each guarded here:

* the attention mask not reaching the attention layers (a graph traced without it, or an inference call
  that drops it): every row shorter than the longest of its batch changes (cosine to torch's down to ~0.88 on
  STS-B with all-MiniLM-L6-v2) while the longest rows stay exact; the graph must declare ``attention_mask``;
* OpenVINO's CPU plugin computing in bfloat16 where the CPU supports it (AMX, AVX512-BF16) unless asked for
  ``f32``: max abs difference ~1.5e-3 per component;
* ``openvino.save_model`` storing weights as float16 unless told not to.

``onnx-int8`` (dynamic int8 quantisation of the ONNX graph) is an approximation: it is labelled as such,
never verified against or reused as the fp32 figures, and its check-set deviation is recorded.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import torch

from st_debias.evaluation.backends import ONNX_OPSET, BackendInfo, backend_info, check_backend
from st_debias.fingerprint import model_fingerprint

#: Largest absolute difference per component between a converted model's unit-norm embeddings and torch's.
FP32_TOLERANCE = 1e-4

#: Smallest cosine between a converted model's embedding of a sentence and torch's.
FP32_MIN_COSINE = 0.99999

#: The check set a conversion must reproduce torch's embeddings on: lengths from one word to past a short
#: ``max_seq_length`` (truncation), encoded in one batch, so most rows are padded.
CHECK_SENTENCES: tuple[str, ...] = (
    "Yes.",
    "A man is playing a guitar.",
    "The cat is not sleeping on the warm windowsill this afternoon.",
    "Two dogs run across a snowy field while a child in a red coat throws a ball for them.",
    "A woman slices an onion.",
    "Stocks fell sharply on Monday after the central bank signalled that interest rates would stay high for "
    "longer than markets had expected, and bond yields climbed to their highest level in more than a decade.",
    "Nobody said that.",
    "The committee, which met for three hours, did not reach a decision on the proposal.",
)

_FILES = {"onnx": "model.onnx", "onnx-int8": "model.int8.onnx", "openvino": "model.xml"}
_INFO_FILE = "export.json"
_GRAPH_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


class BackendMismatch(ValueError):
    """A converted model does not give torch's embeddings on the check set; the message gives the figures."""


def backend_model(
    model: Any, backend: str = "torch", cache_dir: str | os.PathLike[str] | None = None
) -> Any:
    """``model`` with its transformer run by ``backend``: a SentenceTransformer to encode with.

    Args:
        model: a SentenceTransformer whose first module is a text ``Transformer``.
        backend: one of :data:`BACKENDS`; ``torch`` returns ``model`` itself.
        cache_dir: cache root for the conversion (default ``$ST_DEBIAS_CACHE`` or ``~/.cache/st_debias``).

    Returns:
        For ``torch``, ``model``. Otherwise a copy sharing every module of ``model`` but the first, whose
        transformer runs in the runtime; its ``st_debias_backend`` attribute is the :class:`BackendInfo`
        (with the check figures), and its :func:`~st_debias.fingerprint.model_fingerprint` differs from
        ``model``'s, so embedding, MTEB and transfer caches keep the backends apart.

    Raises:
        BackendUnavailable: the runtime is not installed.
        BackendMismatch: an fp32 conversion does not reproduce torch's embeddings on the check set.
        ValueError: ``model`` is not a text Transformer model this glue supports.

    Example:
        >>> fast = backend_model(load_model("default"), "onnx")     # doctest: +SKIP
        >>> fast.encode(["A man is playing a guitar."]).shape      # doctest: +SKIP
        (1, 384)
    """
    check_backend(backend)
    if backend == "torch":
        return model
    transformer = _text_transformer(model)
    info = backend_info(backend)
    fingerprint = model_fingerprint(model)
    folder = export_folder(model, info, cache_dir, fingerprint)
    if not (folder / _INFO_FILE).is_file():
        convert(model, transformer, info, folder, fingerprint)
    stored = json.loads((folder / _INFO_FILE).read_text(encoding="utf-8"))
    info = BackendInfo(**stored["backend"])
    run = _session(info.name, folder / _FILES[info.name])
    return _with_runtime(model, transformer, run, stored["inputs"], info, fingerprint)


def export_folder(
    model: Any, info: BackendInfo, cache_dir: str | os.PathLike[str] | None = None, fingerprint: str | None = None
) -> Path:
    """Where the conversion of ``model`` for ``info`` is cached: one folder per weights, settings and backend.

    Args:
        model: the torch SentenceTransformer.
        info: the backend.
        cache_dir: cache root (default ``$ST_DEBIAS_CACHE`` or ``~/.cache/st_debias``).
        fingerprint: ``model``'s weights fingerprint, when already computed.
    """
    from st_debias.evaluation.reuse import inference_digest
    from st_debias.paths import cache_root

    payload = [fingerprint or model_fingerprint(model), inference_digest(model), info.tag()]
    digest = hashlib.sha256(json.dumps(payload).encode()).hexdigest()[:20]
    return cache_root(cache_dir) / "backends" / digest


def convert(model: Any, transformer: Any, info: BackendInfo, folder: Path, fingerprint: str) -> None:
    """Convert ``transformer`` for ``info.name`` into ``folder`` (atomically), after checking it against torch.

    Args:
        model: the torch SentenceTransformer (the reference on the check set).
        transformer: its first module.
        info: the backend.
        folder: the cache folder (:func:`export_folder`).
        fingerprint: ``model``'s weights fingerprint.

    Raises:
        BackendMismatch: an fp32 conversion does not give torch's embeddings on :data:`CHECK_SENTENCES`.
    """
    from st_debias.files import atomic_write_json, staged_folder

    names = _input_names(transformer)
    with staged_folder(folder, replace=False) as staging:
        staging.mkdir(parents=True)
        onnx_path = staging / _FILES["onnx"]
        if info.name in ("onnx", "onnx-int8"):
            _export_onnx(transformer, names, onnx_path)
        if info.name == "onnx-int8":
            from onnxruntime.quantization import QuantType, quantize_dynamic

            quantize_dynamic(str(onnx_path), str(staging / _FILES["onnx-int8"]), weight_type=QuantType.QInt8)
            onnx_path.unlink()
        if info.name == "openvino":
            _export_openvino(transformer, names, staging / _FILES["openvino"])
        run = _session(info.name, staging / _FILES[info.name])
        candidate = _with_runtime(model, transformer, run, names, info, fingerprint)
        check = compare_embeddings(model, candidate, CHECK_SENTENCES)
        if info.precision == "fp32" and not (
            check["max_abs_diff"] <= FP32_TOLERANCE and check["min_cosine"] >= FP32_MIN_COSINE
        ):
            raise BackendMismatch(
                f"the {info.name} conversion of model {fingerprint} does not give torch's embeddings on "
                f"the check set (max abs difference {check['max_abs_diff']:.3g} > {FP32_TOLERANCE:g} or min cosine "
                f"{check['min_cosine']:.7f} < {FP32_MIN_COSINE}); evaluate with --backend torch"
            )
        info = BackendInfo(**{**asdict(info), "check": check})
        atomic_write_json(
            staging / _INFO_FILE,
            {"backend": asdict(info), "inputs": names, "fingerprint": fingerprint},
        )


def compare_embeddings(reference: Any, candidate: Any, sentences: Sequence[str]) -> dict[str, float]:
    """Largest absolute difference and smallest cosine between two models' unit-norm embeddings of ``sentences``,
    all encoded in one padded batch."""
    a, b = (
        np.asarray(
            m.encode(list(sentences), batch_size=len(sentences), convert_to_numpy=True, normalize_embeddings=True),
            dtype=np.float64,
        )
        for m in (reference, candidate)
    )
    return {
        "max_abs_diff": float(np.abs(a - b).max()),
        "min_cosine": float(np.einsum("ij,ij->i", a, b).min()),
        "sentences": len(sentences),
    }


class RuntimeTransformer(torch.nn.Module):
    """Stands in for a Hugging Face model inside a sentence-transformers ``Transformer``: the inputs go to a runtime.

    Args:
        run: maps ``{input name: int64 array}`` to the last hidden state (batch × sequence × hidden).
        input_names: the graph's inputs, in order.
        config: the Hugging Face config of the converted model (``Transformer.forward`` reads it).
        info: the backend.
        fingerprint: the converted weights' fingerprint. With the backend's tag it fills the ``identity``
            buffer, so the copy's :func:`~st_debias.fingerprint.model_fingerprint` names both the weights and the
            backend, and differs from the torch model's.
    """

    def __init__(
        self, run: Callable[[dict[str, np.ndarray]], np.ndarray], input_names: Sequence[str], config: Any,
        info: BackendInfo, fingerprint: str,
    ) -> None:  # fmt: skip
        super().__init__()
        self.run = run
        self.input_names = tuple(input_names)
        self.config = config
        self.info = info
        identity = f"{fingerprint}|{info.tag()}".encode()
        self.register_buffer("identity", torch.tensor(list(identity), dtype=torch.uint8))

    @property
    def device(self) -> torch.device:
        return torch.device("cpu")

    def forward(self, **features: Any) -> dict[str, torch.Tensor]:
        inputs = {name: features[name].detach().cpu().numpy().astype(np.int64) for name in self.input_names}
        hidden = self.run(inputs)
        return {"last_hidden_state": torch.from_numpy(np.ascontiguousarray(hidden, dtype=np.float32))}


def _text_transformer(model: Any) -> Any:
    """``model[0]`` when it is a text feature-extraction ``Transformer`` returning the last hidden state."""
    from sentence_transformers.base.modules import Transformer

    first = model[0] if hasattr(model, "__getitem__") and len(model) else None
    if not isinstance(first, Transformer):
        raise ValueError(f"backends other than torch convert a Transformer first module; this model starts with {type(first).__name__}")
    text = first.modality_config.get("text", {})
    if first.transformer_task != "feature-extraction" or text.get("method_output_name") != "last_hidden_state":
        raise ValueError(
            f"backends other than torch support text feature-extraction models (last hidden state); this one is "
            f"{first.transformer_task!r} with {first.modality_config}"
        )
    if first.model.config.output_hidden_states:
        raise ValueError("backends other than torch do not give all layers' hidden states (output_hidden_states)")
    return first


def _input_names(transformer: Any) -> list[str]:
    """The model inputs the tokenizer gives, among ``input_ids``, ``attention_mask``, ``token_type_ids``."""
    features = transformer.preprocess(["a"])
    names = [name for name in _GRAPH_INPUTS if name in features]
    if "attention_mask" not in names:
        raise ValueError("backends other than torch need a tokenizer that gives an attention_mask")
    return names


class _HiddenState(torch.nn.Module):
    """The converted function: input ids, attention mask (and token types) → last hidden state."""

    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor | None = None
    ) -> torch.Tensor:
        features = {"input_ids": input_ids, "attention_mask": attention_mask}
        if token_type_ids is not None:
            features["token_type_ids"] = token_type_ids
        return self.model(**features, return_dict=True).last_hidden_state


def _example(transformer: Any, names: Sequence[str]) -> dict[str, torch.Tensor]:
    """A padded two-row batch (rows of different lengths) to trace with."""
    features = transformer.preprocess(["A man is playing a guitar on the stage.", "Yes."])
    return {name: features[name].cpu() for name in names}


def _export_onnx(transformer: Any, names: Sequence[str], path: Path) -> None:
    """``torch.onnx.export`` (TorchScript exporter: no onnxscript needed) with dynamic batch and sequence axes."""
    wrapper = _HiddenState(transformer.model).eval()
    axes = {name: {0: "batch", 1: "sequence"} for name in names}
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            wrapper, tuple(_example(transformer, names).values()), str(path), dynamo=False, input_names=list(names),
            output_names=["last_hidden_state"], dynamic_axes={**axes, "last_hidden_state": {0: "batch", 1: "sequence"}},
            opset_version=ONNX_OPSET, do_constant_folding=True,
        )  # fmt: skip
    import onnx

    declared = [graph_input.name for graph_input in onnx.load(str(path), load_external_data=False).graph.input]
    if declared != list(names):
        raise BackendMismatch(f"the exported graph's inputs are {declared}, not {list(names)}: the attention mask or "
                              "token types would not reach the model")


def _export_openvino(transformer: Any, names: Sequence[str], path: Path) -> None:
    """``openvino.convert_model`` on the module with dynamic shapes, saved with float32 weights."""
    import openvino

    wrapper = _HiddenState(transformer.model).eval()
    shapes = [(name, openvino.PartialShape([-1, -1]), openvino.Type.i64) for name in names]
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        converted = openvino.convert_model(wrapper, example_input=_example(transformer, names), input=shapes)
    openvino.save_model(converted, str(path), compress_to_fp16=False)


def _session(backend: str, path: Path) -> Callable[[dict[str, np.ndarray]], np.ndarray]:
    """A function running the converted model at ``path`` on CPU, fp32, with torch's thread count."""
    threads = torch.get_num_threads()
    if backend == "openvino":
        import openvino

        compiled = openvino.Core().compile_model(
            str(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": threads}
        )
        return lambda inputs: np.asarray(compiled(inputs)[0])
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    return lambda inputs: session.run(None, inputs)[0]


def _with_runtime(
    model: Any, transformer: Any, run: Callable[[dict[str, np.ndarray]], np.ndarray], names: Sequence[str],
    info: BackendInfo, fingerprint: str,
) -> Any:  # fmt: skip
    """A shallow copy of ``model`` whose first module is a copy of ``transformer`` running ``run``."""
    runtime_transformer = copy.copy(transformer)
    runtime_transformer._modules = dict(transformer._modules)
    runtime_transformer.model = RuntimeTransformer(run, names, transformer.model.config, info, fingerprint)
    copied = copy.copy(model)
    copied._modules = type(model._modules)(model._modules)
    copied._modules[next(iter(model._modules))] = runtime_transformer
    copied.st_debias_backend = info
    return copied


