#!/usr/bin/env python3
"""The GEMM family (wavetile.ops.gemm_a16w16, gemm_a8w8, gemm_a8w8_bpreshuffle, gemm_a8w8_blockscale
and gemm_a4w4) on an NVIDIA GPU against cuBLAS (torch.matmul), torch._scaled_mm (fp8, per-tensor,
per-token and blockwise), torch._int_mm (int8) and Triton GEMMs written here (tl.dot for bf16, int8 and block-scaled fp8,
tl.dot_scaled for MXFP4), interleaved in one process (issue 6's benchmark).
Numerics first (against an fp32 torch product), then device time per call (CUDA-graph replays
over rotating inputs, bench/h200/ops_bench.py's method). Decode shapes use Llama-3-70B and
DeepSeek-V3 layer sizes. With WAVETILE_TUNED_DIR set, the ops read the tables there;
TUNE=DTYPE:SET[,...] (DTYPE bf16, fp8, i8, blockscale or a4w4, SET decode, large or shapes MxNxK joined by '+') first
tunes those shapes (wavetile.ops.tune_gemm, as `wavetile tune` does) into that directory.
GEMMS=bf16,fp8,i8,blockscale,a4w4 picks the dtypes benchmarked, SHAPES=decode,large,MxNxK,... the shapes
(A4W4_SWEEP=1: gemm_a4w4 also sweeps decode configurations); RESULT names the report
($OUT/$RESULT.md and .json).

Run by bench/h200/python.sh bench/h200/gemm_bench.py (carry dist/python).
"""
import functools
import json
import os
import sys
import time
import tempfile

os.environ.setdefault("WAVETILE_CACHE_DIR", tempfile.mkdtemp(prefix="wavetile-cache-"))
sys.path.insert(0, os.path.dirname(__file__))

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

import ops_bench as b  # noqa: E402  (graph_time, report)

ops = b.ops
# (N, K) of Llama-3-70B (qkv, o, gate+up, down) and DeepSeek-V3 (q_b, o, shared expert)
DECODE_NK = [(10240, 8192), (8192, 8192), (57344, 8192), (8192, 28672), (24576, 1536), (7168, 16384), (4096, 7168)]
DECODE_M = [1, 16, 32, 64]
LARGE = [(4096, 4096, 4096), (8192, 8192, 8192)]


@triton.autotune(configs=[triton.Config({"BM": bm, "BN": bn, "BK": bk}, num_stages=s, num_warps=w)
                          for bm, bn, bk, s, w in [(16, 64, 128, 4, 4), (32, 64, 128, 4, 4), (64, 64, 64, 4, 4),
                                                   (128, 128, 64, 3, 8), (128, 256, 64, 3, 8)]],
                 key=["M", "N", "K", "INT8"])
@triton.jit
def _triton_gemm(x, w, xs, ws, out, M, N, K, INT8: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
                 BK: tl.constexpr):
    """Y = X·Wᵀ; int8 codes sum in i32 and are scaled per row (xs) and column (ws)."""
    pm, pn = tl.program_id(0), tl.program_id(1)
    rows = pm * BM + tl.arange(0, BM)
    cols = pn * BN + tl.arange(0, BN)
    ACC: tl.constexpr = tl.int32 if INT8 else tl.float32
    acc = tl.zeros([BM, BN], dtype=ACC)
    for k0 in range(0, K, BK):
        ks = k0 + tl.arange(0, BK)
        a = tl.load(x + rows[:, None] * K + ks[None, :], mask=(rows[:, None] < M) & (ks[None, :] < K), other=0)
        bt = tl.load(w + cols[None, :] * K + ks[:, None], mask=(cols[None, :] < N) & (ks[:, None] < K), other=0)
        acc = tl.dot(a, bt, acc, out_dtype=ACC)
    y = acc.to(tl.float32)
    if INT8:
        y = y * tl.load(xs + rows, mask=rows < M, other=0.0)[:, None] * tl.load(ws + cols, mask=cols < N, other=0.0)[None, :]
    tl.store(out + rows[:, None] * N + cols[None, :], y.to(out.dtype.element_ty),
             mask=(rows[:, None] < M) & (cols[None, :] < N))


def triton_gemm(x, w, xs=None, ws=None):
    m, k = x.shape
    n = w.shape[0]
    int8 = x.dtype == torch.int8
    out = torch.empty(m, n, device=x.device, dtype=torch.bfloat16 if int8 else x.dtype)
    _triton_gemm[lambda meta: (triton.cdiv(m, meta["BM"]), triton.cdiv(n, meta["BN"]))](
        x, w, xs if int8 else x, ws if int8 else x, out, m, n, k, int8)
    return out


