# SPDX-License-Identifier: MIT
"""The package without a GPU: it imports without PyTorch or CuPy, its ctypes
structures match include/warpheap/pool.h, the statistics map to PyTorch's
keys, and -- when the plug-in is built -- its configuration calls work and
refuse bad input by name (they touch no GPU)."""
import os
import re
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import warpheap  # noqa: E402
import warpheap.cupy  # noqa: E402,F401
import warpheap.torch  # noqa: E402,F401
from warpheap import _plugin, stats  # noqa: E402

HEADER = os.path.join(HERE, "..", "..", "include", "warpheap", "pool.h")


def struct_fields(text, name):
    body = re.search(r"typedef struct %s \{(.*?)\} %s;" % (name, name), text, re.S).group(1)
    body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
    fields = []
    for decl in body.split(";"):
        decl = decl.strip()
        if decl:
            names = decl.split(None, 1)[1] if not decl.startswith("const") else decl.split(None, 2)[2]
            fields += [n.strip().lstrip("*") for n in names.split(",")]
    return fields


class Package(unittest.TestCase):
    def test_imports_without_frameworks(self):
        self.assertNotIn("torch", sys.modules)
        self.assertNotIn("cupy", sys.modules)
        self.assertEqual(warpheap.__version__, "0.1.0")

    def test_missing_plugin_named(self):
        old = os.environ.get("WARPHEAP_PLUGIN")
        os.environ["WARPHEAP_PLUGIN"] = "/nonexistent/libwarpheap_plugin.so"
        try:
            with self.assertRaises(warpheap.PluginError) as e:
                warpheap.plugin_path()
            self.assertIn("/nonexistent/libwarpheap_plugin.so does not exist", str(e.exception))
        finally:
            if old is None:
                del os.environ["WARPHEAP_PLUGIN"]
            else:
                os.environ["WARPHEAP_PLUGIN"] = old

    @unittest.skipUnless(os.path.exists(HEADER), "pool.h not beside the package")
    def test_structures_match_header(self):
        with open(HEADER) as f:
            text = f.read()
        self.assertEqual(tuple(struct_fields(text, "wh_pool_stats")), _plugin.STATS_FIELDS)
        self.assertEqual([f[0] for f in _plugin.Block._fields_], struct_fields(text, "wh_pool_block"))

    def test_torch_keys(self):
        s = dict.fromkeys(_plugin.STATS_FIELDS, 0)
        s.update(in_use=1024, in_use_peak=4096, reserved=1 << 21, reserved_peak=1 << 22, allocs=10, frees=7,
                 failures=2, retries=3, cached=(1 << 21) - 1024)
        t = stats.torch_stats(s)
        self.assertEqual(t["allocated_bytes.all.current"], 1024)
        self.assertEqual(t["allocated_bytes.all.peak"], 4096)
        self.assertEqual(t["reserved_bytes.all.current"], 1 << 21)
        self.assertEqual(t["reserved_bytes.all.peak"], 1 << 22)
        self.assertEqual(t["allocation.all.current"], 3)
        self.assertEqual((t["allocation.all.allocated"], t["allocation.all.freed"]), (10, 7))
        self.assertEqual((t["num_ooms"], t["num_alloc_retries"]), (2, 3))
        self.assertEqual(t["warpheap.cached"], (1 << 21) - 1024)
        table = stats.summary(s, 0)
        self.assertIn("warpheap pool, device 0", table)
        self.assertIn("4.0 MiB", table)  # peak reserved
        self.assertIn("10 / 7", table)


def plugin_or_none():
    try:
        return _plugin.load()
    except (warpheap.PluginError, OSError):
        return None


@unittest.skipUnless(plugin_or_none(), "no libwarpheap_plugin.so (CPU-only build, or WARPHEAP_PLUGIN unset)")
class Plugin(unittest.TestCase):
    def test_options_before_the_pool(self):
        lib = _plugin.load()
        self.assertEqual(lib.wh_plugin_set_option(-1, b"max_bytes", 1 << 30), 0)
        self.assertEqual(lib.wh_plugin_set_option(3, b"growth", 1), 0)
        self.assertEqual(lib.wh_plugin_set_option(0, b"max_byte", 1), -1)
        self.assertIn(b"unknown option 'max_byte'", lib.wh_plugin_last_error())
        for key, good, bad, msg in [(b"secure", 1, 2, b"secure: 2 is not 0 or 1"),
                                    (b"footprint", 1, 2, b"footprint: 2 is not 0 (tight) or 1 (loose)"),
                                    (b"vmm_slack_pm", 30, 0, b"vmm_slack_pm: 0 is not in [1, 1000]")]:
            self.assertEqual(lib.wh_plugin_set_option(2, key, good), 0)
            self.assertEqual(lib.wh_plugin_set_option(2, key, bad), -1)
            self.assertIn(msg, lib.wh_plugin_last_error())
        self.assertEqual(lib.wh_plugin_set_option(64, b"max_bytes", 1), -1)
        self.assertIn(b"device 64", lib.wh_plugin_last_error())

    def test_record_stream_refused_by_name(self):
        lib = _plugin.load()
        self.assertEqual(lib.wh_plugin_record_stream(64, 0x1000, None), -1)
        self.assertIn(b"device 64 is not in [-1, 64)", lib.wh_plugin_last_error())
        self.assertEqual(lib.wh_plugin_record_stream(-2, 0x1000, None), -1)
        self.assertIn(b"device -2", lib.wh_plugin_last_error())
        self.assertEqual(lib.wh_plugin_record_stream(0, None, None), -1)
        self.assertIn(b"ptr is NULL", lib.wh_plugin_last_error())
        self.assertEqual(lib.wh_plugin_record_stream(5, 0x1000, None), -1)
        self.assertIn(b"device 5 has no pool", lib.wh_plugin_last_error())
        self.assertEqual(lib.wh_plugin_record_stream(-1, 0x1000, None), -1)
        self.assertIn(b"no live block of any device's pool", lib.wh_plugin_last_error())
        with self.assertRaises(warpheap.PluginError) as e:
            _plugin.record_stream(-1, 0x1000, 0)
        self.assertIn("record_stream", str(e.exception))
        lib.wh_torch_record_stream(None, None)  # PyTorch's hook passes over memory that is not the pool's
        lib.wh_torch_record_stream(0x1000, None)

    def test_no_pool_yet(self):
        self.assertFalse(_plugin.has_pool(0))
        self.assertEqual(_plugin.pool_stats(0)["reserved"], 0)
        self.assertEqual(_plugin.live_blocks(0), [])
        _plugin.trim(0)
        _plugin.reset_peak(0)
        _plugin.configure({"growth": "arenas", "max_streams": 4})


if __name__ == "__main__":
    unittest.main()
