#!/usr/bin/env bash
# Pack what benchmarks/gpu/run_gpu.py needs on a GPU machine without network access into outputs/gpu/pack/p1,
# p2, …, each fitting one call beside the tree: one `carry` path per call. Run here, from the
# repository root, after `. scripts/setup.sh`:
#
#   bash benchmarks/gpu/pack.sh            # builds the epoch stage's rows first (spaCy; long on 2 cores)
#   bash benchmarks/gpu/pack.sh --no-rows  # stages step_time and memory only (no rows needed)
#
# The packing is the lab's shared one (benchmarks/harness/device.sh): the packaged all-MiniLM-L6-v2,
# the data folder, the wheels the machine lacks, a shallow clone of the commit for the provenance
# stamps, and a row cache. The machine's own python 3.12 and CUDA torch are used: a CUDA torch wheel (~900 MB)
# cannot travel. Rows are built here because spaCy is not installed there: `simcse` and `st-debias` at the
# epoch budget (3,125 steps of 64 rows, seed 42, 32 tokens) into the pack's own cache outputs/gpu/cache
# (beside a copy of the probe cache), which travels whole, so the rows found there are exactly these.
set -euo pipefail
cd "$(dirname "$0")/../.."
cache=outputs/gpu/cache
mkdir -p "$cache"
user_cache="${ST_DEBIAS_CACHE:-$HOME/.cache/st_debias}"
[ -d "$user_cache/probes" ] && rm -rf "$cache/probes" && cp -r "$user_cache/probes" "$cache/probes"
if [ "${1:-}" != "--no-rows" ]; then
  ST_DEBIAS_CACHE="$cache" python benchmarks/selection/build_rows.py simcse st-debias --steps 3125 --seeds 42 \
    --batch-size 64 --max-seq-length 32
  # The evaluation after training needs the negation-meaning probe's items, which spaCy builds: into the cache too
  # (the start model's packaged evaluation is reused, so nothing else would build them here).
  ST_DEBIAS_CACHE="$cache" python -c "from st_debias.evaluation.bias_data import load_negation_meaning_items as load; load()"
fi
entries=$(cd "$cache" && ls -A)
# shellcheck disable=SC2086
bash benchmarks/harness/device.sh pack outputs/gpu/pack "$cache" ${entries:-.}
