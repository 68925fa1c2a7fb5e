"""Inputs with content parts (images, audio) end to end: the exact request body the target
sends, the judge prompt and the stored result showing placeholders, the response cache keyed
on the parts (issue 25 item 4)."""

from __future__ import annotations

import base64
import struct
import zlib
from pathlib import Path
from typing import Any

import pytest
import yaml

from assay import EvalConfig, evaluate
from assay.results import RunResult
from assay.testing import FakeOpenAIServer
from assay.testing._judge_script import is_judge_request
from tests.conftest import write


def tiny_png(width: int = 2, height: int = 2, pad: int = 0) -> bytes:
    """A valid PNG of `width`×`height` grey pixels (with `pad` bytes of noise in a text chunk
    to make it large), built here rather than copied from anywhere."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    rows = b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    text = chunk(b"tEXt", b"c\x00" + b"x" * pad) if pad else b""
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + text
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def data_url(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode()


def image_suite(tmp_path: Path, server: FakeOpenAIServer, url: str, **top: Any) -> Path:
    suite = {
        "name": "vision",
        "target": {
            "type": "openai",
            "model": "vision-model",
            "base_url": server.base_url,
            "api_key_env": None,
        },
        "tests": [
            {
                "id": "look",
                "input": [
                    {
                        "role": "user",
                        "content": [
                            {"type": "text", "text": "What is in this picture?"},
                            {"type": "image_url", "image_url": {"url": url, "detail": "low"}},
                        ],
                    }
                ],
                "assertions": [{"type": "contains", "value": "grey"}],
            }
        ],
        **top,
    }
    return write(tmp_path / "vision.eval.yaml", yaml.safe_dump(suite, sort_keys=False))


def run(path: Path, **config: Any) -> RunResult:
    return evaluate(path, config=EvalConfig(**{"store": False, "cache_mode": "off", **config}))


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)  # the response cache lives in ./.assay
    monkeypatch.setenv("OPENAI_API_KEY", "unused")
    monkeypatch.delenv("ASSAY_JUDGE_MODEL", raising=False)
    monkeypatch.delenv("ASSAY_JUDGE_BASE_URL", raising=False)


def test_i25_4_image_parts_reach_the_openai_wire_exactly_as_written(tmp_path: Path) -> None:
    url = data_url(tiny_png())
    with FakeOpenAIServer({"What is in this picture?": "A grey square."}) as server:
        result = run(image_suite(tmp_path, server, url))
        (body,) = server.requests
    assert body["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is in this picture?"},
                {"type": "image_url", "image_url": {"url": url, "detail": "low"}},
            ],
        }
    ]
    (case,) = result.results
    assert (case.verdict, case.output) == ("pass", "A grey square.")


def test_i25_4_a_judge_prompt_and_the_stored_result_show_a_placeholder_not_the_image(
    tmp_path: Path,
) -> None:
    png = tiny_png(pad=300_000)
    url = data_url(png)
    prompts: list[str] = []

    def judge(body: dict[str, Any], schema: Any) -> dict[str, Any]:
        del schema
        prompts.append(body["messages"][-1]["content"])
        return {"score": 1.0, "reasoning": "describes it"}

    with FakeOpenAIServer({"What is in this picture?": "A grey square."}, judge=judge) as server:
        path = image_suite(tmp_path, server, url, judge={"model": "judge-model"})
        suite = yaml.safe_load(path.read_text())
        suite["tests"][0]["assertions"] = [{"type": "llm-grader", "prompt": "Is it described?"}]
        path.write_text(yaml.safe_dump(suite, sort_keys=False))
        result = run(path, judge_base_url=server.base_url)
        target_bodies = [b for b in server.requests if not is_judge_request(b)]
    assert target_bodies[0]["messages"][0]["content"][1]["image_url"]["url"] == url
    (prompt,) = prompts
    assert f"[image: data:image/png ({len(png)} bytes)]" in prompt
    assert "What is in this picture?" in prompt
    assert "base64" not in prompt and len(prompt) < 10_000
    (case,) = result.results
    stored = case.model_dump_json()
    assert len(stored) < 10_000 and "base64," not in stored
    assert case.input == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is in this picture?"},
                {
                    "type": "image_url",
                    "image_url": {"url": f"data:image/png ({len(png)} bytes)", "detail": "low"},
                },
            ],
        }
    ]


def test_i25_4_the_response_cache_is_keyed_on_the_image(tmp_path: Path) -> None:
    first, second = data_url(tiny_png(2, 2)), data_url(tiny_png(3, 3))
    with FakeOpenAIServer({"What is in this picture?": "A grey square."}) as server:
        run(image_suite(tmp_path, server, first), cache_mode="use")
        run(image_suite(tmp_path, server, first), cache_mode="use")
        assert server.request_count == 1  # the same image: served from the cache
        result = run(image_suite(tmp_path, server, second), cache_mode="use")
        assert server.request_count == 2  # another image: another call
    assert result.results[0].cached is False


def test_i25_4_a_fake_target_keys_an_image_input_on_its_text_with_placeholders(
    tmp_path: Path,
) -> None:
    url = "https://example.test/cat.png"
    with FakeOpenAIServer() as server:
        path = image_suite(tmp_path, server, url)
    suite = yaml.safe_load(path.read_text())
    key = f"What is in this picture?\n[image: {url}]"
    suite["target"] = {"type": "fake", "responses": {key: "A grey cat."}}
    path.write_text(yaml.safe_dump(suite, sort_keys=False))
    (case,) = run(path).results
    assert (case.verdict, case.output) == ("pass", "A grey cat.")


def test_i25_4_a_part_the_target_cannot_send_is_an_error_of_the_case_not_of_the_run(
    tmp_path: Path,
) -> None:
    with FakeOpenAIServer() as server:
        path = image_suite(tmp_path, server, "https://example.test/cat.png")
        suite = yaml.safe_load(path.read_text())
        suite["target"] = {"type": "anthropic", "model": "claude-x", "base_url": server.url,
                           "api_key_env": None}  # fmt: skip
        suite["tests"][0]["input"][0]["content"][1] = {
            "type": "input_audio",
            "input_audio": {"data": "UklGRg==", "format": "wav"},
        }
        path.write_text(yaml.safe_dump(suite, sort_keys=False))
        (case,) = run(path, cache_mode="use").results  # the cache key builds the request
        assert server.request_count == 0
    assert case.verdict == "error" and case.error is not None
    assert "a 'input_audio' part cannot be sent" in case.error.message
