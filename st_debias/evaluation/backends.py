"""The inference backends of evaluation: their names, the extras that install them, and their identity.

``torch`` runs the model as loaded. ``onnx`` and ``openvino`` run its transformer converted for ONNX Runtime or
OpenVINO, in float32, with figures checked against torch's (:mod:`st_debias.evaluation.runtimes` converts and
runs them); ``onnx-int8`` is a dynamically quantised ONNX graph, an approximation. This module imports no heavy
library, so the command line can offer the choices and refuse a missing runtime before any model loads.
"""

from __future__ import annotations

import importlib
from dataclasses import asdict, dataclass
from typing import Any

#: Inference backends for evaluation: torch, or the transformer converted for a runtime.
BACKENDS: tuple[str, ...] = ("torch", "onnx", "openvino", "onnx-int8")

#: The backends whose figures must equal torch's (fp32); ``onnx-int8`` is an approximation.
FP32_BACKENDS: tuple[str, ...] = ("torch", "onnx", "openvino")

#: What ``auto`` tries on a machine without an accelerator, in order: the installed fp32 backends measured faster
#: than torch on a 2-core CPU (``benchmarks/backends/``), then torch. None was: at fp32 OpenVINO took 0.98x and
#: ONNX Runtime 1.15x torch's time on all-MiniLM-L6-v2's STS-7 + bias evaluation, 0.99x and 1.00x on
#: all-mpnet-base-v2's, before their one-off conversion. On an accelerator ``auto`` is torch.
AUTO_CPU_ORDER: tuple[str, ...] = ("torch",)

#: The choices of ``st-debias eval --backend``: ``auto`` and every backend.
BACKEND_CHOICES: tuple[str, ...] = ("auto", *BACKENDS)

#: The environment variable that sets ``st-debias eval --backend``'s default (``auto`` when unset).
BACKEND_ENV = "ST_DEBIAS_BACKEND"

#: The Python modules each backend needs, and the extra that installs them.
REQUIREMENTS: dict[str, tuple[tuple[str, ...], str]] = {
    "onnx": (("onnxruntime", "onnx"), "onnx"),
    "onnx-int8": (("onnxruntime", "onnx"), "onnx"),
    "openvino": (("openvino",), "openvino"),
}

#: ONNX opset of an exported graph.
ONNX_OPSET = 17


class BackendUnavailable(ValueError):
    """A backend's runtime is not installed; the message names the extra that installs it."""


@dataclass(frozen=True)
class BackendInfo:
    """What a backend's figures depend on besides the weights: recorded in results and in every cache key.

    Attributes:
        name: one of :data:`BACKENDS`.
        runtime: the runtime and its version (``onnxruntime 1.22.0``), or the torch version for ``torch``.
        exporter: the converter and its settings (``torch.onnx 2.8.0 opset 17``); empty for ``torch``.
        precision: ``fp32`` or ``int8-dynamic``.
        check: for a converted model, the largest absolute difference and smallest cosine to torch's
            unit-norm embeddings on :data:`~st_debias.evaluation.runtimes.CHECK_SENTENCES` (``{"max_abs_diff", "min_cosine", "sentences"}``).
    """

    name: str
    runtime: str
    exporter: str = ""
    precision: str = "fp32"
    check: dict[str, float] | None = None

    def tag(self) -> str:
        """One string naming the backend, runtime, exporter and precision (``torch`` for torch): the cache key part."""
        if self.name == "torch":
            return "torch"
        return "|".join((self.name, self.runtime, self.exporter, self.precision))

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v not in ("", None)}


def check_backend(name: str) -> str:
    """Return ``name`` when it is a backend whose runtime is installed.

    Raises:
        ValueError: an unknown backend.
        BackendUnavailable: its runtime is missing; the message names ``pip install 'st-debias[EXTRA]'``.
    """
    if name not in BACKENDS:
        raise ValueError(f"Unknown backend {name!r}; choose from {', '.join(BACKENDS)}")
    if name == "torch":
        return name
    modules, extra = REQUIREMENTS[name]
    missing = [module for module in modules if not _importable(module)]
    if missing:
        raise BackendUnavailable(
            f"backend {name!r} needs {' and '.join(missing)}, which {'is' if len(missing) == 1 else 'are'} not "
            f"installed: pip install 'st-debias[{extra}]' (or choose --backend torch)"
        )
    return name


def resolve_backend(name: str) -> str:
    """The backend ``name`` stands for: itself when installed (:func:`check_backend`), and for ``auto`` the first
    installed backend of :data:`AUTO_CPU_ORDER` on a machine without an accelerator, torch on one.

    Raises:
        ValueError: an unknown backend.
        BackendUnavailable: a named backend whose runtime is missing (``auto`` never raises it).
    """
    if name != "auto":
        return check_backend(name)
    for candidate in AUTO_CPU_ORDER:
        if candidate == "torch":
            return "torch"  # without importing torch: a bad argument is still refused before it loads
        try:
            check_backend(candidate)
        except BackendUnavailable:
            continue
        import torch

        return "torch" if torch.accelerator.is_available() else candidate
    return "torch"


def _importable(module: str) -> bool:
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True


def backend_info(name: str) -> BackendInfo:
    """The :class:`BackendInfo` of ``name`` with the installed runtime's version (no check figures)."""
    import torch

    check_backend(name)
    if name == "torch":
        return BackendInfo("torch", f"torch {torch.__version__}")
    exporter = f"torch.onnx {torch.__version__} opset {ONNX_OPSET}"
    if name == "openvino":
        import openvino

        return BackendInfo(name, f"openvino {openvino.__version__}", f"openvino.convert_model {openvino.__version__}")
    import onnxruntime

    precision = "int8-dynamic" if name == "onnx-int8" else "fp32"
    return BackendInfo(name, f"onnxruntime {onnxruntime.__version__}", exporter, precision)


def backend_label(label: str, backend: str) -> str:
    """``label`` as reports show it: ``label [backend]`` under any backend but torch (``[onnx-int8]`` marks figures
    that are not the model's fp32 figures)."""
    suffix = f" [{backend}]"
    return label if backend == "torch" or label.endswith(suffix) else label + suffix


def model_backend(model: Any) -> BackendInfo:
    """The :class:`BackendInfo` of a model from :func:`backend_model` (torch's for any other model)."""
    info = getattr(model, "st_debias_backend", None)
    return info if isinstance(info, BackendInfo) else backend_info("torch")
