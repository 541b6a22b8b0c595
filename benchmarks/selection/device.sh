#!/usr/bin/env bash
# The v5 study on a borrowed GPU machine without network access, where at most 64 MiB travel per call.
# Everything the runs need is packed on the CPU machine under .gpu/ (git-ignored) by `pack`, sent in parts
# (each fits one call beside the tree) over consecutive calls (`stage`; each call within the machine's 30 s idle window of the last),
# unpacked once (`setup`), then used by `select` runs (the same scripts as on the CPU):
#
#   bash benchmarks/selection/device.sh pack rows/ENTRY...  # here: model, wheels (the lab's too), data, rows, git
#   bash benchmarks/selection/device.sh stage       # there, once per call that carries a part
#   bash benchmarks/selection/device.sh setup       # there: assemble the model, install wheels, unpack
#   bash benchmarks/selection/device.sh select OUT_DIR STEPS EVAL_STEPS TRANSFER SEED CONFIG...
#
# Rows are built on the CPU machine (spaCy is not installed on the GPU machine) and found through the row
# cache; provenance stamps read the commit from a shallow bare clone (GIT_DIR), so a result names the commit
# and whether the tree differed from it.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT="$HOME/st_debias"

HARNESS=benchmarks/harness/device.sh  # the packing, staging and setup every study's device script shares

case "${1:-}" in
  pack)  # pack [ROW-CACHE ENTRIES...]: what the runs need, in parts of under 64 MiB with the tree
    shift
    bash "$HARNESS" pack .gpu "${ST_DEBIAS_CACHE:-$HOME/.cache/st_debias}" probes "$@"
    ;;
  stage)
    bash "$HARNESS" stage .gpu
    ;;
  setup)
    bash "$HARNESS" setup
    ;;
  select)
    shift
    out=$1 steps=$2 eval_steps=$3 transfer=$4 seed=$5
    shift 5
    eval "$(bash "$HARNESS" env)"
    logs="$ROOT/logs/$(basename "$out")"
    mkdir -p "$logs"
    # The start model's dev scores, once, before the parallel runs reuse them.
    python3 benchmarks/selection/select_dev.py --results-dir "$out" --transfer "$transfer" --quiet > "$logs/start.log" 2>&1 \
      || { tail -30 "$logs/start.log"; exit 1; }
    for config in "$@"; do
      name=$(basename "$config" .yaml)
      python3 benchmarks/selection/select_dev.py "$config" --results-dir "$out" --work-dir "outputs/v5/runs/$(basename "$out")" --steps "$steps" \
        --eval-steps "$eval_steps" --seeds "$seed" --transfer "$transfer" --quiet > "$logs/$name.log" 2>&1 &
    done
    failed=0
    for job in $(jobs -p); do wait "$job" || failed=1; done
    for config in "$@"; do echo "== $(basename "$config" .yaml)"; tail -3 "$logs/$(basename "$config" .yaml).log"; done
    python3 benchmarks/selection/select_dev.py --results-dir "$out" --table
    exit $failed
    ;;
  *)
    echo "usage: $0 pack|stage|setup|select ..." >&2
    exit 2
    ;;
esac