def bf16_case(m, n, k, g):
    return (torch.randn(m, k, device="cuda", dtype=torch.bfloat16, generator=g),
            torch.randn(n, k, device="cuda", dtype=torch.bfloat16, generator=g) / k ** 0.5)


checks = 0


def check(name, got, ref, tolerance, magnitude=None):
    """Largest |got - ref| over |ref| (or a given magnitude), at least 1; NaN fails."""
    global checks
    checks += 1
    scale = (ref.abs() if magnitude is None else magnitude).clamp(min=1.0)
    err = ((got.float() - ref).abs() / scale).max().item()
    ok = err <= tolerance and not got.isnan().any().item()
    b.failures += not ok
    return err, ok


def time_peer(name, fn, batches, ref, magnitude):
    """A peer's largest error against `ref` (relative to `magnitude`; reported, not counted as
    ours) and its time; NaN for both where the peer refuses the shape."""
    try:
        err = ((fn(*batches[0]).float() - ref).abs() / magnitude.clamp(min=1.0)).max().item()
        return err, b.graph_time(fn, batches)
    except Exception as e:  # the peer's own limits: reported, not ours
        print(f"{name}: {type(e).__name__}: {str(e)[:300]}")
        return float("nan"), float("nan")


def start_table(title, columns):
    """Reports a table's heading and header; returns a freshly seeded generator for its inputs."""
    b.report(f"## {title}")
    b.report("")
    b.report("| " + " | ".join(columns) + " |")
    b.report("|" + "---|" * len(columns))
    return b.fresh_generator()


def forced_configs(shapes):
    """CONFIGS=a;b;...: the configuration Wavetile runs for each shape in order, each
    "block_m,block_n,block_k,stages,warps,split_k[,skinny]" or "-" for its table or default."""
    text = os.environ.get("CONFIGS")
    if not text:
        return {shape: None for shape in shapes}
    configs = text.split(";")
    if len(configs) != len(shapes):
        raise SystemExit(f"CONFIGS names {len(configs)} configurations for {len(shapes)} shapes")
    return {shape: None if c == "-" else tuple(int(v) for v in c.split(",")) for shape, c in zip(shapes, configs)}


def bench_bf16(shapes):
    forced = forced_configs(shapes)
    g = start_table("gemm_a16w16 (bf16 → bf16), Y = X·Wᵀ",
                    ["M", "N", "K", "wavetile µs", "TFLOP/s", "W TB/s", "cuBLAS µs", "Triton µs", "vs cuBLAS",
                     "vs Triton", "max rel err"])
    for m, n, k in shapes:
        config = forced[(m, n, k)]
        impls = {"wavetile": lambda x, w: ops.gemm_a16w16(x, w, config=config), "cublas": lambda x, w: x @ w.t(),
                 "triton": triton_gemm}
        batches = [bf16_case(m, n, k, g) for _ in range(2 if m * k + n * k > (16 << 20) else 8)]
        x, w = batches[0]
        err, ok = check("gemm_a16w16", impls["wavetile"](x, w), x.float() @ w.float().t(), 2e-2)
        t = {name: b.graph_time(fn, batches) for name, fn in impls.items()}
        b.results.append({"op": "gemm_a16w16", "M": m, "N": n, "K": k, **{f"{q}_us": v for q, v in t.items()},
                          "max_rel_err": err, "ok": ok})
        b.report(f"| {m} | {n} | {k} | {t['wavetile']:.2f} | {2 * m * n * k / t['wavetile'] / 1e6:.1f} | "
                 f"{2 * n * k / t['wavetile'] / 1e6:.2f} | "
                 f"{t['cublas']:.2f} | {t['triton']:.2f} | {t['cublas'] / t['wavetile']:.2f} | "
                 f"{t['triton'] / t['wavetile']:.2f} | {err:.1e}{'' if ok else ' FAIL'} |")
        save()
    b.report("")


def scaled_mm(x, w, xs, ws):
    return torch._scaled_mm(x, w.t(), scale_a=xs, scale_b=ws, out_dtype=torch.bfloat16)


