#!/usr/bin/env bash
# Create .venv with the CPU build of torch, st_debias (editable, with test extras) and the lab (editable), and point
# st_debias at the shared data. Source it (". scripts/setup.sh") to keep the environment.
set -e
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
. .venv/bin/activate
python -m pip install -q --upgrade pip
# The CPU wheel of torch; a bare "torch" would pull a multi-GB CUDA build.
python -m pip install -q "torch==2.13.0"
python -m pip install -q -e ".[dev,onnx,openvino]"
# The lab (benchmarks/, never shipped): its scripts import it as a package, and its losses and data.mix sources
# reach recipes through its entry points.
python -m pip install -q -e benchmarks
export ST_DEBIAS_DATA="${ST_DEBIAS_DATA:-$(cd .. && pwd)/shared/data}"
export NLTK_DATA="${NLTK_DATA:-$ST_DEBIAS_DATA/nltk_data}"
export HF_HUB_OFFLINE="${HF_HUB_OFFLINE:-1}"
export TOKENIZERS_PARALLELISM=false
set +e
