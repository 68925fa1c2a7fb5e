"""promptfoo configs convert into assay suites that the real loader accepts and that run
offline with the verdicts promptfoo would give (`assay import promptfoo`).

The converted `openai` targets reach the fake OpenAI server through OPENAI_BASE_URL, so the
real target code runs; judged graders are answered by its scripted judge.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from assay.config import LoadedSuite, load_project, parse_suite
from assay.errors import ConfigError
from assay.interop.promptfoo import Conversion, convert_promptfoo
from assay.results import RunResult
from assay.runner import RunOptions, execute, plan_run
from assay.store import MemorySink
from assay.testing import FakeOpenAIServer
from tests.conftest import write

FIXTURES = Path(__file__).parent / "fixtures" / "promptfoo"


@pytest.fixture(autouse=True)
def fixtures_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fixtures, copied: a converted suite's script wrappers are written beside it."""
    copy = tmp_path / "promptfoo"
    shutil.copytree(FIXTURES, copy)
    monkeypatch.setattr(sys.modules[__name__], "FIXTURES", copy)


REPLIES = {
    "What is the capital of France? Answer in one word.": "Paris",
    "What is the capital of Japan? Answer in one word.": "tokyo",
    "What is the capital of Peru? Answer in one word.": "Lima, sorry.",
    "Say hello in German.": "Hallo!",
    "Greet formally in German.": "Guten Tag.",
    "Say hello in Spanish.": "Hola",
    "Greet formally in Spanish.": "Good day.",
    "Say hello in French.": "Bonjour!",
    "Greet formally in French.": "Bonjour madame",
    "Customer: How long do I have to return an item?": "You have 30 days to return it.",
    "Customer: Can I return opened software?": "Yes, any time!",
    "Summarise: The cat sat on the mat all day.": "The cat sat on the mat all day.",
    "Summarise: Stocks fell sharply on Monday.": "Stocks fell on Monday.",
    "Translate to French: Good morning": "Bonjour",
    "Translate to French, formally: Good morning": "Good morning, bonjour",
    "Translate to French: Thank you": "Merci",
    "Translate to French, formally: Thank you": "Je vous remercie",
}


