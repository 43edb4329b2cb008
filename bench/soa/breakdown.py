#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Where an iteration of an SMMO application spends its time, against its
static-array version (run on a GPU machine with Nsight Compute).

For each application and variant (warpheap, static, and placed: warpheap
with placement keys where agents are created in cells) it measures
  - the wall time of an iteration: the application's own timing (--csv) of a
    run of W iterations;
  - the kernels of an iteration, their GPU time and DRAM bytes: a run under
    ncu (Nsight Compute; clocks and caches left alone) that profiles only the
    iterations LO .. HI-1 in the middle of that run (the applications' --window
    puts them in an NVTX range), divided by HI - LO.
Kernels are grouped by what they do: enumeration (the allocated blocks of a
type and their iteration bitmaps, before a parallel_do), do (the user's
function over the objects, allocations and frees inside it included; for the
static version its loops), new (parallel_new) and other.  The
DRAM rate is the bytes over the kernels' time.  ncu runs kernels one at a
time and its durations include a few microseconds of its own per kernel, so
for short kernels their sum exceeds the wall time of an unprofiled run.

  breakdown.py --bin BUILD/bin --csv OUT.csv --md OUT.md [--apps a,b] [--variants v,w]
               [--baseline OTHER/bin] [--ncu PATH]

--baseline adds a row "baseline" per application: the warpheap variant built
from other sources (an earlier commit), measured in the same run.

