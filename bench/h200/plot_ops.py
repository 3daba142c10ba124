#!/usr/bin/env python3
"""Plots of ops_bench.py's results: per op, the fraction of copy bandwidth of Wavetile and its
peers against M, one panel per hidden size; and one map of every op and shape against the
Triton kernel (issue 5's target: >= 1.0x at every shape), the geometric mean of the runs
where several files repeat a shape. ops_bench.py draws them after a run; this redraws them
from its JSON files (the device tool returns only some of a run's files):

    python3 bench/h200/plot_ops.py RESULTS.json [RESULTS.json ...] --out OUT_DIR [--prefix PREFIX]
"""
import argparse
import math
import os

from summarize_ops import load_results, merge_repeats


def plot_triton_map(rows, path):
    """Ops down, shapes (N, then M) across; each cell Triton's time / Wavetile's."""
    import matplotlib.pyplot as plt
    ratios = {(r["op"], r["M"], r["N"]): r["triton_us"] / r["wavetile_us"] for r in rows if "triton_us" in r}
    ops = list(dict.fromkeys(op for op, _, _ in ratios))
    shapes = sorted({(n, m) for _, m, n in ratios})
    grid = [[ratios.get((op, m, n), math.nan) for n, m in shapes] for op in ops]
    fig, ax = plt.subplots(figsize=(1.0 + 0.62 * len(shapes), 1.2 + 0.36 * len(ops)))
    image = ax.imshow(grid, cmap="RdBu", vmin=0.8, vmax=1.2, aspect="auto")
    for i, row in enumerate(grid):
        for j, value in enumerate(row):
            if not math.isnan(value):
                ax.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=6.5,
                        color="white" if abs(value - 1.0) > 0.12 else "black")  # readable on dark cells
    ax.set_xticks(range(len(shapes)), [f"{m}\n{n}" for n, m in shapes], fontsize=7)
    ax.set_yticks(range(len(ops)), ops, fontsize=7)
    ax.set_xlabel("M (rows or tokens) over N (hidden size)", fontsize=8)
    runs = max(r["runs"] for r in rows)
    ax.set_title("Triton time / Wavetile time, bf16 (> 1: Wavetile faster)"
                 + (f"; geometric mean of {runs} runs" if runs > 1 else ""), fontsize=9)
    fig.colorbar(image, ax=ax, fraction=0.02, pad=0.01)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot(results, out_dir, prefix="ops_bench_"):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    merged = merge_repeats(results)
    plot_triton_map(merged, os.path.join(out_dir, f"{prefix}vs_triton.png"))
    for op in sorted({r["op"] for r in merged}):
        rows = [r for r in merged if r["op"] == op]
        short = op.split(" (")[0]  # without the details in parentheses
        ns = sorted({r["N"] for r in rows})
        fig, axes = plt.subplots(1, len(ns), figsize=(4 * len(ns), 3.5), sharey=True, squeeze=False)
        for ax, n in zip(axes[0], ns):
            sub = [r for r in rows if r["N"] == n]
            for name in [key[:-len("_us")] for key in sub[0] if key.endswith("_us")]:  # copy and every peer run
                timed = [r for r in sub if f"{name}_us" in r]
                shares = [r["copy_us"] / r[f"{name}_us"] for r in timed]
                ax.plot([r["M"] for r in timed], shares, marker="o", label=name)
            ax.set_xscale("log")
            ax.set_title(f"{short} bf16, N={n}", fontsize=9)
            ax.set_xlabel("M")
        axes[0][0].set_ylabel("fraction of copy bandwidth")
        axes[0][0].legend()
        fig.tight_layout()
        # the whole name: ops that share a short name (dequant, rope) differ in the details
        name = "_".join("".join(c if c.isalnum() else " " for c in op).split())
        fig.savefig(os.path.join(out_dir, f"{prefix}{name}.png"), dpi=110)
        plt.close(fig)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", nargs="+")
    parser.add_argument("--out", required=True, help="folder for the PNG files")
    parser.add_argument("--prefix", default="ops_bench_", help="start of each PNG's name")
    args = parser.parse_args()
    plot(load_results(args.results), args.out, args.prefix)


if __name__ == "__main__":
    main()
