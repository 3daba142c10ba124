#!/usr/bin/env python3
"""Runs Wavetile's example kernels for an NVIDIA target (sm_90a or sm_90) on the GPU and compares
them with the host (or, for plans saved with `wavetile run --target T --emulate --save`, with the
emulator's outputs).

Inputs (made on the build machine by bench/h200/prepare.sh):
  DIR/<kernel>.ptx, .manifest  PTX and launch manifest from `wavetile compile --example <name>
                               --target T --emit ptx --manifest ...`
  DIR/<kernel>.json + *.bin    launch plans from `wavetile run <name> --save DIR`: every buffer
                               as it was before the run, and *.host.bin with the host JIT's outputs
  RUNTIME                      libwavetile_runtime.so, built here from runtime/ (no LLVM needed):
                               it loads the PTX, checks every launch against the manifest and
                               launches through the CUDA driver it opens with dlopen

Each kernel runs on the same initial buffers as the host (outputs poisoned, guard elements set).
Each element the host wrote must match it within the plan's tolerance (|gpu - host| <= atol +
rtol*|host|; 0/0 means bit-exact); each element the host left alone must stay bit-identical.
With --bench it also times the memory-bound kernels against torch eager and the GEMMs
against cuBLAS (torch.matmul) in the same process.
Writes a markdown report to $OUT (or stdout) and exits non-zero on any mismatch.
"""
import ctypes
import json
import os
import sys

import torch

DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16, "i32": torch.int32, "i8": torch.int8,
          "f8E4M3FN": torch.float8_e4m3fn}


class Value(ctypes.Union):
    _fields_ = [("pointer", ctypes.c_void_p), ("i32", ctypes.c_int32), ("i64", ctypes.c_int64),
                ("f32", ctypes.c_float), ("f64", ctypes.c_double)]


class Arg(ctypes.Structure):  # wt_arg (runtime/include/wavetile/runtime/wavetile_runtime.h)
    _fields_ = [("kind", ctypes.c_int32), ("value", Value), ("extent_bytes", ctypes.c_uint64)]


def ptr(tensor):
    arg = Arg(kind=0, extent_bytes=tensor.numel() * tensor.element_size())
    arg.value.pointer = tensor.data_ptr()
    return arg


def i32(v):
    arg = Arg(kind=1)
    arg.value.i32 = int(v)
    return arg


def f32(v):
    arg = Arg(kind=3)
    arg.value.f32 = float(v)
    return arg


class Driver:
    """The Wavetile runtime's C API, on the device torch uses."""

    def __init__(self, runtime):
        torch.cuda.init()
        torch.zeros(1, device="cuda")  # the primary context, which the runtime retains too
        self.lib = ctypes.CDLL(runtime)
        self.lib.wt_last_error.restype = ctypes.c_char_p
        self.lib.wt_device_open.restype = ctypes.c_void_p
        self.lib.wt_device_target.restype = ctypes.c_char_p
        self.lib.wt_device_target.argtypes = [ctypes.c_void_p]
        self.lib.wt_module_load.restype = ctypes.c_void_p
        self.lib.wt_module_load.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p]
        self.lib.wt_module_kernel.restype = ctypes.c_void_p
        self.lib.wt_module_kernel.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
        self.lib.wt_kernel_launch.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint32,
                                              ctypes.POINTER(Arg), ctypes.c_size_t, ctypes.c_void_p]
        self.device = self.lib.wt_device_open(1, torch.cuda.current_device())  # WT_BACKEND_CUDA
        if not self.device:
            raise RuntimeError(self.lib.wt_last_error().decode())
        self.target = self.lib.wt_device_target(self.device).decode()
        self.modules = []

    def load(self, directory, kernel):
        image = open(os.path.join(directory, kernel + ".ptx"), "rb").read()
        manifest = open(os.path.join(directory, kernel + ".manifest"), "rb").read()
        module = self.lib.wt_module_load(self.device, image, len(image), manifest)
        if not module:
            raise RuntimeError(f"{kernel}: {self.lib.wt_last_error().decode()}")
        self.modules.append(module)
        function = self.lib.wt_module_kernel(module, kernel.encode())
        if not function:
            raise RuntimeError(f"{kernel}: {self.lib.wt_last_error().decode()}")
        return function

    def prepare(self, function, grid, args):
        """A callable that enqueues the kernel on torch's current stream with these arguments."""
        array = (Arg * len(args))(*args)
        stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)

        def launch():
            if self.lib.wt_kernel_launch(function, *grid, array, len(args), stream) != 0:
                raise RuntimeError(self.lib.wt_last_error().decode())
        return launch


