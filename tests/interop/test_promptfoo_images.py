"""promptfoo chat prompts with content lists (images, audio) convert to assay content parts
instead of being dropped (issue 25 item 4): each provider's content shape, image variables
rendered as promptfoo renders them, and a missing image file named where it is referenced."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from assay.config import parse_suite
from assay.errors import ConfigError
from assay.interop.promptfoo import convert_promptfoo
from assay.testing import FakeOpenAIServer
from tests.interop.test_promptfoo_convert import run
from tests.runner.test_runner_multimodal import tiny_png


def write_config(tmp_path: Path, prompt: Any, variables: dict[str, str]) -> Path:
    """A promptfoo config with one chat prompt file and one test, and a PNG `cat.png`."""
    (tmp_path / "cat.png").write_bytes(tiny_png())
    (tmp_path / "prompt.json").write_text(json.dumps(prompt), encoding="utf-8")
    config = {
        "prompts": ["file://prompt.json"],
        "providers": ["openai:gpt-4o-mini"],
        "tests": [{"vars": variables, "assert": [{"type": "contains", "value": "cat"}]}],
    }
    path = tmp_path / "promptfooconfig.yaml"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def user(*content: Any) -> list[dict[str, Any]]:
    return [{"role": "user", "content": list(content)}]


PNG_URL = "data:image/png;base64," + base64.b64encode(tiny_png()).decode()


@pytest.mark.parametrize(
    ("image_part", "variables"),
    [
        (  # OpenAI, a URL variable
            {"type": "image_url", "image_url": {"url": "{{url}}", "detail": "low"}},
            {"url": "https://example.test/cat.png"},
        ),
        (  # OpenAI, a file:// image variable inside a data: URL (promptfoo loads it as base64)
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,{{image}}"}},
            {"image": "file://cat.png"},
        ),
        (  # OpenAI, the bare file:// image variable as the URL
            {"type": "image_url", "image_url": {"url": "{{image}}"}},
            {"image": "file://cat.png"},
        ),
        (  # Anthropic, a base64 source
            {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/png", "data": "{{image}}"},
            },
            {"image": "file://cat.png"},
        ),
        (  # Bedrock Converse
            {"image": {"format": "png", "source": {"bytes": "{{image}}"}}},
            {"image": "file://cat.png"},
        ),
        (  # the Responses API
            {"type": "input_image", "image_url": "{{image}}"},
            {"image": "file://cat.png"},
        ),
    ],
    ids=["openai-url", "openai-data-url", "openai-bare", "anthropic", "converse", "responses"],
)
def test_i25_4_image_content_lists_become_image_parts_sent_as_openai_parts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, image_part: Any, variables: dict[str, str]
) -> None:
    prompt = user({"type": "text", "text": "What animal is this?"}, image_part)
    conversion = convert_promptfoo(
        write_config(tmp_path, prompt, variables), display="p.yaml", output_dir=tmp_path
    )
    assert [str(w) for w in conversion.warnings] == []
    url = variables.get("url", PNG_URL)
    expected_image: dict[str, Any] = {"url": url}
    if "detail" in json.dumps(image_part):
        expected_image["detail"] = "low"
    parts = [
        {"type": "text", "text": "What animal is this?"},
        {"type": "image_url", "image_url": expected_image},
    ]
    (case,) = conversion.suite["tests"]  # type: ignore[misc]
    assert case["input"] == [{"role": "user", "content": parts}]
    loaded = parse_suite(conversion.suite, base_dir=tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "unused")
    with FakeOpenAIServer({"What animal is this?": "A cat."}) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        (result,) = run(loaded).values()
        (body,) = server.requests
    assert body["messages"] == [{"role": "user", "content": parts}]
    assert result.verdict == "pass"


def test_i25_4_a_missing_image_file_is_named_where_it_is_referenced(tmp_path: Path) -> None:
    prompt = user({"type": "image_url", "image_url": {"url": "{{image}}"}})
    path = write_config(tmp_path, prompt, {"image": "file://missing.png"})
    with pytest.raises(ConfigError) as caught:
        convert_promptfoo(path, display="p.yaml", output_dir=tmp_path)
    issues = [str(i) for i in caught.value.issues]
    assert issues[0].startswith("p.yaml:1 tests: no case could be converted")
    assert issues[1].startswith(
        "p.yaml:1 tests[0].vars: left out: the test is left out: cannot read 'missing.png'"
    )


@pytest.mark.parametrize(
    ("part", "says"),
    [
        ({"type": "video_url", "video_url": {"url": "https://x.test/v.mp4"}}, "'video_url'"),
        ({"type": "image_url", "image_url": {"url": "{{unset}}"}}, "neither a URL nor base64"),
    ],
)
def test_i25_4_a_part_assay_cannot_hold_leaves_the_case_out_with_a_reason(
    tmp_path: Path, part: Any, says: str
) -> None:
    path = write_config(tmp_path, user({"type": "text", "text": "Hi"}, part), {"q": "x"})
    with pytest.raises(ConfigError) as caught:
        convert_promptfoo(path, display="p.yaml", output_dir=tmp_path)
    left_out = str(caught.value.issues[1])
    assert left_out.startswith("p.yaml:1 tests[0]: left out: case 'test-1' is left out")
    assert says in left_out
