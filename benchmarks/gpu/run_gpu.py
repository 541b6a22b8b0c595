"""On one GPU: step time of each st_debias in-batch loss against MultipleNegativesRankingLoss, peak memory of each
Cached loss against its uncached form, and `simcse` and `st-debias` trained for one epoch of the corpus.

Usage (from the repository root; on the device machine after ``benchmarks/harness/device.sh setup``, see
``benchmarks/gpu/README.md``):

    python benchmarks/gpu/run_gpu.py --stages step_time memory          # about 4 minutes on an H200
    timeout -s TERM 560 python benchmarks/gpu/run_gpu.py --stages epoch --resume --work-dir ~/st_debias/work

    python benchmarks/gpu/run_gpu.py --device cpu --tiny                # a dry run of every stage, CPU, toy sizes

Stages:

- ``step_time``: every uncached loss of ``LOSSES.builtin()`` and MultipleNegativesRankingLoss on the same
  columns (pairs, triplets or four columns), at batch 64, 512 and 2,048, in bf16 autocast and in fp32; one step =
  forward, backward, AdamW update; the cases of one (precision, batch) run round-robin, the median of ``--steps``
  steps after ``--warmup`` rounds, each step between two ``torch.cuda.synchronize()``. A case that runs out of
  memory is recorded as ``"oom"``.
- ``memory``: ``torch.cuda.max_memory_allocated`` during ``--memory-steps`` steps (after one warm-up step, the
  counter reset) of each Cached loss of ``LOSSES.builtin()`` and of its uncached form, at batch 512 to 8,192,
  ``--mini-batch-size`` 128; a loss that runs out of memory is recorded as ``"oom"`` and not tried larger.
- ``epoch``: ``simcse`` and ``st-debias`` from all-MiniLM-L6-v2 for one epoch of the 200,000-sentence corpus (3,125
  steps of 64 rows, 32 tokens, seed 42) through ``st_debias.recipes.train_recipe`` and the harness runner, then the
  STS-7 and bias probes (before and after) and the SentEval transfer tasks. Resumable: a run stopped by SIGTERM
  saves a checkpoint and exits with status 75; ``--resume`` continues from the newest complete one under the same
  code and options.

Rows are real corpus sentences, two consecutive ones joined so that a row fills the 32 tokens, drawn at random with
a fixed seed. Every result file is stamped (``write_stamped_json``) and names the device
(``torch.cuda.get_device_name``); the machine load before and after is recorded with ``uptime()``.
"""

from __future__ import annotations

import argparse
import gc
import platform
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.harness.provenance import command_line, uptime, write_stamped_json

RESULTS = Path(__file__).resolve().parent / "results"
TINY_RESULTS = Path("outputs/gpu/tiny")
BASELINE = "MultipleNegativesRankingLoss"
STEP_BATCHES = (64, 512, 2048)
MEMORY_BATCHES = (512, 1024, 2048, 4096, 8192)
EPOCH_RECIPES = ("simcse", "st-debias")
TINY = {"step_batches": (4, 8), "memory_batches": (4, 8, 16), "mini_batch_size": 4, "steps": 2, "warmup": 1,
        "memory_steps": 1, "epoch_sentences": 64, "epoch_batch": 8, "eval_steps": 4}

#: How each uncached loss is benchmarked: the text columns it embeds, its arguments, whether it reads guide
#: embeddings from the label column. A registered loss not named here runs on pairs with its defaults.
SETUPS: dict[str, tuple[int, dict[str, Any], bool]] = {
    BASELINE: (2, {}, False),
    "FocalInfoNCE": (2, {}, False),
    "InstanceWeightedMNRL": (2, {"labels": "guide_embeddings"}, True),
    "DebiasInfoNCE": (4, {}, False),
    "MarginNegationLoss": (3, {}, False),  # its default contrastive="dropout" embeds the anchor a second time
}
COLUMN_NAMES = {2: "pairs", 3: "triplets", 4: "4 columns"}
INTERRUPTED = 75
"""Exit status of an epoch stage stopped by SIGTERM at a checkpoint: rerun it with ``--resume``."""


def _torch():
    import torch

    return torch


def _oom_types() -> tuple[type[BaseException], ...]:
    torch = _torch()
    return tuple({getattr(torch, "OutOfMemoryError", RuntimeError), torch.cuda.OutOfMemoryError})


class SimulatedOOM(RuntimeError):
    """Raised in a dry run at batch sizes above ``--simulate-oom-above`` for uncached losses."""


