# SPDX-License-Identifier: MIT
"""Builds libwarpheap_plugin.so with CMake from the repository around this
folder and puts it into the package (warpheap/lib/).

Environment: WARPHEAP_CMAKE_ARGS (more -D options, e.g.
-DCMAKE_CUDA_ARCHITECTURES=90), WARPHEAP_BUILD_JOBS (parallel jobs).
Without the CUDA toolkit the package is built without the plug-in: it
imports, and enable() says why it cannot work.
"""
import os
import shlex
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PLUGIN = "libwarpheap_plugin.so"


def cmake_build(build_dir):
    """Configure and build the plug-in; its path, or None without CUDA."""
    if not os.path.exists(os.path.join(ROOT, "plugins", "warpheap_plugin.c")):
        raise RuntimeError(f"warpheap: {ROOT} is not the warpheap repository (no plugins/warpheap_plugin.c)")
    args = ["cmake", "-S", ROOT, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release", "-DWH_BUILD_TESTS=OFF",
            "-DWH_BUILD_DEMO=OFF", "-DWH_ENABLE_CUDA=ON"]
    args += shlex.split(os.environ.get("WARPHEAP_CMAKE_ARGS", ""))  # later -D options win
    subprocess.check_call(args)
    targets = subprocess.run(["cmake", "--build", build_dir, "--target", "help"], capture_output=True, text=True)
    if "warpheap_plugin" not in targets.stdout:
        print("warpheap: no CUDA toolkit found by CMake: the package has no plug-in")
        return None
    jobs = os.environ.get("WARPHEAP_BUILD_JOBS", str(os.cpu_count() or 1))
    subprocess.check_call(["cmake", "--build", build_dir, "--target", "warpheap_plugin", "-j", jobs])
    return os.path.join(build_dir, "lib", PLUGIN)


class BuildPyWithPlugin(build_py):
    def run(self):
        super().run()
        plugin = cmake_build(os.path.join(HERE, "build", "cmake"))
        dest = os.path.join(self.build_lib, "warpheap", "lib", PLUGIN)
        if plugin:
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            shutil.copy2(plugin, dest)
        elif os.path.exists(dest):  # from an earlier build with CUDA
            os.remove(dest)


class BinaryDistribution(Distribution):
    """The wheel holds a shared library: platform-specific."""

    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildPyWithPlugin}, distclass=BinaryDistribution)
