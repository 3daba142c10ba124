#!/usr/bin/env bash
# On the GPU host (Python 3.12, gcc 13, torch; no LLVM): build the Python extension against
# the prebuilt libwavetile.so (scripts/build-python-dist.sh made dist/python/libwavetile.so.xz
# here), then run bench/h200/python_gpu.py (Python kernels on CUDA tensors against torch,
# launch overhead and cold compile time against torch and Triton) or the script given first
# (bench/h200/ops_bench.py: library ops against torch, torch.compile and Triton). Device tool:
# carry ["dist/python"].
set -euo pipefail
cd "$(dirname "$0")/../.."
out=build-python
# REUSE_BINDING=1: a later script in the same device call runs against the extension built
# by the first.
if [[ "${REUSE_BINDING:-0}" != 1 || ! -d "$out/wavetile" ]]; then
  rm -rf "$out" && mkdir -p "$out/wavetile"
  xz -dc dist/python/libwavetile.so.xz > "$out/wavetile/libwavetile.so"
  cp python/wavetile/*.py "$out/wavetile/"
  python_include=$(python3 -c "import sysconfig; print(sysconfig.get_paths()['include'])")
  # pybind11's headers ship with torch.
  torch_include=$(python3 -c "import os, torch; print(os.path.join(os.path.dirname(torch.__file__), 'include'))")
  suffix=$(python3 -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))")
  start=$EPOCHREALTIME
  c++ -O2 -std=c++20 -shared -fPIC -fvisibility=hidden -I"$python_include" -I"$torch_include" \
    -Icompiler/include -Idsl/include -Iruntime/include -Ilib/kernels/include python/src/Bindings.cpp \
    python/src/OpsBindings.cpp \
    -L"$out/wavetile" -lwavetile -Wl,-rpath,'$ORIGIN' -o "$out/wavetile/_wavetile$suffix"
  echo "binding built in $(python3 -c "print(f'{$EPOCHREALTIME - $start:.1f}')") s"
fi
# A script given first (e.g. bench/h200/ops_bench.py) runs instead of python_gpu.py.
script=bench/h200/python_gpu.py
if [[ "${1:-}" == *.py ]]; then script=$1; shift; fi
# PROFILER (e.g. "ncu --clock-control none ...") runs the script under a profiler.
PYTHONPATH="$out:examples/python" PYTHONUNBUFFERED=1 ${PROFILER:-} python3 "$script" "$@"
