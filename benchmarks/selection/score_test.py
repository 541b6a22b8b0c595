"""Score a model trained by a dev-selection run on the test side: the STS-7, the bias probes and the seven
SentEval transfer tasks, the evaluation ``compare.py`` gives its trained models. Run it after the variant was
chosen, never to choose one.

    python benchmarks/selection/score_test.py outputs/v5/cpu-dev-500/v5-nm20-lam2e3-seed42/model \
        --out benchmarks/budget/results/v5/cpu-dev-500/v5-nm20-lam2e3-seed42-test.json

The model may also be one of the run's trainer checkpoints (``checkpoints/checkpoint-N``): it is scored at the
length of the run's ``model/``, and the file records ``checkpoint_step``.

The file holds the model's recipe (from its ``st_debias_recipe.yaml``), the evaluation entry (``after``, as in a
``compare.py`` result), the wall time with the machine load before and after (not a timing target), and the
provenance stamp. The wall time counts the evaluation only, not loading the model.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from benchmarks.harness.provenance import command_line, stamp, uptime, write_stamped_json
from benchmarks.harness.trained import load_trained, recipe_file_of


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", help="a model folder saved by train_recipe, or one of its run's trainer checkpoints")
    parser.add_argument("--out", required=True, help="the JSON file to write")
    args = parser.parse_args(argv)
    folder = Path(args.model)
    if not recipe_file_of(folder).is_file():
        parser.error(f"{folder}: no {recipe_file_of(folder)} (not a model or checkpoint saved by train_recipe)")
    from st_debias.evaluation import evaluate_model

    model, recipe, loaded = load_trained(folder)
    load_before, started = uptime(), time.perf_counter()
    after = evaluate_model(model, ("sts", "bias", "transfer"), label=recipe["name"])
    entry = {
        "command": command_line(__file__, argv),
        "model": str(folder),
        **loaded,
        "recipe": recipe,
        "wall_s": round(time.perf_counter() - started, 1),
        "machine": {"uptime_before": load_before, "uptime_after": uptime()},
        "after": after,
    }
    write_stamped_json(Path(args.out), entry, stamp(), indent=1)
    print(f"[score] {args.out}: STS-7 {after['sts']['avg']:.2f}, transfer {after['transfer']['avg']:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
