# SPDX-License-Identifier: MIT
"""libwarpheap_plugin.so through ctypes: options, statistics, live blocks, trim.

Loaded on first use, so importing the package needs no GPU.  WARPHEAP_PLUGIN
names another copy of the library (a path)."""
import ctypes
import os

from .config import plugin_values

PLUGIN = "libwarpheap_plugin.so"
DEVICES = 64  # the plug-in's pools: devices 0..63

# wh_pool_stats's fields, in order (include/warpheap/pool.h)
STATS_FIELDS = ("in_use", "in_use_peak", "requested", "reserved", "reserved_peak", "cached", "largest_free",
                "allocs", "frees", "failures", "tag_hits", "arenas", "arena_allocs", "arena_frees", "growths",
                "moves", "bytes_released", "driver_ns", "pending", "tag_cached", "retries",
                "corruptions", "waits", "retired")


class PoolStats(ctypes.Structure):
    _fields_ = [(name, ctypes.c_uint64) for name in STATS_FIELDS]


class Block(ctypes.Structure):  # wh_pool_block
    _fields_ = [("ptr", ctypes.c_void_p), ("size", ctypes.c_size_t), ("requested", ctypes.c_size_t),
                ("stream", ctypes.c_void_p), ("tag", ctypes.c_void_p)]


class PluginError(RuntimeError):
    """The plug-in is missing or refused a call; the message says why."""


_lib = None
_applied = None  # the options given to the plug-in so far


def plugin_path():
    """The plug-in's path: WARPHEAP_PLUGIN, else the package's copy."""
    path = os.environ.get("WARPHEAP_PLUGIN") or os.path.join(os.path.dirname(__file__), "lib", PLUGIN)
    if not os.path.exists(path):
        raise PluginError(f"warpheap: {path} does not exist (the package was built without the CUDA toolkit, or "
                          f"WARPHEAP_PLUGIN names a missing file)")
    return path


def _declare(lib):
    c = ctypes
    sig = {
        "wh_plugin_set_option": (c.c_int, [c.c_int, c.c_char_p, c.c_ulonglong]),
        "wh_plugin_last_error": (c.c_char_p, []),
        "wh_plugin_pool_stats": (c.c_int, [c.c_int, c.POINTER(PoolStats), c.c_size_t]),
        "wh_plugin_reset_peak": (c.c_int, [c.c_int]),
        "wh_plugin_trim": (c.c_int, [c.c_int, c.c_size_t]),
        "wh_plugin_live_blocks": (c.c_int, [c.c_int, c.POINTER(Block), c.c_size_t, c.POINTER(c.c_size_t)]),
        "wh_plugin_forget_stream": (c.c_int, [c.c_int, c.c_void_p]),
        "wh_plugin_record_stream": (c.c_int, [c.c_int, c.c_void_p, c.c_void_p]),
        "wh_torch_record_stream": (None, [c.c_void_p, c.c_void_p]),
        "wh_cupy_malloc_stream": (c.c_void_p, [c.c_size_t, c.c_int, c.c_void_p]),
        "wh_cupy_free_stream": (None, [c.c_void_p, c.c_int, c.c_void_p]),
    }
    for name, (res, args) in sig.items():
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args


def load():
    """The plug-in, loaded once."""
    global _lib
    if _lib is None:
        lib = ctypes.CDLL(plugin_path())
        _declare(lib)
        _lib = lib
    return _lib


def address(name):
    """The address of the plug-in's entry point name (for a framework's hook)."""
    return ctypes.cast(getattr(load(), name), ctypes.c_void_p).value


def _check(rc, what):
    if rc != 0:
        raise PluginError(f"warpheap: {what}: {load().wh_plugin_last_error().decode()}")


def configure(options, device=-1):
    """Give the plug-in options (config.resolve's) before the pools exist.
    Giving the same options again does nothing."""
    global _applied
    if options == _applied and device == -1:
        return
    lib = load()
    for key, value in plugin_values(options):
        _check(lib.wh_plugin_set_option(device, key.encode(), value), f"option {key}")
    if device == -1:
        _applied = dict(options)


def has_pool(device):
    """Whether device has a pool (it allocated through the plug-in)."""
    return load().wh_plugin_pool_stats(device, PoolStats(), ctypes.sizeof(PoolStats)) == 0


def pool_stats(device):
    """wh_pool_stats of device's pool as a dict (zeros before its first allocation)."""
    s = PoolStats()
    if load().wh_plugin_pool_stats(device, ctypes.byref(s), ctypes.sizeof(s)) != 0:
        return dict.fromkeys(STATS_FIELDS, 0)
    return {name: getattr(s, name) for name in STATS_FIELDS}


def reset_peak(device):
    if has_pool(device):
        _check(load().wh_plugin_reset_peak(device), "reset_peak")


def trim(device, keep_bytes=0):
    if has_pool(device):
        _check(load().wh_plugin_trim(device, keep_bytes), "trim")


def live_blocks(device):
    """The live blocks of device's pool: dicts of address, size, requested_size, stream, tag; by address."""
    lib, n = load(), ctypes.c_size_t(0)
    if not has_pool(device):
        return []
    for _ in range(8):  # blocks come and go between the two calls: a few tries, then what fits
        cap = n.value + 64
        arr = (Block * cap)()
        _check(lib.wh_plugin_live_blocks(device, arr, cap, ctypes.byref(n)), "live blocks")
        if n.value <= cap:
            break
    rows = [{"address": b.ptr or 0, "size": b.size, "requested_size": b.requested, "stream": b.stream or 0,
             "tag": b.tag or 0} for b in arr[:min(n.value, cap)]]
    return sorted(rows, key=lambda r: r["address"])


def record_stream(device, ptr, stream):
    """Block ptr of device's pool (-1: whichever pool holds it) is also used by
    the work queued on stream now: it goes to other streams only after that work."""
    _check(load().wh_plugin_record_stream(device, ptr, stream), "record_stream")


def forget_stream(device, stream):
    """Before destroying a stream that allocated from device's pool."""
    _check(load().wh_plugin_forget_stream(device, stream), "forget_stream")