def run_plan(driver, directory, plan):
    kernel = plan["kernel"]
    function = driver.load(directory, kernel)
    values, outputs, buffers = [], [], []  # `buffers` keeps every device tensor alive for the launch
    for arg in plan["args"]:
        if arg["kind"] == "pointer":
            initial = load_buffer(directory, arg["file"], arg["type"])
            device = initial.clone().cuda()  # outputs start as on the host: poisoned, guards set
            buffers.append(device)
            if "host" in arg:
                outputs.append((arg["name"], initial, load_buffer(directory, arg["host"], arg["type"]), device))
            values.append(ptr(device))
        elif arg["kind"] == "i32":
            values.append(i32(arg["value"]))
        elif arg["kind"] == "f32":
            values.append(f32(arg["value"]))
        else:
            raise RuntimeError(f"{kernel}: unsupported argument kind {arg['kind']}")
    driver.prepare(function, plan["grid"], values)()
    torch.cuda.synchronize()

    rows, passed = [], True
    for name, initial, host, device in outputs:
        gpu = device.cpu()
        # Elements the host left as they were must be bit-identical (nothing stray written);
        # the rest within the plan's tolerance of the host's values.
        bits = lambda t: t.view(torch.uint8).view(-1, t.element_size())
        untouched = (bits(host) == bits(initial)).all(dim=1)
        stray = int((bits(gpu)[untouched] != bits(initial)[untouched]).any(dim=1).sum())
        h, g = host.double()[~untouched], gpu.double()[~untouched]
        diff = (g - h).abs()
        allowed = plan["atol"] + plan["rtol"] * h.abs()
        bad = ~(diff <= allowed)  # NaN differences count as bad
        worst = float(diff.max()) if diff.numel() else 0.0
        exact = int((diff == 0).sum())
        ok = stray == 0 and not bool(bad.any())
        ref = plan.get("reference", "host")
        text = (f"max |gpu - {ref}| {worst:.3g}, {exact}/{diff.numel()} bit-exact, {int(bad.sum())} out of tolerance, "
                f"{stray} stray writes (rtol {plan['rtol']:g}, atol {plan['atol']:g})")
        if bad.any():
            i = int(bad.nonzero()[0])
            text += f"; first: gpu {float(g[i])} {ref} {float(h[i])}"
        rows.append((name, text, ok))
        passed &= ok
    return rows, passed


def load_buffer(directory, file, dtype):
    raw = open(os.path.join(directory, file), "rb").read()
    return torch.frombuffer(bytearray(raw), dtype=DTYPES[dtype])


