from __future__ import annotations

import asyncio
import importlib
import json
import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import ValidationError

from assay.errors import TargetError, UsageError
from assay.results import Message, TargetOutput, TokenUsage, ToolCall
from assay.targets import PythonTarget, TargetRequest

AGENT_SOURCE = """
import asyncio
import json
import threading
import time


def echo(case):
    return "echo: " + case["input"]


def show_case(case):
    return json.dumps(case, sort_keys=True)


def in_main_thread(case):
    return str(threading.current_thread() is threading.main_thread())


async def async_echo(case):
    await asyncio.sleep(0)
    return "async: " + case["input"]


def structured(case):
    return {
        "output": "30 days",
        "tool_calls": [{"tool": "lookup_policy", "args": {"topic": "refunds"}, "output": "30d"}],
        "token_usage": {"input": 11, "output": 4},
        "cost_usd": 0.003,
        "duration_ms": 5,
    }


def slow(case):
    time.sleep(0.05)
    return "done"


def fail(case):
    raise ValueError("no answer for " + case["id"])


async def async_fail(case):
    raise KeyError("missing")


def target_error(case):
    from assay.errors import TargetError
    raise TargetError("rate limited", kind="RateLimit")


def wrong_type(case):
    return 42


class Agent:
    @staticmethod
    def answer(case):
        return "static"


NOT_A_FUNCTION = 3
"""