def fp8_case(m, n, k, g):
    return ((torch.randn(m, k, device="cuda", generator=g) * 2).to(torch.float8_e4m3fn),
            (torch.randn(n, k, device="cuda", generator=g) * 2).to(torch.float8_e4m3fn),
            torch.rand(m, 1, device="cuda", generator=g) / 100 + 1e-3,
            torch.rand(1, n, device="cuda", generator=g) / 100 + 1e-3)


def int8_case(m, n, k, g):
    """int8 codes in [-127, 127] with f32 scales per token ([M, 1]) and per channel ([1, N])."""
    return (torch.randint(-127, 128, (m, k), device="cuda", dtype=torch.int8, generator=g),
            torch.randint(-127, 128, (n, k), device="cuda", dtype=torch.int8, generator=g),
            torch.rand(m, 1, device="cuda", generator=g) / 100 + 1e-3,
            torch.rand(1, n, device="cuda", generator=g) / 100 + 1e-3)


def int_mm_product(x, w, xs, ws):
    """torch._int_mm's int32 product alone (cuBLAS int8 → int32), which takes more than 16 rows:
    fewer are padded to 17 (the decode W stream costs the same)."""
    m = x.shape[0]
    return torch._int_mm(x if m > 16 else torch.nn.functional.pad(x, (0, 0, 0, 17 - m)), w.t())[:m]


def int_mm(x, w, xs, ws):
    """The whole op in torch: _int_mm's product, then the scales and bf16 in eager torch."""
    return (int_mm_product(x, w, xs, ws).float() * xs * ws).to(torch.bfloat16)


def bench_int8(shapes):
    forced = forced_configs(shapes)
    g = start_table("gemm_a8w8 (int8, per-token × per-channel scales → bf16)",
                    ["M", "N", "K", "wavetile µs", "TOP/s", "W TB/s", "_int_mm µs (product only)",
                     "_int_mm + scaling µs", "Triton µs", "cuBLAS bf16 µs", "vs _int_mm", "vs Triton",
                     "vs cuBLAS bf16", "max rel err"])
    for m, n, k in shapes:
        batches = [int8_case(m, n, k, g) for _ in range(2 if m * k + n * k > (32 << 20) else 8)]
        x, w, xs, ws = batches[0]
        product = x.double() @ w.double().t()  # |sums| < 2^31: exact in f64
        exact = product * xs.double() * ws.double()
        out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        ours = functools.partial(ops.gemm_a8w8, config=forced[(m, n, k)])
        ours(x, w, xs, ws, out=out)
        err, ok = check("gemm_a8w8 int8", out, exact.float(), 1e-2)  # one bf16 rounding
        t = {"wavetile": b.graph_time(ours, batches)}
        for name, fn, ref in (("int_mm", int_mm_product, product), ("int_mm_scaled", int_mm, exact),
                              ("triton", triton_gemm, exact)):
            _, t[name] = time_peer(f"{name} {m}x{n}x{k}", fn, batches, ref.float(), ref.abs().float())
        bf16 = [(x.to(torch.bfloat16), w.to(torch.bfloat16)) for x, w, _, _ in batches]
        t["cublas_bf16"] = b.graph_time(lambda x, w: x @ w.t(), bf16)
        b.results.append({"op": "gemm_a8w8_int8", "M": m, "N": n, "K": k, **{f"{q}_us": v for q, v in t.items()},
                          "max_rel_err": err, "ok": ok})
        ours = t["wavetile"]
        b.report(f"| {m} | {n} | {k} | {ours:.2f} | {2 * m * n * k / ours / 1e6:.1f} | {n * k / ours / 1e6:.2f} | "
                 f"{t['int_mm']:.2f} | {t['int_mm_scaled']:.2f} | {t['triton']:.2f} | {t['cublas_bf16']:.2f} | "
                 f"{t['int_mm'] / ours:.2f} | {t['triton'] / ours:.2f} | {t['cublas_bf16'] / ours:.2f} | "
                 f"{err:.1e}{'' if ok else ' FAIL'} |")
        save()
    b.report("")


