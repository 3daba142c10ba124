#!/usr/bin/env bash
# Builds the `wavetile` CLI with LLVM, MLIR and lld linked in (build-static/), strips it and
# packs it as dist/static/wavetile.xz: it runs on Linux hosts with glibc >= 2.36 and no LLVM
# (only libz, libzstd, libm and libc are needed). See docs/deployment.md.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake -G Ninja -B build-static -DCMAKE_BUILD_TYPE=Release -DWAVETILE_LINK_DYLIB=OFF -DWAVETILE_BUILD_TESTS=OFF >/dev/null
ninja -C build-static -j "${WAVETILE_JOBS:-$(nproc)}" wavetile
mkdir -p dist/static
strip -o dist/static/wavetile build-static/bin/wavetile
xz -T0 -6 -f dist/static/wavetile
ls -la dist/static
