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
import triton.language as tl  # noqa: E402

import wavetile  # noqa: E402

ops = wavetile.ops
OUT = os.environ.get("OUT", ".")
L2_BYTES = 60 << 20  # H200: 50 MiB of L2; rotate through more than that
MS = [1, 32, 256, 4096, 32768]
NS = [4096, 7168, 8192, 16384]
EPS = 1e-6
lines, results, failures = [], [], 0


def report(text=""):
    lines.append(text)
    print(text, flush=True)


@triton.jit
def _triton_rmsnorm(x, w, out, stride, n, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    v = tl.load(x + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    inv = tl.rsqrt(tl.sum(v * v, axis=0) / n + eps)
    wv = tl.load(w + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(out + row * stride + cols, (v * inv * wv).to(out.dtype.element_ty), mask=mask)


def triton_rmsnorm(x, w, eps):
    out = torch.empty_like(x)
    m, n = x.shape
    block = triton.next_power_of_2(n)
    _triton_rmsnorm[(m,)](x, w, out, x.stride(0), n, eps, BLOCK=block, num_warps=min(max(block // 512, 1), 16))
    return out


def torch_rmsnorm(x, w, eps):
    return torch.nn.functional.rms_norm(x, (x.shape[1],), w, eps)


compiled_rmsnorm = torch.compile(torch_rmsnorm, dynamic=False)


def reference(x, w, eps):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(1, keepdim=True) + eps) * w.float()).to(x.dtype)


def graph_time(fn, batches, calls=20, reps=15):
    """Median microseconds per call of `fn(inputs)` replayed in a CUDA graph over rotating inputs."""
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        for inputs in batches[:2]:
            fn(*inputs)  # warm up (compiles, autotunes) outside the graph
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        for i in range(calls):
            fn(*batches[i % len(batches)])
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


def bench_rmsnorm():
    global failures
    report("## rmsnorm2d_fwd, bf16")
    report("")
    report("Device time per call in µs (CUDA-graph replay, median); bandwidth = (read x + write out) / time; "
           "ratio = peer time / Wavetile time (> 1: Wavetile faster).")
    report("")
    report("| M | N | copy µs | wavetile µs | TB/s | % copy | torch µs | compile µs | triton µs | "
           "vs torch | vs compile | vs triton | max err (ulp) |")
    report("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    g = torch.Generator(device="cuda").manual_seed(int.from_bytes(os.urandom(4), "little"))
    impls = {
        "wavetile": lambda x, w: ops.rmsnorm2d_fwd(x, w, EPS),
        "torch": lambda x, w: torch_rmsnorm(x, w, EPS),
        "compile": lambda x, w: compiled_rmsnorm(x, w, EPS),
        "triton": lambda x, w: triton_rmsnorm(x, w, EPS),
    }
    for n in NS:
        for m in MS:
            nbytes = m * n * 2
            copies = max(2, min(64, L2_BYTES // max(nbytes, 1) + 1))
            batches = [(torch.randn(m, n, device="cuda", dtype=torch.bfloat16, generator=g),
                        torch.rand(n, device="cuda", dtype=torch.bfloat16, generator=g) + 0.5)
                       for _ in range(copies)]
            x, w = batches[0]
            ref = reference(x, w, EPS)
            got = ops.rmsnorm2d_fwd(x, w, EPS)
            torch.cuda.synchronize()
            ulp = torch.finfo(torch.bfloat16).eps * torch.clamp(ref.float().abs(), min=1.0)
            err = ((got.float() - ref.float()).abs() / ulp).max().item()
            ok = err <= 1.0 and not got.isnan().any().item()
            failures += not ok
            outs = [torch.empty_like(b[0]) for b in batches]
            copy_batches = [(b[0], o) for b, o in zip(batches, outs)]
            copy_us = graph_time(lambda a, o: o.copy_(a), copy_batches)
            times = {}
            for name in impls:  # interleaved: each shape measures every implementation in turn
                times[name] = graph_time(impls[name], batches)
            tbs = 2 * nbytes / (times["wavetile"] * 1e-6) / 1e12
            row = {"op": "rmsnorm2d_fwd", "M": m, "N": n, "copy_us": copy_us, **{f"{k}_us": v for k, v in times.items()},
                   "wavetile_TBps": tbs, "max_err_ulp": err, "ok": ok}
            results.append(row)
            report(f"| {m} | {n} | {copy_us:.2f} | {times['wavetile']:.2f} | {tbs:.2f} | "
                   f"{100 * copy_us / times['wavetile']:.0f}% | {times['torch']:.2f} | {times['compile']:.2f} | "
                   f"{times['triton']:.2f} | {times['torch'] / times['wavetile']:.2f} | "
                   f"{times['compile'] / times['wavetile']:.2f} | {times['triton'] / times['wavetile']:.2f} | "
                   f"{err:.2f}{'' if ok else ' FAIL'} |")
            del batches, outs, copy_batches
    report("")
    report("Python call overhead, M=1 N=4096 (µs per eager call, back to back):")
    x = torch.randn(1, 4096, device="cuda", dtype=torch.bfloat16)
    w = torch.ones(4096, device="cuda", dtype=torch.bfloat16)
    overhead = {name: call_overhead(fn, (x, w)) for name, fn in impls.items()}
    report(", ".join(f"{k} {v:.1f}" for k, v in overhead.items()))
    results.append({"op": "rmsnorm2d_fwd", "call_overhead_us": overhead})


def main():
    props = torch.cuda.get_device_properties(0)
    report(f"# wavetile.ops on {props.name}")
    report("")
    report(f"torch {torch.__version__}, triton {triton.__version__}, Wavetile target "
           f"{wavetile.jit._gpu(torch.cuda.current_device()).device.target}")
    report("")
    bench_rmsnorm()
    report("")
    report(f"numerics: {len([r for r in results if 'ok' in r]) - failures} passed, {failures} failed")
    with open(os.path.join(OUT, "ops_bench.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(OUT, "ops_bench.json"), "w") as f:
        json.dump(results, f, indent=1)
    try:
        plot()
    except ImportError as e:
        report(f"(no plot: {e})")
    return 1 if failures else 0


def plot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rows = [r for r in results if "ok" in r]
    fig, axes = plt.subplots(1, len(NS), figsize=(4 * len(NS), 3.5), sharey=True)
    for ax, n in zip(axes, NS):
        sub = [r for r in rows if r["N"] == n]
        for name in ["wavetile", "torch", "compile", "triton", "copy"]:
            ax.plot([r["M"] for r in sub], [2 * r["M"] * n * 2 / (r[f"{name}_us"] * 1e-6) / 1e12 for r in sub],
                    marker="o", label=name)
        ax.set_xscale("log")
        ax.set_title(f"rmsnorm bf16, N={n}")
        ax.set_xlabel("M")
    axes[0].set_ylabel("TB/s (read + write)")
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(os.path.join(OUT, "ops_bench_rmsnorm.png"), dpi=110)


if __name__ == "__main__":
    sys.exit(main())