def bench_fp8(shapes):
    g = start_table("gemm_a8w8 (fp8 e4m3fn, per-token × per-channel scales → bf16)",
                    ["M", "N", "K", "wavetile µs", "TFLOP/s", "W TB/s", "_scaled_mm µs", "vs _scaled_mm",
                     "max rel err", "bpreshuffle µs", "its max rel err"])
    for m, n, k in shapes:
        batches = [fp8_case(m, n, k, g) for _ in range(2 if m * k + n * k > (32 << 20) else 8)]
        x, w, xs, ws = batches[0]
        ref = (x.float() @ w.float().t()) * xs * ws
        err, ok = check("gemm_a8w8", ops.gemm_a8w8(x, w, xs, ws), ref, 2e-2)
        t_ours = b.graph_time(ops.gemm_a8w8, batches)
        # The same product with W in AITER's shuffled layout (gemm_a8w8_bpreshuffle).
        shuffled = [(x, ops.shuffle_weight(w), xs, ws) for x, w, xs, ws in batches]
        err_shuffled, ok_shuffled = check("gemm_a8w8_bpreshuffle", ops.gemm_a8w8_bpreshuffle(*shuffled[0]), ref, 2e-2)
        t_shuffled = b.graph_time(ops.gemm_a8w8_bpreshuffle, shuffled)
        try:
            t_theirs = b.graph_time(scaled_mm, batches)
        except RuntimeError as e:  # _scaled_mm's own shape rules
            print(f"_scaled_mm {m}x{n}x{k}: {e}")
            t_theirs = float("nan")
        b.results.append({"op": "gemm_a8w8", "M": m, "N": n, "K": k, "wavetile_us": t_ours,
                          "scaled_mm_us": t_theirs, "max_rel_err": err, "ok": ok,
                          "bpreshuffle_us": t_shuffled, "bpreshuffle_max_rel_err": err_shuffled,
                          "bpreshuffle_ok": ok_shuffled})
        b.report(f"| {m} | {n} | {k} | {t_ours:.2f} | {2 * m * n * k / t_ours / 1e6:.1f} | {n * k / t_ours / 1e6:.2f} | "
                 f"{t_theirs:.2f} | {t_theirs / t_ours:.2f} | {err:.1e}{'' if ok else ' FAIL'} | "
                 f"{t_shuffled:.2f} | {err_shuffled:.1e}{'' if ok_shuffled else ' FAIL'} |")
        save()
    b.report("")


@triton.autotune(configs=[triton.Config({"BM": bm, "BN": bn}, num_stages=s, num_warps=w)
                          for bm, bn, s, w in [(16, 64, 4, 4), (16, 128, 3, 4), (32, 64, 4, 4), (64, 128, 3, 4),
                                               (128, 128, 3, 8)]],
                 key=["M", "N", "K"])
