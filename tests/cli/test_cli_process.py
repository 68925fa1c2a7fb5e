"""The process-wide tricks (collector, fast exit, open-file sweep) live in `assay.cli._process`
alone, and apply only once the executable called `take_over()`: the library (`assay.evaluate`,
the runner, the stores) and `main()` called in a host process change nothing process-wide.

Deliberately not listed: a `python` target's directory is put on `sys.path` so its module
imports (that is what the target asks for), and code graders' resource limits are set in the
grader's own child process.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import assay

SRC = Path(assay.__file__).parent

PROCESS_WIDE = {
    ("gc", "freeze"),
    ("gc", "unfreeze"),
    ("gc", "disable"),
    ("gc", "enable"),
    ("gc", "set_threshold"),
    ("gc", "get_objects"),
    ("gc", "collect"),
    ("os", "_exit"),
    ("os", "chdir"),
    ("sys", "setswitchinterval"),
    ("sys", "setrecursionlimit"),
    ("signal", "signal"),
    ("atexit", "_run_exitfuncs"),
}
"""Calls that change (or sweep) the whole interpreter rather than assay's own objects."""

OWN_PROCESSES = {
    # The executable's tricks, each a no-op until `console()` called take_over().
    "cli/_process.py": [
        "gc.disable",
        "gc.freeze",
        "gc.enable",
        "gc.freeze",
        "gc.set_threshold",
        "gc.set_threshold",
        "gc.freeze",
        "atexit._run_exitfuncs",
        "os._exit",
        "gc.unfreeze",
        "gc.get_objects",
    ],
    # Processes assay starts and owns, never the caller's: the store writer (`python -m`),
    # a Ray actor, and the test server's own command line.
    "store/_writer_main.py": ["signal.signal", "os._exit"],
    "runner/_ray_worker.py": ["os.chdir"],
    "testing/openai_server.py": ["signal.signal"],
}


def _process_wide_calls(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and (node.func.value.id, node.func.attr) in PROCESS_WIDE
        ):
            found.append((node.lineno, f"{node.func.value.id}.{node.func.attr}"))
    return [call for _, call in sorted(found)]


def test_process_wide_calls_are_only_in_the_executables_process_module() -> None:
    calls = {
        path.relative_to(SRC).as_posix(): found
        for path in sorted(SRC.rglob("*.py"))
        if (found := _process_wide_calls(path))
    }
    assert calls == OWN_PROCESSES


_RECORDER = """
import atexit, gc, json, os, sys

calls = []

def spy(module, name):
    real = getattr(module, name)
    def recorded(*args, **kwargs):
        calls.append(f"{module.__name__}.{name}")
        return real(*args, **kwargs)
    setattr(module, name, recorded)

for name in ("freeze", "unfreeze", "disable", "enable", "set_threshold", "get_objects",
             "collect"):
    spy(gc, name)
spy(os, "_exit")
spy(sys, "setswitchinterval")
spy(atexit, "_run_exitfuncs")

import assay
from assay.cli import main

threshold = gc.get_threshold()
suite = sys.argv[1]
summary = assay.evaluate(suite, config=assay.EvalConfig(store=sys.argv[2]))
code = None
try:
    main(["run", suite, "--db", sys.argv[2]])
except SystemExit as exc:
    code = exc.code
print(json.dumps({
    "calls": calls, "passed": summary.passed, "code": code,
    "enabled": gc.isenabled(), "frozen": gc.get_freeze_count(),
    "threshold_kept": gc.get_threshold() == threshold,
}))
"""

_SUITE = """\
name: contained
target: {type: python, function: "agent_mod:answer"}
tests:
  - id: a
    input: q
    assertions: [{type: equals, value: ok}]
"""


def test_evaluate_and_main_in_a_host_process_make_no_process_wide_call(tmp_path: Path) -> None:
    (tmp_path / "agent_mod.py").write_text(
        "log = open(__file__ + '.log', 'w')\n"  # an open file: the sweep would flush it
        "def answer(case):\n    log.write('x')\n    return 'ok'\n"
    )
    suite = tmp_path / "suite.yaml"
    suite.write_text(_SUITE)
    done = subprocess.run(
        [sys.executable, "-c", _RECORDER, str(suite), str(tmp_path / "runs.db")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report == {
        "calls": [],
        "passed": True,
        "code": 0,
        "enabled": True,
        "frozen": 0,
        "threshold_kept": True,
    }