def builtin_losses() -> tuple[list[str], list[str]]:
    """st_debias's own registered losses: (uncached, cached)."""
    from st_debias.recipes.losses import LOSSES

    names = list(LOSSES.builtin())
    return [n for n in names if not n.startswith("Cached")], [n for n in names if n.startswith("Cached")]


def setup_of(name: str) -> tuple[int, dict[str, Any], bool]:
    from st_debias.recipes.losses import uncached_name

    return SETUPS.get(uncached_name(name) or name, (2, {}, False))


def build_loss(name: str, model, mini_batch_size: int | None = None):
    from st_debias.recipes.losses import LOSSES

    _, kwargs, _ = setup_of(name)
    if name.startswith("Cached"):
        return LOSSES[name](model, mini_batch_size=mini_batch_size, **kwargs)
    return LOSSES[name](model, **kwargs)


# -- data and model ------------------------------------------------------------------------------------
def texts(count: int, seed: int, limit: int | None) -> list[str]:
    """``count`` rows of real corpus text drawn at random (fixed ``seed``): two consecutive sentences joined, so
    that a row fills 32 tokens."""
    from st_debias.data.io.corpus import read_sentences

    sentences = read_sentences(limit=limit)
    picks = random.Random(seed).sample(range(len(sentences) - 1), min(count, len(sentences) - 1))
    rows = [f"{sentences[i]} {sentences[i + 1]}" for i in picks]
    return (rows * (count // len(rows) + 1))[:count]


def load(args: argparse.Namespace):
    from st_debias.paths import load_model

    torch = _torch()
    torch.manual_seed(0)
    model = load_model(args.model, device=args.device)
    model.max_seq_length = args.max_seq_length
    if args.tiny and args.model is None:  # a dry run: the packaged model cut to its first layer
        transformer = model[0].auto_model
        transformer.encoder.layer = transformer.encoder.layer[:1]
        transformer.config.num_hidden_layers = 1
    return model


class Batches:
    """The tokenized columns of the largest batch, on the device, sliced for smaller ones."""

    def __init__(self, model, largest: int, columns: int, seed: int, limit: int | None) -> None:
        torch = _torch()
        rows = texts(largest * columns, seed, limit)
        self.columns = [
            {k: v.to(model.device) if hasattr(v, "to") else v for k, v in model.preprocess(rows[c * largest:(c + 1) * largest]).items()}
            for c in range(columns)
        ]
        mask = self.columns[0]["attention_mask"]
        self.full_length_share = float((mask.sum(dim=1) == mask.shape[1]).float().mean())
        self.tokens = int(mask.shape[1])
        with torch.no_grad():  # a frozen guide = the start model, precomputed as the row builder does
            self.guide = torch.cat(
                [model.encode(rows[c * largest:(c + 1) * largest], convert_to_tensor=True, batch_size=256)
                 for c in range(2)], dim=1)

    def take(self, batch: int, columns: int, labels: bool):
        return [{k: v[:batch] if hasattr(v, "to") else v for k, v in f.items()} for f in self.columns[:columns]], (
            self.guide[:batch] if labels else None)


def synchronize(device: str) -> None:
    if device.startswith("cuda"):
        _torch().cuda.synchronize()


def train_step(loss, features, labels, optimizer, precision: str, device: str) -> None:
    torch = _torch()
    with torch.autocast(device_type=device.split(":")[0], dtype=torch.bfloat16, enabled=precision == "bf16"):
        output = loss([dict(f) for f in features], labels)
        total = sum(output.values()) if isinstance(output, dict) else output
    total.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)


def _free(optimizer, device: str) -> None:
    optimizer.zero_grad(set_to_none=True)
    gc.collect()
    if device.startswith("cuda"):
        _torch().cuda.empty_cache()


def device_facts(device: str) -> dict[str, Any]:
    torch = _torch()
    if device.startswith("cuda"):
        props = torch.cuda.get_device_properties(device)
        return {"device": device, "device_name": torch.cuda.get_device_name(device),
                "memory_gib": round(props.total_memory / 2**30, 1), "cuda": torch.version.cuda,
                "tf32_matmul": torch.backends.cuda.matmul.allow_tf32, "cudnn_tf32": torch.backends.cudnn.allow_tf32}
    return {"device": device, "device_name": f"cpu ({platform.processor() or platform.machine()})",
            "threads": torch.get_num_threads()}


def embedded_columns(loss, columns: int) -> int:
    """How many columns ``loss`` embeds from ``columns`` inputs: its own ``input_columns`` where it has one
    (MarginNegationLoss adds a second dropout view), else the inputs."""
    select = getattr(loss, "input_columns", None)
    return len(select([{} for _ in range(columns)])) if callable(select) else columns


# -- stage (a): step time ------------------------------------------------------------------------------
def stage_step_time(args: argparse.Namespace, model) -> dict[str, Any]:
    torch = _torch()
    uncached, _ = builtin_losses()
    cases: dict[str, tuple[str, int]] = {  # case -> (loss, columns); MNRL on every column count used
        f"{BASELINE} ({COLUMN_NAMES[c]})": (BASELINE, c)
        for c in sorted({setup_of(n)[0] for n in uncached})
    }
    cases |= {name: (name, setup_of(name)[0]) for name in uncached if name != BASELINE}
    batches = Batches(model, max(args.step_batches), max(c for _, c in cases.values()), args.seed, args.corpus_limit)
    losses = {case: build_loss(name, model) for case, (name, _) in cases.items()}
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-9)  # a real update, negligible drift
    model.train()
    rows = []
    for precision in args.precisions:
        for batch in args.step_batches:
            times: dict[str, list[float] | str] = {case: [] for case in cases}
            for round_index in range(args.warmup + args.steps):
                for case, (name, columns) in cases.items():
                    if times[case] == "oom":
                        continue
                    features, labels = batches.take(batch, columns, setup_of(name)[2])
                    try:
                        synchronize(args.device)
                        start = time.perf_counter()
                        train_step(losses[case], features, labels, optimizer, precision, args.device)
                        synchronize(args.device)
                    except _oom_types():
                        times[case] = "oom"
                    if times[case] == "oom":  # freed outside the handler, whose traceback holds the tensors
                        _free(optimizer, args.device)
                        continue
                    if round_index >= args.warmup:
                        times[case].append(time.perf_counter() - start)
            for case, (name, columns) in cases.items():
                baseline = f"{BASELINE} ({COLUMN_NAMES[columns]})"
                median = None if times[case] == "oom" else statistics.median(times[case])
                base = None if times[baseline] == "oom" else statistics.median(times[baseline])
                rows.append({
                    "case": case, "loss": name, "columns": columns, "embedded_columns": embedded_columns(losses[case], columns),
                    "precision": precision, "batch_size": batch,
                    "median_step_s": median, "step_times_s": times[case], "baseline": baseline,
                    "ratio": round(median / base, 4) if median is not None and base else None,
                })
            print(f"[gpu] step_time {precision} batch {batch} done", file=sys.stderr, flush=True)
    return {"steps": args.steps, "warmup": args.warmup, "precisions": args.precisions,
            "batch_sizes": args.step_batches, "tokens": batches.tokens,
            "full_length_share": batches.full_length_share, "rows": rows}


