"""Does "train longer, then interpolate back toward the start model" beat early stopping? Development data only.

WiSE-FT (Wortsman et al., CVPR 2022) mixes the weights of a fine-tuned model with those of its start,
θ(w) = (1 − w)·θ_start + w·θ_trained, and often keeps more of the start model's robustness than early
stopping at the same in-distribution score. This script trains one recipe for ``--steps`` (keeping, as every
run does, the best STS-B dev checkpoint and the last one), then scores on the dev axes of ``select_dev.py``
(STS-B dev, its Cont/Oppn split and sides, held-out CANNOT pairs, the dev word-order probe, the dev minimal
pairs):

* the best and the last checkpoint as they are (w = 1);
* the last checkpoint interpolated with the start model at each ``--weights`` value.

Usage (what produced ``results/interpolation/``):

    python benchmarks/minimal_pairs_margin/interpolate_dev.py benchmarks/minimal_pairs_margin/configs/v4-mp-swap-m10-lam3e3.yaml \
        --steps 200 --eval-steps 50 --seed 42 --weights 0.5

Writes ``results/interpolation/<recipe>-seed<seed>.json`` (stamped) and a PNG of the trade-off:
STS-B dev against each bias axis, the interpolation path beside the checkpoints and the start model.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from benchmarks.harness.provenance import stamp, uptime, write_stamped_json
from benchmarks.selection.select_dev import dev_scores, start_scores
from st_debias.progress import announce

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "interpolation"
#: (score key, axis label, higher is better)
AXES = (
    ("dev_oppn", "STS-B dev Oppn split (↑)", True),
    ("neg_cos_heldout", "held-out CANNOT negation cosine (↓)", False),
    ("word_order_cos", "dev word-order cosine (↓)", False),
    ("mp_accuracy", "dev minimal-pair accuracy (↑)", True),
)


def interpolated_state(start: dict, trained: dict, weight: float) -> dict:
    """(1 − weight)·start + weight·trained for floating-point tensors; other tensors (ids) from ``trained``."""
    return {
        name: start[name] * (1.0 - weight) + tensor * weight if tensor.is_floating_point() else tensor
        for name, tensor in trained.items()
    }


def checkpoint_step(folder: Path) -> int:
    return int(folder.name.rsplit("-", 1)[1])


def score_run(run_dir: Path, weights: list[float]) -> list[dict]:
    """Dev scores of the run's checkpoints (w = 1) and of its last checkpoint mixed with the start model."""
    from sentence_transformers import SentenceTransformer

    from st_debias.recipes.train import load_start_model

    checkpoints = sorted((run_dir / "checkpoints").glob("checkpoint-*"), key=checkpoint_step)
    if not checkpoints:
        raise SystemExit(f"[interpolate] error: no checkpoint in {run_dir / 'checkpoints'}")
    model = load_start_model(None)  # scored at its own max_seq_length, like the saved models
    start = {name: tensor.detach().clone() for name, tensor in model.state_dict().items()}
    last = checkpoints[-1]
    points = []
    jobs = [(folder, 1.0) for folder in checkpoints] + [(last, w) for w in weights if w != 1.0]
    for folder, weight in jobs:
        announce(f"Scoring {folder.name} at w = {weight} on the dev axes…", True)
        trained = SentenceTransformer(str(folder), device="cpu").state_dict()
        model.load_state_dict(interpolated_state(start, trained, weight))
        scores = dev_scores(model)
        points.append({"checkpoint": checkpoint_step(folder), "weight": weight, "scores": scores})
        print(f"[interpolate] step {points[-1]['checkpoint']} w {weight}: dev {scores['dev']:.2f}, "
              f"Oppn {scores['dev_oppn']:.2f}, CANNOT {scores['neg_cos_heldout']:.3f}, "
              f"word order {scores['word_order_cos']:.3f}", flush=True)
    return points


def plot(points: list[dict], start: dict, best_step: int, title: str, target: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    last_step = max(p["checkpoint"] for p in points)
    path = sorted((p for p in points if p["checkpoint"] == last_step), key=lambda p: p["weight"])
    figure, axes = plt.subplots(1, len(AXES), figsize=(4.2 * len(AXES), 4.2))
    for axis, (key, label, _) in zip(axes, AXES):
        xs = [start["dev"]] + [p["scores"]["dev"] for p in path]
        ys = [start[key]] + [p["scores"][key] for p in path]
        axis.plot(xs, ys, "-o", color="#4c72b0", label=f"step {last_step} mixed with the start (w)")
        for p in path:
            axis.annotate(f"{p['weight']:g}", (p["scores"]["dev"], p["scores"][key]), fontsize=7,
                          xytext=(3, 3), textcoords="offset points")
        for p in points:
            if p["weight"] == 1.0 and p["checkpoint"] != last_step:
                axis.plot(p["scores"]["dev"], p["scores"][key], "s", color="#dd8452",
                          label=f"step {p['checkpoint']} (best STS-B dev checkpoint)" if p["checkpoint"] == best_step
                          else f"step {p['checkpoint']}")
        axis.plot(start["dev"], start[key], "*", color="#c44e52", markersize=12, label="start model")
        axis.axhline(start[key], color="#c44e52", linestyle=":", linewidth=0.8)
        axis.axvline(start["dev"], color="#c44e52", linestyle=":", linewidth=0.8)
        axis.set_xlabel("STS-B dev Spearman ×100 (↑)")
        axis.set_ylabel(label)
    axes[0].legend(fontsize=7, loc="best")
    figure.suptitle(title, fontsize=10)
    figure.tight_layout()
    figure.savefig(target, dpi=120)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("recipe", help="packaged recipe name or recipe YAML")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--eval-steps", type=int, default=25)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--weights", type=float, nargs="+", default=[0.25, 0.5, 0.75])
    parser.add_argument("--work-dir", default="outputs/interpolate")
    args = parser.parse_args(argv)
    if any(not 0.0 < w <= 1.0 for w in args.weights):
        parser.error(f"--weights must lie in (0, 1], got {args.weights}")

    from st_debias.recipes import load_recipe, override, train_recipe

    label = Path(args.recipe).stem
    recipe = override(load_recipe(args.recipe), steps=args.steps, batch_size=64, max_seq_length=32,
                      eval_steps=args.eval_steps, seed=args.seed)
    current = stamp()
    load_before = uptime()
    began = time.perf_counter()
    run_dir = Path(args.work_dir) / f"{label}-seed{args.seed}"
    # The start model competes as usual, but this study needs the trained checkpoints whatever wins.
    result = train_recipe(recipe, output_dir=run_dir, evaluate=False, overwrite=True)
    best_step = checkpoint_step(Path(result.selection["best_checkpoint"]))
    points = score_run(run_dir, sorted(set(args.weights)))
    start = start_scores()
    RESULTS.mkdir(parents=True, exist_ok=True)
    target = RESULTS / f"{label}-seed{args.seed}.json"
    entry = {
        "recipe": recipe.to_dict(),
        "seed": args.seed,
        "best_checkpoint_step": best_step,
        "selection": result.selection,
        "start": start,
        "points": points,
        "log_history": result.log_history,
        "wall_s": round(time.perf_counter() - began, 1),
        "uptime_before": load_before,
        "uptime_after": uptime(),
    }
    write_stamped_json(target, entry, current, indent=1)
    plot(points, start, best_step, f"{label} v{recipe.version}, seed {args.seed}, {args.steps} steps: "
         "checkpoints vs interpolation with the start model (dev data)", target.with_suffix(".png"))
    print(f"[interpolate] wrote {target} and {target.with_suffix('.png').name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
