# SPDX-License-Identifier: MIT
"""Options and WARPHEAP_CONF: what is accepted, and errors that name the key and the value."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from warpheap import config  # noqa: E402
from warpheap.config import ConfigError  # noqa: E402


class Parse(unittest.TestCase):
    def test_every_option(self):
        got = config.parse("growth:vmm, max_bytes:40GiB,release_threshold:512MB,alignment:4KiB,"
                           "max_streams:8,max_blocks:65536,secure:true,footprint:loose,vmm_slack_pm:50")
        self.assertEqual(got, {"growth": "vmm", "max_bytes": 40 << 30, "release_threshold": 512 * 10**6,
                               "alignment": 4096, "max_streams": 8, "max_blocks": 65536, "secure": True,
                               "footprint": "loose", "vmm_slack_pm": 50})
        self.assertEqual(config.plugin_values({"footprint": "tight", "vmm_slack_pm": 30}),
                         [("footprint", 0), ("vmm_slack_pm", 30)])
        self.assertEqual(config.plugin_values({"footprint": "loose"}), [("footprint", 1)])
        self.assertEqual(config.parse("secure:0"), {"secure": False})
        self.assertIn(("secure", 1), config.plugin_values({"secure": True}))

    def test_sizes(self):
        for text, n in [("0", 0), ("1024", 1024), ("1KB", 1000), ("1kib", 1024), ("1.5GiB", 3 << 29),
                        ("2 TB", 2 * 10**12), ("7b", 7)]:
            self.assertEqual(config.parse_size(text), n, text)
        for bad in ["", "x", "1XB", "-5", "1.5", "0.3B", "1e9"]:
            with self.assertRaises(ValueError, msg=bad):
                config.parse_size(bad)

    def test_empty(self):
        self.assertEqual(config.parse(""), {})
        self.assertEqual(config.parse(" , "), {})
        self.assertEqual(config.parse(None), {})

    def error(self, text):
        with self.assertRaises(ConfigError) as e:
            config.parse(text)
        return str(e.exception)

    def test_unknown_key_named(self):
        msg = self.error("max_byte:1GiB")
        self.assertIn("WARPHEAP_CONF", msg)
        self.assertIn("'max_byte'", msg)
        self.assertIn("max_bytes", msg)  # the known ones are listed

    def test_bad_values_named(self):
        for text, words in [("max_bytes:lots", ["max_bytes", "'lots'"]),
                            ("growth:fast", ["growth", "'fast'", "default, arenas, vmm"]),
                            ("alignment:3", ["alignment", "'3'", "power of two"]),
                            ("alignment:2GiB", ["alignment", "2GiB"]),
                            ("max_streams:63", ["max_streams", "[1, 62]"]),
                            ("max_streams:0", ["max_streams"]),
                            ("max_blocks:1", ["max_blocks", "[2, 268435456]"]),
                            ("max_streams:eight", ["max_streams", "not an integer"]),
                            ("max_bytes:5EiB", ["max_bytes"]),
                            ("secure:maybe", ["secure", "'maybe'", "true or false"]),
                            ("footprint:small", ["footprint", "'small'", "tight, loose"]),
                            ("vmm_slack_pm:0", ["vmm_slack_pm", "[1, 1000]"]),
                            ("vmm_slack_pm:1001", ["vmm_slack_pm", "[1, 1000]"])]:
            msg = self.error(text)
            for w in words:
                self.assertIn(w, msg, text)

    def test_malformed_items(self):
        self.assertIn("'max_bytes' is not key:value", self.error("max_bytes"))
        self.assertIn("is not key:value", self.error("max_bytes:"))
        self.assertIn("given twice", self.error("max_bytes:1,max_bytes:2"))


class Resolve(unittest.TestCase):
    def test_keywords_over_environment(self):
        env = {config.ENV: "max_bytes:1GiB,growth:arenas"}
        got = config.resolve({"max_bytes": "2GiB", "alignment": 512}, environ=env)
        self.assertEqual(got, {"max_bytes": 2 << 30, "growth": "arenas", "alignment": 512})

    def test_keyword_errors_named(self):
        with self.assertRaises(ConfigError) as e:
            config.resolve({"max_stream": 4}, environ={})
        self.assertIn("enable(): unknown option 'max_stream'", str(e.exception))
        with self.assertRaises(ConfigError) as e:
            config.resolve({"max_streams": True}, environ={})
        self.assertIn("max_streams", str(e.exception))

    def test_environment_errors_named(self):
        with self.assertRaises(ConfigError) as e:
            config.resolve({}, environ={config.ENV: "growth:vmm,release_threshold:soon"})
        self.assertIn("WARPHEAP_CONF: release_threshold: 'soon'", str(e.exception))

    def test_plugin_values(self):
        opts = config.resolve({"growth": "vmm", "max_bytes": "1MiB"}, environ={})
        self.assertEqual(config.plugin_values(opts), [("growth", 2), ("max_bytes", 1 << 20)])


if __name__ == "__main__":
    unittest.main()