# -- stage (b): peak memory ----------------------------------------------------------------------------
def stage_memory(args: argparse.Namespace, model) -> dict[str, Any]:
    torch = _torch()
    from st_debias.recipes.losses import uncached_name

    _, cached = builtin_losses()
    names = [n for c in cached for n in (c, uncached_name(c)) if n]
    largest = max(args.memory_batches)
    batches = Batches(model, largest, max(setup_of(n)[0] for n in names), args.seed + 1, args.corpus_limit)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-9)
    model.train()
    cuda = args.device.startswith("cuda")
    rows = []
    for name in names:
        loss = build_loss(name, model, args.mini_batch_size)
        columns, _, labels_needed = setup_of(name)
        out_of_memory = False
        for batch in args.memory_batches:
            row = {"loss": name, "cached": name.startswith("Cached"), "columns": columns, "batch_size": batch,
                   "mini_batch_size": args.mini_batch_size if name.startswith("Cached") else None}
            if out_of_memory:
                rows.append({**row, "peak_mib": "oom", "note": "not tried: ran out of memory at a smaller batch"})
                continue
            features, labels = batches.take(batch, columns, labels_needed)
            try:
                if not row["cached"] and args.simulate_oom_above and batch > args.simulate_oom_above:
                    raise SimulatedOOM(f"simulated out of memory above batch {args.simulate_oom_above}")
                train_step(loss, features, labels, optimizer, args.memory_precision, args.device)  # warm-up
                synchronize(args.device)
                if cuda:
                    torch.cuda.reset_peak_memory_stats(args.device)
                before = torch.cuda.memory_allocated(args.device) if cuda else None
                start = time.perf_counter()
                for _ in range(args.memory_steps):
                    train_step(loss, features, labels, optimizer, args.memory_precision, args.device)
                synchronize(args.device)
                step_s = (time.perf_counter() - start) / args.memory_steps
                peak = torch.cuda.max_memory_allocated(args.device) if cuda else None
                rows.append({**row, "peak_mib": None if peak is None else round(peak / 2**20, 1),
                             "peak_step_mib": None if peak is None else round((peak - before) / 2**20, 1),
                             "resident_before_mib": None if before is None else round(before / 2**20, 1),
                             "mean_step_s": step_s})
            except (*_oom_types(), SimulatedOOM) as error:
                out_of_memory = True
                rows.append({**row, "peak_mib": "oom", "note": str(error).splitlines()[0][:200]})
            if out_of_memory:  # freed outside the handler, whose traceback holds the tensors
                _free(optimizer, args.device)
        del loss
        _free(optimizer, args.device)
        print(f"[gpu] memory {name} done", file=sys.stderr, flush=True)
    return {"precision": args.memory_precision, "steps": args.memory_steps, "batch_sizes": args.memory_batches,
            "mini_batch_size": args.mini_batch_size, "tokens": batches.tokens,
            "memory_method": ("torch.cuda.max_memory_allocated over the measured steps (counter reset after one "
                              "warm-up step); peak_step_mib = that minus memory_allocated before them") if cuda
            else "none: CUDA memory counters only (a CPU dry run records null)",
            "rows": rows}


