"""Time the default evaluation under each installed inference backend and check its figures against torch's.

See README.md in this folder for the question and the command.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.harness.provenance import LoadWatch, wait_for_idle, write_stamped_json
from st_debias.evaluation import BACKENDS, backend_model, evaluate_model
from st_debias.evaluation.backends import BackendUnavailable, check_backend
from st_debias.paths import load_model


def figures(entry: Any, prefix: str = "") -> dict[str, float]:
    """Every float of a results entry outside timings, environment and backend, by path."""
    if isinstance(entry, dict):
        return {
            k: v
            for key, item in entry.items()
            if not (prefix == "" and key in ("timing_s", "environment", "backend"))
            for k, v in figures(item, f"{prefix}/{key}").items()
        }
    if isinstance(entry, list):
        return {k: v for i, item in enumerate(entry) for k, v in figures(item, f"{prefix}/{i}").items()}
    return {prefix: entry} if isinstance(entry, float) else {}


#: Figures that are the transfer classifiers' inner choices (the C picked in each fold, each fold's accuracy), not
#: reported scores: a near-tie between two C values can flip on a float's last bits.
DETAILS = ("/transfer_details",)


def cpu_description() -> dict[str, Any]:
    """The CPU model and whether it has bfloat16 units (AMX, AVX-512 BF16), from ``/proc/cpuinfo``."""
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8")
    except OSError:
        return {}
    model = next((line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("model name")), None)
    flags = set(next((line.split(":", 1)[1].split() for line in text.splitlines() if line.startswith("flags")), []))
    return {"model": model, "bf16_units": sorted(flags & {"amx_bf16", "avx512_bf16"})}


def largest_differences(reference: dict[str, float], got: dict[str, float], count: int = 8) -> list[dict[str, Any]]:
    """The ``count`` figures furthest from torch's, each with its path, torch's value and this backend's."""
    ranked = sorted(reference, key=lambda key: abs(got[key] - reference[key]), reverse=True)[:count]
    return [
        {"figure": key, "torch": reference[key], "backend": got[key], "difference": abs(got[key] - reference[key])}
        for key in ranked
        if got[key] != reference[key]
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="default")
    parser.add_argument("--name", default="minilm_backends")
    parser.add_argument("--tasks", default="sts,bias")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--backends", default="torch,onnx,openvino", help=f"comma-separated among {','.join(BACKENDS)}")
    parser.add_argument(
        "--cache-dir", default=None,
        help="cache folder for conversions and evaluation caches (default: a fresh temporary folder per backend, so "
        "every evaluation is cold)",
    )
    parser.add_argument("--out", default=str(Path(__file__).parent / "results"))
    parser.add_argument("--allow-load", action="store_true", help="write the result even if the machine was loaded")
    args = parser.parse_args(argv)

    model = load_model(args.model)
    runs: dict[str, Any] = {}
    watches: list[LoadWatch] = []
    reference: dict[str, float] | None = None
    for backend in args.backends.split(","):
        try:
            check_backend(backend)
        except BackendUnavailable as error:
            runs[backend] = {"skipped": str(error)}
            continue
        with tempfile.TemporaryDirectory(prefix="st-debias-backends-") as fresh:
            cache_dir = args.cache_dir or fresh  # cold: no embedding, transfer or evaluation cache to reuse
            start = time.perf_counter()
            backend_model(model, backend, cache_dir)  # the one-off conversion, timed apart from the evaluation
            convert_s = time.perf_counter() - start
            wait_for_idle()
            with LoadWatch() as watch:
                entry = evaluate_model(
                    model, tasks=args.tasks, batch_size=args.batch_size, show_progress_bar=False, backend=backend,
                    cache_dir=cache_dir,
                )  # fmt: skip
        watches.append(watch)
        got = figures(entry)
        reference = reference if reference is not None else got
        reported = {key: value for key, value in reference.items() if not key.startswith(DETAILS)}
        runs[backend] = {
            "convert_s": round(convert_s, 1),
            "wall_s": round(watch.wall_s, 1),
            "timing_s": entry["timing_s"],
            "machine": watch.record(),
            "backend": entry["backend"],
            "figures": len(reported),
            "largest_figure_difference": max(abs(got[k] - v) for k, v in reported.items()),
            "largest_differences": largest_differences(reported, got),
            "largest_detail_differences": largest_differences(
                {k: v for k, v in reference.items() if k.startswith(DETAILS)}, got, count=3
            ),
            **{block: entry[block] for block in ("sts", "transfer") if block in entry},
        }
    for watch in watches:
        watch.refuse_if_loaded(allow=args.allow_load)
    path = write_stamped_json(
        Path(args.out) / f"{args.name}.json",
        {"model": args.model, "tasks": args.tasks, "cpu": cpu_description(), "runs": runs},
    )
    print(json.dumps({b: {k: r.get(k) for k in ("wall_s", "largest_figure_difference", "skipped")} for b, r in runs.items()}, indent=1))
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
