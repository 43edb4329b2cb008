# SPDX-License-Identifier: MIT
"""PyTorch on warpheap's pool: enable() swaps the CUDA allocator and sets
its record-stream hook; the rest mirrors torch.cuda's memory functions,
which raise or do nothing with a pluggable allocator.

    import warpheap.torch
    warpheap.torch.enable(max_bytes="40GiB")     # before the first CUDA tensor
    ...
    print(warpheap.torch.memory_summary())

tensor.record_stream(s) reaches the pool through PyTorch's record-stream
hook of the pluggable allocator (its set_record_stream_fn, which PyTorch
binds for Python): the block goes back to other streams only after the work
queued on s when the tensor is freed, for calls from Python and from
PyTorch's C++ code alike (the autograd engine across streams, NCCL's
send/recv).  A PyTorch without that binding gets a warning, and
record_stream_hooked() says which case this process is in.
"""
import warnings

from . import _plugin, config, stats

_enabled = None  # the options enable() was given
_hooked = False  # whether PyTorch's record-stream hook is the plug-in's


def enable(**options):
    """Make warpheap's pool PyTorch's CUDA allocator, with options (see
    warpheap.config) over WARPHEAP_CONF.  Call it before the process's first
    CUDA allocation; a second call with the same options does nothing."""
    global _enabled, _hooked
    import torch

    opts = config.resolve(options)
    if _enabled is not None:
        if opts != _enabled:
            raise RuntimeError(f"warpheap.torch.enable: already enabled with {_enabled}, now asked for {opts}")
        return
    _plugin.configure(opts)
    alloc = torch.cuda.memory.CUDAPluggableAllocator(_plugin.plugin_path(), "wh_torch_alloc", "wh_torch_free")
    hooked = _hook_record_stream(alloc, torch.__version__)
    try:
        torch.cuda.memory.change_current_allocator(alloc)
    except RuntimeError as e:
        raise RuntimeError("warpheap.torch.enable: PyTorch's own CUDA allocator is already in use (a CUDA tensor "
                           "was made before); call enable() before the first CUDA allocation, at the top of the "
                           f"program ({e})") from e
    _enabled, _hooked = opts, hooked


def _hook_record_stream(alloc, version):
    """Point the pluggable allocator's record-stream hook at the plug-in's
    wh_torch_record_stream; True when done, False with a warning where this
    PyTorch has no such hook for Python."""
    target = alloc.allocator()
    setter = getattr(target, "set_record_stream_fn", None)
    if setter is None:
        warnings.warn(f"warpheap.torch.enable: PyTorch {version} has no set_record_stream_fn on its pluggable "
                      "allocator, so tensor.record_stream() does nothing: a tensor freed on its allocation stream "
                      "is handed out again while other streams may still use it.  Make its allocation stream wait "
                      "for them (stream.wait_stream) before the tensor is dropped.", RuntimeWarning, stacklevel=3)
        return False
    setter(_plugin.address("wh_torch_record_stream"))
    return True


def record_stream_hooked():
    """Whether tensor.record_stream reaches the pool (enable() set PyTorch's
    record-stream hook); False before enable()."""
    return _hooked


def _device(device):
    import torch

    if device is None:
        return torch.cuda.current_device()
    if isinstance(device, torch.device):
        return device.index if device.index is not None else torch.cuda.current_device()
    if isinstance(device, str):
        return _device(torch.device(device))
    return int(device)


def _devices(device):
    """[device's index], or every device's when device is None."""
    import torch

    return [_device(device)] if device is not None else list(range(torch.cuda.device_count()))


def memory_stats(device=None):
    """The pool's statistics under torch.cuda.memory_stats()'s keys, plus warpheap.* ones."""
    return stats.torch_stats(_plugin.pool_stats(_device(device)))


def memory_allocated(device=None):
    return _plugin.pool_stats(_device(device))["in_use"]


def memory_reserved(device=None):
    return _plugin.pool_stats(_device(device))["reserved"]


def max_memory_allocated(device=None):
    return _plugin.pool_stats(_device(device))["in_use_peak"]


def max_memory_reserved(device=None):
    return _plugin.pool_stats(_device(device))["reserved_peak"]


def memory_summary(device=None):
    """A printable table of the pool's statistics."""
    d = _device(device)
    return stats.summary(_plugin.pool_stats(d), d)


def reset_peak_memory_stats(device=None):
    _plugin.reset_peak(_device(device))


def empty_cache(device=None):
    """Give the pool's cached memory back to the driver (every device's by default).
    Waits for the streams that hold freed blocks."""
    for d in _devices(device):
        _plugin.trim(d, 0)


def snapshot(device=None):
    """The live blocks: dicts of address, size, requested_size, stream (cudaStream_t as an int) and tag."""
    return _plugin.live_blocks(_device(device))


def forget_stream(stream, device=None):
    """Call before a torch.cuda.Stream that allocated goes away: waits for its
    work and frees its slot in the pool (slots also come back by themselves
    once no block names them)."""
    _plugin.forget_stream(_device(device if device is not None else stream.device), stream.cuda_stream)
