# SPDX-License-Identifier: MIT
"""warpheap under PyTorch on two GPUs (needs PyTorch, two GPUs and the
plug-in; skipped otherwise).

- One process, two devices (python3 python/tests/test_torch_multigpu.py
  --child, one line RESULT {...}): tensors on cuda:0 and cuda:1, copies
  both ways, work on a stream of device 1; each device's pool holds its own
  blocks (snapshot), its stats count them, the current device is left as
  it was, and after the tensors go empty_cache() gives device 1's memory back.
- DDP with NCCL on both allocators, losses bitwise the same (ddp_torch.py).
  WARPHEAP_PLUGIN=build/lib/libwarpheap_plugin.so python3 -m unittest python/tests/test_torch_multigpu.py -v
"""
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from gpu_child import PACKAGE, no_result, result, run_child, skip_reason  # noqa: E402
MIB = 1 << 20


def child():
    sys.path.insert(0, PACKAGE)
    import torch

    import warpheap.torch as wt

    wt.enable()
    torch.cuda.set_device(0)
    a0 = torch.arange(1 << 20, device="cuda:0", dtype=torch.float32)  # 4 MiB
    a1 = torch.full((1 << 21,), 2.0, device="cuda:1")  # 8 MiB
    current_after_alloc = torch.cuda.current_device()
    b1 = a0.to("cuda:1")  # 0 -> 1
    s1 = torch.cuda.Stream(device=1)
    s1.wait_stream(torch.cuda.current_stream(1))
    with torch.cuda.stream(s1):
        c1 = b1 * a1[: 1 << 20]
    torch.cuda.synchronize(1)
    back = c1.to("cuda:0")  # 1 -> 0
    torch.cuda.synchronize(0)
    values_ok = torch.equal(back, a0 * 2)
    snap0 = {b["address"]: b for b in wt.snapshot(0)}
    snap1 = {b["address"]: b for b in wt.snapshot(1)}
    st0, st1 = wt.memory_stats(0), wt.memory_stats(1)
    res = {
        "values_ok": values_ok, "current_after_alloc": current_after_alloc,
        "a0_on_0": a0.data_ptr() in snap0 and a0.data_ptr() not in snap1,
        "on_1": all(t.data_ptr() in snap1 and t.data_ptr() not in snap0 for t in (a1, b1, c1)),
        "c1_on_s1": snap1.get(c1.data_ptr(), {}).get("stream") == s1.cuda_stream,
        "allocated0": st0["allocated_bytes.all.current"], "allocated1": st1["allocated_bytes.all.current"],
        "allocs0": st0["allocation.all.allocated"], "allocs1": st1["allocation.all.allocated"],
    }
    reserved1 = wt.memory_reserved(1)
    s1_ptr = s1.cuda_stream
    del a1, b1, c1
    torch.cuda.synchronize(1)
    res["allocated1_after_del"] = wt.memory_allocated(1)
    wt.forget_stream(s1)
    wt.empty_cache()
    res.update(reserved1_before=reserved1, reserved1_after_empty_cache=wt.memory_reserved(1),
               current_at_end=torch.cuda.current_device(), s1=s1_ptr)
    result(res)


REASON = skip_reason("torch", "import torch; print(torch.cuda.device_count())",
                     lambda n: n.isdigit() and int(n) >= 2, "fewer than two GPUs")


@unittest.skipIf(REASON, REASON or "")
class TwoGpus(unittest.TestCase):
    def test_one_process_two_devices(self):
        r, p = run_child(__file__)
        self.assertTrue(r, no_result(p))
        print(f"\n  {r}", flush=True)
        self.assertTrue(r["values_ok"], "copies 0 -> 1 -> 0 and the product on device 1 are wrong")
        self.assertEqual(r["current_after_alloc"], 0, "allocating on cuda:1 changed the current device")
        self.assertEqual(r["current_at_end"], 0)
        self.assertTrue(r["a0_on_0"], "cuda:0's tensor is not in device 0's pool alone")
        self.assertTrue(r["on_1"], "cuda:1's tensors are not in device 1's pool alone")
        self.assertTrue(r["c1_on_s1"], "the tensor made under a stream of device 1 is not on that stream")
        self.assertGreaterEqual(r["allocated0"], 4 * MIB + 4 * MIB)  # a0 and back
        self.assertGreaterEqual(r["allocated1"], 8 * MIB + 4 * MIB + 4 * MIB)  # a1, b1, c1
        self.assertGreater(r["allocs0"], 0)
        self.assertGreater(r["allocs1"], 0)
        self.assertLess(r["allocated1_after_del"], 4 * MIB)
        self.assertLess(r["reserved1_after_empty_cache"], r["reserved1_before"])

    def test_ddp_losses_same_on_both_allocators(self):
        p = subprocess.run([sys.executable, os.path.join(HERE, "ddp_torch.py"), "--nproc", "2", "--steps", "50"],
                           capture_output=True, text=True, timeout=900)
        print("\n" + "\n".join(p.stdout.splitlines()[-4:]), flush=True)
        self.assertEqual(p.returncode, 0, f"{p.stdout[-3000:]}\n{p.stderr[-3000:]}")


if __name__ == "__main__":
    if sys.argv[1:] == ["--child"]:
        child()
    else:
        unittest.main()
