"""Run a promptfoo program at import time: an executable prompt (`exec:./make_prompt.sh`) or a
JavaScript prompt function (`file://prompt.js[:name]`) once per case, a JavaScript test
generator (`tests: file://tests.js`) once.

promptfoo runs an executable prompt with the prompt context as JSON in one more argument
(`{vars, provider: {id, label}}`) and takes what it prints as the prompt; it calls a JavaScript
prompt function with that context and takes what it returns. The converter does the same, in
the config's directory (Node.js for JavaScript, in its own process), for each case, and writes
the prompt into the case, like a Python prompt function's; the caller reports that the suite
holds a snapshot.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

from assay.interop.promptfoo._inputs import Unsupported
from assay.results import JSON

__all__ = ["call_executable_prompt", "call_js"]

_TIMEOUT_S = 60.0
_NODE_SHIM = """
import { pathToFileURL } from 'node:url';
const [file, exportName, args] = [process.argv[1], process.argv[2], process.argv[3]];
const mod = await import(pathToFileURL(file).href);
const found = exportName ? (mod[exportName] ?? mod.default?.[exportName]) : (mod.default ?? mod);
if (typeof found !== 'function') throw new Error(`${file} exports no function ${exportName}`);
const result = await found(...JSON.parse(args));
process.stdout.write(JSON.stringify(result ?? null));
"""


def call_executable_prompt(base: Path, ref: str, context: dict[str, JSON]) -> str:
    """What `exec:COMMAND` prints for `context`, its trailing newlines removed.

    Raises:
        Unsupported: the command cannot be split or started, fails, or runs too long.
    """
    command = ref.removeprefix("exec:").strip()
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise Unsupported(f"the executable prompt `{command}` does not split: {exc}") from None
    if not argv:
        raise Unsupported("the executable prompt names no command")
    argv.append(json.dumps(context, ensure_ascii=False))
    try:
        done = subprocess.run(
            argv, cwd=base, capture_output=True, text=True, timeout=_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired:
        raise Unsupported(f"`{command}` did not finish within {_TIMEOUT_S:.0f} s") from None
    except PermissionError:
        raise Unsupported(
            f"`{command}` cannot be started: it is not executable (promptfoo runs it as a "
            f"program too); `chmod +x {argv[0]}` and import again"
        ) from None
    except OSError as exc:
        raise Unsupported(f"`{command}` cannot be started: {exc.strerror or exc}") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise Unsupported(f"`{command}` failed (exit {done.returncode}): {last}")
    return done.stdout.rstrip("\n")


def call_js(base: Path, ref: str, args: list[JSON]) -> JSON:
    """What the JavaScript function `file.js[:name]` (default: the module's default export)
    returns for `args`: a prompt function's prompt, a test generator's tests.

    Raises:
        Unsupported: the file is missing, Node.js is not installed, or the call fails.
    """
    file, sep, name = ref.removeprefix("file://").rpartition(":")
    if not sep or "/" in name or "." in name:
        file, name = ref.removeprefix("file://"), ""
    path = base / file
    if not path.is_file():
        raise Unsupported(f"'{file}' does not exist (looked at {path})")
    program = [_NODE_SHIM, str(path.resolve()), name, json.dumps(args, ensure_ascii=False)]
    # promptfoo loads an ES module written as `.js` without `"type": "module"` too; Node.js
    # before 22 needs this flag to tell it from CommonJS (exit 9: a Node.js without the flag)
    flags = ["--experimental-detect-module", "--input-type=module", "-e"]
    done = _node([*flags, *program], base, ref)
    if done.returncode == 9:
        done = _node(flags[1:] + program, base, ref)
    if done.returncode != 0:
        thrown = re.compile(r"^\s*\w*(Error|Exception)\b.*?: ")
        lines = done.stderr.strip().splitlines()
        error = [ln for ln in lines if thrown.match(ln)] or lines[-1:] or ["(no message)"]
        raise Unsupported(f"calling '{ref}' failed: {error[0].strip()[:200]}")
    try:
        result: JSON = json.loads(done.stdout or "null")
    except json.JSONDecodeError:
        raise Unsupported(f"'{ref}' returned something that is not JSON") from None
    return result


def _node(options: list[str], base: Path, ref: str) -> subprocess.CompletedProcess[str]:
    """Run `node` with `options` in `base` (for `ref`).

    Raises:
        Unsupported: Node.js is not installed, or the call runs too long.
    """
    argv = ["node", *options]
    try:
        return subprocess.run(
            argv, cwd=base, capture_output=True, text=True, timeout=_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired:
        raise Unsupported(f"'{ref}' did not return within {_TIMEOUT_S:.0f} s") from None
    except FileNotFoundError:
        raise Unsupported(
            f"'{ref}' is JavaScript and `node` is not installed; install Node.js, or write "
            "what it builds to a file"
        ) from None
