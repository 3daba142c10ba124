#!/usr/bin/env bash
# Builds what bench/h200/run_examples.py needs into dist/$TARGET (git-ignored): PTX and launch
# manifest of every example for TARGET (default sm_90a, what the runtime picks on an H200;
# TARGET=sm_90 for mma.sync instead of wgmma), and launch plans with the host JIT's outputs
# for odd shapes. On the GPU host, bench/h200/run.sh builds the runtime and runs them.
set -euo pipefail
cd "$(dirname "$0")/../.."
target=${TARGET:-sm_90a}
out=dist/$target
rm -rf "$out" && mkdir -p "$out"
declare -A shapes=([vector_add]=1000003 [softmax]=37,3001 [rmsnorm]=19,5120 [cumsum]=37,5000 [gemm]=130,75,161 [gemm_pipelined]=130,75,97 [gemm_fp8]=130,75,321 [gemm_large]=200,260,161)
for example in vector_add softmax rmsnorm cumsum gemm gemm_pipelined gemm_fp8 gemm_large; do
  build/bin/wavetile compile --example "$example" --target "$target" --emit ptx -o "$out/$example.ptx" \
    --manifest "$out/$example.manifest"
  # EMULATE=1: the reference outputs are the emulator's run of the same code, so the
  # GPU run checks the emulator (docs/emulator.md) as well as the compiler.
  build/bin/wavetile run "$example" --shape "${shapes[$example]}" --seed 20261129 --save "$out" \
    ${EMULATE:+--target "$target" --emulate}
done
ls -la "$out"
