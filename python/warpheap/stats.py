# SPDX-License-Identifier: MIT
"""The pool's statistics under PyTorch's names (torch.cuda.memory_stats), and a table of them."""

# PyTorch's key: the wh_pool_stats field (or a function of the fields) it is
TORCH_KEYS = {
    "allocated_bytes.all.current": "in_use",
    "allocated_bytes.all.peak": "in_use_peak",
    "requested_bytes.all.current": "requested",
    "reserved_bytes.all.current": "reserved",
    "reserved_bytes.all.peak": "reserved_peak",
    "allocation.all.current": lambda s: s["allocs"] - s["frees"],
    "allocation.all.allocated": "allocs",
    "allocation.all.freed": "frees",
    "segment.all.current": "arenas",
    "num_device_alloc": "arena_allocs",
    "num_device_free": "arena_frees",
    "num_alloc_retries": "retries",
    "num_sync_all_streams": "waits",
    "num_ooms": "failures",
}

# what PyTorch has no name for, under warpheap.
WARPHEAP_KEYS = ("cached", "largest_free", "tag_hits", "tag_cached", "pending", "growths", "moves", "bytes_released",
                 "driver_ns", "retired")


def torch_stats(s):
    """A dict like torch.cuda.memory_stats() from wh_pool_stats fields s."""
    out = {key: f(s) if callable(f) else s[f] for key, f in TORCH_KEYS.items()}
    out.update({"warpheap." + k: s[k] for k in WARPHEAP_KEYS})
    return dict(sorted(out.items()))


def _bytes(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def summary(s, device):
    """A printable table of wh_pool_stats fields s (like torch.cuda.memory_summary)."""
    rows = [
        ("allocated (live blocks)", _bytes(s["in_use"]), _bytes(s["in_use_peak"])),
        ("requested by live blocks", _bytes(s["requested"]), ""),
        ("reserved from the driver", _bytes(s["reserved"]), _bytes(s["reserved_peak"])),
        ("cached (reserved - allocated)", _bytes(s["cached"]), ""),
        ("largest free block", _bytes(s["largest_free"]), ""),
        ("live allocations", str(s["allocs"] - s["frees"]), ""),
        ("allocations / frees", f"{s['allocs']} / {s['frees']}", ""),
        ("failed allocations (OOMs)", str(s["failures"]), ""),
        ("retries after flushing caches", str(s["retries"]), ""),
        ("waits for the streams (footprint)", str(s["waits"]), ""),
        ("served by a kept block", str(s["tag_hits"]), ""),
        ("blocks waiting for streams", str(s["pending"]), ""),
        ("driver allocations / frees", f"{s['arena_allocs']} / {s['arena_frees']}", ""),
    ]
    w = max(len(r[0]) for r in rows)
    line = "-" * (w + 34)
    out = [line, f"warpheap pool, device {device}".ljust(w) + f" | {'current':>14} | {'peak':>14}", line]
    out += [f"{name.ljust(w)} | {cur:>14} | {peak:>14}" for name, cur, peak in rows]
    return "\n".join(out + [line])
