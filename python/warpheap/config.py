# SPDX-License-Identifier: MIT
"""Options of the pools, from keyword arguments and the environment.

WARPHEAP_CONF="key:value,key:value" in the style of PYTORCH_CUDA_ALLOC_CONF;
keyword arguments of enable() win over it.  Every pool (one per device)
takes them when it is created, at the device's first allocation:

  growth             default | arenas | vmm: how the pool gets memory from the
                     driver (docs/pool.md, Growth)
  max_bytes          cap on the bytes the pool reserves (0: none)
  release_threshold  a free that leaves more than this cached gives the rest
                     back, waiting for the streams that hold freed blocks
                     (0: never; empty_cache() gives all of it back)
  alignment          of every block: a power of two up to 1 GiB (256)
  max_streams        streams with a free index of their own, 1..62 (62); any
                     number of streams is served
  max_blocks         block descriptors, 2..2^28 (2^18)
  footprint          tight | loose: whether growth past its budget moves
                     memory the requesting stream freed where the request
                     needs it (its old address kept mapped until the
                     stream's queued work is done), and waits for that work
                     where that is not enough (docs/pool.md, Range growth)
                     (tight)
  vmm_slack_pm       growth's budget: the peak in use plus this many
                     thousandths of it, 1..1000 (30; the C library's
                     default is 100)
  secure             true | false: the pool's hardened mode (docs/pool.md,
                     Hardened mode): a second free of memory that went to a
                     new owner is caught, at some bytes per block (false)

A size is bytes, or a number with a unit: KB MB GB TB (powers of 1000) or
KiB MiB GiB TiB (powers of 1024), e.g. max_bytes:40GiB.  An unknown key or a
bad value raises ConfigError naming it.
"""
import os
import re

ENV = "WARPHEAP_CONF"

GROWTH = {"default": 0, "arenas": 1, "vmm": 2}
FOOTPRINT = {"tight": 0, "loose": 1}
_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
          "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$")


class ConfigError(ValueError):
    """An unknown option or a bad value; the message names it."""


def parse_size(value):
    """Bytes from an int or a string like '512MiB'."""
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a size")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"{value} is negative")
        return value
    m = _SIZE.match(str(value))
    unit = m and _UNITS.get(m.group(2).lower())
    if not unit:
        raise ValueError(f"{value!r} is not a size (bytes, or a number with KB, MB, GB, TB, KiB, MiB, GiB or TiB)")
    n = float(m.group(1)) * unit
    if n != int(n):
        raise ValueError(f"{value!r} is not a whole number of bytes")
    return int(n)


def _int_in(lo, hi):
    def parse(value):
        try:
            n = int(value, 10) if isinstance(value, str) else value
        except ValueError:
            raise ValueError(f"{value!r} is not an integer") from None
        if isinstance(n, bool) or not isinstance(n, int) or not lo <= n <= hi:
            raise ValueError(f"{value!r} is not an integer in [{lo}, {hi}]")
        return n
    return parse


def _one_of(names):
    def parse(value):
        if value not in names:
            raise ValueError(f"{value!r} is not one of {', '.join(names)}")
        return value
    return parse


def _bool(value):
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"{value!r} is not true or false")


def _alignment(value):
    n = parse_size(value)
    if n == 0 or n & (n - 1) or n > 2**30:
        raise ValueError(f"{value!r} is not a power of two up to 1 GiB")
    return n


def _size_below(limit):
    def parse(value):
        n = parse_size(value)
        if n >= limit:
            raise ValueError(f"{value!r} is not below 2^{limit.bit_length() - 1} bytes")
        return n
    return parse


# key: its parser (value -> canonical value, ValueError on a bad one)
OPTIONS = {
    "growth": _one_of(GROWTH),
    "footprint": _one_of(FOOTPRINT),
    "vmm_slack_pm": _int_in(1, 1000),
    "max_bytes": _size_below(2**62),
    "release_threshold": _size_below(2**62),
    "alignment": _alignment,
    "max_streams": _int_in(1, 62),
    "max_blocks": _int_in(2, 2**28),
    "secure": _bool,
}


def check(key, value, source="option"):
    """The canonical value of one option; ConfigError naming the key otherwise."""
    if key not in OPTIONS:
        raise ConfigError(f"{source}: unknown option {key!r} (known: {', '.join(OPTIONS)})")
    try:
        return OPTIONS[key](value)
    except ValueError as e:
        raise ConfigError(f"{source}: {key}: {e}") from None


def parse(text, source=ENV):
    """Options from 'key:value,key:value' (spaces around items allowed; empty: none)."""
    out = {}
    for item in (text or "").split(","):
        if not item.strip():
            continue
        key, sep, value = item.partition(":")
        key, value = key.strip(), value.strip()
        if not sep or not value:
            raise ConfigError(f"{source}: {item.strip()!r} is not key:value")
        if key in out:
            raise ConfigError(f"{source}: {key} is given twice")
        out[key] = check(key, value, source)
    return out


def resolve(options=None, environ=None):
    """WARPHEAP_CONF's options, then the keyword arguments over them, all checked."""
    environ = os.environ if environ is None else environ
    out = parse(environ.get(ENV, ""))
    for key, value in (options or {}).items():
        out[key] = check(key, value, "enable()")
    return out


def plugin_values(options):
    """(key, integer) pairs for the plug-in's wh_plugin_set_option."""
    names = {"growth": GROWTH, "footprint": FOOTPRINT}
    return [(k, names[k][v] if k in names else int(v)) for k, v in sorted(options.items())]
