"""promptfoo's `python` assertion contract on top of assay's code-grader contract.

assay runs `python3 assertion.py [--threshold N] [--config JSON] [--transform] -- VALUE` and
writes the grading context as JSON on stdin. VALUE is inline Python (an expression, or the body
of `def main(output, context)` when it spans several lines) or `file:///abs/path.py[:function]`
(default function `get_assert`, or `get_transform` with --transform). The code gets promptfoo's
`output` and `context` ({prompt, vars, test, config, providerResponse}) and may answer a
boolean, a number, a {pass, score, reason} dict or its JSON text. The verdict is promptfoo's
(a number passes when > 0, or >= the threshold when one is set; a dict fails below the
threshold) and is printed as an assay reply {"score": 1 or 0, "reasoning": ...}. With
--transform the result is printed as {"output": value} instead. `--code-file PATH` replaces
`-- VALUE` when the inline code holds `${...}`, which the suite would read as a variable.

Standard library only: it runs under whichever `python3` the suite's PATH finds, like
promptfoo's own Python assertions.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import re
import sys
from pathlib import Path
from typing import Any

_TRUE_FALSE = {"true": True, "false": False}


def _promptfoo_output(ctx: dict[str, Any]) -> Any:
    """The text, or the tool calls (OpenAI shape) when the model answered only with those."""
    metadata = ctx.get("metadata") or {}
    if "transformed_output" in metadata:
        return metadata["transformed_output"]
    calls = ctx.get("tool_calls") or []
    if not ctx.get("output") and calls:
        return [
            {
                "id": f"call_{i}",
                "type": "function",
                "function": {"name": c["tool"], "arguments": json.dumps(c.get("args") or {})},
            }
            for i, c in enumerate(calls)
        ]
    return ctx.get("output")


def _context(ctx: dict[str, Any], config: Any, transform: bool) -> dict[str, Any]:
    metadata = ctx.get("metadata") or {}
    variables = metadata.get("vars") if isinstance(metadata.get("vars"), dict) else {}
    if transform:
        return {
            "vars": variables,
            "prompt": {"label": metadata.get("prompt")},
            "metadata": metadata,
        }
    given = ctx.get("input")
    prompt = given if isinstance(given, str) else json.dumps(given) if given is not None else ""
    test: dict[str, Any] = {"vars": variables, "metadata": metadata}
    if ctx.get("expected_output") is not None:
        test["expected"] = ctx["expected_output"]
    target = ctx.get("target_output") or {}
    context: dict[str, Any] = {
        "prompt": prompt,
        "vars": variables,
        "test": test,
        "providerResponse": {
            "output": _promptfoo_output(ctx),
            "tokenUsage": target.get("token_usage"),
        },
    }
    if config is not None:
        context["config"] = config
    return context


def _inline(code: str) -> Any:
    """promptfoo's wrapping: one line is returned; several lines are the body of main()."""
    if "\n" in code:
        found = re.search(r"^(?!\s*$)\s+", code, re.MULTILINE)
        indent = found.group(0) if found else "    "
        body = "\n".join(indent + line for line in code.split("\n"))
    else:
        body = f"    return {code}"
    namespace: dict[str, Any] = {}
    source = f"import json\n\ndef main(output, context):\n{body}\n"
    exec(compile(source, "<assertion>", "exec"), namespace)  # noqa: S102  # promptfoo's contract
    return namespace["main"]


def _from_file(reference: str, default: str) -> Any:
    spec = reference.removeprefix("file://")
    name = default
    head, sep, tail = spec.rpartition(":")
    if sep and len(head) > 1 and head.endswith(".py"):
        spec, name = head, tail
    path = Path(spec).resolve()
    sys.path.insert(0, str(path.parent))
    loader = importlib.util.spec_from_file_location(path.stem, path)
    if loader is None or loader.loader is None:
        raise SystemExit(f"cannot load {path}")
    module = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(module)
    function = getattr(module, name, None)
    if not callable(function):
        raise SystemExit(f"{path} has no function '{name}'")
    return function


def _verdict(result: Any, threshold: float | None) -> tuple[bool, str]:
    if isinstance(result, str):
        lowered = result.strip().lower()
        if lowered in _TRUE_FALSE:
            result = _TRUE_FALSE[lowered]
        elif result.startswith("{"):
            result = json.loads(result)
        else:
            try:
                result = float(result)
            except ValueError:
                result = None
    if isinstance(result, bool):
        return result, f"returned {str(result).lower()}"
    if isinstance(result, int | float) and math.isfinite(result):
        passed = result > 0 if threshold is None else result >= threshold
        rule = "passes above 0" if threshold is None else f"threshold {threshold:g}"
        return passed, f"returned score {result:g} ({rule})"
    if isinstance(result, dict) and isinstance(result.get("pass", result.get("pass_")), bool):
        passed = bool(result.get("pass", result.get("pass_")))
        score = result.get("score")
        reason = result.get("reason") or ""
        if threshold is not None and isinstance(score, int | float) and score < threshold:
            passed = False
            reason = f"score {score:g} is less than threshold {threshold:g}" + (
                f": {reason}" if reason else ""
            )
        shown = "" if score is None else f" with score {score}"
        return passed, f"returned pass {str(passed).lower()}{shown}" + (
            f": {reason}" if reason else ""
        )
    raise SystemExit(
        "the assertion must return a boolean, a number or a {pass, score, reason} dict; "
        f"got {type(result).__name__}: {str(result)[:200]}"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--threshold", type=float)
    parser.add_argument("--config", type=json.loads)
    parser.add_argument("--transform", action="store_true")
    parser.add_argument("--code-file")
    parser.add_argument("value", nargs=argparse.REMAINDER)
    options = parser.parse_args()
    value = " ".join(options.value[1:] if options.value[:1] == ["--"] else options.value)
    if options.code_file:  # inline code kept beside the suite (it holds `${...}`)
        with open(options.code_file, encoding="utf-8") as code:
            value = code.read()
    ctx = json.loads(sys.stdin.read())
    output = _promptfoo_output(ctx)
    context = _context(ctx, options.config, options.transform)
    if value.startswith("file://"):
        function = _from_file(value, "get_transform" if options.transform else "get_assert")
    else:
        function = _inline(value)
    result = function(output, context)
    if options.transform:
        if result is None:
            raise SystemExit("the transform did not return a value")
        print(json.dumps({"output": result}))
        return
    passed, reasoning = _verdict(result, options.threshold)
    print(json.dumps({"score": 1 if passed else 0, "reasoning": reasoning}))


if __name__ == "__main__":
    main()
