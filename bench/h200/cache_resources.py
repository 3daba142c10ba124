#!/usr/bin/env python3
"""What the driver's JIT makes of a Wavetile cache's PTX: registers, local memory and resident
blocks a multiprocessor for every kernel (bench/norms-notes.md, session 44).

Wavetile hands the driver PTX; the ptxas of the CUDA toolkit or of Triton's wheel, which the
SASS comparisons on the build machine use (bench/triton_sass.py), may allocate registers
differently. Run a benchmark with WAVETILE_CACHE_DIR set, then

    python3 bench/h200/cache_resources.py CACHE_DIR [CACHE_DIR ...]

loads each PTX entry with cuModuleLoadData in torch's context and prints one row per kernel, at
the block size and dynamic shared memory its manifest launches it with.
The cache keys are hashes; the PTX's own hash (sha256, 12 digits) names a kernel instead: the
build machine gets the same from `wavetile compile --op SPEC --target sm_90a -o k.ptx`
(`sha256sum k.ptx`) of the same library.
"""
import ctypes
import hashlib
import os
import sys

import torch

from ptxas_swap import ptx_entries

CU_FUNC_ATTRIBUTE_NUM_REGS = 4
CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3


def driver():
    cuda = ctypes.CDLL("libcuda.so.1")
    torch.cuda.init()
    torch.zeros(1, device="cuda")  # makes torch's primary context current
    return cuda


def check(status, what):
    if status != 0:
        raise RuntimeError(f"{what} failed with CUresult {status}")


def launches(manifest):
    """(kernel name, threads a block, dynamic shared bytes) of each kernel in a cache entry's
    manifest: the shape the runtime launches it with."""
    kernels = []
    for line in manifest.decode().splitlines():
        field, _, value = line.partition(" ")
        if field == "kernel":
            kernels.append([value, 0, 0])
        elif field == "block":
            x, y, z = map(int, value.split())
            kernels[-1][1] = x * y * z
        elif field == "dynamic-shared":
            kernels[-1][2] = int(value)
    return kernels


def resources(cuda, manifest, ptx):
    """(kernel name, threads, registers, local bytes, resident blocks) of each kernel of an entry."""
    module = ctypes.c_void_p()
    check(cuda.cuModuleLoadData(ctypes.byref(module), ctypes.c_char_p(ptx + b"\0")), "cuModuleLoadData")
    rows = []
    for name, threads, dynamic_shared in launches(manifest):
        function = ctypes.c_void_p()
        check(cuda.cuModuleGetFunction(ctypes.byref(function), module, name.encode()), "cuModuleGetFunction")
        registers, local, blocks = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
        check(cuda.cuFuncGetAttribute(ctypes.byref(registers), CU_FUNC_ATTRIBUTE_NUM_REGS, function), "registers")
        check(cuda.cuFuncGetAttribute(ctypes.byref(local), CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, function), "local")
        check(cuda.cuOccupancyMaxActiveBlocksPerMultiprocessor(ctypes.byref(blocks), function, threads,
                                                                ctypes.c_size_t(dynamic_shared)), "occupancy")
        rows.append((name, threads, registers.value, local.value, blocks.value))
    check(cuda.cuModuleUnload(module), "cuModuleUnload")
    return rows


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    cuda = driver()
    print("| cache | PTX sha256 | kernel | threads | registers | local bytes | blocks / SM |")
    print("|---|---|---|---|---|---|---|")
    for cache in sys.argv[1:]:
        for _, _, manifest, ptx in ptx_entries(cache):
            digest = hashlib.sha256(ptx).hexdigest()[:12]
            for row in resources(cuda, manifest, ptx):
                print(f"| {os.path.basename(cache.rstrip('/'))} | {digest} | " + " | ".join(map(str, row)) + " |")


if __name__ == "__main__":
    main()
