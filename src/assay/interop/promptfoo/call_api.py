"""Run a promptfoo provider written as code, for an assay `command` target.

`assay import promptfoo` turns `file://provider.py[:function]` and `exec:command` providers
into command targets that run this module (`python -m assay.interop.promptfoo.call_api`).
It reads the case mapping assay writes to a command's stdin, calls the provider the way
promptfoo does and prints the structured output assay reads back:

- a Python provider: `call_api(prompt, options, context)` (sync or async), where `prompt` is
  the rendered prompt (a chat prompt as its JSON text), `options` is `{"id", "config"}` and
  `context` is `{"vars", "prompt"}`; it returns `{"output", "tokenUsage", "cost", "error"}`;
- a JavaScript provider (`--node FILE[:export]`): Node.js imports the file and calls its
  provider the way promptfoo does: a class is constructed with `{id, config}` and its
  `callApi(prompt, context, options)` awaited; an object's `callApi` or a plain function is
  called the same way;
- an `exec:` provider: the command with the prompt, the options JSON and the context JSON as
  its last three arguments; its standard output (trimmed) is the answer.

A provider's `error`, an exception or a non-zero exit becomes the case's error (exit 1 with the
message on stderr).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import inspect
import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

__all__ = ["main"]


def _prompt(case: dict[str, Any]) -> str:
    value = case.get("input")
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _context(case: dict[str, Any]) -> dict[str, Any]:
    metadata = case.get("metadata") or {}
    label = metadata.get("prompt", "") if isinstance(metadata, dict) else ""
    variables = metadata.get("vars", {}) if isinstance(metadata, dict) else {}
    return {"vars": variables, "prompt": {"raw": _prompt(case), "label": label}}


def _load(file: str, function: str) -> Any:
    path = Path(file).resolve()
    spec = importlib.util.spec_from_file_location(path.stem, path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load the provider file {path}")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.parent))
    spec.loader.exec_module(module)
    found = getattr(module, function, None)
    if not callable(found):
        raise SystemExit(f"{path} has no function '{function}'")
    return found


def _structured(result: Any) -> dict[str, Any]:
    """promptfoo's ProviderResponse as assay's structured output (SPEC §3)."""
    if not isinstance(result, dict):
        return {"output": result if isinstance(result, str) else json.dumps(result)}
    if result.get("error"):
        raise SystemExit(f"the provider returned an error: {result['error']}")
    output = result.get("output", "")
    out: dict[str, Any] = {
        "output": output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
    }
    usage = result.get("tokenUsage")
    if isinstance(usage, dict) and ("prompt" in usage or "completion" in usage):
        out["token_usage"] = {
            "input": int(usage.get("prompt") or 0),
            "output": int(usage.get("completion") or 0),
        }
    if isinstance(result.get("cost"), int | float):
        out["cost_usd"] = result["cost"]
    if isinstance(result.get("finishReason"), str) and result["finishReason"]:
        out["finish_reason"] = result["finishReason"]
    return out


def _call_python(ref: str, config: dict[str, Any], case: dict[str, Any]) -> dict[str, Any]:
    file, sep, function = ref.rpartition(":")
    if not sep:
        file, function = ref, "call_api"
    call = _load(file, function)
    options = {"id": f"file://{file}", "config": config}
    result = call(_prompt(case), options, _context(case))
    if inspect.isawaitable(result):
        result = asyncio.run(_await(result))
    return _structured(result)


async def _await(awaitable: Any) -> Any:
    return await awaitable


def _call_exec(command: str, config: dict[str, Any], case: dict[str, Any]) -> dict[str, Any]:
    argv = [
        *shlex.split(command),
        _prompt(case),
        json.dumps({"config": config}),
        json.dumps(_context(case)),
    ]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.stderr.write(done.stderr)
        raise SystemExit(f"{argv[0]} exited with status {done.returncode}")
    return {"output": done.stdout.strip()}


_NODE_SHIM = """
import { pathToFileURL } from 'node:url';
const [file, exportName] = [process.argv[1], process.argv[2]];
let input = '';
for await (const chunk of process.stdin) input += chunk;
const { prompt, options, context } = JSON.parse(input);
const mod = await import(pathToFileURL(file).href);
const found = exportName ? (mod[exportName] ?? mod.default?.[exportName]) : (mod.default ?? mod);
let result;
if (typeof found === 'function' && typeof found.prototype?.callApi === 'function') {
  result = await new found(options).callApi(prompt, context, options);
} else if (found && typeof found.callApi === 'function') {
  result = await found.callApi(prompt, context, options);
} else if (typeof found === 'function') {
  result = await found(prompt, context, options);
} else {
  throw new Error(`${file} exports no provider (a class with callApi, or a function)`);
}
process.stdout.write(JSON.stringify(result ?? {}));
"""


def _call_node(ref: str, config: dict[str, Any], case: dict[str, Any]) -> dict[str, Any]:
    file, sep, export = ref.rpartition(":")
    if not sep or "/" in export or "." in export:
        file, export = ref, ""
    payload = {
        "prompt": _prompt(case),
        "options": {"id": f"file://{file}", "config": config},
        "context": _context(case),
    }
    argv = ["node", "--input-type=module", "-e", _NODE_SHIM, str(Path(file).resolve()), export]
    try:
        done = subprocess.run(
            argv, input=json.dumps(payload), capture_output=True, text=True, check=False
        )
    except FileNotFoundError:
        raise SystemExit("`node` is not installed; a JavaScript provider needs Node.js") from None
    if done.returncode != 0:
        sys.stderr.write(done.stderr)
        raise SystemExit(f"the JavaScript provider {file} failed (exit {done.returncode})")
    return _structured(json.loads(done.stdout or "{}"))


def main(argv: list[str] | None = None) -> None:
    """Call the provider named on the command line with the case read from stdin."""
    parser = argparse.ArgumentParser(prog="python -m assay.interop.promptfoo.call_api")
    parser.add_argument("provider", nargs="?", help="FILE.py[:function] (default call_api)")
    parser.add_argument("--exec", dest="command", help="an exec: provider's command line")
    parser.add_argument("--node", help="a JavaScript provider FILE.js[:export]")
    parser.add_argument("--config", default="{}", help="the provider's config, as JSON")
    args = parser.parse_args(argv)
    case = json.loads(sys.stdin.read() or "{}")
    config = json.loads(args.config)
    if args.command:
        out = _call_exec(args.command, config, case)
    elif args.node:
        out = _call_node(args.node, config, case)
    elif args.provider:
        out = _call_python(args.provider, config, case)
    else:
        parser.error("give a provider FILE.py[:function] or --exec COMMAND")
    sys.stdout.write(json.dumps(out, ensure_ascii=False))


if __name__ == "__main__":
    main()
