"""Run a promptfoo `file://x.py:function` reference once, at import time.

promptfoo calls Python test generators (`tests: file://gen.py:make_tests`) and Python
variables (`vars: {x: file://var.py}`, whose `get_var(var_name, prompt, other_vars)` returns
`{output}`) while it evaluates. The converter calls them once, in a separate interpreter (the
user's code never runs inside assay's process), and writes what they return into the suite;
each use is reported, since the suite then holds a snapshot.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from assay.interop.promptfoo._inputs import Unsupported
from assay.results import JSON

__all__ = ["call_python"]

_TIMEOUT_S = 60.0
_RUNNER = """
import importlib.util, inspect, asyncio, json, sys
path, function, args = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
sys.path.insert(0, str(__import__('pathlib').Path(path).resolve().parent))
spec = importlib.util.spec_from_file_location('promptfoo_code', path)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
result = getattr(module, function)(*args)
if inspect.isawaitable(result):
    result = asyncio.run(result)
sys.stdout.write(json.dumps(result, default=str))
"""


def call_python(base: Path, ref: str, args: list[JSON], default_function: str) -> JSON:
    """Call `file.py[:function]` (relative to `base`) with `args`; its JSON-able result.

    Raises:
        Unsupported: the file is missing, the call fails or returns something not JSON.
    """
    name = ref.removeprefix("file://")
    file, sep, function = name.rpartition(":")
    if not sep or not file.endswith(".py"):
        file, function = name, default_function
    path = base / file
    if not path.is_file():
        raise Unsupported(f"'{file}' does not exist (looked at {path})")
    argv = [sys.executable, "-c", _RUNNER, str(path), function, json.dumps(args)]
    try:
        done = subprocess.run(
            argv, cwd=base, capture_output=True, text=True, timeout=_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired:
        raise Unsupported(f"'{name}' did not return within {_TIMEOUT_S:.0f} s") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise Unsupported(f"calling '{file}:{function}' failed: {last}")
    try:
        result: JSON = json.loads(done.stdout)
    except json.JSONDecodeError:
        raise Unsupported(f"'{file}:{function}' printed something that is not JSON") from None
    return result
