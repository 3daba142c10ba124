#!/usr/bin/env bash
# On the GPU host (no LLVM there): build the runtime on its own, then load and check every
# sm_90 example that bench/h200/prepare.sh put in dist/sm_90. Extra arguments (--bench) go to
# run_examples.py. Device tool: run with carry ["dist/sm_90"].
set -euo pipefail
cd "$(dirname "$0")/../.."
cmake -S runtime -B build-runtime -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build build-runtime -j "$(nproc)" > /dev/null
PYTHONUNBUFFERED=1 python3 bench/h200/run_examples.py dist/sm_90 build-runtime/lib/libwavetile_runtime.so "$@"
