#!/usr/bin/env bash
# Configures and builds Wavetile into build/ (binaries in build/bin/). Extra arguments go to cmake.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${WAVETILE_JOBS:-$(nproc)}
cmake -G Ninja -B build -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
ninja -C build -j "$jobs"
