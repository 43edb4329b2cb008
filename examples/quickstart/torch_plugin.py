# SPDX-License-Identifier: MIT
# PyTorch allocates its CUDA memory from warpheap's host pool through libwarpheap_plugin.so (a CUDA build's lib/).
import ctypes
import sys

import torch

lib = sys.argv[1] if len(sys.argv) > 1 else "libwarpheap_plugin.so"   # a path, or a name on LD_LIBRARY_PATH
# Swap before the process's first CUDA allocation: PyTorch refuses once its allocator has been used.
alloc = torch.cuda.memory.CUDAPluggableAllocator(lib, "wh_torch_alloc", "wh_torch_free")
torch.cuda.memory.change_current_allocator(alloc)

x = torch.randn(1024, 1024, device="cuda")          # every tensor now comes from the pool, stream-ordered
total = (x @ x).sum().item()
# wh_plugin_stats: in use, peak in use, reserved, peak reserved, allocs, frees, failures, tag hits
stats = (ctypes.c_ulonglong * 8)()
if ctypes.CDLL(lib).wh_plugin_stats(torch.cuda.current_device(), stats) != 0:
    sys.exit("warpheap plug-in: no pool on this device")
print(f"torch on warpheap: sum {total:.1f}; {stats[4]} allocations, {stats[2]} bytes reserved")
