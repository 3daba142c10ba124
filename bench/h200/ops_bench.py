#!/usr/bin/env python3
"""Library ops (wavetile.ops) on an NVIDIA GPU against torch eager, torch.compile and a Triton
kernel written for the same op, interleaved in one process (issue 5's benchmark).

For each op and shape (bf16): a numerics check against an fp32 torch reference, then device
time per call of every implementation, measured as CUDA-graph replays of a batch of calls
(the kernels alone, no launch overhead), round-robin over the implementations, with inputs
rotated through enough copies to exceed L2. Also the time of a plain device copy of the same
bytes (the bandwidth ceiling) and the Python call overhead per op (events around back-to-back
eager calls). Writes a markdown report and a JSON file to $OUT (or the current directory).

Run by bench/h200/python.sh bench/h200/ops_bench.py.
"""
import json
import os
import statistics
import sys
import tempfile

os.environ.setdefault("WAVETILE_CACHE_DIR", tempfile.mkdtemp(prefix="wavetile-cache-"))

import torch  # noqa: E402
import triton  # noqa: E402

# torch.compile specializes per shape (dynamic=False); past its default limit of 8 it would
# silently fall back to eager for the remaining shapes.
torch._dynamo.config.recompile_limit = 256
import triton.language as tl  # noqa: E402

import wavetile  # noqa: E402
from plot_ops import plot  # noqa: E402  (bench/h200, the script's own folder)
from summarize_ops import summary_lines  # noqa: E402

ops = wavetile.ops
OUT = os.environ.get("OUT", ".")
L2_BYTES = 60 << 20  # H200: 50 MiB of L2; rotate through more than that
# MS=1,32 / NS=4096 narrow a run to some shapes (the grid by default).
MS = [int(v) for v in os.environ.get("MS", "1,32,256,4096,32768").split(",")]
NS = [int(v) for v in os.environ.get("NS", "4096,7168,8192,16384").split(",")]
# PEERS=triton times only those peers beside Wavetile (an A/B run needs no torch.compile).
PEERS = os.environ.get("PEERS")
EPS = 1e-6
results, failures = [], 0
REPORT = os.path.join(OUT, "ops_bench.md")  # another script may name its own


def report(text=""):
    print(text, flush=True)
    # Written as it goes, so a run cut short by the device's time limit still leaves its tables.
    with open(REPORT, "a") as f:
        f.write(text + "\n")


