#!/usr/bin/env bash
# On a GPU host without LLVM: unpack the static compiler built by
#   cmake -G Ninja -B build-static -DWAVETILE_LINK_DYLIB=OFF -DWAVETILE_BUILD_TESTS=OFF && ninja -C build-static wavetile
#   strip -o w build-static/bin/wavetile && xz -c w > dist/static/wavetile.xz
# run its demo (the host JIT there), recompile the examples for TARGET (default sm_90a) there,
# and check them on the GPU against the plans made on the build machine
# (bench/h200/prepare.sh, same TARGET).
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=$(mktemp -d)/wavetile
xz -dc dist/static/wavetile.xz > "$bin" && chmod +x "$bin"
echo "== dynamic dependencies"; ldd "$bin"
echo "== demo on this host"; "$bin" demo | tail -6
target=${TARGET:-sm_90a}
for example in vector_add softmax rmsnorm gemm; do
  "$bin" compile --example "$example" --target "$target" -o "dist/$target/$example.ptx"
done
echo "== PTX compiled here, run against the build machine's host results"
python3 bench/h200/run_examples.py "dist/$target"
