#!/usr/bin/env bash
# Builds libwavetile.so with LLVM, MLIR and lld inside (build-static/), strips it and packs it
# as dist/python/libwavetile.so.xz: what the Python extension links on a host without LLVM
# (bench/h200/python.sh builds the extension there). See docs/deployment.md.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake -G Ninja -B build-static -DCMAKE_BUILD_TYPE=Release -DWAVETILE_LINK_DYLIB=OFF -DWAVETILE_BUILD_TESTS=OFF >/dev/null
ninja -C build-static -j "${WAVETILE_JOBS:-$(nproc)}" wavetile_shared
mkdir -p dist/python
strip -o dist/python/libwavetile.so build-static/lib/libwavetile.so
xz -T0 -6 -f dist/python/libwavetile.so
ls -la dist/python
