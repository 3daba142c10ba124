"""Time one warm call of a library op on the host device (numpy arrays of 1 x 8, so the
kernel is negligible and the call path is what is measured): the Python wrapper's call into
the extension, the C++ op (argument checks, specialization lookup, argument order) and the
launch. Each measurement is the mean of N back-to-back calls, best of ROUNDS.

    PYTHONPATH=build/python python3 bench/host_call_bench.py [N] [ROUNDS]
"""
import sys
import time

import numpy as np

from wavetile import ops


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    x = np.random.default_rng().standard_normal((1, 8)).astype(np.float32)
    w = np.ones(8, np.float32)
    out = np.empty_like(x)
    runtime, stream = ops._runtime(out, x, w)
    calls = {
        "extension rmsnorm2d_fwd (out given)": lambda: ops._C.rmsnorm2d_fwd(runtime, stream, out, x, w, 1e-6, 0, False),
        "ops.rmsnorm2d_fwd": lambda: ops.rmsnorm2d_fwd(x, w, 1e-6),
    }
    for name, call in calls.items():
        for _ in range(1000):  # compiled and loaded before timing
            call()
        best = min(_mean_us(call, n) for _ in range(rounds))
        print(f"{name}: {best:.2f} us a call")


def _mean_us(call, n):
    start = time.perf_counter()
    for _ in range(n):
        call()
    return (time.perf_counter() - start) / n * 1e6


if __name__ == "__main__":
    main()
