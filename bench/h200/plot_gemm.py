#!/usr/bin/env python3
"""Plots bench/h200/gemm_bench.py's JSON: per op, wavetile's speed relative to its peers
(cuBLAS and Triton for gemm_a16w16, torch._scaled_mm for gemm_a8w8 (fp8), torch._int_mm, Triton and
cuBLAS bf16 for int8 gemm_a8w8, Triton and blockwise _scaled_mm for
gemm_a8w8_blockscale, Triton's dot_scaled and cuBLAS
bf16 on dequantized operands for gemm_a4w4) at each shape.
gemm_bench.py calls it at the end; `plot_gemm.py RESULT.json OUT.png` replots a saved run
(needs matplotlib only)."""
import json
import sys

PEERS = {"gemm_a16w16": [("cublas_us", "cuBLAS"), ("triton_us", "Triton")],
         "gemm_a8w8": [("scaled_mm_us", "torch._scaled_mm")],
         "gemm_a8w8_int8": [("int_mm_us", "torch._int_mm (product only)"), ("triton_us", "Triton"),
                            ("cublas_bf16_us", "cuBLAS bf16")],
         "gemm_a8w8_blockscale": [("triton_us", "Triton"), ("scaled_mm_blockwise_us", "torch._scaled_mm blockwise")],
         "gemm_a4w4": [("triton_us", "Triton dot_scaled"), ("cublas_bf16_us", "cuBLAS bf16, pre-dequantized")]}


def plot(results, path, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    ops = [op for op in PEERS if any(r["op"] == op for r in results)]
    fig, axes = plt.subplots(len(ops), 1, figsize=(13, 4.2 * len(ops)), squeeze=False)
    for ax, op in zip(axes[:, 0], ops):
        rows = [r for r in results if r["op"] == op]
        labels = [f"{r['M']}×{r['N']}×{r['K']}" for r in rows]
        width = 0.8 / len(PEERS[op])
        for i, (key, name) in enumerate(PEERS[op]):
            ax.bar([x + i * width for x in range(len(rows))], [r[key] / r["wavetile_us"] for r in rows], width,
                   label=f"vs {name}")
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_xticks([x + width * (len(PEERS[op]) - 1) / 2 for x in range(len(rows))], labels, rotation=75,
                      fontsize=7)
        ax.set_ylabel("speedup (peer time / wavetile time)")
        ax.set_title(f"{op}: {title}")
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        plot(json.load(f), sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "H200, CUDA-graph device time")
