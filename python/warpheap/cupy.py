# SPDX-License-Identifier: MIT
"""CuPy on warpheap's pool, each block on CuPy's current stream.

    import warpheap.cupy
    warpheap.cupy.enable()

The allocator reads cupy.cuda.get_current_stream() at each allocation and
frees the block on that same stream when CuPy drops it, as CuPy's own pool
does: the block is reused on that stream at once and on other streams once
the work queued there before the free has finished.
"""
from . import _plugin, config


class _Block:
    """Owns one block; CuPy drops it when the memory is no longer used."""

    __slots__ = ("lib", "ptr", "device", "stream")

    def __init__(self, lib, ptr, device, stream):
        self.lib, self.ptr, self.device, self.stream = lib, ptr, device, stream

    def __del__(self):
        self.lib.wh_cupy_free_stream(self.ptr, self.device, self.stream)


class Allocator:
    """A CuPy allocator (cupy.cuda.set_allocator(Allocator().malloc))."""

    def __init__(self):
        self.lib = _plugin.load()

    def malloc(self, size):
        import cupy

        device = cupy.cuda.runtime.getDevice()
        stream = cupy.cuda.get_current_stream().ptr
        ptr = self.lib.wh_cupy_malloc_stream(size, device, stream)
        if not ptr:
            raise cupy.cuda.memory.OutOfMemoryError(size, 0, 0)
        mem = cupy.cuda.memory.UnownedMemory(ptr, size, _Block(self.lib, ptr, device, stream), device)
        return cupy.cuda.memory.MemoryPointer(mem, 0)


def enable(**options):
    """Make warpheap's pool CuPy's allocator, with options (see warpheap.config) over WARPHEAP_CONF."""
    import cupy

    _plugin.configure(config.resolve(options))
    cupy.cuda.set_allocator(Allocator().malloc)


def memory_stats(device=None):
    """The pool's statistics (wh_pool_stats's fields) of device (CuPy's current by default)."""
    import cupy

    return _plugin.pool_stats(cupy.cuda.runtime.getDevice() if device is None else int(device))
