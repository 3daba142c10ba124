#!/usr/bin/env python3
"""Python-written Wavetile kernels on an NVIDIA GPU, against torch and Triton, in one process.

1. Numerics: the kernels of examples/python/kernels.py (vector_add, softmax, tiled bf16 GEMM)
   on fresh random CUDA tensors with tails, outputs poisoned, checked against torch.
2. Warm launch overhead (Python call -> enqueued, no synchronization in the timed loop) of
   a Wavetile no-op kernel, torch.add on 1-element tensors, and a Triton no-op kernel.
3. Cold compile time of the GEMM (fresh caches) against Triton's cold compile of the same
   tiled GEMM; then Wavetile's GEMM again in a new process, from the disk cache.

Run by bench/h200/python.sh; writes a markdown report to $OUT (or stdout).
"""
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

cache = tempfile.mkdtemp(prefix="wavetile-cache-")
triton_cache = tempfile.mkdtemp(prefix="triton-cache-")
os.environ["WAVETILE_CACHE_DIR"] = cache
os.environ["TRITON_CACHE_DIR"] = triton_cache

import torch  # noqa: E402

import kernels  # noqa: E402  (examples/python/kernels.py)
import wavetile as wt  # noqa: E402

lines = []
failures = checks = 0


def report(text=""):
    lines.append(text)
    print(text, flush=True)


def check(name, ok, detail):
    global failures, checks
    failures += not ok
    checks += 1
    report(f"| {name} | {detail} | {'PASS' if ok else 'FAIL'} |")


@wt.kernel
def wavetile_noop(x: wt.pointer[wt.f32]):
    pass


