#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""warpheap plug-in test (needs a GPU, PyTorch and/or CuPy).

Runs each workload twice, each time in a fresh Python process (PyTorch's
allocator must be swapped before the first CUDA allocation): once with the
library's default allocator, once on warpheap's host pool through
libwarpheap_plugin.so.  Passes when the results agree and the pool's own
counters show it served the allocations.

  python3 plugins/test_plugins.py --lib build/lib/libwarpheap_plugin.so [--json OUT.json]

Workloads: a small MLP trained for 60 steps with SGD on fixed data (loss
curve and final weights compared), with a side stream and record_stream;
and a CuPy mix (matmul, FFT, sort, reductions, elementwise, many temporaries).
A framework that is not installed is reported as skipped.
"""
import argparse
import ctypes
import json
import os
import subprocess
import sys


def pool_stats(lib_path):
    lib = ctypes.CDLL(lib_path)
    out = (ctypes.c_ulonglong * 8)()
    if lib.wh_plugin_stats(0, out) != 0:
        return None
    keys = ["in_use", "in_use_peak", "reserved", "reserved_peak", "allocs", "frees", "failures", "tag_hits"]
    return dict(zip(keys, list(out)))


def torch_workload(lib_path):
    import torch
    if lib_path:
        alloc = torch.cuda.memory.CUDAPluggableAllocator(lib_path, "wh_torch_alloc", "wh_torch_free")
        hook = ctypes.cast(ctypes.CDLL(lib_path).wh_torch_record_stream, ctypes.c_void_p).value
        alloc.allocator().set_record_stream_fn(hook)  # noise.record_stream below reaches the pool
        torch.cuda.memory.change_current_allocator(alloc)
    torch.manual_seed(0)
    x = torch.randn(4096, 256)
    w_true = torch.randn(256, 1)
    y = torch.tanh(x @ w_true) + 0.01 * torch.randn(4096, 1)
    dev = torch.device("cuda")
    x, y = x.to(dev), y.to(dev)
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 256),
                                torch.nn.ReLU(), torch.nn.Linear(256, 1))
    model.to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    side = torch.cuda.Stream()
    losses = []
    for step in range(60):
        idx = torch.arange((step * 512) % 4096, (step * 512) % 4096 + 512, device=dev)
        xb, yb = x[idx], y[idx]
        with torch.cuda.stream(side):             # a buffer made on another stream
            side.wait_stream(torch.cuda.current_stream())
            noise = torch.zeros_like(yb)
        torch.cuda.current_stream().wait_stream(side)
        noise.record_stream(torch.cuda.current_stream())
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(xb), yb + noise)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        del noise
    torch.cuda.synchronize()
    params = torch.cat([p.detach().flatten() for p in model.parameters()]).cpu()
    return {"losses": losses, "param_sum": float(params.double().sum()), "param_abs": float(params.double().abs().sum())}


def cupy_workload(lib_path):
    import cupy
    import numpy as np
    if lib_path:
        lib = ctypes.CDLL(lib_path)
        malloc = ctypes.cast(lib.wh_cupy_malloc, ctypes.c_void_p).value
        free = ctypes.cast(lib.wh_cupy_free, ctypes.c_void_p).value
        alloc = cupy.cuda.memory.CFunctionAllocator(0, malloc, free, lib)
        cupy.cuda.set_allocator(alloc.malloc)
    rng = np.random.default_rng(0)
    a = cupy.asarray(rng.standard_normal((1024, 1024), dtype=np.float32))
    b = cupy.asarray(rng.standard_normal((1024, 1024), dtype=np.float32))
    acc = []
    for i in range(20):
        c = a @ b
        f = cupy.fft.fft(c[: 256 + i], axis=1)
        s = cupy.sort(c.ravel()[:100000])
        acc.append(float(cupy.abs(f).sum()) + float(s[::997].sum()) + float(cupy.tanh(c * 1e-3).mean()))
        a = (a + 1e-3 * c / (1 + cupy.abs(c).max()))
    cupy.cuda.Device().synchronize()
    return {"acc": acc, "final": float(a.astype(cupy.float64).sum())}


def child(mode, lib_path):
    use = lib_path if mode.endswith("warpheap") else None
    res = torch_workload(use) if mode.startswith("torch") else cupy_workload(use)
    if use:
        res["pool"] = pool_stats(use)
    print("RESULT " + json.dumps(res))


def run_child(mode, lib_path):
    p = subprocess.run([sys.executable, __file__, "--child", mode, "--lib", lib_path], capture_output=True, text=True,
                       timeout=300)
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:]), None
    err = (p.stderr or "").strip().splitlines()
    if any("No module named" in l for l in err):
        return None, "skipped (" + err[-1] + ")"
    return None, "failed: " + "\n".join(err[-15:])


def close(a, b, rtol):
    return all(abs(x - y) <= rtol * max(1.0, abs(x), abs(y)) for x, y in zip(a, b)) and len(a) == len(b)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--child")
    ap.add_argument("--json")
    args = ap.parse_args()
    lib = os.path.abspath(args.lib)
    if args.child:
        child(args.child, lib)
        return 0
    report, ok = {}, True
    for fw in ("torch", "cupy"):
        base, err_b = run_child(fw + "-default", lib)
        ours, err_o = run_child(fw + "-warpheap", lib)
        if err_b and err_b.startswith("skipped"):
            report[fw] = err_b
            print(f"{fw}: {err_b}")
            continue
        if err_b or err_o:
            report[fw] = {"error": err_b or err_o}
            print(f"{fw}: FAIL {err_b or err_o}")
            ok = False
            continue
        pool = ours.get("pool") or {}
        if fw == "torch":
            same = close(base["losses"], ours["losses"], 1e-4) and close([base["param_sum"], base["param_abs"]],
                                                                         [ours["param_sum"], ours["param_abs"]], 1e-4)
            diff = max(abs(x - y) for x, y in zip(base["losses"], ours["losses"]))
        else:
            same = close(base["acc"], ours["acc"], 1e-5) and close([base["final"]], [ours["final"]], 1e-5)
            diff = max(abs(x - y) for x, y in zip(base["acc"], ours["acc"]))
        used = pool.get("allocs", 0) > 0 and pool.get("failures", 1) == 0
        verdict = same and used
        ok &= verdict
        report[fw] = {"pass": verdict, "same_results": same, "max_abs_diff": diff, "pool": pool}
        print(f"{fw}: {'PASS' if verdict else 'FAIL'} results agree={same} (max diff {diff:.3g}) pool={pool}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    print("test_plugins:", "passed" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