@pytest.fixture
def agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A uniquely named module of user functions in tmp_path; sys.path and modules restored."""
    name = f"assay_test_agent_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(AGENT_SOURCE))
    monkeypatch.setattr(sys, "path", [*sys.path])
    importlib.invalidate_caches()
    yield name
    sys.modules.pop(name, None)


def _request(base_dir: Path, input: str = "hi") -> TargetRequest:
    return TargetRequest(
        case_id="case-7",
        input=input,
        messages=(Message(role="user", content=input),),
        metadata={"lang": "en"},
        base_dir=base_dir,
    )


def _target(function: str, **options: object) -> PythonTarget:
    return PythonTarget.model_validate({"type": "python", "function": function, **options})


def _call(target: PythonTarget, base_dir: Path, input: str = "hi") -> TargetOutput:
    async def run() -> TargetOutput:
        await target.setup(base_dir)
        return await target.call(_request(base_dir, input))

    return asyncio.run(run())


def test_a_sync_function_gets_the_case_text(agent: str, tmp_path: Path) -> None:
    assert _call(_target(f"{agent}:echo"), tmp_path, "hello").output == "echo: hello"


def test_the_function_receives_the_case_mapping(agent: str, tmp_path: Path) -> None:
    output = _call(_target(f"{agent}:show_case"), tmp_path)
    assert json.loads(output.output) == {
        "id": "case-7",
        "input": "hi",
        "messages": [{"role": "user", "content": "hi"}],
        "metadata": {"lang": "en"},
        "repeat_index": 0,
    }


def test_a_sync_function_runs_in_a_worker_thread(agent: str, tmp_path: Path) -> None:
    assert _call(_target(f"{agent}:in_main_thread"), tmp_path).output == "False"


def test_an_async_function_is_awaited(agent: str, tmp_path: Path) -> None:
    assert _call(_target(f"{agent}:async_echo"), tmp_path, "yo").output == "async: yo"


def test_a_static_method_can_be_the_function(agent: str, tmp_path: Path) -> None:
    assert _call(_target(f"{agent}:Agent.answer"), tmp_path).output == "static"


def test_a_structured_return_value_is_parsed(agent: str, tmp_path: Path) -> None:
    assert _call(_target(f"{agent}:structured"), tmp_path) == TargetOutput(
        output="30 days",
        tool_calls=[ToolCall(tool="lookup_policy", args={"topic": "refunds"}, output="30d")],
        token_usage=TokenUsage(input=11, output=4),
        cost_usd=0.003,
        duration_ms=5,
    )


def test_the_duration_is_measured_when_not_reported(agent: str, tmp_path: Path) -> None:
    output = _call(_target(f"{agent}:slow"), tmp_path)
    assert output.output == "done"
    assert 50 <= output.duration_ms < 5000


def test_setup_leaves_the_config_equal(agent: str, tmp_path: Path) -> None:
    target = _target(f"{agent}:echo")
    asyncio.run(target.setup(tmp_path))
    assert target == _target(f"{agent}:echo")


def test_call_without_setup_imports_from_the_request_base_dir(agent: str, tmp_path: Path) -> None:
    target = _target(f"{agent}:echo")
    assert asyncio.run(target.call(_request(tmp_path, "lazy"))).output == "echo: lazy"


def test_python_path_entries_are_importable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "path", [*sys.path])
    name = f"assay_test_lib_{uuid.uuid4().hex[:8]}"
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / f"{name}.py").write_text("def answer(case):\n    return 'from lib'\n")
    try:
        output = _call(_target(f"{name}:answer", python_path=["lib"]), tmp_path)
    finally:
        sys.modules.pop(name, None)
    assert output.output == "from lib"
    assert sys.path[:2] == [str(tmp_path / "lib"), str(tmp_path)]


@pytest.mark.parametrize(
    ("function", "message"),
    [
        ("fail", "function '{agent}:fail' raised ValueError: no answer for case-7"),
        ("async_fail", "function '{agent}:async_fail' raised KeyError: 'missing'"),
        (
            "wrong_type",
            "invalid output from function '{agent}:wrong_type': got int; "
            "expected a string or a mapping with an 'output' key",
        ),
    ],
)
def test_a_failing_function_is_a_target_error(
    agent: str, tmp_path: Path, function: str, message: str
) -> None:
    with pytest.raises(TargetError) as caught:
        _call(_target(f"{agent}:{function}"), tmp_path)
    assert str(caught.value) == message.format(agent=agent)


def test_a_target_error_from_the_function_passes_through(agent: str, tmp_path: Path) -> None:
    with pytest.raises(TargetError) as caught:
        _call(_target(f"{agent}:target_error"), tmp_path)
    assert (str(caught.value), caught.value.kind) == ("rate limited", "RateLimit")


def test_the_error_kind_is_the_exception_type(agent: str, tmp_path: Path) -> None:
    with pytest.raises(TargetError) as caught:
        _call(_target(f"{agent}:fail"), tmp_path)
    assert caught.value.kind == "ValueError"
    assert isinstance(caught.value.__cause__, ValueError)


@pytest.mark.parametrize(
    ("function", "message"),
    [
        ("{agent}:ech", "'{agent}' has no attribute 'ech'. Did you mean 'echo'?"),
        ("{agent}:Agent.ask", "'{agent}:Agent' has no attribute 'ask'."),
        ("{agent}:NOT_A_FUNCTION", "'{agent}:NOT_A_FUNCTION' is not callable (its type is int)"),
    ],
)
def test_a_bad_attribute_is_a_usage_error(
    agent: str, tmp_path: Path, function: str, message: str
) -> None:
    reference = function.format(agent=agent)
    with pytest.raises(UsageError) as caught:
        asyncio.run(_target(reference).setup(tmp_path))
    assert str(caught.value) == f"python target '{reference}': {message.format(agent=agent)}"


def test_a_missing_module_is_a_usage_error_saying_where_it_looked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "path", [*sys.path])
    with pytest.raises(UsageError) as caught:
        asyncio.run(_target("assay_no_such_module:answer").setup(tmp_path))
    assert str(caught.value) == (
        "python target 'assay_no_such_module:answer': cannot import module "
        "'assay_no_such_module' (No module named 'assay_no_such_module'). "
        f"Searched {tmp_path} and the installed packages; "
        "add the module's directory to `python_path`."
    )


def test_a_module_that_fails_to_import_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "path", [*sys.path])
    name = f"assay_test_broken_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text("raise RuntimeError('needs an API key')\n")
    with pytest.raises(UsageError) as caught:
        asyncio.run(_target(f"{name}:answer").setup(tmp_path))
    assert str(caught.value) == (
        f"python target '{name}:answer': importing module '{name}' failed: "
        "RuntimeError: needs an API key"
    )


@pytest.mark.parametrize(
    "function", ["agent", "agent.answer", "agent:", ":answer", "my-agent:answer", "a:b:c"]
)
def test_a_malformed_function_reference_is_rejected_at_load_time(function: str) -> None:
    with pytest.raises(ValidationError) as caught:
        _target(function)
    assert (
        f"'{function}' is not a function reference; write 'package.module:function', "
        "e.g. 'my_agent.bot:answer'"
    ) in str(caught.value)


def test_describe_names_the_function() -> None:
    assert _target("my_agent.bot:answer").describe() == "python my_agent.bot:answer"


RAG_SOURCE = """
def retrieve(case):
    return {
        "output": "Refunds take 30 days.",
        "context": [
            "Refunds are issued within 30 days.",
            {"id": 7, "text": "Shipping is free over 50 EUR.", "score": 0.42},
            {"id": "faq-3"},
        ],
    }


def no_text_no_id(case):
    return {"output": "x", "context": [{"score": 0.5}]}
"""


def test_i26_1_a_python_function_returns_its_retrieved_context(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = f"assay_test_rag_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(RAG_SOURCE))
    monkeypatch.setattr(sys, "path", [*sys.path])
    importlib.invalidate_caches()
    try:
        output = _call(_target(f"{name}:retrieve"), tmp_path)
        assert [p.model_dump() for p in output.context] == [
            {"text": "Refunds are issued within 30 days.", "id": None, "score": None},
            {"text": "Shipping is free over 50 EUR.", "id": "7", "score": 0.42},
            {"text": "", "id": "faq-3", "score": None},
        ]
        with pytest.raises(
            TargetError,
            match=r"context\[0\]: Value error, a passage needs its `text`, its `id`, or both",
        ):
            _call(_target(f"{name}:no_text_no_id"), tmp_path)
    finally:
        sys.modules.pop(name, None)