def numerics():
    report("")
    report(f"## Numerics (Wavetile target {wt.jit._gpu(torch.cuda.current_device()).device.target})")
    report("")
    report("| kernel | result | status |")
    report("|---|---|---|")
    g = torch.Generator(device="cuda").manual_seed(int.from_bytes(os.urandom(4), "little"))
    n = 1_000_003
    x, y = torch.randn(n, device="cuda", generator=g), torch.randn(n, device="cuda", generator=g)
    out = torch.full((n + 7,), float("nan"), device="cuda")
    kernels.vector_add[(wt.cdiv(n, kernels.ADD_BLOCK),)](x, y, out, n)
    torch.cuda.synchronize()
    exact = torch.equal(out[:n], x + y) and bool(out[n:].isnan().all())
    check("vector_add", exact, f"n={n}: {'bit-exact vs x + y' if exact else 'differs'}, guards untouched")

    # Views 4 bytes past 16-byte boundaries, and n a multiple of 16 on aligned tensors: each is
    # its own specialization (run-time alignment checks kept, or dropped).
    base = [torch.randn(n + 8, device="cuda", generator=g) for _ in range(3)]
    xs, ys, outs = (b[1:n + 1] for b in base)
    outs.fill_(float("nan"))
    kernels.vector_add[(wt.cdiv(n, kernels.ADD_BLOCK),)](xs, ys, outs, n)
    m16 = (n // 16) * 16
    out16 = torch.full((m16,), float("nan"), device="cuda")
    kernels.vector_add[(wt.cdiv(m16, kernels.ADD_BLOCK),)](x[:m16], y[:m16], out16, m16)
    torch.cuda.synchronize()
    ok = torch.equal(outs, xs + ys) and torch.equal(out16, x[:m16] + y[:m16])
    check("vector_add misaligned / aligned+divisible", ok,
          f"views at +4 bytes (n={n}) and 16-aligned n={m16}: bit-exact")

    rows, cols, stride = 37, 3001, 3008
    sx = torch.randn(rows, stride, device="cuda", generator=g) * 4
    so = torch.full((rows, stride), float("nan"), device="cuda")
    kernels.softmax[(rows,)](sx, so, cols, stride)
    torch.cuda.synchronize()
    ref = torch.softmax(sx[:, :cols].double(), dim=1)
    err = float(((so[:, :cols].double() - ref).abs() / ref.abs().clamp(min=1e-30)).max())
    check("softmax", err < 2e-5 and bool(so[:, cols:].isnan().all()), f"{rows}x{cols}: max rel err {err:.2e} (limit 2e-5)")

    m, n_, k = 130, 75, 161
    lda, ldb, ldc = k + 1, n_ + 2, n_ + 3
    a = torch.randn(m, lda, device="cuda", generator=g).to(torch.bfloat16)
    b = torch.randn(k, ldb, device="cuda", generator=g).to(torch.bfloat16)
    c = torch.full((m, ldc), float("nan"), device="cuda")
    kernels.gemm[(wt.cdiv(m, kernels.TILE_M), wt.cdiv(n_, kernels.TILE_N))](a, b, c, m, n_, k, lda, ldb, ldc)
    torch.cuda.synchronize()
    af, bf = a[:, :k].double(), b[:, :n_].double()
    bound = (af.abs() @ bf.abs()) * k * torch.finfo(torch.float32).eps
    worst = float(((c[:, :n_].double() - af @ bf).abs() / bound).max())
    check("gemm", worst <= 1 and bool(c[:, n_:].isnan().all()),
          f"{m}x{n_}x{k} bf16: max error {worst:.3f} of the f32 summation bound (limit 1)")


def graph_capture():
    """A launch captured into a CUDA graph replays with the tensors' new contents: the launch
    path neither synchronizes nor allocates."""
    n = 70_001
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    out = torch.full((n,), float("nan"), device="cuda")
    grid = (wt.cdiv(n, kernels.ADD_BLOCK),)
    kernels.vector_add[grid](x, y, out, n)  # specialize and load outside the capture
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.stream(stream):
        with torch.cuda.graph(graph, stream=stream):
            kernels.vector_add[grid](x, y, out, n)
    torch.cuda.current_stream().wait_stream(stream)
    ok = True
    for _ in range(3):
        x.copy_(torch.randn(n, device="cuda"))
        y.copy_(torch.randn(n, device="cuda"))
        out.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        ok &= torch.equal(out, x + y)
    check("vector_add in a CUDA graph", ok, "captured once, replayed 3 times on new inputs: bit-exact each time")


def multi_gpu():
    """Kernels run on torch's current device; tensors elsewhere are an error naming both."""
    if torch.cuda.device_count() < 2:
        report("\n(one GPU: no multi-GPU check)")
        return
    n = 100_003
    ok = True
    for device in (1, 0, 1):
        with torch.cuda.device(device):
            x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
            for _ in range(2):  # the second launch takes the fast path
                out = torch.full((n,), float("nan"), device="cuda")
                kernels.vector_add[(wt.cdiv(n, kernels.ADD_BLOCK),)](x, y, out, n)
                torch.cuda.synchronize()
                ok &= torch.equal(out, x + y)
    check("vector_add on cuda:1, cuda:0, cuda:1", ok, "each under torch.cuda.device(i): bit-exact")
    x1 = torch.randn(n, device="cuda:1")
    try:
        with torch.cuda.device(0):
            kernels.vector_add[(wt.cdiv(n, kernels.ADD_BLOCK),)](x1, x1, torch.empty_like(x1), n + 16)
        refused = "no error"
    except wt.LaunchError as error:
        refused = str(error)
    check("tensors on another device", "current device is cuda:0" in refused, refused)


def per_call_us(fn, calls=5000, rounds=5):
    """Median over rounds of the CPU time per call, launches only (the queue drains between rounds)."""
    for _ in range(200):
        fn()
    results = []
    for _ in range(rounds):
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        results.append((time.perf_counter() - start) / calls * 1e6)
    torch.cuda.synchronize()
    return statistics.median(results)


def launch_overhead():
    x = torch.zeros(1, device="cuda")
    a, b, o = torch.ones(1, device="cuda"), torch.ones(1, device="cuda"), torch.empty(1, device="cuda")
    cases = [("wavetile no-op kernel", lambda: wavetile_noop[(1,)](x)),
             ("torch.add (1 element, out=)", lambda: torch.add(a, b, out=o))]
    try:
        import triton
        import triton.language as tl

        @triton.jit
        def triton_noop(x_ptr):
            pass

        cases.append((f"triton no-op kernel (triton {triton.__version__})", lambda: triton_noop[(1,)](x)))
    except ImportError:
        triton = None
    report("")
    report("## Warm launch overhead (Python call -> enqueued), median of 5 x 5000 calls")
    report("")
    report("| launch | us per call |")
    report("|---|---|")
    times = {}
    for name, fn in cases:
        times[name] = per_call_us(fn)
        report(f"| {name} | {times[name]:.2f} |")
    triton_name = next((n for n in times if n.startswith("triton")), None)
    if triton_name:
        ratio = times["wavetile no-op kernel"] / times[triton_name]
        report(f"\nwavetile / triton launch overhead: {ratio:.2f} (target <= 0.5)")


def cold_compile():
    report("")
    report("## Cold compile of the tiled GEMM (64x64x32 tiles, bf16 in, f32 out), fresh caches")
    report("")
    report("| compiler | first call (build + compile + load + launch) ms | of which compile ms |")
    report("|---|---|---|")
    m = n = k = 512
    # A kernel object of its own, run first in the process: nothing is cached yet.
    cold = wt.kernel(num_warps=4, num_stages=3)(kernels.gemm.function.fn)
    a = torch.randn(m, k, device="cuda").to(torch.bfloat16)
    b = torch.randn(k, n, device="cuda").to(torch.bfloat16)
    c = torch.empty(m, n, device="cuda")
    grid = (wt.cdiv(m, 64), wt.cdiv(n, 64))
    torch.cuda.synchronize()
    start = time.perf_counter()
    cold[grid](a, b, c, m, n, k, k, n, n)
    torch.cuda.synchronize()
    ours = (time.perf_counter() - start) * 1e3
    source, seconds = cold.last_compile
    report(f"| wavetile ({source}) | {ours:.1f} | {seconds * 1e3:.1f} |")
    ok = torch.allclose(c, (a.float() @ b.float()), rtol=1e-3, atol=1e-2)
    check_line = f"gemm {m}^3 after the cold compile matches torch: {ok}"
    try:
        import triton
        import triton.language as tl

        @triton.jit
        def triton_gemm(a, b, c, M, N, K, lda, ldb, ldc, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
            rm = tl.program_id(0) * BM + tl.arange(0, BM)
            rn = tl.program_id(1) * BN + tl.arange(0, BN)
            rk = tl.arange(0, BK)
            acc = tl.zeros((BM, BN), tl.float32)
            for k0 in range(0, K, BK):
                ks = k0 + rk
                at = tl.load(a + rm[:, None] * lda + ks[None, :], mask=(rm[:, None] < M) & (ks[None, :] < K), other=0.0)
                bt = tl.load(b + ks[:, None] * ldb + rn[None, :], mask=(ks[:, None] < K) & (rn[None, :] < N), other=0.0)
                acc = tl.dot(at, bt, acc)
            tl.store(c + rm[:, None] * ldc + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))

        tc = torch.empty(m, n, device="cuda")
        torch.cuda.synchronize()
        start = time.perf_counter()
        triton_gemm[grid](a, b, tc, m, n, k, k, n, n, BM=64, BN=64, BK=32, num_warps=4, num_stages=3)
        torch.cuda.synchronize()
        theirs = (time.perf_counter() - start) * 1e3
        report(f"| triton {triton.__version__} | {theirs:.1f} | - |")
        report(f"\nwavetile / triton cold first call: {ours / theirs:.2f} (target <= 0.5)")
    except ImportError:
        report("| triton | not installed | - |")
    report(f"\n{check_line}")
    # A second process finds the code object on disk: no LLVM code generation.
    code = ("import time, torch, kernels, wavetile as wt\n"
            "a = torch.randn(512, 512, device='cuda').to(torch.bfloat16); c = torch.empty(512, 512, device='cuda')\n"
            "torch.cuda.synchronize(); t = time.perf_counter()\n"
            "kernels.gemm[(8, 8)](a, a, c, 512, 512, 512, 512, 512, 512); torch.cuda.synchronize()\n"
            "print(kernels.gemm.last_compile[0], (time.perf_counter() - t) * 1e3, kernels.gemm.last_compile[1] * 1e3)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=os.environ)
    if result.returncode:
        report(f"\nsecond process failed: {result.stderr.strip()[-500:]}")
    else:
        source, first_call, compile_ms = result.stdout.split()
        report(f"\nsecond process: gemm from the {source} cache, first call {float(first_call):.1f} ms, "
               f"of which {float(compile_ms):.2f} ms getting the code object")


def main():
    device = torch.cuda.get_device_name()
    report(f"# Python-written Wavetile kernels on {device}")
    report("")
    report(f"torch {torch.__version__}, Python {sys.version.split()[0]}")
    report("")
    cold_compile()
    numerics()
    graph_capture()
    multi_gpu()
    launch_overhead()
    report(f"\n{checks - failures} passed, {failures} failed")
    out = os.environ.get("OUT")
    if out:
        open(os.path.join(out, "python_gpu.md"), "w").write("\n".join(lines) + "\n")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
