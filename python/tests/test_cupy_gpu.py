# SPDX-License-Identifier: MIT
"""CuPy on warpheap's pool puts each block on CuPy's current stream (needs
CuPy, a GPU and the plug-in; skipped otherwise).

In a fresh process (python3 python/tests/test_cupy_gpu.py --child, one line
RESULT {...}): warpheap.cupy.enable(), an array made inside `with s:` for a
non-default cupy.cuda.Stream s, one made on the default stream; the pool's
snapshot must name s for the first block and the default stream for the
second.  A block freed on s comes back to the next request of its size on
s, and the results computed in the pool's memory are right.
  WARPHEAP_PLUGIN=build/lib/libwarpheap_plugin.so python3 -m unittest python/tests/test_cupy_gpu.py -v
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpu_child import PACKAGE, no_result, result, run_child, skip_reason  # noqa: E402


def child():
    sys.path.insert(0, PACKAGE)
    import cupy

    import warpheap.cupy

    warpheap.cupy.enable()
    s = cupy.cuda.Stream(non_blocking=True)
    with s:
        a = cupy.arange(1 << 20, dtype=cupy.int64)
        total = int(a.sum())
    d = cupy.zeros(1000, dtype=cupy.float32)
    blocks = {b["address"]: b for b in warpheap.cupy.snapshot()}
    on_s, on_default = blocks.get(a.data.ptr), blocks.get(d.data.ptr)
    a_addr = a.data.ptr
    del a
    with s:
        b = cupy.empty(1 << 20, dtype=cupy.int64)
    s.synchronize()
    res = {
        "stream_s": s.ptr, "default_stream": cupy.cuda.Stream.null.ptr,
        "block_stream_s": on_s and on_s["stream"], "block_stream_default": on_default and on_default["stream"],
        "reused_on_s": b.data.ptr == a_addr, "sum_ok": total == (1 << 20) * ((1 << 20) - 1) // 2,
        "pool_allocs": warpheap.cupy.memory_stats()["allocs"],
    }
    result(res)


REASON = skip_reason("cupy", "import cupy; print(cupy.cuda.runtime.getDeviceCount())",
                     lambda n: n.isdigit() and int(n) > 0, "CuPy sees no GPU")


@unittest.skipIf(REASON, REASON or "")
class CurrentStream(unittest.TestCase):
    def test_blocks_on_cupy_current_stream(self):
        r, p = run_child(__file__)
        self.assertTrue(r, no_result(p))
        print(f"\n  {r}", flush=True)
        self.assertNotEqual(r["stream_s"], r["default_stream"])
        self.assertEqual(r["block_stream_s"], r["stream_s"], "the block made inside `with s:` is not on s")
        self.assertEqual(r["block_stream_default"], r["default_stream"], "the block made outside is not on the "
                                                                         "default stream")
        self.assertTrue(r["reused_on_s"], "a block freed on s did not come back to the next request on s")
        self.assertTrue(r["sum_ok"])
        self.assertGreater(r["pool_allocs"], 0)


if __name__ == "__main__":
    if sys.argv[1:] == ["--child"]:
        child()
    else:
        unittest.main()