Writes the table as CSV and Markdown after each row; prints progress as it goes.
"""
import argparse
import csv
import os
import re
import subprocess
import sys
import tempfile

# app: binary, arguments, the option that counts iterations, W, (LO, HI).
# W is shorter than the paper's runs, whose populations grow for thousands of
# iterations in sugarscape and traffic (bench/apps times the full runs).
# structure: steps of 8 compute iterations instead of the paper's 40, so that
# a profiled step is ~600 kernels instead of ~2500 (ncu takes ~0.05 s a
# kernel); bench/soa/gpu-bench.sh times the paper's steps too.
APPS = {
    "nbody": ("wh_nbody", [], "iters", 200, (100, 103)),
    "wator": ("wh_wator", [], "iters", 300, (150, 154)),
    "sugarscape": ("wh_sugarscape", [], "iters", 1000, (500, 504)),
    "traffic": ("wh_traffic", [], "iters", 4000, (2000, 2008)),
    "structure": ("wh_structure", ["--iters=8"], "steps", 20, (10, 11)),
    "gameoflife": ("wh_gameoflife", [], "iters", 300, (150, 154)),
    "collision": ("wh_collision", [], "iters", 1000, (500, 508)),
}
VARIANTS = ("warpheap", "static", "placed")
# The variant "placed": warpheap with placement keys (--place=N), for the
# applications whose agents are created in cells: N x N tiles of the grid
# (a run of N cells of traffic's streets).
PLACE = {"wator": 32, "sugarscape": 16, "traffic": 64}
METRICS = "gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum"
GROUPS = ("enumeration", "do", "new", "other")


# The preparation's kernels: enumerate_kernel now; indices_kernel (one per
# bitmap level) and snapshot_kernel in builds before it (--baseline).
ENUMERATION = ("enumerate_kernel", "indices_kernel", "snapshot_kernel")


def group(kernel):
    k = kernel.split("(")[0].strip()
    if k in ENUMERATION:
        return "enumeration"
    if k.endswith("__newkernel"):
        return "new"
    if k.endswith("__kernel"):
        return "do"
    return "other"


def run(cmd, timeout):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError("%s: exit %d\n%s" % (" ".join(cmd), p.returncode, p.stdout[-2000:]))
    return p.stdout


# the applications' "warpheap heap:" line (wh_app_bench.h) after a run
HEAP_LINE = re.compile(r"warpheap heap: \d+ blocks of (\d+) B, (\d+) used, fragmentation ([0-9.]+)")


def wall_ms(binary, args, flag, iters, variant, timeout):
    """ms per iteration, iterations, and the heap's blocks in use (MB) and
    fragmentation at the end (None for a variant without a heap)."""
    with tempfile.NamedTemporaryFile("r", suffix=".csv") as f:
        out = run([binary] + args + ["--mode=" + variant, "--%s=%d" % (flag, iters), "--csv=" + f.name], timeout)
        with open(f.name) as g:
            rows = [r for r in csv.reader(g) if r and r[0] != "app"]
    if not rows:
        raise RuntimeError("%s wrote no CSV row" % binary)
    m = HEAP_LINE.findall(out)
    used_mb, frag = (int(m[-1][0]) * int(m[-1][1]) / 1e6, float(m[-1][2])) if m else (None, None)
    return float(rows[-1][5]), int(rows[-1][3]), used_mb, frag


def profile(ncu, binary, args, flag, window, variant, timeout):
    """Per group: [kernels, ns, DRAM bytes] of the iterations of `window`."""
    lo, hi = window
    with tempfile.TemporaryDirectory() as d:
        log = os.path.join(d, "ncu.csv")
        run([ncu, "--csv", "--log-file", log, "--clock-control", "none", "--cache-control", "none",
             "--nvtx", "--nvtx-include", "wh_window/", "--print-kernel-base", "function", "--print-units", "base",
             "--metrics", METRICS, binary] + args +
            ["--mode=" + variant, "--%s=%d" % (flag, hi + 1), "--window=%d:%d" % (lo, hi)], timeout)
        with open(log) as g:
            lines = [ln for ln in g if ln.startswith('"')]
    per = {}  # launch id -> [kernel, ns, bytes]
    for r in csv.DictReader(lines):
        k = per.setdefault(r["ID"], [r["Kernel Name"], 0.0, 0.0])
        v = float(r["Metric Value"].replace(",", "") or 0)
        if r["Metric Name"] == "gpu__time_duration.sum":
            k[1] += v
        else:
            k[2] += v
    out = {g: [0, 0.0, 0.0] for g in GROUPS}
    for name, ns, b in per.values():
        s = out[group(name)]
        s[0] += 1
        s[1] += ns
        s[2] += b
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", required=True, help="folder of the built applications")
    ap.add_argument("--csv", required=True, help="CSV file to write")
    ap.add_argument("--md", required=True, help="Markdown table to write")
    ap.add_argument("--apps", default=",".join(APPS), help="comma-separated: " + ",".join(APPS))
    ap.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated: " + ",".join(VARIANTS))
    ap.add_argument("--baseline", help="folder of the applications built from other sources (row 'baseline')")
    ap.add_argument("--ncu", default="ncu", help="the Nsight Compute command")
    ap.add_argument("--timeout", type=float, default=240, help="seconds for one run")
    a = ap.parse_args()
    rows = []
    for app in a.apps.split(","):
        if app not in APPS:
            sys.exit("breakdown.py: no application '%s' (%s)" % (app, ",".join(APPS)))
        exe, args, flag, witers, window = APPS[app]
        runs = []
        for v in a.variants.split(","):
            if v not in VARIANTS:
                sys.exit("breakdown.py: no variant '%s' (%s)" % (v, ",".join(VARIANTS)))
            if v != "placed":
                runs.append((v, v, os.path.join(a.bin, exe), args))
            elif app in PLACE:
                runs.append((v, "warpheap", os.path.join(a.bin, exe), args + ["--place=%d" % PLACE[app]]))
        if a.baseline:
            runs.append(("baseline", "warpheap", os.path.join(a.baseline, exe), args))
        for label, v, binary, vargs in runs:
            try:
                ms, done, used_mb, frag = wall_ms(binary, vargs, flag, witers, v, a.timeout)
                p = profile(a.ncu, binary, vargs, flag, window, v, a.timeout)
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                print("breakdown: %s %s failed: %s" % (app, label, e), flush=True)
                continue
            n = window[1] - window[0]
            d = {g: [p[g][i] / n for i in range(3)] for g in GROUPS}
            gpu_ms = sum(d[g][1] for g in GROUPS) / 1e6
            dram = sum(d[g][2] for g in GROUPS)
            row = {
                "app": app, "variant": label, "wall_ms": ms, "wall_iterations": done,
                "window": "%d:%d" % window, "kernels": sum(d[g][0] for g in GROUPS), "gpu_ms": gpu_ms,
                "dram_mb": dram / 1e6,
                "dram_gbps": dram / (gpu_ms * 1e6) if gpu_ms > 0 else 0.0,
                "heap_used_mb": used_mb, "fragmentation": frag,
            }
            for g in GROUPS:
                row[g + "_kernels"] = d[g][0]
                row[g + "_ms"] = d[g][1] / 1e6
            rows.append(row)
            print("breakdown: %-10s %-8s %8.3f ms/iteration, %5.1f kernels, GPU %.3f ms, %.1f MB DRAM" %
                  (app, label, ms, row["kernels"], gpu_ms, row["dram_mb"]), flush=True)
            write(rows, a.csv, a.md)
    if not rows:
        sys.exit("breakdown.py: nothing measured")


def write(rows, csv_path, md_path):
    with open(csv_path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    with open(md_path, "w") as f:
        f.write("# Where an iteration's time goes\n\n")
        f.write("Per iteration: wall time (the application's own timing of W iterations) and its ratio to the "
                "static version's; kernels launched, their time by group and their DRAM traffic (ncu over the "
                "iterations of the window, in the middle of such a run; ncu runs kernels one at a time and adds a "
                "few microseconds to each, so short kernels sum to more than the wall time). Enumeration: the "
                "blocks of a type and their iteration bitmaps before a parallel_do; do: the user's function "
                "(allocations and frees in it included) or the static version's loop; new: parallel_new. "
                "blocks MB and fragmentation: the heap's blocks in use and their empty slots at the end of the "
                "W-iteration run. placed: warpheap with placement keys (--place=%s). "
                "baseline: warpheap built from the baseline sources, same run. structure: steps of 8 compute "
                "iterations (the paper's have 40).\n\n" % ", ".join("%s %d" % kv for kv in sorted(PLACE.items())))
        f.write("| app | variant | W | window | wall ms | x static | kernels | kernel ms | enumeration ms (kernels) | "
                "do ms | new ms | other ms | DRAM MB | GB/s | blocks MB | fragmentation |\n")
        f.write("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
        static = {r["app"]: r["wall_ms"] for r in rows if r["variant"] == "static"}
        for r in rows:
            x = "%.2f" % (r["wall_ms"] / static[r["app"]]) if static.get(r["app"]) else "-"
            heap = ("%.1f" % r["heap_used_mb"], "%.3f" % r["fragmentation"]) if r["heap_used_mb"] else ("-", "-")
            f.write("| %s | %s | %d | %s | %.3f | %s | %.1f | %.3f | %.3f (%.1f) | %.3f | %.3f | %.3f | %.1f | %.0f | "
                    "%s | %s |\n" %
                    ((r["app"], r["variant"], r["wall_iterations"], r["window"], r["wall_ms"], x, r["kernels"],
                      r["gpu_ms"], r["enumeration_ms"], r["enumeration_kernels"], r["do_ms"], r["new_ms"],
                      r["other_ms"], r["dram_mb"], r["dram_gbps"]) + heap))

if __name__ == "__main__":
    main()
