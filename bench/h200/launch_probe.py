#!/usr/bin/env python3
"""What a few-token RoPE launch costs, taken apart (bench/rope-notes.md, session 29).

At 1 and 32 tokens of 32 heads Wavetile's RoPE took 1.71/1.86 µs a call against the Triton
kernel's 1.58/1.66 (ops_bench.py, CUDA-graph replay). Both read the position, then the cos/sin
rows it selects, with the x rows alongside: the same two dependent trips. This times the Triton
kernel as ops_bench has it and in variants that each take on one property of Wavetile's kernel
(256 threads; 25 kernel parameters; cos/sin reads masked by the position's range), and
Wavetile's, interleaved over rounds in one process. Then the CPU cost of one eager
`rmsnorm2d_fwd` call (M = 1, N = 4096) taken apart: the output's allocation, the runtime and
stream lookup, the extension's call with the output given, the whole op, and torch's and the
Triton wrapper's calls for scale. PROFILE=1 instead runs each a few times
eagerly, for a profiler (`PROFILER="ncu ..." bash bench/h200/python.sh bench/h200/launch_probe.py`).

Run by bench/h200/python.sh bench/h200/launch_probe.py.
"""
import os
import statistics
import sys
import time

import torch
import triton
import triton.language as tl

import ops_bench  # same folder
from ops_bench import (EPS, ROPE_F, graph_time, report, rope_inputs, torch_rmsnorm, torch_rope, triton_rmsnorm,
                       ulp_error, wavetile_rope)

ops_bench.REPORT = os.path.join(ops_bench.OUT, "launch_probe.md")


@triton.jit
def _rope(x, out, cos, sin, positions, stride_t, heads, rows,
          p0, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15,
          HEADS: tl.constexpr, HALF: tl.constexpr, MASK_ROWS: tl.constexpr, USE_PARAMS: tl.constexpr,
          READ_PARAMS: tl.constexpr, PARAMS_SUM: tl.constexpr):
    t = tl.program_id(0)
    if READ_PARAMS:  # the extra parameters read on the way to the position's address (zero offset at run time)
        t += p0 + p1 + p2 + p3 + p4 + p5 + p6 + p7 + p8 + p9 + p10 + p11 + p12 + p13 + p14 + p15 - PARAMS_SUM
    p = tl.load(positions + t)
    h = tl.arange(0, HEADS)[:, None]
    j = tl.arange(0, HALF)[None, :]
    mask = h < heads
    if MASK_ROWS:  # as Wavetile: a position outside the table reads zeros, never memory past it
        row_ok = (p >= 0) & (p < rows)
        c = tl.load(cos + p * HALF + j, mask=row_ok, other=0.0).to(tl.float32)
        s = tl.load(sin + p * HALF + j, mask=row_ok, other=0.0).to(tl.float32)
    else:
        c = tl.load(cos + p * HALF + j).to(tl.float32)
        s = tl.load(sin + p * HALF + j).to(tl.float32)
    base = t * stride_t + h * (2 * HALF)
    if USE_PARAMS:  # folded away (times zero): only the launch's parameter buffer grows; READ_PARAMS reads them
        base += (p0 + p1 + p2 + p3 + p4 + p5 + p6 + p7 + p8 + p9 + p10 + p11 + p12 + p13 + p14 + p15) * 0
    xa = tl.load(x + base + j, mask=mask, other=0.0).to(tl.float32)
    xb = tl.load(x + base + HALF + j, mask=mask, other=0.0).to(tl.float32)
    tl.store(out + base + j, (xa * c - xb * s).to(out.dtype.element_ty), mask=mask)
    tl.store(out + base + HALF + j, (xb * c + xa * s).to(out.dtype.element_ty), mask=mask)


# Odd values: Triton specializes integer arguments equal to 1 or divisible by 16.
EXTRA = [3 + 2 * i for i in range(16)]


