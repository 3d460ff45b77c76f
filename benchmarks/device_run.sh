#!/usr/bin/env bash
# Runs a command on the lent GPU machine with our packages from source, e.g.
#   bash benchmarks/device_run.sh python3 -m pytest -m gpu -q -n 4 --dist loadscope packages tests
#   bash benchmarks/device_run.sh python3 benchmarks/gpu_models.py --only llama_train --out $OUT/x.json
# Its image lacks a few pure-Python wheels the tests import: download them here first, into
# .whl/ (git-ignored), and name .whl in the device tool's `carry`:
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#     --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 -d .whl \
#     bytecode==0.19.1 expecttest==0.3.0 hypothesis==6.170.27 sortedcontainers pytest-xdist execnet
set -euo pipefail
cd "$(dirname "$0")/.."
if compgen -G ".whl/*.whl" > /dev/null; then
    python3 -m pip install -q --no-deps --target /tmp/site .whl/*.whl > /dev/null 2>&1
fi
export PYTHONPATH="/tmp/site:$(ls -d "$PWD"/packages/*/src | tr '\n' :)" HF_HUB_OFFLINE=1
exec "$@"
