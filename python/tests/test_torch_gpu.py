# SPDX-License-Identifier: MIT
"""Stream safety of warpheap under PyTorch (needs PyTorch, a GPU and the
plug-in; skipped otherwise).

A tensor made on stream A is read on stream B after B sleeps, with
tensor.record_stream(B); it is freed on A and its memory is asked for again
on A at once and overwritten.  With the record-stream hook (enable()) the
pool hands out other memory and B reads what A wrote first.  Each case also
runs with the allocator installed the old way, without the hook, to show
that the test sees the difference: there the block comes back at once and B
reads the overwrite.  The harsh case does the same with many tensors of
random sizes read by one or two of four reader streams each.

Each run is a fresh process (the allocator is swapped before the first CUDA
allocation):  python3 python/tests/test_torch_gpu.py --child CASE MODE
prints one line RESULT {...}.
  WARPHEAP_PLUGIN=build/lib/libwarpheap_plugin.so python3 -m unittest python/tests/test_torch_gpu.py -v
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpu_child import PACKAGE, no_result, result, run_child, skip_reason  # noqa: E402

SLEEP_CYCLES = 200_000_000  # ~0.1 s at 2 GHz: far longer than the overwrite on A


def install(mode):
    """The allocator, with the hook (enable) or as before it (the plug-in's
    two entry points alone, as PyTorch's API installs them)."""
    import torch

    import warpheap.torch
    from warpheap import _plugin

    if mode == "hook":
        warpheap.torch.enable()
        return warpheap.torch.record_stream_hooked()
    alloc = torch.cuda.memory.CUDAPluggableAllocator(_plugin.plugin_path(), "wh_torch_alloc", "wh_torch_free")
    torch.cuda.memory.change_current_allocator(alloc)
    return False


def simple_case():
    import torch

    n = 1 << 20
    a, b = torch.cuda.Stream(), torch.cuda.Stream()
    with torch.cuda.stream(a):
        x = torch.full((n,), 1.0, device="cuda")
    x_addr = x.data_ptr()
    b.wait_stream(a)
    with torch.cuda.stream(b):
        torch.cuda._sleep(SLEEP_CYCLES)
        seen = x.clone()
    x.record_stream(b)
    del x  # freed on a, its allocation stream, while b still sleeps
    with torch.cuda.stream(a):
        y = torch.empty(n, device="cuda")
        y.fill_(-1.0)
    torch.cuda.synchronize()
    wrong = int((seen != 1.0).sum().item())
    return {"wrong_elements": wrong, "elements": n, "same_address": y.data_ptr() == x_addr}


def harsh_case(steps=300, readers=4, seed=7):
    import random

    import torch

    rng = random.Random(seed)
    a = torch.cuda.Stream()
    rs = [torch.cuda.Stream() for _ in range(readers)]
    counts, keep = [], []
    for i in range(steps):
        n = rng.randint(1, 1 << 20)
        with torch.cuda.stream(a):
            t = torch.full((n,), float(i), device="cuda")
        for r in rng.sample(range(readers), rng.randint(1, 2)):
            rs[r].wait_stream(a)
            with torch.cuda.stream(rs[r]):
                torch.cuda._sleep(rng.randint(100_000, 3_000_000))
                counts.append(torch.count_nonzero(t != float(i)))
            t.record_stream(rs[r])
        del t
        with torch.cuda.stream(a):  # the freed size again, and others, overwritten at once
            junk = [torch.empty(n, device="cuda")] + [torch.empty(rng.randint(1, 1 << 20), device="cuda")
                                                      for _ in range(rng.randint(0, 3))]
            for j in junk:
                j.fill_(-1.0)
        keep = (keep + junk)[-8:]
    torch.cuda.synchronize()
    wrong = sum(int(c.item()) for c in counts)
    return {"wrong_elements": wrong, "reads": len(counts), "steps": steps}


def child(case, mode):
    sys.path.insert(0, PACKAGE)
    hooked = install(mode)
    res = simple_case() if case == "simple" else harsh_case()
    import warpheap.torch

    s = warpheap.torch.memory_stats()
    res.update(mode=mode, hooked=hooked, pool_allocs=s["allocation.all.allocated"],
               pool_pending=s["warpheap.pending"])
    result(res)


def case_result(case, mode):
    r, p = run_child(__file__, case, mode)
    if r:
        return r
    if mode == "old" and "an illegal memory access was encountered" in p.stderr:
        # without the hook the pool may also unmap a piece a reader still reads: the same race, shown louder
        return {"mode": mode, "illegal_access": True, "wrong_elements": None}
    raise AssertionError(f"{case}/{mode}: " + no_result(p))


REASON = skip_reason("torch", "import torch; print(torch.cuda.is_available())", lambda v: v == "True",
                     "PyTorch sees no GPU")


@unittest.skipIf(REASON, REASON or "")
class RecordStream(unittest.TestCase):
    def check_pair(self, case):
        hook, old = case_result(case, "hook"), case_result(case, "old")
        print(f"\n  {case} with the hook:    {hook}\n  {case} without the hook: {old}", flush=True)
        self.assertTrue(hook["hooked"], "enable() did not set PyTorch's record-stream hook")
        self.assertEqual(hook["wrong_elements"], 0, f"{case}: a reader saw memory overwritten with the hook: {hook}")
        self.assertTrue(old.get("illegal_access") or old["wrong_elements"] > 0,
                           f"{case}: without the hook no reader saw the overwrite, so the test does not show "
                           f"the race it guards against: {old}")

    def test_simple(self):
        """One tensor, one reader: reader intact with the hook, overwritten without."""
        self.check_pair("simple")

    def test_harsh(self):
        """300 tensors of random sizes, 1-2 of 4 reader streams each, the memory asked for again at once."""
        self.check_pair("harsh")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3])
    else:
        unittest.main()
