#!/usr/bin/env python3
"""Rewrites a Wavetile cache's PTX entries as cubins built by Triton's ptxas (bench/rope-notes.md,
session 37).

Wavetile hands the driver PTX, which the driver's own JIT compiles; Triton runs the ptxas in its
wheel and loads the cubin. To tell a difference of compilers from one of kernels, run a benchmark
with WAVETILE_CACHE_DIR set, rewrite that cache with this script, and run it again with the same
directory: the runtime then finds the same keys and loads the cubins (cuModuleLoadData takes
either).

    python3 bench/h200/ptxas_swap.py CACHE_DIR [--arch sm_90a]
"""
import argparse
import glob
import hashlib
import os
import subprocess
import tempfile

import triton

HEADER = b"wavetile-cache 1\n"
PTXAS = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "ptxas")


def parse(data):
    if not data.startswith(HEADER):
        raise ValueError("not a wavetile cache entry")
    key, sizes, payload = data[len(HEADER):].split(b"\n", 2)
    manifest_bytes, image_bytes, checksum = sizes.split()
    if hashlib.sha256(payload).hexdigest().encode() != checksum:
        raise ValueError("checksum mismatch")
    manifest_bytes = int(manifest_bytes)
    return key, payload[:manifest_bytes], payload[manifest_bytes:]


def serialize(key, manifest, image):
    payload = manifest + image
    return (HEADER + key + b"\n" + f"{len(manifest)} {len(image)} ".encode() +
            hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("cache")
    parser.add_argument("--arch", default="sm_90a")
    args = parser.parse_args()
    version = subprocess.run([PTXAS, "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1]
    print(f"ptxas: {version}")
    swapped = 0
    for path in glob.glob(os.path.join(args.cache, "*", "*.entry")):
        with open(path, "rb") as f:
            key, manifest, image = parse(f.read())
        if b".version" not in image[:4096]:
            continue  # not PTX (already a cubin, or another target)
        with tempfile.TemporaryDirectory() as tmp:
            ptx, cubin = os.path.join(tmp, "k.ptx"), os.path.join(tmp, "k.cubin")
            with open(ptx, "wb") as f:
                f.write(image.rstrip(b"\0"))
            subprocess.run([PTXAS, f"-arch={args.arch}", ptx, "-o", cubin], check=True)
            with open(cubin, "rb") as f:
                image = f.read()
        with open(path + ".tmp", "wb") as f:
            f.write(serialize(key, manifest, image))
        os.replace(path + ".tmp", path)
        swapped += 1
    print(f"{swapped} entries now hold cubins")


if __name__ == "__main__":
    main()