@triton.jit
def _triton_rmsnorm(x, w, out, stride, n, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    v = tl.load(x + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    inv = tl.rsqrt(tl.sum(v * v, axis=0) / n + eps)
    wv = tl.load(w + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(out + row * stride + cols, (v * inv * wv).to(out.dtype.element_ty), mask=mask)


def row_warps(block):
    """Warps of a Triton program over a row of `block` columns: 512 columns a warp, 1 to 16."""
    return min(max(block // 512, 1), 16)


def triton_rmsnorm(x, w, eps, warps=None):
    """Triton's RMSNorm, one program a row of `warps` warps (by default row_warps)."""
    out = torch.empty_like(x)
    m, n = x.shape
    block = triton.next_power_of_2(n)
    _triton_rmsnorm[(m,)](x, w, out, x.stride(0), n, eps, BLOCK=block, num_warps=warps or row_warps(block))
    return out


def torch_rmsnorm(x, w, eps):
    return torch.nn.functional.rms_norm(x, (x.shape[1],), w, eps)


compiled_rmsnorm = torch.compile(torch_rmsnorm, dynamic=False)


def reference(x, w, eps):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(1, keepdim=True) + eps) * w.float()).to(x.dtype)


def fresh_generator():
    """A CUDA generator with a seed from the OS: fresh inputs in every run."""
    return torch.Generator(device="cuda").manual_seed(int.from_bytes(os.urandom(4), "little"))


def captured(fn, batches, calls=20):
    """A CUDA graph of `calls` calls of `fn(inputs)` over the rotating input sets `batches`."""
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        for inputs in batches[:2]:
            fn(*inputs)  # warm up (compiles, autotunes) outside the graph
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        for i in range(calls):
            fn(*batches[i % len(batches)])
    return graph


def graph_time(fn, batches, calls=20, reps=15):
    """Median microseconds per call of `fn(inputs)` replayed in a CUDA graph over rotating inputs."""
    graph = captured(fn, batches, calls)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(reps):
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000 / calls)
    return statistics.median(times)


def call_overhead(fn, inputs, calls=200):
    """Microseconds per eager call, back to back (CPU-bound for small shapes)."""
    for _ in range(10):
        fn(*inputs)
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(calls):
        fn(*inputs)
    end.record()
    end.synchronize()
    return start.elapsed_time(end) * 1000 / calls


def ulp_error(got, ref):
    """Max error in units of bf16's last place (relative above 1, absolute below), over every
    output of a tuple."""
    if isinstance(got, tuple):
        return max(ulp_error(a, b) for a, b in zip(got, ref))
    ulp = torch.finfo(torch.bfloat16).eps * torch.clamp(ref.float().abs(), min=1.0)
    return ((got.float() - ref.float()).abs() / ulp).max().item()


def check_outputs(got, ref, exact):
    """(error, within tolerance) of outputs against the reference by the op's rule."""
    if exact == "adjacent":  # quantized codes equal or one code apart (last-bit input differences);
        # outputs after the codes and scales (a residual) equal
        (q, s, *rest), (rq, rs, *ref_rest) = got, ref
        codes, ref_codes = q.view(torch.int8).int(), rq.view(torch.int8).int()
        err = (codes != ref_codes).sum().item()
        # A row whose largest element moved by a bf16 ulp moves its scale by as much.
        ok = (err <= 1e-3 * q.numel() and (codes - ref_codes).abs().max().item() <= 1
              and ((s - rs).abs() <= 2 ** -7 * rs.abs()).all().item()
              and all(torch.equal(a, b) for a, b in zip(rest, ref_rest)))
    elif exact:  # every output byte equal to the reference's ("few": but under 0.1%, from
        # last-bit differences of the input)
        pairs = list(zip(got, ref))
        err = sum((a.view(torch.uint8) != b.view(torch.uint8)).sum().item() for a, b in pairs)
        ok = err <= (1e-3 * sum(a.numel() for a, _ in pairs) if exact == "few" else 0)
    else:
        err = ulp_error(got, ref)
        ok = err <= 1.0 and not any(t.isnan().any().item() for t in (got if isinstance(got, tuple) else (got,)))
    return err, ok


def bench_op(op, dims, make, impls, wavetile_call, reference, moved_bytes, copy_bytes, exact=False):
    """One op over the issue's shapes: numerics of Wavetile's call, then device time of it and
    of every peer (interleaved per shape), the copy ceiling for the same bytes."""
    global failures
    if PEERS:
        impls = {name: fn for name, fn in impls.items() if name == "wavetile" or name in PEERS.split(",")}
    report(f"## {op}, bf16")
    report("")
    report("Device time per call in µs (CUDA-graph replay, median); TB/s = bytes moved / time; "
           "% copy = time of a device copy of the same bytes / time; ratio = peer time / Wavetile "
           "time (> 1: Wavetile faster).")
    report("")
    names = list(impls)
    measure = "bytes differing" if exact in (True, "few") else "codes differing" if exact else "max err (ulp)"
    report(f"| M | {dims} | copy µs | wavetile µs | TB/s | % copy | " + " | ".join(f"{n} µs" for n in names[1:]) +
           " | " + " | ".join(f"vs {n}" for n in names[1:]) + f" | {measure} |" + (" triton's |" if exact else ""))
    report("|" + "---|" * (7 + 2 * (len(names) - 1) + bool(exact)))
    g = fresh_generator()
    for n in NS:
        for m in MS:
            one = make(m, n, g)
            copies = max(2, min(64, L2_BYTES // max(moved_bytes(m, n), 1) + 1))
            batches = [one] + [make(m, n, g) for _ in range(copies - 1)]
            got = wavetile_call(*one)
            ref = reference(*one)
            torch.cuda.synchronize()
            err, ok = check_outputs(got, ref, exact)
            # The Triton kernel's own codes against the definition (quantizers: Triton's `/` is
            # div.full.f32, within 2 ulp, where the definition divides exactly).
            peer = impls["triton"](*one) if exact and "triton" in impls else None
            same_shapes = peer is not None and all(
                a.shape == b.shape for a, b in zip(peer if isinstance(peer, tuple) else (peer,),
                                                   ref if isinstance(ref, tuple) else (ref,)))
            peer_err = check_outputs(peer, ref, exact)[0] if same_shapes else None
            failures += not ok
            src = [torch.empty(copy_bytes(m, n) // 2, device="cuda", dtype=torch.bfloat16) for _ in range(copies)]
            dst = [torch.empty_like(t) for t in src]
            copy_us = graph_time(lambda a, o: o.copy_(a), list(zip(src, dst)))
            times = {name: graph_time(fn, batches) for name, fn in impls.items()}
            tbs = moved_bytes(m, n) / (times["wavetile"] * 1e-6) / 1e12
            results.append({"op": op, "M": m, "N": n, "copy_us": copy_us, **{f"{k}_us": v for k, v in times.items()},
                            "wavetile_TBps": tbs, "max_err_ulp": err, "ok": ok, "triton_err": peer_err})
            report(f"| {m} | {n} | {copy_us:.2f} | {times['wavetile']:.2f} | {tbs:.2f} | "
                   f"{100 * copy_us / times['wavetile']:.0f}% | "
                   + " | ".join(f"{times[k]:.2f}" for k in names[1:]) + " | "
                   + " | ".join(f"{times[k] / times['wavetile']:.2f}" for k in names[1:])
                   + f" | {err:.2f}{'' if ok else ' FAIL'} |"
                   + (f" {'n/a' if peer_err is None else f'{peer_err:.0f}'} |" if exact else ""))
            del batches, src, dst
    report("")
    x = make(1, 4096, g)
    overhead = {name: call_overhead(fn, x) for name, fn in impls.items()}
    report(f"Python call overhead, M=1 N=4096 (µs per eager call, back to back): "
           + ", ".join(f"{k} {v:.1f}" for k, v in overhead.items()))
    report("")
    results.append({"op": op, "call_overhead_us": overhead})


def rms_inputs(m, n, g):
    """x [M, N] and RMSNorm weights near 1, bf16."""
    return (torch.randn(m, n, device="cuda", dtype=torch.bfloat16, generator=g),
            torch.rand(n, device="cuda", dtype=torch.bfloat16, generator=g) + 0.5)


def bench_rmsnorm():
    impls = {
        "wavetile": lambda x, w: ops.rmsnorm2d_fwd(x, w, EPS),
        "torch": lambda x, w: torch_rmsnorm(x, w, EPS),
        "compile": lambda x, w: compiled_rmsnorm(x, w, EPS),
        "triton": lambda x, w: triton_rmsnorm(x, w, EPS),
    }
    bench_op("rmsnorm2d_fwd", "N", rms_inputs, impls, impls["wavetile"], lambda x, w: reference(x, w, EPS),
             moved_bytes=lambda m, n: 4 * m * n, copy_bytes=lambda m, n: 2 * m * n)


@triton.jit
def _triton_layernorm(x, w, b, out, stride, n, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    v = tl.load(x + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(v, axis=0) / n
    d = tl.where(mask, v - mean, 0.0)
    inv = tl.rsqrt(tl.sum(d * d, axis=0) / n + eps)
    wv = tl.load(w + cols, mask=mask, other=0.0).to(tl.float32)
    bv = tl.load(b + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(out + row * stride + cols, (d * inv * wv + bv).to(out.dtype.element_ty), mask=mask)


def triton_layernorm(x, w, b, eps):
    out = torch.empty_like(x)
    m, n = x.shape
    block = triton.next_power_of_2(n)
    _triton_layernorm[(m,)](x, w, b, out, x.stride(0), n, eps, BLOCK=block,
                            num_warps=row_warps(block))
    return out


def torch_layernorm(x, w, b, eps):
    return torch.nn.functional.layer_norm(x, (x.shape[1],), w, b, eps)


compiled_layernorm = torch.compile(torch_layernorm, dynamic=False)


def bench_layernorm():
    def make(m, n, g):
        return (torch.randn(m, n, device="cuda", dtype=torch.bfloat16, generator=g) + 1,
                torch.rand(n, device="cuda", dtype=torch.bfloat16, generator=g) + 0.5,
                torch.rand(n, device="cuda", dtype=torch.bfloat16, generator=g) - 0.5)

    def reference_ln(x, w, b):
        return torch.nn.functional.layer_norm(x.float(), (x.shape[1],), w.float(), b.float(), EPS).to(x.dtype)
    impls = {
        "wavetile": lambda x, w, b: ops.layernorm2d_fwd(x, w, b, EPS),
        "torch": lambda x, w, b: torch_layernorm(x, w, b, EPS),
        "compile": lambda x, w, b: compiled_layernorm(x, w, b, EPS),
        "triton": lambda x, w, b: triton_layernorm(x, w, b, EPS),
    }
    bench_op("layernorm2d_fwd", "N", make, impls, impls["wavetile"], reference_ln,
             moved_bytes=lambda m, n: 4 * m * n, copy_bytes=lambda m, n: 2 * m * n)


@triton.jit
def _triton_divide(x, y, EXACT: tl.constexpr):
    """Triton's `/` (div.full.f32, within 2 ulp), or the correctly rounded quotient the
    quantizers' definition takes (the `triton_rn` peers: the same kernels, exact)."""
    if EXACT:
        return tl.math.div_rn(x, y)
    return x / y


@triton.jit
def _triton_per_token_quant(x, out, scales, stride, n, BLOCK: tl.constexpr, EXACT: tl.constexpr = False):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    v = tl.load(x + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    amax = tl.max(tl.abs(v), axis=0)
    scale = tl.where(amax > 0, _triton_divide(amax, 448.0, EXACT), 1.0)
    tl.store(scales + row, scale)
    tl.store(out + row * stride + cols, _triton_divide(v, scale, EXACT).to(tl.float8e4nv), mask=mask)


def triton_per_token_quant(x, exact=False):
    m, n = x.shape
    out = torch.empty(m, n, device=x.device, dtype=torch.float8_e4m3fn)
    scales = torch.empty(m, 1, device=x.device, dtype=torch.float32)
    block = triton.next_power_of_2(n)
    _triton_per_token_quant[(m,)](x, out, scales, x.stride(0), n, BLOCK=block, EXACT=exact,
                                  num_warps=row_warps(block))
    return out, scales


def torch_per_token_quant(x):
    amax = x.float().abs().amax(dim=1, keepdim=True)
    # A tensor divisor: torch divides by a Python scalar as a product with its reciprocal,
    # which is not the correctly rounded quotient (AITER's reference does that; its tests
    # allow 1e-3 on scales).
    scales = torch.where(amax > 0, amax / torch.full_like(amax, 448.0), torch.ones_like(amax))
    return (x.float() / scales).to(torch.float8_e4m3fn), scales


compiled_per_token_quant = torch.compile(torch_per_token_quant, dynamic=False)


def wavetile_per_token_quant(x):
    out = torch.empty(x.shape, device=x.device, dtype=torch.float8_e4m3fn)
    scales = torch.empty(x.shape[0], 1, device=x.device, dtype=torch.float32)
    ops.dynamic_per_token_scaled_quant(out, x, scales)
    return out, scales


def bench_per_token_quant():
    def make(m, n, g):
        return (torch.randn(m, n, device="cuda", dtype=torch.bfloat16, generator=g) * 3,)

    def as_float(result):
        q, scales = result
        return (q.float() * scales).to(torch.bfloat16)  # dequantized: compared in bf16 ulps
    impls = {"wavetile": wavetile_per_token_quant, "torch": torch_per_token_quant,
             "compile": compiled_per_token_quant, "triton": triton_per_token_quant,
             "triton_rn": lambda x: triton_per_token_quant(x, exact=True)}
    bench_op("dynamic_per_token_scaled_quant_fp8", "N", make, impls,
             lambda x: as_float(wavetile_per_token_quant(x)), lambda x: as_float(torch_per_token_quant(x)),
             moved_bytes=lambda m, n: 3 * m * n, copy_bytes=lambda m, n: 3 * m * n // 2)


def per_token_quant_exactness():
    """Codes and scales of Wavetile's fp8 per-token quantization equal torch's (both divide
    in f32 and round to nearest even) on the GPU."""
    global failures
    g = fresh_generator()
    x = torch.randn(513, 7168, device="cuda", dtype=torch.bfloat16, generator=g) * 3
    x[7] = 0
    q, scales = wavetile_per_token_quant(x)
    rq, rscales = torch_per_token_quant(x)
    same_scales = torch.equal(scales, rscales)
    same_codes = torch.equal(q.view(torch.uint8), rq.view(torch.uint8))
    ok = same_scales and same_codes
    failures += not ok
    mismatches = (q.view(torch.uint8) != rq.view(torch.uint8)).sum().item()
    report(f"fp8 per-token quantization vs torch on the GPU (513 x 7168 bf16, one zero row): scales "
           f"{'equal' if same_scales else 'DIFFER'}, {mismatches} of {q.numel()} codes differ: "
           f"{'PASS' if ok else 'FAIL'}")
    report("")
    results.append({"op": "dynamic_per_token_scaled_quant", "exact_vs_torch": ok, "ok": ok})


def num_rows_in_graph():
    """AITER's num_rows on the GPU: per-token fp8 and per-group (128) quantization captured once
    in a CUDA graph over 1000 rows with a device row count and num_rows_factor 2; each replay
    after a new count quantizes exactly the rows below count * 2 (codes and scales equal to a
    full quantization's) and leaves the later rows' poison in place."""
    global failures
    g = fresh_generator()
    m, n, factor = 1000, 7168, 2
    x = torch.randn(m, n, device="cuda", dtype=torch.bfloat16, generator=g) * 3
    count = torch.zeros((), device="cuda", dtype=torch.int32)
    for group in (0, 128):
        q = torch.empty(m, n, device="cuda", dtype=torch.float8_e4m3fn)
        scales = torch.empty(m, n // group if group else 1, device="cuda", dtype=torch.float32)
        full_q, full_scales = torch.empty_like(q), torch.empty_like(scales)

        def quantize(out, s, **rows):
            if group:
                ops.dynamic_per_group_scaled_quant(out, x, s, group, False, **rows)
            else:
                ops.dynamic_per_token_scaled_quant(out, x, s, **rows)
        quantize(full_q, full_scales)
        quantize(q, scales, num_rows=count, num_rows_factor=factor)  # compiles outside the graph
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            quantize(q, scales, num_rows=count, num_rows_factor=factor)
        ok = True
        for c in (3, 0, 499, 600, 17):
            q.view(torch.uint8).fill_(0x7F)
            scales.fill_(float("nan"))
            count.fill_(c)
            graph.replay()
            rows = min(m, c * factor)
            ok &= (torch.equal(q.view(torch.uint8)[:rows], full_q.view(torch.uint8)[:rows])
                   and torch.equal(scales[:rows], full_scales[:rows])
                   and bool((q.view(torch.uint8)[rows:] == 0x7F).all()) and bool(scales[rows:].isnan().all()))
        failures += not ok
        name = f"dynamic_per_{'group' if group else 'token'}_scaled_quant num_rows"
        report(f"{name} in a CUDA graph ({m} x {n} bf16 to fp8, factor {factor}, counts 3, 0, 499, 600, 17): "
               f"{'PASS' if ok else 'FAIL'}")
        results.append({"op": name, "ok": ok})
    report("")


def shuffled_group_scales():
    """AITER's shuffled f32 group scales on the GPU: per-group (128) fp8 quantization with
    shuffle_scale writes the scales transposed in their [M, N/128] buffer (the codes as
    unshuffled), and gemm_a8w8_blockscale reading that buffer K-block-major gives the same
    output as with row-major scales."""
    global failures
    g = fresh_generator()
    m, n, k, group = 1000, 512, 7168, 128
    x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16, generator=g) * 3
    w = (torch.randn(n, k, device="cuda", generator=g) * 0.1).to(torch.float8_e4m3fn)
    w_scale = torch.rand(n // group, k // group, device="cuda", generator=g) + 0.5
    q, plain = torch.empty(m, k, device="cuda", dtype=torch.float8_e4m3fn), torch.empty(m, k // group, device="cuda")
    ops.dynamic_per_group_scaled_quant(q, x, plain, group, shuffle_scale=False)
    shuffled_q, shuffled = torch.empty_like(q), torch.full_like(plain, float("nan"))
    ops.dynamic_per_group_scaled_quant(shuffled_q, x, shuffled, group, shuffle_scale=True)
    k_block_major = shuffled.view(k // group, m).t()
    y_shuffled = ops.gemm_a8w8_blockscale(q, w, k_block_major, w_scale)
    y_plain = ops.gemm_a8w8_blockscale(q, w, plain, w_scale)
    ok = (torch.equal(shuffled_q.view(torch.uint8), q.view(torch.uint8)) and torch.equal(k_block_major, plain)
          and torch.equal(y_shuffled, y_plain))
    failures += not ok
    report(f"dynamic_per_group_scaled_quant shuffled f32 scales ({m} x {k} bf16 to fp8, group {group}) into "
           f"gemm_a8w8_blockscale K-block-major: {'PASS' if ok else 'FAIL'} (GEMM outputs differ by at most "
           f"{(y_shuffled.float() - y_plain.float()).abs().max().item():g})")
    results.append({"op": "dynamic_per_group_scaled_quant shuffled scales", "ok": ok})
    report("")


SWIGLU_LIMIT, SWIGLU_ALPHA = 7.0, 1.702  # AITER's defaults


@triton.jit
def _triton_gated(x, out, x_stride, out_stride, d, limit, alpha, ACT: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < d
    gate = tl.load(x + row * x_stride + cols, mask=mask).to(tl.float32)
    up = tl.load(x + row * x_stride + d + cols, mask=mask).to(tl.float32)
    if ACT == "silu":
        y = gate * tl.sigmoid(gate) * up
    elif ACT == "gelu":
        y = 0.5 * gate * (1.0 + tl.math.erf(gate * 0.7071067811865476)) * up
    elif ACT == "gelu_tanh":  # 0.5 (1 + tanh(u)) = sigmoid(2u)
        y = gate * tl.sigmoid(1.5957691216057308 * (gate + 0.044715 * gate * gate * gate)) * up
    else:  # swiglu: gate clamped from above, up to [-limit, limit]
        g = tl.minimum(gate, limit)
        y = g * tl.sigmoid(alpha * g) * (tl.minimum(tl.maximum(up, -limit), limit) + 1.0)
    tl.store(out + row * out_stride + cols, y.to(out.dtype.element_ty), mask=mask)


def gated_in_f32(act, gate, up):
    """The activation of float32 gate and up halves."""
    if act == "silu":
        return torch.nn.functional.silu(gate) * up
    if act in ("gelu", "gelu_tanh"):
        return torch.nn.functional.gelu(gate, approximate="tanh" if act == "gelu_tanh" else "none") * up
    g = gate.clamp(max=SWIGLU_LIMIT)
    return g * torch.sigmoid(SWIGLU_ALPHA * g) * (up.clamp(-SWIGLU_LIMIT, SWIGLU_LIMIT) + 1.0)


def triton_gated(act):
    def call(x):
        m, d = x.shape[0], x.shape[1] // 2
        out = torch.empty(m, d, device=x.device, dtype=x.dtype)
        block = min(triton.next_power_of_2(d), 2048)
        _triton_gated[(m, triton.cdiv(d, block))](x, out, x.stride(0), out.stride(0), d, SWIGLU_LIMIT, SWIGLU_ALPHA,
                                                  ACT=act, BLOCK=block, num_warps=max(1, block // 256))
        return out
    return call


def torch_gated(act):
    def call(x):  # torch's own ops on the bf16 halves, as a model would call them
        d = x.shape[1] // 2
        return gated_in_f32(act, x[:, :d], x[:, d:])
    return call


def wavetile_gated(act):
    op = {"silu": ops.silu_and_mul, "gelu": ops.gelu_and_mul, "gelu_tanh": ops.gelu_tanh_and_mul,
          "swiglu": lambda out, x: ops.swiglu(out, x, SWIGLU_LIMIT, SWIGLU_ALPHA)}[act]

    def call(x):
        out = torch.empty(x.shape[0], x.shape[1] // 2, device=x.device, dtype=x.dtype)
        op(out, x)
        return out
    return call


GATED_TITLES = {"silu": "silu_and_mul", "gelu": "gelu_and_mul", "gelu_tanh": "gelu_tanh_and_mul",
                "swiglu": f"swiglu (limit {SWIGLU_LIMIT}, alpha {SWIGLU_ALPHA})"}
triton_silu_and_mul, wavetile_silu_and_mul = triton_gated("silu"), wavetile_gated("silu")


def bench_gated(act):
    def make(m, n, g):
        return (torch.randn(m, 2 * n, device="cuda", dtype=torch.bfloat16, generator=g) * 4,)

    def reference_gated(x):
        d = x.shape[1] // 2
        return gated_in_f32(act, x[:, :d].float(), x[:, d:].float()).to(x.dtype)
    impls = {"wavetile": wavetile_gated(act), "torch": torch_gated(act),
             "compile": torch.compile(torch_gated(act), dynamic=False), "triton": triton_gated(act)}
    bench_op(GATED_TITLES[act], "d", make, impls, impls["wavetile"], reference_gated,
             moved_bytes=lambda m, n: 6 * m * n, copy_bytes=lambda m, n: 3 * m * n)


# ---------------------------------------------------------------------------------------------
# Quantizing outputs (MXFP4, per tensor, the quantizing RMSNorm) and RoPE.


def torch_e8m0_round_up(amax, largest):
    """AITER's RoundUp e8m0 byte (int32) of f32 group amaxes: ceil_pow2(amax * RN(1/largest))."""
    u = (amax * torch.tensor(1 / largest, dtype=torch.float32)).view(torch.int32)
    e = (u >> 23) & 0xFF
    return torch.where((e < 255) & ((u & 0x7FFFFF) != 0), e + 1, e)


@triton.jit
def _triton_e8m0_round_up(amax, reciprocal):
    """torch_e8m0_round_up in Triton; `reciprocal` is RN(1/largest)."""
    u = (amax * reciprocal).to(tl.int32, bitcast=True)
    e = (u >> 23) & 0xFF
    return tl.where((e < 255) & ((u & 0x7FFFFF) != 0), e + 1, e)


def torch_mxfp4(x):
    """AITER's MXFP4 (RoundUp scales, e2m1 nearest even) in torch ops: packed codes, e8m0."""
    m, n = x.shape
    groups = x.float().view(m, n // 32, 32)
    e = torch_e8m0_round_up(groups.abs().amax(-1), 6)
    inverse = torch.where(e == 255, 0, (254 - e) << 23).view(torch.float32)  # byte 0: 2^-127
    y = groups * inverse[..., None]
    a = y.abs()
    code = sum((a > t).int() for t in (0.25, 1.25, 2.5, 5.0)) + sum((a >= t).int() for t in (0.75, 1.75, 3.5))
    code = (code | torch.where(y.view(torch.int32) < 0, 8, 0)).view(m, n)
    return (code[:, 0::2] | (code[:, 1::2] << 4)).to(torch.uint8), e.to(torch.uint8)


compiled_mxfp4 = torch.compile(torch_mxfp4, dynamic=False)


@triton.jit
def _triton_mxfp4(x, out, scales, stride, n, GROUPS: tl.constexpr):
    row = tl.program_id(0)
    g0 = tl.program_id(1) * GROUPS
    cols = g0 * 32 + tl.arange(0, GROUPS)[:, None] * 32 + tl.arange(0, 32)[None, :]
    v = tl.load(x + row * stride + cols, mask=cols < n, other=0.0).to(tl.float32)
    e = _triton_e8m0_round_up(tl.max(tl.abs(v), axis=1), 0.16666667163372040)  # RN(1/6)
    inverse = tl.where(e == 255, 0.0, ((254 - e) << 23).to(tl.float32, bitcast=True))
    y = v * inverse[:, None]
    a = tl.abs(y)
    code = ((a > 0.25).to(tl.int32) + (a >= 0.75).to(tl.int32) + (a > 1.25).to(tl.int32) + (a >= 1.75).to(tl.int32)
            + (a > 2.5).to(tl.int32) + (a >= 3.5).to(tl.int32) + (a > 5.0).to(tl.int32))
    code = code | tl.where(y.to(tl.int32, bitcast=True) < 0, 8, 0)
    lo, hi = tl.split(tl.reshape(code, [GROUPS, 16, 2]))
    bytes_ = (lo | (hi << 4)).to(tl.uint8)
    pcols = g0 * 16 + tl.arange(0, GROUPS)[:, None] * 16 + tl.arange(0, 16)[None, :]
    tl.store(out + row * (n // 2) + pcols, bytes_, mask=pcols < n // 2)
    gs = g0 + tl.arange(0, GROUPS)
    tl.store(scales + row * (n // 32) + gs, e.to(tl.uint8), mask=gs < n // 32)


def triton_mxfp4(x):
    m, n = x.shape
    out = torch.empty(m, n // 2, device=x.device, dtype=torch.uint8)
    scales = torch.empty(m, n // 32, device=x.device, dtype=torch.uint8)
    groups = 32
    _triton_mxfp4[(m, triton.cdiv(n // 32, groups))](x, out, scales, x.stride(0), n, GROUPS=groups, num_warps=4)
    return out, scales


def wavetile_mxfp4(x):
    return ops.per_1x32_f4_quant(x)


def bench_mxfp4():
    def make(m, n, g):
        return (torch.randn(m, n, device="cuda", dtype=torch.bfloat16, generator=g) * 3,)
    impls = {"wavetile": wavetile_mxfp4, "torch": torch_mxfp4, "compile": compiled_mxfp4, "triton": triton_mxfp4}
    bench_op("per_1x32_f4_quant (MXFP4)", "N", make, impls, wavetile_mxfp4, torch_mxfp4,
             moved_bytes=lambda m, n: 2 * m * n + m * n // 2 + m * n // 32,
             copy_bytes=lambda m, n: m * n + m * n // 4, exact=True)


def torch_mxfp8(x, group=32):
    """MXFP8 (AITER's per_1x32_f8_scale_f8_quant, RoundUp): e4m3fn codes of x / 2^(byte - 127),
    the e8m0 byte ceil_pow2(amax * RN(1/448)); byte 255 (a NaN amax) gives NaN codes."""
    m, n = x.shape
    groups = x.float().view(m, n // group, group)
    e = torch_e8m0_round_up(groups.abs().amax(-1), 448)
    inverse = torch.where(e == 255, 0x7FC00000, (254 - e) << 23).view(torch.float32)
    return (groups * inverse[..., None]).view(m, n).to(torch.float8_e4m3fn), e.to(torch.uint8)


compiled_mxfp8 = torch.compile(torch_mxfp8, dynamic=False)


@triton.jit
def _triton_mxfp8(x, out, scales, stride, n, GROUPS: tl.constexpr, GROUP: tl.constexpr):
    row = tl.program_id(0)
    g0 = tl.program_id(1) * GROUPS
    cols = g0 * GROUP + tl.arange(0, GROUPS)[:, None] * GROUP + tl.arange(0, GROUP)[None, :]
    v = tl.load(x + row * stride + cols, mask=cols < n, other=0.0).to(tl.float32)
    e = _triton_e8m0_round_up(tl.max(tl.abs(v), axis=1), 0.0022321429569274187)  # RN(1/448)
    inverse = tl.where(e == 255, 0x7FC00000, (254 - e) << 23).to(tl.float32, bitcast=True)
    tl.store(out + row * n + cols, (v * inverse[:, None]).to(tl.float8e4nv), mask=cols < n)
    gs = g0 + tl.arange(0, GROUPS)
    tl.store(scales + row * (n // GROUP) + gs, e.to(tl.uint8), mask=gs < n // GROUP)


def triton_mxfp8(x, group=32):
    m, n = x.shape
    out = torch.empty(m, n, device=x.device, dtype=torch.float8_e4m3fn)
    scales = torch.empty(m, n // group, device=x.device, dtype=torch.uint8)
    groups = 2048 // group
    _triton_mxfp8[(m, triton.cdiv(n // group, groups))](x, out, scales, x.stride(0), n, GROUPS=groups, GROUP=group,
                                                       num_warps=4)
    return out, scales


def wavetile_mxfp8(x, group=32):
    m, n = x.shape
    out = torch.empty(m, n, device=x.device, dtype=torch.float8_e4m3fn)
    scales = torch.empty(m, n // group, device=x.device, dtype=torch.uint8)
    ops.dynamic_per_group_scaled_quant(out, x, scales, group, shuffle_scale=False)
    return out, scales


def bench_mxfp8():
    def make(m, n, g):
        return (torch.randn(m, n, device="cuda", dtype=torch.bfloat16, generator=g) * 3,)
    impls = {"wavetile": wavetile_mxfp8, "torch": torch_mxfp8, "compile": compiled_mxfp8, "triton": triton_mxfp8}
    bench_op("dynamic_per_group_scaled_quant (MXFP8, group 32)", "N", make, impls, wavetile_mxfp8, torch_mxfp8,
             moved_bytes=lambda m, n: 3 * m * n + m * n // 32, copy_bytes=lambda m, n: 3 * m * n // 2, exact=True)


def torch_dequant_mxfp4(q, scales):
    """MXFP4 codes [M, N/2] (low nibble first) times 2^(e8m0 - 127), in torch ops, as bf16."""
    m, half = q.shape
    codes = torch.stack((q & 15, q >> 4), dim=-1).view(m, 2 * half)
    magnitude = (codes & 7).float()  # e2m1: 0, 0.5, 1, 1.5, 2, 3, 4, 6
    values = torch.where(magnitude < 4, magnitude * 0.5,
                         torch.where(magnitude < 6, magnitude - 2.0, (magnitude - 4.0) * 2.0))
    values = torch.where(codes >= 8, -values, values)
    scale = torch.exp2(scales.float() - 127).repeat_interleave(32, dim=1)
    return (values * scale).to(torch.bfloat16)


compiled_dequant_mxfp4 = torch.compile(torch_dequant_mxfp4, dynamic=False)


@triton.jit
def _triton_dequant_mxfp4(q, scales, out, n, GROUPS: tl.constexpr):
    row = tl.program_id(0)
    g = tl.program_id(1) * GROUPS + tl.arange(0, GROUPS)
    pcols = g[:, None] * 16 + tl.arange(0, 16)[None, :]
    b = tl.load(q + row * (n // 2) + pcols, mask=g[:, None] < n // 32, other=0).to(tl.int32)
    codes = tl.reshape(tl.join(b & 15, b >> 4), [GROUPS, 32])
    magnitude = codes & 7  # e2m1: 0, 0.5, 1, 1.5, 2, 3, 4, 6
    v = tl.where(magnitude < 4, magnitude * 0.5, tl.where(magnitude < 6, magnitude - 2.0, (magnitude - 4) * 2.0))
    v = tl.where(codes >= 8, -v, v)
    e = tl.load(scales + row * (n // 32) + g, mask=g < n // 32, other=127).to(tl.int32)
    scale = (e << 23).to(tl.float32, bitcast=True)  # 2^(e - 127); e = 0 (2^-127) flushes to 0
    cols = g[:, None] * 32 + tl.arange(0, 32)[None, :]
    tl.store(out + row * n + cols, (v * scale[:, None]).to(tl.bfloat16), mask=g[:, None] < n // 32)


def triton_dequant_mxfp4(q, scales):
    m, half = q.shape
    out = torch.empty(m, 2 * half, device=q.device, dtype=torch.bfloat16)
    groups = 32
    _triton_dequant_mxfp4[(m, triton.cdiv(half // 16, groups))](q, scales, out, 2 * half, GROUPS=groups, num_warps=4)
    return out


def bench_dequant_mxfp4():
    def make(m, n, g):  # codes and scales of random bf16 rows, scales away from e8m0's ends
        q, s = ops.per_1x32_f4_quant(torch.randn(m, n, device="cuda", dtype=torch.bfloat16, generator=g) * 3)
        return q, s
    impls = {"wavetile": lambda q, s: ops.dequant(q, s, torch.bfloat16), "torch": torch_dequant_mxfp4,
             "compile": compiled_dequant_mxfp4, "triton": triton_dequant_mxfp4}
    bench_op("dequant (MXFP4 to bf16)", "N", make, impls, lambda q, s: (impls["wavetile"](q, s),),
             lambda q, s: (torch_dequant_mxfp4(q, s),),
             moved_bytes=lambda m, n: m * n // 2 + m * n // 32 + 2 * m * n,
             copy_bytes=lambda m, n: (m * n // 2 + m * n // 32 + 2 * m * n) // 2, exact=True)


def torch_dequant_fp8(q, scales):
    """fp8 codes [M, N] times their row's f32 scale [M, 1], as bf16."""
    return (q.float() * scales).to(torch.bfloat16)


compiled_dequant_fp8 = torch.compile(torch_dequant_fp8, dynamic=False)


@triton.jit
def _triton_dequant_fp8(q, scales, out, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(q + row * n + cols, mask=cols < n, other=0.0).to(tl.float32)
    tl.store(out + row * n + cols, (v * tl.load(scales + row)).to(tl.bfloat16), mask=cols < n)


def triton_dequant_fp8(q, scales):
    m, n = q.shape
    out = torch.empty(m, n, device=q.device, dtype=torch.bfloat16)
    block = 1024
    _triton_dequant_fp8[(m, triton.cdiv(n, block))](q, scales, out, n, BLOCK=block, num_warps=4)
    return out


def bench_dequant_fp8():
    def make(m, n, g):  # per-token fp8 codes and scales of random bf16 rows
        x = torch.randn(m, n, device="cuda", dtype=torch.bfloat16, generator=g) * 3
        q = torch.empty(m, n, device="cuda", dtype=torch.float8_e4m3fn)
        s = torch.empty(m, 1, device="cuda", dtype=torch.float32)
        ops.dynamic_per_token_scaled_quant(q, x, s)
        return q, s
    impls = {"wavetile": lambda q, s: ops.dequant(q, s, torch.bfloat16), "torch": torch_dequant_fp8,
             "compile": compiled_dequant_fp8, "triton": triton_dequant_fp8}
    bench_op("dequant (per-token fp8 to bf16)", "N", make, impls, lambda q, s: (impls["wavetile"](q, s),),
             lambda q, s: (torch_dequant_fp8(q, s),),
             moved_bytes=lambda m, n: 3 * m * n + 4 * m, copy_bytes=lambda m, n: 3 * m * n // 2, exact=True)


def torch_per_tensor_quant(x):
    amax = x.float().abs().amax().reshape(1)
    scale = amax / torch.full_like(amax, 448.0)  # a tensor divisor: correctly rounded (see per token)
    scale = torch.where(scale > 0, scale, torch.ones_like(scale))
    return (x.float() / scale).to(torch.float8_e4m3fn), scale


compiled_per_tensor_quant = torch.compile(torch_per_tensor_quant, dynamic=False)


@triton.jit
def _triton_amax(x, amax, stride, m, n, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)[:, None]
    acc = tl.zeros([ROWS, BLOCK], dtype=tl.float32)
    for c0 in range(0, n, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)[None, :]
        acc = tl.maximum(acc, tl.abs(tl.load(x + rows * stride + cols, mask=(rows < m) & (cols < n), other=0.0)
                                     .to(tl.float32)))
    tl.atomic_max(amax, tl.max(tl.max(acc, axis=1), axis=0))


@triton.jit
def _triton_scaled_fp8(x, out, amax, scale_out, stride, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    a = tl.load(amax)
    scale = tl.where(a > 0, a / 448.0, 1.0)
    if row == 0:
        tl.store(scale_out, scale)
    for c0 in range(0, n, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        v = tl.load(x + row * stride + cols, mask=cols < n, other=0.0).to(tl.float32)
        tl.store(out + row * n + cols, (v / scale).to(tl.float8e4nv), mask=cols < n)


def triton_per_tensor_quant(x):
    m, n = x.shape
    out = torch.empty(m, n, device=x.device, dtype=torch.float8_e4m3fn)
    amax = torch.zeros(1, device=x.device, dtype=torch.float32)
    scale = torch.empty(1, device=x.device, dtype=torch.float32)
    _triton_amax[(triton.cdiv(m, 4),)](x, amax, x.stride(0), m, n, ROWS=4, BLOCK=1024, num_warps=4)
    _triton_scaled_fp8[(m,)](x, out, amax, scale, x.stride(0), n, BLOCK=min(triton.next_power_of_2(n), 8192),
                             num_warps=8)
    return out, scale


def wavetile_per_tensor_quant(x):
    out = torch.empty(x.shape, device=x.device, dtype=torch.float8_e4m3fn)
    scale = torch.empty(1, device=x.device, dtype=torch.float32)
    ops.dynamic_per_tensor_quant(out, x, scale)
    return out, scale


def bench_per_tensor_quant():
    def make(m, n, g):
        return (torch.randn(m, n, device="cuda", dtype=torch.bfloat16, generator=g) * 3,)
    impls = {"wavetile": wavetile_per_tensor_quant, "torch": torch_per_tensor_quant,
             "compile": compiled_per_tensor_quant, "triton": triton_per_tensor_quant}
    bench_op("dynamic_per_tensor_quant_fp8", "N", make, impls, wavetile_per_tensor_quant, torch_per_tensor_quant,
             moved_bytes=lambda m, n: 3 * m * n, copy_bytes=lambda m, n: 3 * m * n // 2, exact=True)


def torch_rmsnorm_quant(x, w):
    return torch_per_token_quant(torch_rmsnorm(x, w, EPS))


compiled_rmsnorm_quant = torch.compile(torch_rmsnorm_quant, dynamic=False)


@triton.jit
def _triton_rmsnorm_quant(x, w, out, scales, stride, n, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    v = tl.load(x + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    inv = tl.rsqrt(tl.sum(v * v, axis=0) / n + eps)
    wv = tl.load(w + cols, mask=mask, other=0.0).to(tl.float32)
    y = (v * inv * wv).to(tl.bfloat16).to(tl.float32)
    amax = tl.max(tl.abs(y), axis=0)
    scale = tl.where(amax > 0, amax / 448.0, 1.0)
    tl.store(scales + row, scale)
    tl.store(out + row * n + cols, (y / scale).to(tl.float8e4nv), mask=mask)


def triton_rmsnorm_quant(x, w):
    m, n = x.shape
    out = torch.empty(m, n, device=x.device, dtype=torch.float8_e4m3fn)
    scales = torch.empty(m, 1, device=x.device, dtype=torch.float32)
    block = triton.next_power_of_2(n)
    _triton_rmsnorm_quant[(m,)](x, w, out, scales, x.stride(0), n, EPS, BLOCK=block,
                                num_warps=row_warps(block))
    return out, scales


def wavetile_rmsnorm_quant(x, w):
    out = torch.empty(x.shape, device=x.device, dtype=torch.float8_e4m3fn)
    scales = torch.empty(x.shape[0], 1, device=x.device, dtype=torch.float32)
    ops.rmsnorm2d_fwd_with_dynamicquant(out, x, scales, w, EPS)
    return out, scales


def bench_rmsnorm_quant():
    def composed(x, w):
        # The definition: rmsnorm2d_fwd then the quantization op (Wavetile's own, each checked
        # on the host and above). On the GPU the fused kernel's row sums run in another order
        # (its layout follows the fp8 output), so a few norm outputs differ in the last bf16
        # bit and their codes by one.
        return wavetile_per_token_quant(ops.rmsnorm2d_fwd(x, w, EPS))
    impls = {"wavetile": wavetile_rmsnorm_quant, "torch": torch_rmsnorm_quant, "compile": compiled_rmsnorm_quant,
             "triton": triton_rmsnorm_quant}
    bench_op("rmsnorm2d_fwd_with_dynamicquant_fp8", "N", rms_inputs, impls, wavetile_rmsnorm_quant, composed,
             moved_bytes=lambda m, n: 3 * m * n, copy_bytes=lambda m, n: 3 * m * n // 2, exact="adjacent")


def wavetile_rmsnorm_mxfp4(x, w):
    m, n = x.shape
    out = torch.empty(m, n // 2, device=x.device, dtype=torch.uint8)
    scales = torch.empty(m, n // 32, device=x.device, dtype=torch.uint8)
    ops.rmsnorm2d_fwd_with_dynamicquant(out, x, scales, w, EPS, group_size=32)
    return out, scales


def torch_rmsnorm_mxfp4(x, w):
    return torch_mxfp4(torch_rmsnorm(x, w, EPS))


compiled_rmsnorm_mxfp4 = torch.compile(torch_rmsnorm_mxfp4, dynamic=False)


def triton_rmsnorm_mxfp4(x, w):
    # Triton's RMSNorm and its MXFP4 kernel above, two launches (no fused Triton kernel here).
    return triton_mxfp4(triton_rmsnorm(x, w, EPS))


def bench_rmsnorm_mxfp4():
    def composed(x, w):
        # rmsnorm2d_fwd then per_1x32_f4_quant (each checked above); the fused kernel's row
        # sums run in another order, so a few norm outputs differ in the last bf16 bit.
        return wavetile_mxfp4(ops.rmsnorm2d_fwd(x, w, EPS))
    impls = {"wavetile": wavetile_rmsnorm_mxfp4, "torch": torch_rmsnorm_mxfp4, "compile": compiled_rmsnorm_mxfp4,
             "triton": triton_rmsnorm_mxfp4}
    bench_op("rmsnorm2d_fwd_with_dynamicquant MXFP4 (Triton: two kernels)", "N", rms_inputs, impls,
             wavetile_rmsnorm_mxfp4, composed, moved_bytes=lambda m, n: 2 * m * n + m * n // 2 + m * n // 32,
             copy_bytes=lambda m, n: m * n + m * n // 4, exact="few")


ROPE_D, ROPE_F, ROPE_POSITIONS = 128, 64, 8192


def torch_rope(x, cos, sin, positions):
    """NeoX with the reused front half (Llama's cache layout), x [T, 1, H, 128]."""
    c = cos[positions].view(-1, 1, 1, ROPE_F).repeat(1, 1, 1, 2)  # [T, 1, 1, 128]
    s = sin[positions].view(-1, 1, 1, ROPE_F).repeat(1, 1, 1, 2)
    xf = x.float()
    rotated = torch.cat((-xf[..., ROPE_F:], xf[..., :ROPE_F]), -1)
    return (xf * c.float() + rotated * s.float()).to(x.dtype)


compiled_rope = torch.compile(torch_rope, dynamic=False)


@triton.jit
def _triton_rope(x, out, cos, sin, positions, stride_t, heads, HEADS: tl.constexpr, HALF: tl.constexpr,
                 GPTJ: tl.constexpr):
    """NeoX (pairs j, j + HALF) or GPT-J (pairs 2j, 2j + 1), pair j rotated by row p's cos[j], sin[j]."""
    t = tl.program_id(0)
    p = tl.load(positions + t)
    h = tl.arange(0, HEADS)[:, None]
    j = tl.arange(0, HALF)[None, :]
    mask = h < heads
    c = tl.load(cos + p * HALF + j).to(tl.float32)
    s = tl.load(sin + p * HALF + j).to(tl.float32)
    base = t * stride_t + h * (2 * HALF)
    if GPTJ:  # the heads read whole and split in registers
        at = base + tl.arange(0, 2 * HALF)[None, :]
        xa, xb = tl.split(tl.reshape(tl.load(x + at, mask=mask, other=0.0).to(tl.float32), [HEADS, HALF, 2]))
        y = tl.reshape(tl.join(xa * c - xb * s, xb * c + xa * s), [HEADS, 2 * HALF])
        tl.store(out + at, y.to(out.dtype.element_ty), mask=mask)
    else:
        xa = tl.load(x + base + j, mask=mask, other=0.0).to(tl.float32)
        xb = tl.load(x + base + HALF + j, mask=mask, other=0.0).to(tl.float32)
        tl.store(out + base + j, (xa * c - xb * s).to(out.dtype.element_ty), mask=mask)
        tl.store(out + base + HALF + j, (xb * c + xa * s).to(out.dtype.element_ty), mask=mask)


def triton_rope_of(gptj):
    """A call of the Triton RoPE kernel (one program a token, every head at once)."""
    def call(x, cos, sin, positions):
        out = torch.empty_like(x)
        heads = x.shape[2]
        _triton_rope[(x.shape[0],)](x, out, cos, sin, positions, x.stride(0), heads,
                                    HEADS=triton.next_power_of_2(heads), HALF=ROPE_F, GPTJ=gptj, num_warps=4)
        return out
    return call


def wavetile_rope_of(style):
    """rope_cached_positions_fwd with the reused front half: style 0 NeoX, 1 GPT-J."""
    return lambda x, cos, sin, positions: ops.rope_cached_positions_fwd(x, cos, sin, positions.view(-1, 1), style,
                                                                        True, False)


triton_rope, wavetile_rope = triton_rope_of(False), wavetile_rope_of(0)


def torch_rope_gptj(x, cos, sin, positions):
    """GPT-J (pairs 2j, 2j + 1) with the reused front half: pair j takes cos[p, j]."""
    c = cos[positions].view(-1, 1, 1, ROPE_F).float()
    s = sin[positions].view(-1, 1, 1, ROPE_F).float()
    pairs = x.float().view(*x.shape[:-1], ROPE_F, 2)
    a, b = pairs[..., 0], pairs[..., 1]
    return torch.stack((a * c - b * s, b * c + a * s), -1).flatten(-2).to(x.dtype)


compiled_rope_gptj = torch.compile(torch_rope_gptj, dynamic=False)


triton_rope_gptj, wavetile_rope_gptj = triton_rope_of(True), wavetile_rope_of(1)


def rope_inputs(m, n, g=None):
    """x [m, 1, n / D, D], bf16 cos/sin tables and m positions into them."""
    angles = torch.rand(ROPE_POSITIONS, ROPE_F, device="cuda", generator=g) * 100
    return (torch.randn(m, 1, n // ROPE_D, ROPE_D, device="cuda", dtype=torch.bfloat16, generator=g),
            angles.cos().to(torch.bfloat16), angles.sin().to(torch.bfloat16),
            torch.randint(0, ROPE_POSITIONS, (m,), device="cuda", generator=g))


def bench_rope(gptj=False):
    if gptj:
        impls = {"wavetile": wavetile_rope_gptj, "torch": torch_rope_gptj, "compile": compiled_rope_gptj,
                 "triton": triton_rope_gptj}
    else:
        impls = {"wavetile": wavetile_rope, "torch": torch_rope, "compile": compiled_rope, "triton": triton_rope}
    bench_op(f"rope_cached_positions_fwd ({'GPT-J' if gptj else 'NeoX'}, reused half, D=128)", "H*D", rope_inputs,
             impls, impls["wavetile"], impls["torch"], moved_bytes=lambda m, n: 4 * m * n,
             copy_bytes=lambda m, n: 2 * m * n)


# ---------------------------------------------------------------------------------------------
# Fused residual adds (RMSNorm, LayerNorm, the quantizing RMSNorm), per-group and static
# quantization.

def fused_add_inputs(m, n, g):
    """x, residual [M, N] and RMSNorm weights near 1, bf16."""
    x, w = rms_inputs(m, n, g)
    return x, torch.randn(m, n, device="cuda", dtype=torch.bfloat16, generator=g), w


@triton.jit
def _triton_norm_add(x, r, w, b, out, r_out, scales, stride, n, eps, LAYER: tl.constexpr, QUANT: tl.constexpr,
                     BLOCK: tl.constexpr):
    """residual_out = x + r rounded to bf16, then RMSNorm (LAYER false) or LayerNorm of it; with
    QUANT the RMSNorm's bf16 output quantized per row to fp8 (scale into `scales`)."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    at = row * stride + cols
    total = tl.load(x + at, mask=mask, other=0.0).to(tl.float32) + tl.load(r + at, mask=mask, other=0.0).to(tl.float32)
    total = total.to(r_out.dtype.element_ty)
    tl.store(r_out + at, total, mask=mask)
    v = total.to(tl.float32)
    wv = tl.load(w + cols, mask=mask, other=0.0).to(tl.float32)
    if LAYER:
        v = tl.where(mask, v - tl.sum(v, axis=0) / n, 0.0)
        y = v * tl.rsqrt(tl.sum(v * v, axis=0) / n + eps) * wv + tl.load(b + cols, mask=mask, other=0.0).to(tl.float32)
    else:
        y = v * tl.rsqrt(tl.sum(v * v, axis=0) / n + eps) * wv
    if QUANT:
        y = y.to(tl.bfloat16).to(tl.float32)
        amax = tl.max(tl.abs(y), axis=0)
        scale = tl.where(amax > 0, amax / 448.0, 1.0)
        tl.store(scales + row, scale)
        tl.store(out + row * n + cols, (y / scale).to(tl.float8e4nv), mask=mask)
    else:
        tl.store(out + at, y.to(out.dtype.element_ty), mask=mask)


def triton_norm_add(x, r, w, b=None):
    out, r_out = torch.empty_like(x), torch.empty_like(x)
    m, n = x.shape
    block = triton.next_power_of_2(n)
    _triton_norm_add[(m,)](x, r, w, w if b is None else b, out, r_out, r_out, x.stride(0), n, EPS, LAYER=b is not None,
                           QUANT=False, BLOCK=block, num_warps=row_warps(block))
    return out, r_out


def torch_rmsnorm_add(x, r, w):
    total = x + r
    return torch_rmsnorm(total, w, EPS), total


def torch_layernorm_add(x, r, w, b):
    total = x + r
    return torch_layernorm(total, w, b, EPS), total


compiled_rmsnorm_add = torch.compile(torch_rmsnorm_add, dynamic=False)
compiled_layernorm_add = torch.compile(torch_layernorm_add, dynamic=False)


def wavetile_rmsnorm_add(x, r, w):
    out, r_out = torch.empty_like(x), torch.empty_like(x)
    ops.rmsnorm2d_fwd_with_add(out, x, r, r_out, w, EPS)
    return out, r_out


def wavetile_layernorm_add(x, r, w, b):
    out, r_out = torch.empty_like(x), torch.empty_like(x)
    ops.layernorm2d_fwd_with_add(out, x, r, r_out, w, b, EPS)
    return out, r_out


def bench_norm_add(layer):
    """The fused residual add: residual_out (the bf16 sum) and out (an f32 norm of it) each
    within an ulp of the reference."""
    if layer:
        def make(m, n, g):
            x, r, w = fused_add_inputs(m, n, g)
            return x, r, w, torch.rand(n, device="cuda", dtype=torch.bfloat16, generator=g) - 0.5

        def reference_add(x, r, w, b):
            total = x + r  # bf16 operands: their f32 sum rounded once
            return (torch.nn.functional.layer_norm(total.float(), (x.shape[1],), w.float(), b.float(), EPS)
                    .to(x.dtype), total)
        impls = {"wavetile": wavetile_layernorm_add, "torch": torch_layernorm_add, "compile": compiled_layernorm_add,
                 "triton": triton_norm_add}
    else:
        make = fused_add_inputs

        def reference_add(x, r, w):
            total = x + r
            return reference(total, w, EPS), total
        impls = {"wavetile": wavetile_rmsnorm_add, "torch": torch_rmsnorm_add, "compile": compiled_rmsnorm_add,
                 "triton": triton_norm_add}
    bench_op("layernorm2d_fwd_with_add" if layer else "rmsnorm2d_fwd_with_add", "N", make, impls, impls["wavetile"],
             reference_add, moved_bytes=lambda m, n: 8 * m * n, copy_bytes=lambda m, n: 4 * m * n)


def triton_rmsnorm_add_quant(x, r, w):
    m, n = x.shape
    out = torch.empty(m, n, device=x.device, dtype=torch.float8_e4m3fn)
    scales = torch.empty(m, 1, device=x.device, dtype=torch.float32)
    r_out = torch.empty_like(x)
    block = triton.next_power_of_2(n)
    _triton_norm_add[(m,)](x, r, w, w, out, r_out, scales, x.stride(0), n, EPS, LAYER=False, QUANT=True, BLOCK=block,
                           num_warps=row_warps(block))
    return out, scales, r_out


def torch_rmsnorm_add_quant(x, r, w):
    total = x + r
    return (*torch_per_token_quant(torch_rmsnorm(total, w, EPS)), total)


compiled_rmsnorm_add_quant = torch.compile(torch_rmsnorm_add_quant, dynamic=False)


def wavetile_rmsnorm_add_quant(x, r, w):
    out = torch.empty(x.shape, device=x.device, dtype=torch.float8_e4m3fn)
    scales = torch.empty(x.shape[0], 1, device=x.device, dtype=torch.float32)
    r_out = torch.empty_like(x)
    ops.rmsnorm2d_fwd_with_add_dynamicquant(out, x, r, r_out, scales, w, EPS)
    return out, scales, r_out


def bench_rmsnorm_add_quant():
    def composed(x, r, w):
        # rmsnorm2d_fwd_with_add, then the quantization op (see bench_rmsnorm_quant).
        out, r_out = wavetile_rmsnorm_add(x, r, w)
        return (*wavetile_per_token_quant(out), r_out)
    impls = {"wavetile": wavetile_rmsnorm_add_quant, "torch": torch_rmsnorm_add_quant,
             "compile": compiled_rmsnorm_add_quant, "triton": triton_rmsnorm_add_quant}
    bench_op("rmsnorm2d_fwd_with_add_dynamicquant_fp8", "N", fused_add_inputs, impls, wavetile_rmsnorm_add_quant,
             composed, moved_bytes=lambda m, n: 7 * m * n, copy_bytes=lambda m, n: 7 * m * n // 2, exact="adjacent")


QUANT_GROUP = 128


@triton.jit
def _triton_group_quant(x, out, scales, stride, n, GROUP: tl.constexpr, GROUPS: tl.constexpr,
                        EXACT: tl.constexpr = False):
    row = tl.program_id(0)
    groups = tl.program_id(1) * GROUPS + tl.arange(0, GROUPS)
    cols = groups[:, None] * GROUP + tl.arange(0, GROUP)[None, :]
    mask = cols < n
    v = tl.load(x + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    amax = tl.max(tl.abs(v), axis=1)
    scale = tl.where(amax > 0, _triton_divide(amax, 448.0, EXACT), 1.0)
    tl.store(scales + row * (n // GROUP) + groups, scale, mask=groups * GROUP < n)
    tl.store(out + row * n + cols, _triton_divide(v, scale[:, None], EXACT).to(tl.float8e4nv), mask=mask)


def triton_group_quant(x, exact=False):
    m, n = x.shape
    out = torch.empty(m, n, device=x.device, dtype=torch.float8_e4m3fn)
    scales = torch.empty(m, n // QUANT_GROUP, device=x.device, dtype=torch.float32)
    groups = 8  # 1024 columns a program
    _triton_group_quant[(m, triton.cdiv(n // QUANT_GROUP, groups))](x, out, scales, x.stride(0), n, GROUP=QUANT_GROUP,
                                                                    GROUPS=groups, EXACT=exact, num_warps=4)
    return out, scales


def torch_group_quant(x):
    m, n = x.shape
    v = x.float().view(m, n // QUANT_GROUP, QUANT_GROUP)
    amax = v.abs().amax(-1, keepdim=True)
    scales = torch.where(amax > 0, amax / torch.full_like(amax, 448.0), torch.ones_like(amax))  # see per token
    return (v / scales).to(torch.float8_e4m3fn).view(m, n), scales.view(m, n // QUANT_GROUP)


compiled_group_quant = torch.compile(torch_group_quant, dynamic=False)


def wavetile_group_quant(x):
    m, n = x.shape
    out = torch.empty(m, n, device=x.device, dtype=torch.float8_e4m3fn)
    scales = torch.empty(m, n // QUANT_GROUP, device=x.device, dtype=torch.float32)
    ops.dynamic_per_group_scaled_quant(out, x, scales, group_size=QUANT_GROUP, shuffle_scale=False)
    return out, scales


def bench_group_quant():
    def make(m, n, g):
        return (torch.randn(m, n, device="cuda", dtype=torch.bfloat16, generator=g) * 3,)
    impls = {"wavetile": wavetile_group_quant, "torch": torch_group_quant, "compile": compiled_group_quant,
             "triton": triton_group_quant, "triton_rn": lambda x: triton_group_quant(x, exact=True)}
    bench_op(f"dynamic_per_group_scaled_quant_fp8 (group {QUANT_GROUP})", "N", make, impls, wavetile_group_quant,
             torch_group_quant, moved_bytes=lambda m, n: 3 * m * n + 4 * m * n // QUANT_GROUP,
             copy_bytes=lambda m, n: 3 * m * n // 2, exact=True)


@triton.jit
def _triton_static_quant(x, out, scale, stride, n, BLOCK: tl.constexpr, EXACT: tl.constexpr = False):
    row = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n
    v = tl.load(x + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(out + row * n + cols, _triton_divide(v, tl.load(scale), EXACT).to(tl.float8e4nv), mask=mask)


def triton_static_quant(x, scale, exact=False):
    m, n = x.shape
    out = torch.empty(m, n, device=x.device, dtype=torch.float8_e4m3fn)
    block = min(triton.next_power_of_2(n), 2048)
    _triton_static_quant[(m, triton.cdiv(n, block))](x, out, scale, x.stride(0), n, BLOCK=block, EXACT=exact,
                                                     num_warps=max(1, block // 256))
    return out


def torch_static_quant(x, scale):
    return (x.float() / scale).to(torch.float8_e4m3fn)


compiled_static_quant = torch.compile(torch_static_quant, dynamic=False)


def wavetile_static_quant(x, scale):
    out = torch.empty(x.shape, device=x.device, dtype=torch.float8_e4m3fn)
    ops.static_per_tensor_quant(out, x, scale)
    return out


def bench_static_quant():
    def make(m, n, g):
        x = torch.randn(m, n, device="cuda", dtype=torch.bfloat16, generator=g) * 3
        return x, (x.float().abs().amax() / 448.0).reshape(1)
    impls = {"wavetile": wavetile_static_quant, "torch": torch_static_quant, "compile": compiled_static_quant,
             "triton": triton_static_quant, "triton_rn": lambda x, s: triton_static_quant(x, s, exact=True)}
    bench_op("static_per_tensor_quant_fp8", "N", make, impls, wavetile_static_quant, torch_static_quant,
             moved_bytes=lambda m, n: 3 * m * n, copy_bytes=lambda m, n: 3 * m * n // 2, exact=True)


def f32_accuracy():
    """The f32 forms of every op against float64 torch references (exp, erf and tanh lowered
    for the GPU without device libraries), with the host tests' tolerance."""
    global failures
    report("## f32 accuracy against float64 references")
    report("")
    report("| op | max error / max(1, abs(reference)) | status |")
    report("|---|---|---|")
    g = fresh_generator()
    x32 = torch.rand(64, 2 * 4099, device="cuda", generator=g) * 18 - 9  # as the host tests
    xr = x32.double()  # references from the f32 inputs the kernels see
    gate, up = xr[:, :4099], xr[:, 4099:]
    sig = torch.sigmoid
    clamped = gate.clamp(max=7.0)
    refs = {
        "silu_and_mul": gate * sig(gate) * up,
        "gelu_and_mul": 0.5 * gate * (1 + torch.erf(gate / 2 ** 0.5)) * up,
        "gelu_tanh_and_mul": 0.5 * gate * (1 + torch.tanh((2 / torch.pi) ** 0.5 * (gate + 0.044715 * gate ** 3))) * up,
        "swiglu": clamped * sig(1.702 * clamped) * (up.clamp(-7.0, 7.0) + 1),
    }
    for name, ref in refs.items():
        out = torch.full((64, 4099), float("nan"), device="cuda")
        getattr(ops, name)(out, x32)
        err = ((out.double() - ref).abs() / ref.abs().clamp(min=1.0)).max().item()
        ok = err <= 4e-6
        failures += not ok
        results.append({"op": name, "f32_max_rel_err": err, "ok": ok})
        report(f"| {name} | {err:.2e} | {'PASS' if ok else 'FAIL'} |")
    report("")


def main():
    props = torch.cuda.get_device_properties(0)
    report(f"# wavetile.ops on {props.name}")
    report("")
    report(f"torch {torch.__version__}, triton {triton.__version__}, Wavetile target "
           f"{wavetile.jit._gpu(torch.cuda.current_device()).device.target}")
    report("")
    # OPS=name,name selects benchmarks (default: all).
    benches = {"accuracy": f32_accuracy, "rmsnorm": bench_rmsnorm, "layernorm": bench_layernorm,
               "silu": lambda: bench_gated("silu"), "quant_exact": per_token_quant_exactness,
               "quant_rows": num_rows_in_graph, "shuffled_scales": shuffled_group_scales,
               "quant": bench_per_token_quant, "mxfp4": bench_mxfp4, "mxfp8": bench_mxfp8,
               "dequant_mxfp4": bench_dequant_mxfp4, "dequant_fp8": bench_dequant_fp8,
               "tensor_quant": bench_per_tensor_quant,
               "rmsnorm_quant": bench_rmsnorm_quant, "rmsnorm_mxfp4": bench_rmsnorm_mxfp4, "rope": bench_rope,
               # the rest of issue 5's ops
               "rmsnorm_add": lambda: bench_norm_add(False), "layernorm_add": lambda: bench_norm_add(True),
               "gelu": lambda: bench_gated("gelu"), "gelu_tanh": lambda: bench_gated("gelu_tanh"),
               "swiglu": lambda: bench_gated("swiglu"), "rmsnorm_add_quant": bench_rmsnorm_add_quant,
               "group_quant": bench_group_quant, "static_quant": bench_static_quant,
               "rope_gptj": lambda: bench_rope(gptj=True)}
    json_path = os.path.join(OUT, "ops_bench.json")
    for name in os.environ.get("OPS", ",".join(benches)).split(","):
        benches[name]()
        with open(json_path, "w") as f:  # after each bench, so a run cut short keeps its results
            json.dump(results, f, indent=1)
    report("## Issue 5's targets, op by op")
    report("")
    for line in summary_lines(results):
        report(line)
    report(f"numerics: {len([r for r in results if 'ok' in r]) - failures} passed, {failures} failed")
    try:
        plot(results, OUT)
    except ImportError as e:
        report(f"(no plot: {e})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
