#!/usr/bin/env bash
# On the GPU host (no LLVM there): build the runtime on its own, then load and check every
# example that bench/h200/prepare.sh put in dist/$TARGET (default sm_90a). Extra arguments
# (--bench) go to run_examples.py. Device tool: run with carry ["dist/sm_90a"] (or the
# TARGET's folder).
set -euo pipefail
cd "$(dirname "$0")/../.."
cmake -S runtime -B build-runtime -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build build-runtime -j "$(nproc)" > /dev/null
PYTHONUNBUFFERED=1 python3 bench/h200/run_examples.py "dist/${TARGET:-sm_90a}" build-runtime/lib/libwavetile_runtime.so "$@"
