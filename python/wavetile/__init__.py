"""Wavetile: tile kernels in Python, compiled for AMD CDNA, NVIDIA sm_90 and the host.

    import wavetile as wt

    @wt.kernel
    def add(x: wt.pointer[wt.f32], y: wt.pointer[wt.f32], out: wt.pointer[wt.f32], n: wt.i32,
            BLOCK: wt.constexpr = 1024):
        offsets = wt.program_id(0) * BLOCK + wt.arange(0, BLOCK)
        mask = offsets < n
        wt.store(out, offsets, wt.load(x, offsets, mask) + wt.load(y, offsets, mask), mask)

    add[(wt.cdiv(n, 1024),)](x, y, out, n)      # torch CUDA tensors: the GPU; numpy: the host
"""
from . import _wavetile
from .frontend import CompilationError
from .jit import Kernel, LaunchError, kernel
from .language import *  # noqa: F401,F403 (the kernel language)

Module = _wavetile.Module


def __getattr__(name):
    # wavetile.host needs numpy; importing wavetile does not. wavetile.ops loads on first use.
    if name in ("host", "ops"):
        import importlib
        return importlib.import_module("." + name, __name__)
    raise AttributeError(f"module 'wavetile' has no attribute '{name}'")
