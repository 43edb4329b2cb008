# SPDX-License-Identifier: MIT
# CuPy allocates its device memory from warpheap's host pool through libwarpheap_plugin.so (a CUDA build's lib/).
import ctypes
import sys

import cupy

lib = ctypes.CDLL(sys.argv[1] if len(sys.argv) > 1 else "libwarpheap_plugin.so")   # or a name on LD_LIBRARY_PATH
malloc, free = (ctypes.cast(f, ctypes.c_void_p).value for f in (lib.wh_cupy_malloc, lib.wh_cupy_free))
alloc = cupy.cuda.memory.CFunctionAllocator(0, malloc, free, lib)    # lib: keeps the library loaded
cupy.cuda.set_allocator(alloc.malloc)               # CuPy passes no stream: the pool orders by the default stream

x = cupy.random.standard_normal((1024, 1024), dtype=cupy.float32)
total = float((x @ x).sum())
# wh_plugin_stats: in use, peak in use, reserved, peak reserved, allocs, frees, failures, tag hits
stats = (ctypes.c_ulonglong * 8)()
if lib.wh_plugin_stats(cupy.cuda.Device().id, stats) != 0:
    sys.exit("warpheap plug-in: no pool on this device")
print(f"cupy on warpheap: sum {total:.1f}; {stats[4]} allocations, {stats[2]} bytes reserved")
