#!/usr/bin/env python3
"""Rewrites a Wavetile cache's PTX entries as cubins built by Triton's ptxas (bench/rope-notes.md,
session 37).

Wavetile hands the driver PTX, which the driver's own JIT compiles; Triton runs the ptxas in its
wheel and loads the cubin. To tell a difference of compilers from one of kernels, run a benchmark
with WAVETILE_CACHE_DIR set, rewrite that cache with this script, and run it again with the same
directory: the runtime then finds the same keys and loads the cubins (cuModuleLoadData takes
either).

    python3 bench/h200/ptxas_swap.py CACHE_DIR [--arch sm_90a] [--full-occupancy]

--full-occupancy asks ptxas for 2048 threads a multiprocessor (`.minnctapersm 2048 / block`,
which caps registers at 32) wherever that compiles without spills, to time what the
registers above Triton's cost in occupancy (bench/norms-notes.md, session 38).
"""
import argparse
import glob
import hashlib
import os
import re
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


def ptx_entries(cache):
    """(path, key, manifest, PTX) of each entry of `cache` that holds PTX, in path order (cubins
    and other targets' code are skipped)."""
    for path in sorted(glob.glob(os.path.join(cache, "*", "*.entry"))):
        with open(path, "rb") as f:
            key, manifest, image = parse(f.read())
        if b".version" in image[:4096]:
            yield path, key, manifest, image.rstrip(b"\0")


def serialize(key, manifest, image):
    payload = manifest + image
    return (HEADER + key + b"\n" + f"{len(manifest)} {len(image)} ".encode() +
            hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload)


def with_full_occupancy(ptx):
    """`ptx` with `.minnctapersm` after every `.maxntid X, Y, Z`: blocks for 2048 threads."""
    def directive(match):
        threads = 1
        for extent in match.group(1).split(b","):
            threads *= int(extent)
        return match.group(0) + b"\n.minnctapersm " + str(max(1, 2048 // threads)).encode()
    return re.sub(rb"\.maxntid ([0-9, ]+)", directive, ptx)


def compile_ptx(ptx, arch, tmp):
    """The cubin of `ptx` and ptxas's resource lines."""
    source, cubin = os.path.join(tmp, "k.ptx"), os.path.join(tmp, "k.cubin")
    with open(source, "wb") as f:
        f.write(ptx)
    info = subprocess.run([PTXAS, f"-arch={arch}", "-v", source, "-o", cubin], check=True, capture_output=True,
                          text=True).stderr
    with open(cubin, "rb") as f:
        return f.read(), info


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("cache")
    parser.add_argument("--arch", default="sm_90a")
    parser.add_argument("--full-occupancy", action="store_true")
    args = parser.parse_args()
    version = subprocess.run([PTXAS, "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1]
    print(f"ptxas: {version}")
    swapped = 0
    for path, key, manifest, ptx in ptx_entries(args.cache):
        with tempfile.TemporaryDirectory() as tmp:
            image, info = compile_ptx(ptx, args.arch, tmp)
            if args.full_occupancy:
                capped, capped_info = compile_ptx(with_full_occupancy(ptx), args.arch, tmp)
                spills = [int(n) for n in re.findall(r"(\d+) bytes spill stores", capped_info)]
                registers = lambda text: re.findall(r"Used (\d+) registers", text)
                print(key.decode()[:90], "registers", registers(info), "->", registers(capped_info),
                      "spills" if any(spills) else "kept")
                if not any(spills):
                    image = capped
        with open(path + ".tmp", "wb") as f:
            f.write(serialize(key, manifest, image))
        os.replace(path + ".tmp", path)
        swapped += 1
    print(f"{swapped} entries now hold cubins")


if __name__ == "__main__":
    main()