def variant(warps=4, mask_rows=False, use_params=False, read_params=False):
    def call(x, cos, sin, positions):
        out = torch.empty_like(x)
        heads = x.shape[2]
        _rope[(x.shape[0],)](x, out, cos, sin, positions, x.stride(0), heads, cos.shape[0], *EXTRA,
                             HEADS=triton.next_power_of_2(heads), HALF=ROPE_F, MASK_ROWS=mask_rows,
                             USE_PARAMS=use_params, READ_PARAMS=read_params, PARAMS_SUM=sum(EXTRA), num_warps=warps)
        return out
    return call


IMPLS = {
    "triton": variant(),
    "triton 8 warps": variant(warps=8),
    "triton +16 params": variant(use_params=True),
    "triton +16 params read": variant(read_params=True),
    "triton rows masked": variant(mask_rows=True),
    "triton all three": variant(warps=8, mask_rows=True, use_params=True),
    "wavetile": wavetile_rope,
}


def per_call_us(fn, calls=2000):
    """CPU microseconds per call, back to back (the GPU queue absorbs the launches)."""
    for _ in range(50):
        fn()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    elapsed = time.perf_counter() - start
    torch.cuda.synchronize()
    return elapsed / calls * 1e6


def call_costs():
    ops = ops_bench.ops
    x = torch.randn(1, 4096, device="cuda", dtype=torch.bfloat16)
    w = torch.rand(4096, device="cuda", dtype=torch.bfloat16) + 0.5
    out = torch.empty_like(x)
    runtime, stream = ops._runtime(out, x, w)
    parts = {
        "torch.empty_like": lambda: torch.empty_like(x),
        "ops._runtime (3 tensors)": lambda: ops._runtime(out, x, w),
        "_C.rmsnorm2d_fwd (output given)": lambda: ops._C.rmsnorm2d_fwd(runtime, stream, out, x, w, EPS, 0, False),
        "ops.rmsnorm2d_fwd": lambda: ops.rmsnorm2d_fwd(x, w, EPS),
        "torch rms_norm": lambda: torch_rmsnorm(x, w, EPS),
        "Triton wrapper": lambda: triton_rmsnorm(x, w, EPS),
    }
    report("CPU µs per eager call, rmsnorm2d_fwd of 1 x 4096 bf16 (median of 5 runs of 2000 calls):")
    report("")
    report("| part | µs |")
    report("|---|---|")
    for name, fn in parts.items():
        report(f"| {name} | {statistics.median(per_call_us(fn) for _ in range(5)):.2f} |")
    report("")


def main():
    g = ops_bench.fresh_generator()
    tokens = [int(v) for v in os.environ.get("MS", "1,32").split(",")]
    n = 4096
    if os.environ.get("PROFILE") == "1":
        inputs = rope_inputs(tokens[0], n, g)
        for fn in IMPLS.values():
            for _ in range(5):
                fn(*inputs)
        torch.cuda.synchronize()
        return 0
    report(f"# RoPE launch probe on {torch.cuda.get_device_name()} (32 heads of 128, bf16)")
    report("")
    report("µs per call, CUDA-graph replay of 20 calls over 64 input copies; median of 7 interleaved rounds "
           "(each round's own median of 15 replays)")
    report("")
    report("| tokens | " + " | ".join(IMPLS) + " |")
    report("|---|" + "---|" * len(IMPLS))
    failures = 0
    for m in tokens:
        batches = [rope_inputs(m, n, g) for _ in range(64)]
        ref = torch_rope(*batches[0])
        for name, fn in IMPLS.items():
            err = ulp_error(fn(*batches[0]), ref)
            if not err <= 1.0:
                failures += 1
                report(f"{name}: {err:.2f} ulp from the float32 reference")
        rounds = {name: [] for name in IMPLS}
        for _ in range(7):
            for name, fn in IMPLS.items():
                rounds[name].append(graph_time(fn, batches))
        report(f"| {m} | " + " | ".join(f"{statistics.median(t):.3f}" for t in rounds.values()) + " |")
    report("")
    call_costs()
    report(f"numerics: {len(IMPLS) * len(tokens) - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
