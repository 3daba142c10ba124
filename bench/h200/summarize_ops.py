#!/usr/bin/env python3
"""Issue 5's targets, op by op, from one or more ops_bench.py JSON files: the share of copy
bandwidth at large M·N (target ≥ 90%) and the ratio to each peer (target ≥ 1.0x the Triton
kernel at every shape), with the shapes that miss them:

    python3 bench/h200/summarize_ops.py RESULTS.json [RESULTS.json ...] [--large-m 4096]

ops_bench.py ends its report with the same summary of its own run.
"""
import argparse
import json
import statistics


def ratio(row, peer):
    return row[f"{peer}_us"] / row["wavetile_us"]


def summarize(rows, large_m):
    peers = [key[:-3] for key in rows[0] if key.endswith("_us") and key not in ("copy_us", "wavetile_us")]
    large = [r for r in rows if r["M"] >= large_m]
    copy_share = [r["copy_us"] / r["wavetile_us"] for r in large]
    cells = [f"{len(rows)}", f"{min(copy_share):.0%}-{max(copy_share):.0%}" if large else "-"]
    for peer in peers:
        values = [ratio(r, peer) for r in rows]
        cells.append(f"{min(values):.2f} / {statistics.median(values):.2f} / {max(values):.2f}")
    below = sorted((ratio(r, "triton"), r["M"], r["N"]) for r in rows if "triton_us" in r and ratio(r, "triton") < 1.0)
    cells.append(", ".join(f"{m}x{n} {v:.3f}" for v, m, n in below) or "none")
    return peers, cells


def summary_lines(results, large_m=4096):
    """The summary of ops_bench results (its JSON's entries) as markdown lines."""
    rows = [r for r in results if "M" in r and "wavetile_us" in r]
    yield (f"Per op: shapes; share of copy bandwidth at M >= {large_m}; Wavetile against each peer as "
           "min / median / max of peer time / Wavetile time (> 1: Wavetile faster); shapes below 1.0x Triton.")
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
    results = []
    for path in args.results:
        with open(path) as f:
            results += json.load(f)
    for line in summary_lines(results, args.large_m):
        print(line)


if __name__ == "__main__":
    main()
