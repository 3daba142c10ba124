#!/usr/bin/env bash
# Install, build, and run every test (gtest unit and numerics tests, and the lit suite) under ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
cd build
ctest --output-on-failure -j "${WAVETILE_JOBS:-$(nproc)}"
