#!/usr/bin/env python3
"""Issue 5's targets, op by op, from one or more ops_bench.py JSON files: the share of copy
bandwidth at large M·N (target ≥ 90%) and the ratio to each peer (target ≥ 1.0x the Triton
kernel at every shape), with the shapes that miss them:

    python3 bench/h200/summarize_ops.py RESULTS.json [RESULTS.json ...] [--large-m 4096]

A shape found in several files is a repeat in another process: its ratios are the geometric
mean of the runs, and a shape below 1.0x Triton says in how many runs it was below, which
tells a gap that holds from one that process-to-process noise makes (separate processes of
the same code differ by a few percent a shape). ops_bench.py ends its report with the same
summary of its own run.
"""
import argparse
import json
import math
import statistics


def ratio(row, peer):
    return row[f"{peer}_us"] / row["wavetile_us"]


def load_results(paths):
    """The entries of ops_bench JSON files, one list."""
    results = []
    for path in paths:
        with open(path) as f:
            results += json.load(f)
    return results


def merge_repeats(results):
    """One row per op and shape: each time the geometric mean of the runs that repeat it (so a
    ratio of two means is the geometric mean of the runs' ratios)."""
    runs = {}
    for r in results:
        if "N" in r and "wavetile_us" in r:
            runs.setdefault((r["op"], r["M"], r["N"]), []).append(r)
    merged = []
    for (op, m, n), rows in runs.items():
        row = {"op": op, "M": m, "N": n, "runs": len(rows)}
        for key in (k for k in rows[0] if k.endswith("_us")):
            times = [r[key] for r in rows if r.get(key)]
            if len(times) == len(rows):
                row[key] = math.exp(sum(map(math.log, times)) / len(times))
        merged.append(row)
    return merged


def summarize(rows, large_m):
    """rows: one op's, repeats of a shape included."""
    merged = merge_repeats(rows)
    peers = [key[:-3] for key in merged[0] if key.endswith("_us") and key not in ("copy_us", "wavetile_us")]
    large = [r for r in merged if r["M"] >= large_m]
    repeats = max(r["runs"] for r in merged)
    copy_share = [r["copy_us"] / r["wavetile_us"] for r in large]
    cells = [f"{len(merged)}" + (f" x {repeats} runs" if repeats > 1 else ""),
             f"{min(copy_share):.0%}-{max(copy_share):.0%}" if large else "-"]
    for peer in peers:
        values = [ratio(r, peer) for r in merged if f"{peer}_us" in r]
        cells.append(f"{min(values):.2f} / {statistics.median(values):.2f} / {max(values):.2f}")
    below = []
    for r in merged:
        if "triton_us" in r and ratio(r, "triton") < 1.0:
            runs = [run for run in rows if (run["M"], run["N"]) == (r["M"], r["N"])]
            runs_below = sum(ratio(run, "triton") < 1.0 for run in runs)
            note = f" ({runs_below}/{len(runs)})" if len(runs) > 1 else ""
            below.append((ratio(r, "triton"), r["M"], r["N"], note))
    cells.append(", ".join(f"{m}x{n} {v:.3f}{note}" for v, m, n, note in sorted(below)) or "none")
    return peers, cells


def summary_lines(results, large_m=4096):
    """The summary of ops_bench results (its JSON's entries) as markdown lines."""
    rows = [r for r in results if "M" in r and "wavetile_us" in r]
    yield (f"Per op: shapes; share of copy bandwidth at M >= {large_m}; Wavetile against each peer as "
           "min / median / max of peer time / Wavetile time (> 1: Wavetile faster); shapes below 1.0x Triton "
           "(with repeats: the geometric mean of the runs' ratios, and in how many runs it was below).")
    yield ""
    for op in dict.fromkeys(r["op"] for r in rows):
        peers, cells = summarize([r for r in rows if r["op"] == op], large_m)
        yield f"### {op}"
        yield ""
        yield "| shapes | % copy (large) | " + " | ".join(f"vs {p}" for p in peers) + " | below 1.0x Triton |"
        yield "|" + "---|" * (len(peers) + 3)
        yield "| " + " | ".join(cells) + " |"
        yield ""


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", nargs="+")
    parser.add_argument("--large-m", type=int, default=4096, help="rows from which M·N counts as large")
    args = parser.parse_args()
    for line in summary_lines(load_results(args.results), args.large_m):
        print(line)


if __name__ == "__main__":
    main()
