# SPDX-License-Identifier: MIT
"""CuPy on warpheap's pool, each block on CuPy's current stream.

    import warpheap.cupy
    warpheap.cupy.enable()

The allocator reads cupy.cuda.get_current_stream() at each allocation and
frees the block on that same stream when CuPy drops it, as CuPy's own pool
does: the block is reused on that stream at once and on other streams once
the work queued there before the free has finished.  (CuPy's
PythonFunctionAllocator would free on the stream current at the free, which
may be another one: this allocator hands CuPy an UnownedMemory whose owner
frees the block on its allocation stream instead.)
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
    return _plugin.pool_stats(_device(device))


def _device(device):
    import cupy

    return cupy.cuda.runtime.getDevice() if device is None else int(device)


def snapshot(device=None):
    """The live blocks of device's pool (CuPy's current device by default):
    dicts of address, size, requested_size, stream (the cudaStream_t it was
    allocated on, as an int: cupy.cuda.Stream.ptr) and tag."""
    return _plugin.live_blocks(_device(device))


def forget_stream(stream, device=None):
    """Call before a cupy.cuda.Stream that allocated goes away (optional: a
    slot also comes back once no block names it)."""
    _plugin.forget_stream(_device(device), stream.ptr)
