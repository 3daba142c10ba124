"""WAVETILE_EMULATE=<target>: @wavetile.kernel launches and wavetile.ops calls on numpy arrays
run that GPU target's kernels through the emulator (docs/emulator.md). Each target runs in a
subprocess (the switch is read at import), on fresh random inputs, against numpy."""
import os
import subprocess
import sys

import pytest

SCRIPT = r"""
import sys
import numpy as np
import wavetile as wt
import wavetile.ops as ops
from wavetile import jit
import kernels

assert jit._HOST.get().device.target == "emulate:" + sys.argv[1], jit._HOST.get().device.target
rng = np.random.default_rng()
n = 3001
x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
out = np.full(n + 4, np.nan, np.float32)
kernels.vector_add[(wt.cdiv(n, kernels.ADD_BLOCK),)](x, y, out, n)
assert np.array_equal(out[:n], x + y) and np.isnan(out[n:]).all()

rows, cols, stride = 3, 999, 1000
sx = rng.standard_normal((rows, stride)).astype(np.float32) * 3
so = np.full((rows, stride), np.nan, np.float32)
kernels.softmax[(rows,)](sx, so, cols, stride)
ref = np.exp(sx[:, :cols] - sx[:, :cols].max(axis=1, keepdims=True))
ref /= ref.sum(axis=1, keepdims=True)
assert np.abs(so[:, :cols] - ref).max() / ref.max() < 2e-5 and np.isnan(so[:, cols:]).all()

m, k, w_n = 5, 300, 37
xs = rng.standard_normal((m, k)).astype(np.float32)
weight = rng.standard_normal(k).astype(np.float32)
got = ops.rmsnorm2d_fwd(xs, weight, 1e-6)
want = xs / np.sqrt((xs.astype(np.float64) ** 2).mean(1, keepdims=True) + 1e-6) * weight
assert np.abs(got - want).max() <= 1e-5 * np.abs(want).max(), np.abs(got - want).max()

a = wt.host.to_bf16(rng.standard_normal((m, k)).astype(np.float32))
b = wt.host.to_bf16(rng.standard_normal((w_n, k)).astype(np.float32))
y = ops.gemm_a16w16(a, b, dtype=np.float32)
af, bf = wt.host.from_bf16(a).astype(np.float64), wt.host.from_bf16(b).astype(np.float64)
assert np.all(np.abs(y - af @ bf.T) <= 2e-5 * (np.abs(af) @ np.abs(bf).T) + 1e-6)
print("ok")
"""


@pytest.mark.parametrize("target", ["gfx942", "gfx950", "sm_90"])
def test_numpy_launches_and_ops_run_emulated(target):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, WAVETILE_EMULATE=target,
               PYTHONPATH=os.pathsep.join([os.environ.get("PYTHONPATH", ""), os.path.join(root, "examples", "python")]))
    run = subprocess.run([sys.executable, "-c", SCRIPT, target], env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stdout + run.stderr


def test_unknown_emulated_target_is_an_error():
    env = dict(os.environ, WAVETILE_EMULATE="gfx90a")
    run = subprocess.run([sys.executable, "-c", "import wavetile.ops as o, numpy as n; o.rmsnorm2d_fwd("
                          "n.ones((1, 4), n.float32), n.ones(4, n.float32), 1e-6)"],
                         env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode != 0 and "unknown target 'gfx90a'" in run.stderr, run.stderr