def judge(body: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    del schema
    prompt = body["messages"][-1]["content"]
    score = 0.1 if "Yes, any time!" in prompt and "factually consistent" in prompt else 0.9
    return {"score": score, "reasoning": "scripted", "hits": [], "misses": []}


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("OPENAI_API_KEY", "unused")
    monkeypatch.delenv("ASSAY_JUDGE_MODEL", raising=False)
    with FakeOpenAIServer(REPLIES, judge=judge) as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        yield fake


def convert(name: str) -> tuple[Conversion, LoadedSuite]:
    conversion = convert_promptfoo(FIXTURES / name, display=name)
    for helper, text in conversion.files.items():
        write(FIXTURES / helper, text)
    return conversion, parse_suite(conversion.suite, base_dir=FIXTURES)


def run(loaded: LoadedSuite, server: FakeOpenAIServer) -> dict[str, str]:
    options = RunOptions(judge_base_url=server.base_url)
    sink = MemorySink()
    asyncio.run(execute(plan_run(loaded, load_project(), options), sink))
    result: RunResult = sink.run
    return {r.case_id: r.verdict for r in result.results}


def warnings(conversion: Conversion) -> list[str]:
    return [str(w) for w in conversion.warnings]


def test_string_assertions_default_test_and_all_must_pass(server: Any) -> None:
    conversion, loaded = convert("basic.yaml")
    suite = conversion.suite
    assert list(suite) == [
        "name",
        "description",
        "target",
        "targets",
        "execution",
        "assertions",
        "tests",
    ]
    assert suite["name"] == "capital-cities"
    assert suite["targets"] == {"openai-gpt-4o-mini": {"type": "openai", "model": "gpt-4o-mini"}}
    assert suite["assertions"] == [{"type": "icontains", "value": "sorry", "negate": True}]
    france = suite["tests"][0]
    assert france["input"] == "What is the capital of France? Answer in one word."
    assert france["metadata"] == {"vars": {"country": "France"}, "prompt": "p1"}
    peru = suite["tests"][2]["assertions"]
    assert peru[1] == {
        "type": "composite",
        "assertions": [
            {"type": "contains", "value": "Lima"},
            {"type": "contains", "value": "Bogota", "negate": True},
        ],
        "aggregator": {"type": "threshold", "threshold": 1.0},
    }
    assert peru[2] == {
        "type": "code-grader",
        "command": [
            "python3",
            "promptfoo_wrappers/assertion.py",
            "--",
            "file://check_capital.py",
        ],
    }
    assert warnings(conversion) == []
    assert run(loaded, server) == {"france": "pass", "japan": "fail", "peru": "fail"}


def test_prompts_times_providers_times_vars(server: Any) -> None:
    conversion, loaded = convert("multi.yaml")
    suite = conversion.suite
    assert suite["target"] == "openai-chat-gpt-4o-mini"
    assert suite["targets"]["nano"] == {
        "type": "openai",
        "model": "gpt-4.1-nano",
        "temperature": 0,
        "max_tokens": 50,
    }
    french = suite["tests"][4]
    assert french["execution"] == {"aggregator": {"type": "weighted_average"}, "threshold": 0.5}
    assert french["assertions"][0] == {
        "type": "contains-all",
        "value": ["bonjour", "madame"],
        "case_sensitive": False,
    }
    assert run(loaded, server) == {
        "test-1-v1-p1": "pass",
        "test-1-v1-formal": "pass",
        "test-1-v2-p1": "pass",
        "test-1-v2-formal": "fail",
        "french-with-a-threshold-p1": "pass",  # 0.5 weighted, at the test's threshold
        "french-with-a-threshold-formal": "pass",
    }


def test_model_graded_assertions_become_llm_graders_with_the_default_judge(server: Any) -> None:
    conversion, loaded = convert("judged.yaml")
    assert conversion.suite["judge"] == {"provider": "openai", "model": "gpt-4.1-mini"}
    refund = conversion.suite["tests"][0]["assertions"]
    assert refund[0] == {
        "type": "llm-grader",
        "prompt": "States a return window of 30 days",
        "min_score": 0.5,
    }
    assert refund[1]["prompt"] == "The output meets this criterion: Is polite"
    assert conversion.suite["tests"][1]["assertions"][1]["min_score"] == 0.7
    assert len(warnings(conversion)) == 3
    assert all(": approximated: " in w for w in warnings(conversion))
    assert run(loaded, server) == {"refund-window": "pass", "invented-policy": "fail"}
    judged = {r["model"] for r in server.requests if "JSON Schema" in str(r["messages"][0])}
    assert judged == {"gpt-4.1-mini"}


def test_reference_metrics_and_json_schema(server: Any) -> None:
    conversion, loaded = convert("metrics.yaml")
    close, far = conversion.suite["tests"]
    assert close["assertions"] == [
        {
            "type": "semantic-similarity",
            "value": "A cat sat on a mat all day.",
            "model": "text-embedding-3-large",
            "min_score": 0.55,  # the local server's hashed bag-of-words vectors: cosine 0.6
        },
        {
            "type": "rouge",
            "variant": "rouge1",
            "value": "The cat sat on the mat.",
            "min_score": 0.6,
        },
        {"type": "latency", "max_ms": 10000},
    ]
    assert far["assertions"][0] == {
        "type": "levenshtein",
        "value": "Stocks fell on Monday.",
        "max_distance": 3,
    }
    assert far["assertions"][1]["type"] == "json-schema"
    assert run(loaded, server) == {"close-summary": "pass", "far-summary": "fail"}


def test_prompt_and_test_files_and_unmapped_providers(server: Any) -> None:
    conversion, loaded = convert("files.yaml")
    assert [t["id"] for t in conversion.suite["tests"]] == [
        "morning-prompts-1",
        "morning-prompts-2",
        "thanks-prompts-1",
        "thanks-prompts-2",
    ]
    left_out = "\n".join(warnings(conversion))
    assert "provider 'file://my_provider.py': the python provider runs through" in left_out
    assert "javascript" not in left_out
    assert run(loaded, server) == {
        "morning-prompts-1": "pass",
        "morning-prompts-2": "fail",
        "thanks-prompts-1": "pass",
        "thanks-prompts-2": "fail",
    }


def test_bad_configs_are_located_errors(tmp_path: Path) -> None:
    path = write(
        tmp_path / "p.yaml",
        "prompts: ['Hi {{name}}']\nproviders: [openai:gpt-4o-mini]\ntests:\n"
        "  - vars: {other: 1}\n    assert: [{type: contains, value: x}]\n",
    )
    conversion = convert_promptfoo(path, display="p.yaml")  # promptfoo renders it empty
    assert conversion.suite["tests"][0]["input"] == "Hi "
    assert warnings(conversion) == [
        "p.yaml:4 tests[0]: approximated: prompt 'p1' uses name, which the test does not set; "
        "promptfoo renders it empty, and so does the case"
    ]
    missing = write(tmp_path / "m.yaml", "prompts: [hi]\ntests: file://nowhere.csv\n")
    with pytest.raises(ConfigError, match=r"m.yaml:2 tests: cannot read 'nowhere.csv'"):
        convert_promptfoo(missing, display="m.yaml")
