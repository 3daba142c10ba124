#!/usr/bin/env python3
"""Plots of ops_bench.py's results: per op, the fraction of copy bandwidth of Wavetile and its
peers against M, one panel per hidden size. ops_bench.py draws them after a run; this redraws
them from its JSON (the device tool returns only some of a run's files):

    python3 bench/h200/plot_ops.py RESULTS.json OUT_DIR [PREFIX]
"""
import json
import os
import sys


def plot(results, out_dir, prefix="ops_bench_"):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    for op in sorted({r["op"] for r in results if "N" in r}):
        rows = [r for r in results if r.get("op") == op and "N" in r]
        short = op.split(" (")[0]  # without the details in parentheses
        ns = sorted({r["N"] for r in rows})
        fig, axes = plt.subplots(1, len(ns), figsize=(4 * len(ns), 3.5), sharey=True, squeeze=False)
        for ax, n in zip(axes[0], ns):
            sub = [r for r in rows if r["N"] == n]
            for name in [key[:-len("_us")] for key in sub[0] if key.endswith("_us")]:  # copy and every peer run
                ax.plot([r["M"] for r in sub], [r["copy_us"] / r[f"{name}_us"] for r in sub], marker="o", label=name)
            ax.set_xscale("log")
            ax.set_title(f"{short} bf16, N={n}", fontsize=9)
            ax.set_xlabel("M")
        axes[0][0].set_ylabel("fraction of copy bandwidth")
        axes[0][0].legend()
        fig.tight_layout()
        name = "".join(c if c.isalnum() or c == "_" else "_" for c in short)
        fig.savefig(os.path.join(out_dir, f"{prefix}{name}.png"), dpi=110)
        plt.close(fig)


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        plot(json.load(f), sys.argv[2], *sys.argv[3:])
