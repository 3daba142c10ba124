#!/usr/bin/env python3
"""The Python half of the demo (scripts/run-demo.sh): kernels written with @wavetile.kernel

1. build the same IR as their C++ twins,
2. run on the host JIT against numpy on fresh random inputs with tails, outputs poisoned,
3. compile for every GPU target through the kernel cache (a second request is a cache hit),
4. and, where torch sees a CUDA device, run there against torch.

Ends with "N passed, N failed".
"""
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

import wavetile as wt

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernels  # noqa: E402

WAVETILE = os.path.join(os.path.dirname(wt.__file__), "..", "..", "bin", "wavetile")
results = []


def record(what, ok, detail):
    results.append(ok)
    print(f"{what:<34} {'PASS' if ok else 'FAIL'}  {detail}")


def same_ir():
    for name, within in (("vector_add", (True, True, True)), ("softmax", (True, True)), ("gemm", (False, False, True))):
        text = subprocess.run([WAVETILE, "compile", "--example", name, "--emit", "tile"], check=True,
                              capture_output=True, text=True).stdout
        cpp = wt.Module.parse(text, name)
        python = getattr(kernels, name).module(within_2gib=within)
        record(f"{name}: Python IR == C++ IR", python.canonical_str() == cpp.canonical_str(),
               "same operations (each block in canonical order)")


def on_host(rng):
    n = 100_003
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    out = np.full(n + 4, np.nan, np.float32)
    kernels.vector_add[(wt.cdiv(n, kernels.ADD_BLOCK),)](x, y, out, n)
    record("vector_add host", bool(np.array_equal(out[:n], x + y) and np.isnan(out[n:]).all()),
           f"n={n}, bit-exact, guards untouched")

    rows, cols, stride = 7, 2999, 3000
    sx = rng.standard_normal((rows, stride)).astype(np.float32) * 3
    so = np.full((rows, stride), np.nan, np.float32)
    kernels.softmax[(rows,)](sx, so, cols, stride)
    ref = np.exp(sx[:, :cols] - sx[:, :cols].max(axis=1, keepdims=True))
    ref /= ref.sum(axis=1, keepdims=True)
    err = float(np.abs(so[:, :cols] - ref).max() / ref.max())
    record("softmax host", err < 2e-5 and bool(np.isnan(so[:, cols:]).all()), f"{rows}x{cols}, max error {err:.1e}")

    m, n_, k = 67, 45, 97
    a = wt.host.to_bf16(rng.standard_normal((m, k)).astype(np.float32))
    b = wt.host.to_bf16(rng.standard_normal((k, n_)).astype(np.float32))
    c = np.full((m, n_), np.nan, np.float32)
    kernels.gemm[(wt.cdiv(m, kernels.TILE_M), wt.cdiv(n_, kernels.TILE_N))](a, b, c, m, n_, k, k, n_, n_)
    af, bf = wt.host.from_bf16(a).astype(np.float64), wt.host.from_bf16(b).astype(np.float64)
    bound = np.abs(af) @ np.abs(bf) * k * np.finfo(np.float32).eps
    worst = float((np.abs(c - af @ bf) / bound).max())
    record("gemm host (bf16 in, f32 out)", worst <= 1, f"{m}x{n_}x{k}, error {worst:.3f} of the f32 bound")

    rows, n = 4, 33
    x = rng.uniform(0.5, 1.0, (rows, n)).astype(np.float32)
    out = np.full((rows, n), np.nan, np.float32)
    kernels.double_until[(rows,)](x, out, n, 20.0, BLOCK=64)
    record("double_until host (while loop)", bool(np.array_equal(out, kernels.double_until_reference(x, 20.0))),
           f"{rows} rows")


def for_gpus():
    with tempfile.TemporaryDirectory() as cache:
        os.environ["WAVETILE_CACHE_DIR"] = cache
        module = kernels.gemm.module(within_2gib=(True, True, True))
        for target in ("gfx942", "gfx950", "sm_90"):
            jit = wt._wavetile.Jit(target)
            _, manifest, first, first_s = jit.compile(module)
            again = wt._wavetile.Jit(target)  # as another process would: memory empty, disk warm
            _, _, second, second_s = again.compile(module)
            record(f"gemm {target} via the kernel cache", first == "compiled" and second == "disk",
                   f"{first} in {first_s * 1e3:.0f} ms, then {second} in {second_s * 1e3:.2f} ms")


def on_gpu(rng):
    try:
        import torch
    except ImportError:
        print("(torch is not installed: no GPU runs)")
        return
    if not torch.cuda.is_available():
        print("(no CUDA device: no GPU runs)")
        return
    n = 1_000_003
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    out = torch.full((n,), float("nan"), device="cuda")
    kernels.vector_add[(wt.cdiv(n, kernels.ADD_BLOCK),)](x, y, out, n)
    torch.cuda.synchronize()
    record("vector_add GPU", torch.equal(out, x + y), f"n={n} on {torch.cuda.get_device_name()}")


def main():
    seed = int.from_bytes(os.urandom(4), "little")
    print(f"Wavetile Python demo (seed {seed})\n")
    rng = np.random.default_rng(seed)
    start = time.perf_counter()
    same_ir()
    on_host(rng)
    for_gpus()
    on_gpu(rng)
    failed = results.count(False)
    print(f"\n{len(results) - failed} passed, {failed} failed ({time.perf_counter() - start:.1f} s)")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
