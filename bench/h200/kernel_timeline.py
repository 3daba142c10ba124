#!/usr/bin/env python3
"""Where a gap to Triton lies: inside the kernel or between kernels.

ops_bench.py times a CUDA graph of 20 calls and divides; that sum holds each kernel's run and
the device's time from one kernel's end to the next one's start. This replays the same graphs
under CUPTI (torch.profiler's CUDA activity, nanosecond timestamps, no clock locking or cache
flushes as under ncu) and splits the period per call into the kernel's duration and the idle
gap after it, per op and shape, Wavetile next to Triton (and silu_and_mul, where the two are
at par, as a control). Unlike ncu's isolated launch, each kernel here starts with the L2 full of
the previous one's unwritten output, as in a model.

    MS=1,32,4096 OPS=rope,quant,silu bash bench/h200/python.sh bench/h200/kernel_timeline.py
"""
import os
import statistics
import sys

import torch
from torch.autograd import DeviceType
from torch.profiler import ProfilerActivity, profile

import ops_bench  # same folder
from ops_bench import (EPS, captured, ops, report, rms_inputs, rope_inputs, triton_layernorm,
                       triton_per_token_quant, triton_rmsnorm, triton_rope, triton_silu_and_mul,
                       wavetile_per_token_quant, wavetile_rope, wavetile_silu_and_mul)

ops_bench.REPORT = os.path.join(ops_bench.OUT, "kernel_timeline.md")
CALLS, REPLAYS, ROUNDS = 20, 10, 3


def randn_rows(columns):
    return lambda m, n, g: (torch.randn(m, columns * n, device="cuda", dtype=torch.bfloat16, generator=g) * 3,)


CASES = {
    "rope": ("rope_cached_positions_fwd, 32 heads of 128", rope_inputs,
             {"wavetile": wavetile_rope, "triton": triton_rope}),
    "quant": ("dynamic_per_token_scaled_quant fp8", randn_rows(1),
              {"wavetile": wavetile_per_token_quant, "triton": triton_per_token_quant}),
    # Triton's RMSNorm also in our program shape at many rows (4 warps, 32 elements a thread)
    "rmsnorm": ("rmsnorm2d_fwd", rms_inputs,
                {"wavetile": lambda x, w: ops.rmsnorm2d_fwd(x, w, EPS),
                 "triton": lambda x, w: triton_rmsnorm(x, w, EPS),
                 "triton 4 warps": lambda x, w: triton_rmsnorm(x, w, EPS, warps=4)}),
    "layernorm": ("layernorm2d_fwd", lambda m, n, g: rms_inputs(m, n, g) + (rms_inputs(1, n, g)[1] - 1,),
                  {"wavetile": lambda x, w, b: ops.layernorm2d_fwd(x, w, b, EPS),
                   "triton": lambda x, w, b: triton_layernorm(x, w, b, EPS)}),
    "silu": ("silu_and_mul (control)", randn_rows(2),
             {"wavetile": wavetile_silu_and_mul, "triton": triton_silu_and_mul}),
}


def span(event):
    """(start, duration) in ns of a profiler event."""
    if hasattr(event, "start_ns"):
        return event.start_ns(), event.duration_ns()
    return event.start_us() * 1000, event.duration_us() * 1000


def split(fn, batches):
    """Median duration, idle gap to the next kernel and start-to-start period (ns) of the
    kernels inside replays of a graph of CALLS calls."""
    graph = captured(fn, batches, CALLS)
    graph.replay()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(REPLAYS):
            graph.replay()
            torch.cuda.synchronize()  # replays apart: no gap spans two of them
    kernels = sorted(span(e) for e in prof.profiler.kineto_results.events()
                     if e.device_type() == DeviceType.CUDA and not e.name().startswith(("Memcpy", "Memset")))
    if len(kernels) != CALLS * REPLAYS:
        raise RuntimeError(f"expected {CALLS * REPLAYS} kernels, the profile holds {len(kernels)}")
    durations, gaps, periods = [], [], []
    for r in range(REPLAYS):
        replay = kernels[r * CALLS:(r + 1) * CALLS]
        durations += [d for _, d in replay]
        for (s0, d0), (s1, _) in zip(replay, replay[1:]):
            gaps.append(s1 - s0 - d0)
            periods.append(s1 - s0)
    return statistics.median(durations), statistics.median(gaps), statistics.median(periods)


def main():
    g = ops_bench.fresh_generator()
    ms = [int(v) for v in os.environ.get("MS", "1,32,4096").split(",")]
    n = int(os.environ.get("N", "4096"))
    chosen = os.environ.get("OPS", ",".join(CASES)).split(",")
    unknown = [op for op in chosen if op not in CASES]
    if unknown:
        sys.exit(f"unknown OPS {','.join(unknown)}: this script times {','.join(CASES)}")
    report(f"# Kernel duration and gap per call on {torch.cuda.get_device_name()} (N = {n}, bf16)")
    report("")
    report(f"CUPTI timestamps of CUDA-graph replays ({CALLS} calls a graph, {REPLAYS} replays a round, "
           f"{ROUNDS} interleaved rounds); ns, median over the kernels of a round, then over the rounds. "
           "period = start to next start; gap = end to next start.")
    for op in chosen:
        title, make, impls = CASES[op]
        report("")
        report(f"## {title}")
        report("")
        report("| M | impl | period ns | kernel ns | gap ns |")
        report("|---|---|---|---|---|")
        for m in ms:
            batches = [make(m, n, g) for _ in range(max(2, min(64, (60 << 20) // (4 * m * n) + 1)))]
            rounds = {name: [] for name in impls}
            for _ in range(ROUNDS):
                for name, fn in impls.items():
                    rounds[name].append(split(fn, batches))
            for name, values in rounds.items():
                duration, gap, period = (statistics.median(v[i] for v in values) for i in range(3))
                report(f"| {m} | {name} | {period:.0f} | {duration:.0f} | {gap:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
