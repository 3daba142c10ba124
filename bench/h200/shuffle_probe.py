#!/usr/bin/env python3
"""Why does gemm_a8w8_bpreshuffle stream W at half gemm_a8w8's rate on the H200 (bench/gemm-notes.md
v10-v12)? Triton kernels that only read W [N, K] bytes, one program per 64 rows, 128 bytes of K per
step (gemm_a8w8's decode tile), summing what they read:

- rowmajor: W row-major, a [64, 128] tile per step (64 lines of 128 bytes);
- shuffled: W in AITER's (16, 16) layout, the same elements: per step four 2 KiB runs, one per
  16-row block, read as a [4, 2048] tile (every lane's 16 bytes next to its neighbour's);
- shuffled-2d: the same bytes through the [64, 128] tile's shuffled offsets (Triton's layout);
- *-rotated: each program starts its K loop at a different step (its id modulo the steps), so the
  programs running at once do not all read the same offset within their blocks.

Device time per pass (CUDA-graph replays, ops_bench's method) as TB/s of W, interleaved per shape.
Writes $OUT/$RESULT.md (RESULT default shuffle_probe).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

import ops_bench as b  # noqa: E402  (graph_time)


@triton.jit
def _read(w, sums, K: tl.constexpr, SHUFFLED: tl.constexpr, FLAT: tl.constexpr, ROTATE: tl.constexpr):
    p = tl.program_id(0)
    steps: tl.constexpr = K // 128
    if FLAT:
        acc = tl.zeros([4, 2048], dtype=tl.int32)
    else:
        acc = tl.zeros([64, 128], dtype=tl.int32)
    rows = p * 64 + tl.arange(0, 64)
    for i in tl.range(0, steps, num_stages=3):
        s = (i + p) % steps if ROTATE else i
        if FLAT:  # 16-row block b of the program: its bytes for step s are 2 KiB at (row block) * 16K + s * 2048
            blocks = p * 4 + tl.arange(0, 4)
            offsets = blocks[:, None] * (16 * K) + s * 2048 + tl.arange(0, 2048)[None, :]
        else:
            ks = s * 128 + tl.arange(0, 128)
            if SHUFFLED:  # (16, 16): rows in blocks of 16, K in tiles of two 16-byte halves
                n = rows[:, None]
                k = ks[None, :]
                tile = (n >> 4) * (K // 32) + (k >> 5)
                offsets = ((tile * 2 + ((k >> 4) & 1)) * 16 + (n & 15)) * 16 + (k & 15)
            else:
                offsets = rows[:, None] * K + ks[None, :]
        acc += tl.load(w + offsets).to(tl.int32)
    tl.store(sums + p, tl.sum(acc))


VARIANTS = {"rowmajor": (False, False, False), "rowmajor-rotated": (False, False, True),
            "shuffled": (True, True, False), "shuffled-rotated": (True, True, True),
            "shuffled-2d": (True, False, False)}


def main():
    out_dir = os.environ.get("OUT", ".")
    lines = ["# W read probe: row-major against AITER's preshuffled layout, " + torch.cuda.get_device_name(), "",
             "| N | K | " + " | ".join(f"{v} TB/s" for v in VARIANTS) + " |",
             "|---|---|" + "---|" * len(VARIANTS)]
    for n, k in [(57344, 8192), (8192, 28672), (8192, 8192), (24576, 1536)]:
        ws = [torch.randint(0, 256, (n, k), device="cuda", dtype=torch.uint8) for _ in range(2)]
        sums = torch.empty(n // 64, device="cuda", dtype=torch.int32)
        row = []
        for shuffled, flat, rotate in VARIANTS.values():
            def run(w, shuffled=shuffled, flat=flat, rotate=rotate):
                _read[(n // 64,)](w, sums, k, shuffled, flat, rotate, num_warps=4)
            t = b.graph_time(run, [(w,) for w in ws])
            row.append(n * k / t / 1e6)
        lines.append(f"| {n} | {k} | " + " | ".join(f"{v:.2f}" for v in row) + " |")
        print(lines[-1], flush=True)
    with open(os.path.join(out_dir, os.environ.get("RESULT", "shuffle_probe") + ".md"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
