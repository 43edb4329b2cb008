# SPDX-License-Identifier: MIT
"""warpheap.torch.enable() against a stand-in for PyTorch's Python API (no
GPU, no PyTorch): the pluggable allocator gets the plug-in's entry points
and its record-stream hook, and a PyTorch without the hook gets a warning
that says what is unsafe.  Needs the plug-in (WARPHEAP_PLUGIN or the
package's copy) for the entry points' addresses."""
import contextlib
import os
import sys
import types
import unittest
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import warpheap  # noqa: E402
import warpheap.torch as wt  # noqa: E402
from warpheap import _plugin  # noqa: E402
from test_package import plugin_or_none  # noqa: E402  (the plug-in, or None: one place)


class StandInAllocator:
    """torch._C._CUDAPluggableAllocator: its hooks take function addresses."""

    def __init__(self, has_hook):
        self.record_stream_fn = None
        if has_hook:
            self.set_record_stream_fn = lambda addr: setattr(self, "record_stream_fn", addr)


def stand_in_torch(has_hook):
    """A module with the parts of torch that enable() uses."""
    torch = types.ModuleType("torch")
    memory = types.SimpleNamespace(installed=None)

    class CUDAPluggableAllocator:
        def __init__(self, path, alloc, free):
            self.args = (path, alloc, free)
            self._allocator = StandInAllocator(has_hook)

        def allocator(self):
            return self._allocator

    def change_current_allocator(alloc):
        memory.installed = alloc

    memory.CUDAPluggableAllocator = CUDAPluggableAllocator
    memory.change_current_allocator = change_current_allocator
    torch.cuda = types.SimpleNamespace(memory=memory)
    torch.__version__ = "2.x (stand-in)"
    return torch


@contextlib.contextmanager
def torch_replaced(torch):
    """sys.modules['torch'] is torch meanwhile; enable()'s state starts afresh."""
    old = sys.modules.get("torch")
    sys.modules["torch"] = torch
    wt._enabled, wt._hooked = None, False
    try:
        yield
    finally:
        wt._enabled, wt._hooked = None, False
        if old is None:
            del sys.modules["torch"]
        else:
            sys.modules["torch"] = old


@unittest.skipUnless(plugin_or_none(), "no libwarpheap_plugin.so (CPU-only build, or WARPHEAP_PLUGIN unset)")
class Enable(unittest.TestCase):
    def test_hook_set(self):
        torch = stand_in_torch(has_hook=True)
        with torch_replaced(torch), warnings.catch_warnings():
            warnings.simplefilter("error")  # no warning where the hook exists
            self.assertFalse(wt.record_stream_hooked())
            wt.enable()
            alloc = torch.cuda.memory.installed
            self.assertEqual(alloc.args, (_plugin.plugin_path(), "wh_torch_alloc", "wh_torch_free"))
            self.assertEqual(alloc.allocator().record_stream_fn, _plugin.address("wh_torch_record_stream"))
            self.assertTrue(wt.record_stream_hooked())
            wt.enable()  # the same options again: nothing to do

    def test_no_hook_warns(self):
        torch = stand_in_torch(has_hook=False)
        with torch_replaced(torch):
            with self.assertWarns(RuntimeWarning) as w:
                wt.enable()
            self.assertIn("no set_record_stream_fn", str(w.warning))
            self.assertIn("record_stream() does nothing", str(w.warning))
            self.assertIsNotNone(torch.cuda.memory.installed)  # the allocator is still swapped
            self.assertFalse(wt.record_stream_hooked())


if __name__ == "__main__":
    unittest.main()
