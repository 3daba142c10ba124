#!/usr/bin/env bash
# The main job: install, build, then compile every example kernel and check it on the host.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
build/bin/wavetile demo
