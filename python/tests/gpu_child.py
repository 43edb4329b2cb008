# SPDX-License-Identifier: MIT
"""What the GPU tests of the Python package share: why a test cannot run
here (no framework, no plug-in, no GPU), and a case run in a fresh process
that prints one line RESULT {...} (a process per case, so that a case that
crashes the CUDA context takes no other case with it)."""
import importlib.util
import json
import os
import subprocess
import sys

PACKAGE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def skip_reason(module, probe, ready, what):
    """Why a test cannot run here, or None: `module` must import, the plug-in
    must load, and `ready(stdout)` must hold for what `probe` (Python code
    run in a fresh process, so that no CUDA context stays in this one)
    prints; `what` says what is missing when it does not."""
    if importlib.util.find_spec(module) is None:
        return f"{module} is not installed"
    sys.path.insert(0, PACKAGE)
    try:
        from warpheap import _plugin
        _plugin.load()
    except Exception as e:  # noqa: BLE001 -- any failure to load means: skip, and say why
        return f"no plug-in: {e}"
    p = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    lines = p.stdout.strip().splitlines()
    return None if p.returncode == 0 and lines and ready(lines[-1]) else f"{what} ({lines[-1] if lines else 'none'})"


def run_child(script, *args, timeout=300):
    """Run `script --child args...`; returns (the RESULT dict or None, the
    finished process)."""
    p = subprocess.run([sys.executable, os.path.abspath(script), "--child", *args], capture_output=True, text=True,
                       timeout=timeout)
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:]), p
    return None, p


def result(line):
    """Print a case's RESULT line from the child."""
    print("RESULT " + json.dumps(line), flush=True)


def no_result(p):
    """The message for a child that printed no RESULT line."""
    return f"no result (exit {p.returncode})\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}"
