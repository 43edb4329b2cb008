# SPDX-License-Identifier: MIT
"""PyTorch on warpheap's pool: enable() swaps the CUDA allocator; the rest
mirrors torch.cuda's memory functions, which raise or do nothing with a
pluggable allocator.

    import warpheap.torch
    warpheap.torch.enable(max_bytes="40GiB")     # before the first CUDA tensor
    ...
    print(warpheap.torch.memory_summary())
"""
from . import _plugin, config, stats

_enabled = None  # the options enable() was given


def enable(**options):
    """Make warpheap's pool PyTorch's CUDA allocator, with options (see
    warpheap.config) over WARPHEAP_CONF.  Call it before the process's first
    CUDA allocation; a second call with the same options does nothing."""
    global _enabled
    import torch

    opts = config.resolve(options)
    if _enabled is not None:
        if opts != _enabled:
            raise RuntimeError(f"warpheap.torch.enable: already enabled with {_enabled}, now asked for {opts}")
        return
    _plugin.configure(opts)
    alloc = torch.cuda.memory.CUDAPluggableAllocator(_plugin.plugin_path(), "wh_torch_alloc", "wh_torch_free")
    try:
        torch.cuda.memory.change_current_allocator(alloc)
    except RuntimeError as e:
        raise RuntimeError("warpheap.torch.enable: PyTorch's own CUDA allocator is already in use (a CUDA tensor "
                           "was made before); call enable() before the first CUDA allocation, at the top of the "
                           f"program ({e})") from e
    _enabled = opts


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