def bench_memory_bound(driver, directory, lines):
    """Times the memory-bound kernels against torch in one process, interleaved.

    Bytes moved over the median of 7 timing loops (CUDA events, 20 launches each, inputs
    of hundreds of MB so the 50 MB L2 cannot hold them)."""
    def kernel(name):
        return driver.load(directory, name)

    def median_ms(fn, loops=7, reps=20):
        times = []
        for _ in range(loops):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(reps):
                fn()
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end) / reps)
        return sorted(times)[len(times) // 2]

    launch = driver.prepare
    cases = []
    n = 1 << 26  # vector_add: 3 x 256 MB
    x, y, out = (torch.randn(n, device="cuda") for _ in range(3))
    f = kernel("vector_add")
    cases.append(("vector_add", f"N={n} f32", 3 * n * 4,
                  launch(f, ((n + 1023) // 1024, 1, 1), [ptr(x), ptr(y), ptr(out), i32(n)]),
                  lambda: torch.add(x, y, out=out)))
    rows, cols = 8192, 8192  # softmax: read + write 256 MB each
    sx, so = torch.randn(rows, cols, device="cuda"), torch.empty(rows, cols, device="cuda")
    fs = kernel("softmax")
    cases.append(("softmax", f"{rows}x{cols} f32", 2 * rows * cols * 4,
                  launch(fs, (rows, 1, 1), [ptr(sx), ptr(so), i32(cols), i32(cols)]),
                  lambda: torch.softmax(sx, dim=1)))
    hx = torch.randn(rows, cols, device="cuda", dtype=torch.bfloat16)
    hw = torch.rand(cols, device="cuda", dtype=torch.bfloat16) + 0.5
    ho = torch.empty_like(hx)
    fr = kernel("rmsnorm")
    cases.append(("rmsnorm", f"{rows}x{cols} bf16", 2 * rows * cols * 2,
                  launch(fr, (rows, 1, 1), [ptr(hx), i32(rows), i32(cols), i32(cols), ptr(hw), i32(cols),
                                            ptr(ho), i32(rows), i32(cols), i32(cols), f32(1e-6)]),
                  lambda: torch.nn.functional.rms_norm(hx, (cols,), hw, 1e-6)))
    if os.path.exists(os.path.join(directory, "cumsum.ptx")):
        cx = torch.randint(-1000, 1000, (rows, cols), device="cuda", dtype=torch.int32)
        co, to = torch.empty_like(cx), torch.empty_like(cx)
        fc = kernel("cumsum")
        ours = launch(fc, (rows, 1, 1), [ptr(cx), ptr(co), i32(cols), i32(cols)])
        theirs = lambda: torch.cumsum(cx, dim=1, dtype=torch.int32, out=to)
        ours(); theirs(); torch.cuda.synchronize()
        if not torch.equal(co, to):  # exact in any order: i32 sums
            raise RuntimeError(f"cumsum at {rows}x{cols}: {int((co != to).sum())} elements differ from torch.cumsum")
        cases.append(("cumsum", f"{rows}x{cols} i32", 2 * rows * cols * 4, ours, theirs))
    lines += ["", "## Memory-bound kernels vs torch eager (same process, interleaved, median of 7)", "",
              "| kernel | shape | wavetile ms | GB/s | torch ms | GB/s | wavetile/torch time |", "|---|---|---|---|---|---|---|"]
    for name, shape, nbytes, ours, theirs in cases:
        a, b = interleaved_ms(median_ms, ours, theirs)
        lines.append(f"| {name} | {shape} | {a:.3f} | {nbytes / a / 1e6:.0f} | {b:.3f} | {nbytes / b / 1e6:.0f} | {a / b:.2f} |")

    # GEMM: bf16 inputs, f32 output. torch.matmul (cuBLAS) writes bf16, so it moves less
    # memory; at this size both are compute-bound and the FLOP rate is what compares.
    m = n_ = k = 4096
    ga, gb = torch.randn(m, k, device="cuda", dtype=torch.bfloat16), torch.randn(k, n_, device="cuda", dtype=torch.bfloat16)
    gc = torch.empty(m, n_, device="cuda")
    reference = torch.matmul(ga.float(), gb.float())
    lines += ["", f"## GEMM {m}x{n_}x{k}, bf16 in, f32 accumulate (same process, interleaved, median of 7)", "",
              "| kernel | wavetile ms | TFLOP/s | cuBLAS (torch.matmul, bf16 out) ms | TFLOP/s | wavetile/cuBLAS time | max rel. error |",
              "|---|---|---|---|---|---|---|"]
    flops = 2 * m * n_ * k
    for name, tile in (("gemm", 64), ("gemm_pipelined", 64), ("gemm_large", 128)):
        if not os.path.exists(os.path.join(directory, name + ".ptx")):
            continue
        fg = kernel(name)
        ours = launch(fg, ((m + tile - 1) // tile, (n_ + tile - 1) // tile, 1),
                      [ptr(ga), ptr(gb), ptr(gc), i32(m), i32(n_), i32(k), i32(k), i32(n_), i32(n_)])
        gc.fill_(float("nan"))
        ours(); torch.cuda.synchronize()
        error = float(((gc - reference).abs() / reference.abs().clamp(min=1.0)).max())
        a, b = interleaved_ms(median_ms, ours, lambda: torch.matmul(ga, gb))
        lines.append(f"| {name} | {a:.3f} | {flops / a / 1e9:.0f} | {b:.3f} | {flops / b / 1e9:.0f} | {a / b:.2f} | {error:.2g} |")

    # fp8 e4m3 GEMM C = A W^T, f32 accumulate, W [N, K] (K contiguous, AITER's weight layout).
    # torch._scaled_mm (cuBLASLt) takes the same bytes as a column-major B and writes bf16.
    if os.path.exists(os.path.join(directory, "gemm_fp8.ptx")):
        fa = (torch.rand(m, k, device="cuda") * 2 - 1).to(torch.float8_e4m3fn)
        fw = (torch.rand(n_, k, device="cuda") * 2 - 1).to(torch.float8_e4m3fn)
        one = torch.ones((), device="cuda")
        reference = torch.matmul(fa.float(), fw.float().t())
        f8 = kernel("gemm_fp8")
        ours = launch(f8, ((m + 63) // 64, (n_ + 63) // 64, 1),
                      [ptr(fa), ptr(fw), ptr(gc), i32(m), i32(n_), i32(k), i32(k), i32(k), i32(n_)])
        gc.fill_(float("nan"))
        ours(); torch.cuda.synchronize()
        error = float(((gc - reference).abs() / reference.abs().clamp(min=1.0)).max())
        theirs = lambda: torch._scaled_mm(fa, fw.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
        a, b = interleaved_ms(median_ms, ours, theirs)
        lines += ["", f"## fp8 e4m3 GEMM {m}x{n_}x{k}, f32 accumulate (same process, interleaved, median of 7)", "",
                  "| kernel | wavetile ms | TFLOP/s | torch._scaled_mm (bf16 out) ms | TFLOP/s | wavetile/peer time | max rel. error |",
                  "|---|---|---|---|---|---|---|",
                  f"| gemm_fp8 | {a:.3f} | {flops / a / 1e9:.0f} | {b:.3f} | {flops / b / 1e9:.0f} | {a / b:.2f} | {error:.2g} |"]


def interleaved_ms(median_ms, ours, theirs):
    """Medians over three alternating rounds, after one warm-up launch of each."""
    ours(); theirs(); torch.cuda.synchronize()
    t_ours, t_theirs = [], []
    for _ in range(3):
        t_ours.append(median_ms(ours))
        t_theirs.append(median_ms(theirs))
    return sorted(t_ours)[1], sorted(t_theirs)[1]


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    directory = args[0] if args else "dist/sm_90a"
    driver = Driver(args[1] if len(args) > 1 else "build-runtime/lib/libwavetile_runtime.so")
    plan_files = sorted(p for p in os.listdir(directory) if p.endswith(".json"))
    references = sorted({json.load(open(os.path.join(directory, p))).get("reference", "host") for p in plan_files})
    lines = [f"# Wavetile {os.path.basename(os.path.normpath(directory))} examples vs {', '.join(references)} results\n",
             f"device: {torch.cuda.get_device_name()} (Wavetile target {driver.target}), torch {torch.__version__}\n",
             "Loaded and launched through the Wavetile runtime (C API, libwavetile_runtime.so).\n",
             "| kernel | output | result | status |", "|---|---|---|---|"]
    failures = plans = 0
    for plan_file in plan_files:
        plan = json.load(open(os.path.join(directory, plan_file)))
        try:
            rows, passed = run_plan(driver, directory, plan)
        except Exception as error:  # report every kernel, then fail
            rows, passed = [("-", str(error), False)], False
        plans += 1
        failures += not passed
        for name, text, ok in rows:
            lines.append(f"| {plan['kernel']} (grid {plan['grid']}, seed {plan['seed']}) | {name} | {text} | "
                         f"{'PASS' if ok else 'FAIL'} |")
    if "--bench" in sys.argv:
        bench_memory_bound(driver, directory, lines)
    lines.append(f"\n{plans - failures} passed, {failures} failed")
    report = "\n".join(lines) + "\n"
    out = os.environ.get("OUT")
    if out:
        name = "sm90_examples.md" if references == ["host"] else "sm90_examples_vs_emulator.md"
        open(os.path.join(out, name), "w").write(report)
    print(report)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
