#!/usr/bin/env bash
# The main job: install, build, compile every example kernel for every target and check it on
# the host and, through the emulator, as gfx942, gfx950 and sm_90 code (the C++ examples); then
# the Python examples: same IR as C++, host runs against
# numpy, GPU code objects through the kernel cache, and GPU runs where there is a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
build/bin/wavetile demo
# The interpreter the extension was built for (CMakeLists.txt prefers Debian's).
python=/usr/bin/python3
[[ -x $python ]] || python=python3
echo
PYTHONPATH=build/python "$python" examples/python/demo.py