@triton.jit
def _triton_blockscale_gemm(x, w, xs, ws, out, M, N, K, BM: tl.constexpr, BN: tl.constexpr):
    """DeepSeek-style block scales, as vLLM's and AITER's Triton kernels: one 128-wide scale
    block per K step, its product scaled into the f32 sum."""
    pm, pn = tl.program_id(0), tl.program_id(1)
    rows = pm * BM + tl.arange(0, BM)
    cols = pn * BN + tl.arange(0, BN)
    blocks = tl.cdiv(K, 128)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for kb in range(0, blocks):
        ks = kb * 128 + tl.arange(0, 128)
        a = tl.load(x + rows[:, None] * K + ks[None, :], mask=(rows[:, None] < M) & (ks[None, :] < K), other=0.0)
        bt = tl.load(w + cols[None, :] * K + ks[:, None], mask=(cols[None, :] < N) & (ks[:, None] < K), other=0.0)
        sa = tl.load(xs + rows * blocks + kb, mask=rows < M, other=0.0)
        sb = tl.load(ws + (cols // 128) * blocks + kb, mask=cols < N, other=0.0)
        acc += tl.dot(a, bt) * sa[:, None] * sb[None, :]
    tl.store(out + rows[:, None] * N + cols[None, :], acc.to(out.dtype.element_ty),
             mask=(rows[:, None] < M) & (cols[None, :] < N))


def triton_blockscale_gemm(x, w, xs, ws):
    m, k = x.shape
    n = w.shape[0]
    out = torch.empty(m, n, device=x.device, dtype=torch.bfloat16)
    _triton_blockscale_gemm[lambda meta: (triton.cdiv(m, meta["BM"]), triton.cdiv(n, meta["BN"]))](
        x, w, xs, ws, out, m, n, k)
    return out


def blockscale_case(m, n, k, g):
    """fp8 codes with f32 scales per 1x128 of X and per 128x128 of W."""
    kb = (k + 127) // 128
    return ((torch.randn(m, k, device="cuda", generator=g) * 2).to(torch.float8_e4m3fn),
            (torch.randn(n, k, device="cuda", generator=g) * 2).to(torch.float8_e4m3fn),
            torch.rand(m, kb, device="cuda", generator=g) / 50 + 1e-3,
            torch.rand((n + 127) // 128, kb, device="cuda", generator=g) / 50 + 1e-3)


def blockscale_dequantize(x, w, xs, ws):
    m, k = x.shape
    n = w.shape[0]
    xd = x.float() * xs.repeat_interleave(128, dim=1)[:, :k]
    wd = w.float() * ws.repeat_interleave(128, dim=0)[:n].repeat_interleave(128, dim=1)[:, :k]
    return xd, wd


def cublas_blockscale(x, w, xs_outer, ws_t):
    """torch._scaled_mm with DeepSeek-style scales (cuBLAS's 1x128 by 128x128 block scaling):
    X's scales outer-dim-major, W's as [K/128, N/128]."""
    return torch._scaled_mm(x, w.t(), scale_a=xs_outer, scale_b=ws_t, out_dtype=torch.bfloat16)


def bench_blockscale(shapes):
    """gemm_a8w8_blockscale against the Triton kernel above and, where torch takes block scales,
    torch._scaled_mm's blockwise path (cuBLAS); per-tensor _scaled_mm on the same codes for scale
    (the same bytes without the per-block scaling)."""
    g = start_table("gemm_a8w8_blockscale (fp8 e4m3fn, f32 scales per 1x128 of X and 128x128 of W → bf16)",
                    ["M", "N", "K", "wavetile µs", "TFLOP/s", "W TB/s", "Triton µs", "vs Triton",
                     "_scaled_mm blockwise µs", "vs it", "_scaled_mm per-tensor µs", "max err", "Triton max err"])
    for m, n, k in shapes:
        batches = [blockscale_case(m, n, k, g) for _ in range(2 if m * k + n * k > (32 << 20) else 8)]
        x, w, xs, ws = batches[0]
        xd, wd = blockscale_dequantize(x, w, xs, ws)
        ref, magnitude = xd @ wd.t(), xd.abs() @ wd.abs().t()
        out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        err, ok = check("gemm_a8w8_blockscale", ops.gemm_a8w8_blockscale(x, w, xs, ws, out=out), ref, 1e-2, magnitude)
        t_ours = b.graph_time(ops.gemm_a8w8_blockscale, batches)
        err_triton, t_triton = time_peer(f"triton blockscale {m}x{n}x{k}", triton_blockscale_gemm, batches, ref,
                                         magnitude)
        blockwise = [(x, w, xs.t().contiguous().t(), ws.t()) for x, w, xs, ws in batches]
        err_cublas, t_cublas = time_peer(f"_scaled_mm blockwise {m}x{n}x{k}", cublas_blockscale, blockwise, ref,
                                         magnitude)
        if err_cublas > 1e-2:  # a wrong peer is not a time to compare against
            print(f"_scaled_mm blockwise {m}x{n}x{k}: max err {err_cublas:.1e}, time dropped")
            t_cublas = float("nan")
        one = torch.tensor(1.0, device="cuda")
        t_tensor = b.graph_time(lambda x, w, xs, ws: torch._scaled_mm(x, w.t(), scale_a=one, scale_b=one,
                                                                       out_dtype=torch.bfloat16), batches)
        b.results.append({"op": "gemm_a8w8_blockscale", "M": m, "N": n, "K": k, "wavetile_us": t_ours,
                          "triton_us": t_triton, "scaled_mm_blockwise_us": t_cublas,
                          "scaled_mm_per_tensor_us": t_tensor, "max_err": err, "ok": ok,
                          "triton_max_err": err_triton})
        b.report(f"| {m} | {n} | {k} | {t_ours:.2f} | {2 * m * n * k / t_ours / 1e6:.1f} | {n * k / t_ours / 1e6:.2f} | "
                 f"{t_triton:.2f} | {t_triton / t_ours:.2f} | {t_cublas:.2f} | {t_cublas / t_ours:.2f} | "
                 f"{t_tensor:.2f} | {err:.1e}{'' if ok else ' FAIL'} | {err_triton:.1e} |")
        save()
    b.report("")


# e2m1 code → value (bit 3 the sign)
E2M1 = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0]


def mx_case(m, n, k, g):
    """Random MXFP4 operands: packed codes (low nibble first) and e8m0 scales around 2^0."""
    def codes(rows):
        return torch.randint(0, 256, (rows, k // 2), device="cuda", dtype=torch.uint8, generator=g)

    def scales(rows):
        return torch.randint(120, 131, (rows, k // 32), device="cuda", dtype=torch.uint8, generator=g)
    return codes(m), codes(n), scales(m), scales(n)


def mx_dequantize(packed, scales):
    """[R, K/2] codes and [R, K/32] e8m0 scales → [R, K] float32."""
    table = torch.tensor(E2M1, device=packed.device)
    values = torch.stack([table[(packed & 15).long()], table[(packed >> 4).long()]], dim=-1).flatten(1)
    return values * torch.exp2(scales.float() - 127).repeat_interleave(32, dim=1)


@triton.autotune(configs=[triton.Config({"BM": bm, "BN": bn, "BK": bk}, num_stages=s, num_warps=w)
                          for bm, bn, bk, s, w in [(16, 64, 128, 4, 4), (16, 128, 256, 3, 4), (64, 64, 128, 4, 4),
                                                   (128, 128, 128, 3, 8), (128, 256, 128, 3, 8)]],
                 key=["M", "N", "K"])
@triton.jit
def _triton_mx_gemm(x, w, xs, ws, out, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm, pn = tl.program_id(0), tl.program_id(1)
    rows = pm * BM + tl.arange(0, BM)
    cols = pn * BN + tl.arange(0, BN)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k0 in range(0, K, BK):
        kb = k0 // 2 + tl.arange(0, BK // 2)
        ks = k0 // 32 + tl.arange(0, BK // 32)
        a = tl.load(x + rows[:, None] * (K // 2) + kb[None, :], mask=rows[:, None] < M, other=0)
        bt = tl.load(w + cols[None, :] * (K // 2) + kb[:, None], mask=cols[None, :] < N, other=0)
        sa = tl.load(xs + rows[:, None] * (K // 32) + ks[None, :], mask=rows[:, None] < M, other=127)
        sb = tl.load(ws + cols[:, None] * (K // 32) + ks[None, :], mask=cols[:, None] < N, other=127)
        acc = tl.dot_scaled(a, sa, "e2m1", bt, sb, "e2m1", acc)
    tl.store(out + rows[:, None] * N + cols[None, :], acc.to(out.dtype.element_ty),
             mask=(rows[:, None] < M) & (cols[None, :] < N))


def triton_mx_gemm(x, w, xs, ws):
    m, n, k = x.shape[0], w.shape[0], x.shape[1] * 2
    out = torch.empty(m, n, device=x.device, dtype=torch.bfloat16)
    _triton_mx_gemm[lambda meta: (triton.cdiv(m, meta["BM"]), triton.cdiv(n, meta["BN"]))](x, w, xs, ws, out, m, n, k)
    return out


def a4w4_candidates(m):
    """Decode configurations swept for gemm_a4w4 (block_m, block_n, block_k, stages, warps, split_k[, skinny]):
    K steps of 128 and 256 codes (64 and 128 bytes) through a 3-stage ring, and for M <= 8 skinny
    tiles (on NVIDIA exact i8 products, at most 16384 a row; for one row only those)."""
    bm = 16 if m <= 16 else 32 if m <= 32 else 64
    ring = [(bm, bn, bk, 3, 4, split) for bn, bk, split in
            [(64, 128, 1), (64, 256, 1), (64, 256, 4), (128, 256, 1), (32, 256, 2)]]
    rows = 1 << (m - 1).bit_length()
    skinny = [(rows, bn, bk, 1, 4, split, 1) for bn, bk in [(32, 512), (8, 2048), (16, 1024), (4, 2048), (64, 256)]
              for split in (1, 4)] if m <= 8 else []
    return skinny if m == 1 else ring + skinny


def mx_magnitude(x, w, xs, ws):
    """Each output's sum of |products|: what its error is measured against (bf16 rounding and
    f32 summation order stay near 2^-8 of it; random MXFP4 sums cancel so much that an error
    relative to |ref| measures summation order, not correctness)."""
    return mx_dequantize(x, xs).abs() @ mx_dequantize(w, ws).abs().t()


def bench_a4w4(shapes):
    """gemm_a4w4 against Triton's tl.dot_scaled (on sm_90 both dequantize in registers) and,
    for scale, cuBLAS bf16 on operands dequantized beforehand (4x the bytes of W). With
    A4W4_SWEEP=1, decode shapes also time a4w4_candidates (each checked first) and report the best."""
    sweep = os.environ.get("A4W4_SWEEP") == "1"
    g = start_table("gemm_a4w4 (MXFP4 × MXFP4, e8m0 scales per 32 → bf16)",
                    ["M", "N", "K", "wavetile µs", "TFLOP/s", "W TB/s", "Triton dot_scaled µs", "vs Triton",
                     "cuBLAS bf16 µs (pre-dequantized)", "max err", "Triton max err", "best swept", "its µs"])
    for m, n, k in shapes:
        batches = [mx_case(m, n, k, g) for _ in range(2 if (m + n) * k // 2 > (16 << 20) else 8)]
        x, w, xs, ws = batches[0]
        ref, magnitude = mx_dequantize(x, xs) @ mx_dequantize(w, ws).t(), mx_magnitude(x, w, xs, ws)
        out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        err, ok = check("gemm_a4w4", ops.gemm_a4w4(x, w, xs, ws, out=out), ref, 1e-2, magnitude)
        t_ours = b.graph_time(ops.gemm_a4w4, batches)
        best, t_best = None, float("nan")
        for config in a4w4_candidates(m) if sweep and m <= 64 else []:
            out.fill_(float("nan"))
            try:
                ops.gemm_a4w4(x, w, xs, ws, out=out, config=config)
            except ops.OpError as e:
                print(f"gemm_a4w4 {m}x{n}x{k} {config}: {e}")
                continue
            e_config, ok_config = check("gemm_a4w4", out, ref, 1e-2, magnitude)
            if not ok_config:
                print(f"gemm_a4w4 {m}x{n}x{k} {config}: WRONG, max err {e_config:.1e}")
                continue
            t = b.graph_time(lambda *a: ops.gemm_a4w4(*a, config=config), batches)
            if not t >= t_best:
                best, t_best = config, t
        err_triton, t_triton = time_peer(f"triton dot_scaled {m}x{n}x{k}", triton_mx_gemm, batches, ref, magnitude)
        dense = [(mx_dequantize(x, xs).to(torch.bfloat16), mx_dequantize(w, ws).to(torch.bfloat16))
                 for x, w, xs, ws in batches[:2]]
        t_cublas = b.graph_time(lambda a, bw: a @ bw.t(), dense)
        b.results.append({"op": "gemm_a4w4", "M": m, "N": n, "K": k, "wavetile_us": t_ours, "triton_us": t_triton,
                          "cublas_bf16_us": t_cublas, "max_err": err, "ok": ok, "triton_max_err": err_triton,
                          "best_swept": best, "best_swept_us": t_best})
        b.report(f"| {m} | {n} | {k} | {t_ours:.2f} | {2 * m * n * k / t_ours / 1e6:.1f} | "
                 f"{n * k / 2 / t_ours / 1e6:.2f} | {t_triton:.2f} | {t_triton / t_ours:.2f} | {t_cublas:.2f} | "
                 f"{err:.1e}{'' if ok else ' FAIL'} | {err_triton:.1e} | {best} | {t_best:.2f} |")
        save()
    b.report("")


def tune(requests, sets):
    """Tunes each (dtype, set of shapes) into $WAVETILE_TUNED_DIR and reports the winners."""
    tuned_dir = os.environ["WAVETILE_TUNED_DIR"]
    os.makedirs(tuned_dir, exist_ok=True)
    for request in requests:
        dtype, which = request.split(":")
        # A set's name, or shapes MxNxK joined by '+'
        shapes = sets[which] if which in sets else [tuple(int(v) for v in s.split("x")) for s in which.split("+")]
        op, name = {"fp8": ("gemm_a8w8", "f8E4M3FN"), "i8": ("gemm_a8w8", "i8"),
                    "blockscale": ("gemm_a8w8_blockscale", "f8E4M3FN"),
                    "a4w4": ("gemm_a4w4", "f4E2M1FN")}.get(dtype, ("gemm_a16w16", "bf16"))
        b.report(f"## tuned {op} ({name})")
        b.report("")
        b.report("| M | N | K | best | µs (events) | tried | wrong | failed | s | of which compiling s |")
        b.report("|---|---|---|---|---|---|---|---|---|---|")
        for shape in shapes:  # one at a time: the table keeps what a cut-short run finished
            start = time.time()
            r = ops.tune_gemm(op, [shape], dtype=name, table=os.path.join(tuned_dir, op + ".csv"))[0]
            b.report(f"| {r['M']} | {r['N']} | {r['K']} | {r['config']} | {r['us']:.2f} | {r['tried']} | "
                     f"{r['wrong']} | {r['failed']} | {time.time() - start:.0f} | {r['compile_s']:.0f} |")
            save()
            b.failures += r["wrong"] > 0 or r["config"] is None
            if r["first_failure"]:
                print(f"{op} {r['M']}x{r['N']}x{r['K']}: first dropped: {r['first_failure']}")
        b.report("")


RESULT = os.environ.get("RESULT", "gemm_bench")
b.REPORT = os.path.join(b.OUT, RESULT + ".md")  # written as it goes


def save():
    """Writes the measurements so far: a run cut short keeps them."""
    with open(os.path.join(b.OUT, RESULT + ".json"), "w") as f:
        json.dump(b.results, f, indent=1)


def odd_shape_numerics():
    """Shapes with tails in M, N and K (K odd: the unaligned kernels too), bf16, fp8 and
    block-scaled fp8 (both x_scale layouts), the default and a split-K configuration, outputs
    poisoned first."""
    b.report("## odd shapes (numerics only)")
    b.report("")
    g = b.fresh_generator()
    for m, n, k in [(1, 129, 200), (5, 75, 161), (17, 1000, 1100), (130, 75, 4104), (67, 300, 999)]:
        x, w = bf16_case(m, n, k, g)
        for config in (None, (16, 64, 64, 3, 4, 4)):
            out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
            ops.gemm_a16w16(x, w, out=out, config=config)
            err, ok = check("gemm_a16w16", out, x.float() @ w.float().t(), 2e-2)
            b.report(f"gemm_a16w16 {m}x{n}x{k} config {config}: max rel err {err:.1e} {'ok' if ok else 'FAIL'}")
        x8, w8, xs, ws = fp8_case(m, n, k, g)
        out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        ops.gemm_a8w8(x8, w8, xs, ws, out=out)
        err, ok = check("gemm_a8w8", out, (x8.float() @ w8.float().t()) * xs * ws, 2e-2)
        b.report(f"gemm_a8w8 {m}x{n}x{k}: max rel err {err:.1e} {'ok' if ok else 'FAIL'}")
        xb, wb, xsb, wsb = blockscale_case(m, n, k, g)
        xd, wd = blockscale_dequantize(xb, wb, xsb, wsb)
        for layout, scales in (("row-major", xsb), ("K-block-major", xsb.t().contiguous().t())):
            out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
            ops.gemm_a8w8_blockscale(xb, wb, scales, wsb, out=out)
            err, ok = check("gemm_a8w8_blockscale", out, xd @ wd.t(), 1e-2, xd.abs() @ wd.abs().t())
            b.report(f"gemm_a8w8_blockscale {m}x{n}x{k} ({layout} x_scale): max err {err:.1e} {'ok' if ok else 'FAIL'}")
    b.report("")


def main():
    props = torch.cuda.get_device_properties(0)
    b.report(f"# GEMM family on {props.name} ({props.multi_processor_count} SMs)")
    b.report("")
    b.report(f"torch {torch.__version__}, triton {triton.__version__}, tuned tables: "
             f"{os.environ.get('WAVETILE_TUNED_DIR', '(none)')}")
    b.report("")
    decode = [(m, n, k) for n, k in DECODE_NK for m in DECODE_M]
    if os.environ.get("TUNE"):  # first: the ops read their tables once, at their first call
        tune(os.environ["TUNE"].split(","), {"decode": decode, "large": LARGE})
    odd_shape_numerics()
    which = os.environ.get("GEMMS", "bf16,fp8").split(",")
    sets = os.environ.get("SHAPES", "decode,large").split(",")
    shapes = (decode if "decode" in sets else []) + (LARGE if "large" in sets else []) + \
        [tuple(int(v) for v in s.split("x")) for s in sets if s not in ("decode", "large")]
    if "bf16" in which:
        bench_bf16(shapes)
    if "fp8" in which:
        bench_fp8(shapes)
    if "i8" in which:
        bench_int8(shapes)
    if "blockscale" in which:
        bench_blockscale(shapes)
    if "a4w4" in which:
        bench_a4w4(shapes)
    b.report(f"numerics: {checks} checked, {b.failures} failed (tuned shapes with a wrong or no candidate count too)")
    save()
    if b.results:  # a tuning-only run (GEMMS=none) has nothing to plot
        import plot_gemm
        plot_gemm.plot(b.results, os.path.join(b.OUT, RESULT + ".png"),
                       f"{props.name}, CUDA-graph device time")
    return 1 if b.failures else 0


if __name__ == "__main__":
    sys.exit(main())
