#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Plot the tour's speed-ups (tour.csv from wh_tour) as one bar chart PNG.
   plot.py TOUR_CSV OUT_PNG"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(src, dst):
    with open(src) as f:
        env = f.readline().lstrip("# ").strip()
        rows = list(csv.DictReader(f))
    labels = [f"{r['part']}: {r['workload']}\nagainst {r['baseline']}" for r in rows]
    speedups = [float(r["speedup"]) for r in rows]
    fig, ax = plt.subplots(figsize=(10, 0.8 * len(rows) + 1.5))
    bars = ax.barh(range(len(rows)), speedups, color=["#2a9d8f" if s >= 1 else "#e76f51" for s in speedups])
    ax.set_yticks(range(len(rows)), labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.bar_label(bars, labels=[f"{s:.2f}x" for s in speedups], padding=3, fontsize=8)
    ax.set_xlabel("speed-up: their time / warpheap's time (log scale; right of 1: warpheap is faster)")
    ax.set_title(f"warpheap tour on {env}")
    fig.tight_layout()
    fig.savefig(dst, dpi=120)
    print(f"plot: {dst}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