# -- stage (c): one epoch ------------------------------------------------------------------------------
def within_work_dir(value: Any, work_dir: Path) -> Any:
    """``value`` with every path under ``work_dir`` (the checkpoints) written relative to it, so that a result file
    names no folder of the machine that ran it (the work folder lies outside the tree on a borrowed machine)."""
    if isinstance(value, dict):
        return {key: within_work_dir(item, work_dir) for key, item in value.items()}
    if isinstance(value, list):
        return [within_work_dir(item, work_dir) for item in value]
    if isinstance(value, str) and Path(value).is_absolute() and Path(value).is_relative_to(work_dir.resolve()):
        return Path(value).relative_to(work_dir.resolve()).as_posix()
    return value


def stage_epoch(args: argparse.Namespace, facts: dict[str, Any], results: Path) -> list[Path]:
    from benchmarks.compare.compare import add_transfer
    from benchmarks.harness.runner import train_and_record
    from st_debias.recipes import load_recipe, override

    model = args.model
    if args.tiny and model is None:  # the dry run trains the cut model: save it where train_recipe can read it
        model = str(Path(args.work_dir) / "tiny-start")
        load(args).save(model)
    steps = args.epoch_sentences // args.epoch_batch
    written = []
    for name in args.recipes:
        recipe = override(load_recipe(name), steps=steps, batch_size=args.epoch_batch,
                          max_seq_length=args.max_seq_length, eval_steps=args.eval_steps, seed=args.seed)

        def entry(result, wall_s: float, name: str = name) -> dict[str, Any]:
            if args.transfer != "none":
                add_transfer(result.after, result.model_dir, args.transfer, True)
                add_transfer(result.before, model or "default", args.transfer, True)
            return within_work_dir({
                "command": command_line(__file__, args.argv), "stage": "epoch", "tiny": args.tiny,
                "recipe": name, "seed": args.seed, **facts,
                "budget": {"steps": steps, "batch_size": args.epoch_batch, "sentences": args.epoch_sentences,
                           "max_seq_length": args.max_seq_length, "eval_steps": args.eval_steps},
                "transfer": args.transfer, "wall_s": wall_s, "best_checkpoint": result.best_checkpoint,
                "selection": result.selection, "before": result.before, "after": result.after,
                "data_report": result.data_report, "log_history": result.log_history,
            }, Path(args.work_dir))

        written.append(train_and_record(
            results / "epoch" / f"{name}-seed{args.seed}.json", recipe,
            work_dir=Path(args.work_dir) / f"{name}-seed{args.seed}", entry=entry, model=model, quiet=True,
            resume=args.resume, tag="gpu", quick_eval=args.tiny,
        ))
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stages", nargs="+", choices=("step_time", "memory", "epoch"),
                        default=["step_time", "memory", "epoch"])
    parser.add_argument("--device", default="cuda", help="cuda (default) or cpu (a dry run only)")
    parser.add_argument("--tiny", action="store_true",
                        help="toy sizes (and the packaged model cut to one layer unless --model): a dry run")
    parser.add_argument("--model", default=None, help="default: the packaged all-MiniLM-L6-v2")
    parser.add_argument("--max-seq-length", type=int, default=32)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--step-batches", type=int, nargs="+", default=None, help=f"default {STEP_BATCHES}")
    parser.add_argument("--precisions", nargs="+", choices=("bf16", "fp32"), default=["bf16", "fp32"])
    parser.add_argument("--steps", type=int, default=None, help="timed steps per case (default 10)")
    parser.add_argument("--warmup", type=int, default=None, help="discarded rounds (default 3)")
    parser.add_argument("--memory-batches", type=int, nargs="+", default=None, help=f"default {MEMORY_BATCHES}")
    parser.add_argument("--mini-batch-size", type=int, default=None, help="of the Cached losses (default 128)")
    parser.add_argument("--memory-steps", type=int, default=None, help="measured steps per setting (default 2)")
    parser.add_argument("--memory-precision", choices=("bf16", "fp32"), default="fp32")
    parser.add_argument("--simulate-oom-above", type=int, default=None,
                        help="dry run: uncached losses 'run out of memory' above this batch")
    parser.add_argument("--recipes", nargs="+", default=list(EPOCH_RECIPES))
    parser.add_argument("--epoch-sentences", type=int, default=None, help="default 200000 (the whole corpus)")
    parser.add_argument("--epoch-batch", type=int, default=None, help="default 64")
    parser.add_argument("--eval-steps", type=int, default=None, help="checkpoint and dev score every (default 250)")
    parser.add_argument("--transfer", choices=("full", "quick", "none"), default=None, help="default full")
    parser.add_argument("--resume", action="store_true", help="epoch: continue from the newest checkpoint")
    parser.add_argument("--work-dir", default="outputs/gpu/work")
    parser.add_argument("--results-dir", default=None,
                        help=f"default {RESULTS.relative_to(RESULTS.parents[2])} ({TINY_RESULTS} with --tiny)")
    args = parser.parse_args(argv)
    args.argv = argv
    tiny = TINY if args.tiny else {}
    defaults = {"step_batches": list(tiny.get("step_batches", STEP_BATCHES)),
                "memory_batches": list(tiny.get("memory_batches", MEMORY_BATCHES)),
                "mini_batch_size": tiny.get("mini_batch_size", 128), "steps": tiny.get("steps", 10),
                "warmup": tiny.get("warmup", 3), "memory_steps": tiny.get("memory_steps", 2),
                "epoch_sentences": tiny.get("epoch_sentences", 200_000), "epoch_batch": tiny.get("epoch_batch", 64),
                "eval_steps": tiny.get("eval_steps", 250), "transfer": "none" if args.tiny else "full"}
    for key, value in defaults.items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    args.corpus_limit = 2_000 if args.tiny else None
    torch = _torch()
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        parser.exit(2, "run_gpu: no CUDA device visible (a dry run: --device cpu --tiny)\n")
    if args.device == "cpu" and not args.tiny:
        parser.exit(2, "run_gpu: --device cpu is a dry run only: add --tiny\n")
    results = Path(args.results_dir) if args.results_dir else (TINY_RESULTS if args.tiny else RESULTS)
    facts = {**device_facts(args.device), "torch": torch.__version__}
    head = {"command": command_line(__file__, argv), "tiny": args.tiny, "max_seq_length": args.max_seq_length,
            "seed": args.seed, "model": args.model or "packaged all-MiniLM-L6-v2"
            + (", first layer only" if args.tiny and args.model is None else ""), **facts}
    for stage, run in (("step_time", stage_step_time), ("memory", stage_memory)):
        if stage in args.stages:
            model = load(args)
            before = uptime()
            result = run(args, model)
            path = write_stamped_json(results / f"{stage}.json", {
                **head, "stage": stage, "uptime_before": before, "uptime_after": uptime(), **result}, indent=1)
            print(f"[gpu] wrote {path}", flush=True)
            del model
            gc.collect()
    if "epoch" in args.stages:
        from st_debias.recipes.stopping import TrainingInterrupted

        try:
            for path in stage_epoch(args, facts, results):
                print(f"[gpu] wrote {path}", flush=True)
        except TrainingInterrupted as error:  # SIGTERM (timeout -s TERM): a checkpoint is saved
            print(f"[gpu] {error} Continue with the same command and --resume.", file=sys.stderr, flush=True)
            return INTERRUPTED
    return 0


if __name__ == "__main__":
    sys.exit(main())
