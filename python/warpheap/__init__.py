# SPDX-License-Identifier: MIT
"""warpheap: a caching, stream-ordered GPU memory pool as PyTorch's and CuPy's allocator.

    import warpheap.torch
    warpheap.torch.enable(max_bytes="40GiB")   # before the first CUDA tensor

    import warpheap.cupy
    warpheap.cupy.enable()                     # each block on CuPy's current stream

Options (keyword arguments, or WARPHEAP_CONF="key:value,key:value"): see
warpheap.config.  Importing needs no GPU, PyTorch or CuPy.
"""
from . import config
from ._plugin import PluginError, plugin_path

__version__ = "0.1.0"
__all__ = ["config", "PluginError", "plugin_path", "__version__"]
