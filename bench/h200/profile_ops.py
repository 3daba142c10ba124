#!/usr/bin/env python3
"""One call of each named op shape (CASES=name:M:N[:K],...) after warm-up, and of its peer (Triton,
cuBLAS for gemm and fp8, the preshuffled-W kernel for bpreshuffle), for a profiler to capture (ncu), e.g.

    ncu --clock-control none --kernel-name regex:'rmsnorm|triton' --section SpeedOfLight \\
        --section Occupancy --section WarpStateStats python3 bench/h200/profile_ops.py

Run through bench/h200/python.sh with PROFILER="ncu ..."."""
import os
import sys
import tempfile

os.environ.setdefault("WAVETILE_CACHE_DIR", tempfile.mkdtemp(prefix="wavetile-cache-"))
sys.path.insert(0, os.path.dirname(__file__))

import torch  # noqa: E402

import gemm_bench  # noqa: E402  (block-scaled operands and cuBLAS call)
import ops_bench as b  # noqa: E402

CASES = {
    "rmsnorm_quant": lambda m, n: (b.wavetile_rmsnorm_quant, b.triton_rmsnorm_quant,
                                   (torch.randn(m, n, device="cuda", dtype=torch.bfloat16),
                                    torch.rand(n, device="cuda", dtype=torch.bfloat16) + 0.5)),
    "rmsnorm": lambda m, n: (lambda x, w: b.ops.rmsnorm2d_fwd(x, w, b.EPS), lambda x, w: b.triton_rmsnorm(x, w, b.EPS),
                             (torch.randn(m, n, device="cuda", dtype=torch.bfloat16),
                              torch.rand(n, device="cuda", dtype=torch.bfloat16) + 0.5)),
    "layernorm": lambda m, n: (lambda x, w, bias: b.ops.layernorm2d_fwd(x, w, bias, b.EPS),
                               lambda x, w, bias: b.triton_layernorm(x, w, bias, b.EPS),
                               (torch.randn(m, n, device="cuda", dtype=torch.bfloat16),
                                torch.rand(n, device="cuda", dtype=torch.bfloat16) + 0.5,
                                torch.rand(n, device="cuda", dtype=torch.bfloat16) - 0.5)),
    "silu": lambda m, n: (b.wavetile_silu_and_mul, b.triton_silu_and_mul,
                          (torch.randn(m, 2 * n, device="cuda", dtype=torch.bfloat16),)),
    "quant": lambda m, n: (b.wavetile_per_token_quant, b.triton_per_token_quant,
                           (torch.randn(m, n, device="cuda", dtype=torch.bfloat16),)),
    "rope": lambda m, n: (b.wavetile_rope, b.triton_rope, b.rope_inputs(m, n)),
    # M x N x K (K given third, default N) bf16 GEMM against cuBLAS (torch.matmul)
    "gemm": lambda m, n, k=None: (lambda x, w: b.ops.gemm_a16w16(x, w), lambda x, w: x @ w.t(),
                                  (torch.randn(m, k or n, device="cuda", dtype=torch.bfloat16),
                                   torch.randn(n, k or n, device="cuda", dtype=torch.bfloat16))),
    # M x N x N fp8 gemm_a8w8 against cuBLAS's torch._scaled_mm (per-tensor scales)
    "fp8": lambda m, n: (lambda x, w, ws, xs, s: b.ops.gemm_a8w8(x, w, xs, s),
                         lambda x, w, ws, xs, s: torch._scaled_mm(x, w.t(), scale_a=torch.ones((), device="cuda"),
                                                                  scale_b=torch.ones((), device="cuda"),
                                                                  out_dtype=torch.bfloat16),
                         fp8_operands(m, n, n)),
    # M x N x K (K given third, default N) block-scaled fp8 against torch._scaled_mm's blockwise path
    "blockscale": lambda m, n, k=None: blockscale_operands(m, n, k or n),
    # M x N x K (K given third, default N) MXFP4 gemm_a4w4 against cuBLAS bf16 on the operands
    # dequantized beforehand
    "a4w4": lambda m, n, k=None: a4w4_operands(m, n, k or n),
    # M x N x 8192 fp8 gemm_a8w8 against the same product with W preshuffled (gemm_a8w8_bpreshuffle)
    "bpreshuffle": lambda m, n: (lambda x, w, ws, xs, s: b.ops.gemm_a8w8(x, w, xs, s),
                                 lambda x, w, ws, xs, s: b.ops.gemm_a8w8_bpreshuffle(x, ws, xs, s),
                                 fp8_operands(m, n, 8192)),
}


def fp8_operands(m, n, k):
    """x, w, shuffle_weight(w), per-token and per-channel scales."""
    x = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
    w = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn)
    return (x, w, b.ops.shuffle_weight(w), torch.rand(m, 1, device="cuda") + 0.5,
            torch.rand(1, n, device="cuda") + 0.5)


def blockscale_operands(m, n, k):
    """gemm_a8w8_blockscale and cuBLAS's blockwise _scaled_mm on bench/h200/gemm_bench.py's
    operands, X's scales outer-dim-major for cuBLAS as that script passes them."""
    x, w, xs, ws = gemm_bench.blockscale_case(m, n, k, torch.Generator(device="cuda").manual_seed(0))
    return (lambda x, w, xs, ws, xs_outer: b.ops.gemm_a8w8_blockscale(x, w, xs, ws),
            lambda x, w, xs, ws, xs_outer: gemm_bench.cublas_blockscale(x, w, xs_outer, ws.t()),
            (x, w, xs, ws, xs.t().contiguous().t()))


def a4w4_operands(m, n, k):
    """gemm_a4w4 and cuBLAS bf16 on bench/h200/gemm_bench.py's MXFP4 operands."""
    x, w, xs, ws = gemm_bench.mx_case(m, n, k, torch.Generator(device="cuda").manual_seed(0))
    xd, wd = (gemm_bench.mx_dequantize(p, s).to(torch.bfloat16) for p, s in ((x, xs), (w, ws)))
    return (lambda x, w, xs, ws, xd, wd: b.ops.gemm_a4w4(x, w, xs, ws),
            lambda x, w, xs, ws, xd, wd: xd @ wd.t(), (x, w, xs, ws, xd, wd))


def main():
    # GRAPH=1: one replay of a 20-call graph over 3 input sets instead of two lone calls, for
    # `ncu --graph-profiling graph`: metrics of the steady state, each kernel starting with the
    # previous one's output in L2, as in the benchmark.
    in_graph = os.environ.get("GRAPH") == "1"
    for spec in os.environ.get("CASES", "rmsnorm_quant:32768:7168,rmsnorm_quant:32768:4096").split(","):
        name, *dims = spec.split(":")
        ours, triton_fn, args = CASES[name](*(int(d) for d in dims))
        batches = [args] + [CASES[name](*(int(d) for d in dims))[2] for _ in range(2)] if in_graph else [args]
        for fn in (ours,) if os.environ.get("ONLY_OURS") else (ours, triton_fn):
            if in_graph:
                b.captured(fn, batches).replay()
            else:
                fn(*args)
                fn(*args)
            torch.cuda.synchronize()
        print(f"profiled {spec}", flush=True)


if __name__ == "__main__":
    main()
