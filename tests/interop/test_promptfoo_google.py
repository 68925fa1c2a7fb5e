"""promptfoo's Google providers (issue 25 item 2): `vertex:` models on the Vertex presets, a
Gemini-shaped config written the way the OpenAI-compatible endpoint takes it, and the
converted suite running against the local protocol server."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.config import parse_suite
from assay.interop.promptfoo import convert_promptfoo
from tests.interop.test_promptfoo_convert import run

FIXTURES = Path(__file__).parent / "fixtures" / "promptfoo" / "i25" / "google"


def test_i25_2_vertex_providers_become_targets_on_the_vertex_presets() -> None:
    conversion = convert_promptfoo(FIXTURES / "vertex.yaml", display="vertex.yaml")
    targets = conversion.suite["targets"]
    assert isinstance(targets, dict)
    weather = {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    }
    assert targets["gemini"] == {
        "type": "openai",
        "provider": "vertex",
        "model": "google/gemini-2.5-flash",
        "base_url": "https://europe-west4-aiplatform.googleapis.com/v1/projects/acme-eval/"
        "locations/europe-west4",
        "system_prompt": "Answer briefly.",
        "temperature": 0.2,
        "max_tokens": 256,
        "tools": [
            {"name": "get_weather", "description": "The weather of a city", "parameters": weather}
        ],
        "extra_body": {
            "response_format": {
                "type": "json_schema",
                "json_schema": {
                    "name": "response",
                    "schema": {"type": "object", "properties": {"city": {"type": "string"}}},
                },
            },
            "tool_choice": "required",
        },
    }
    assert targets["claude"] == {
        "type": "anthropic",
        "provider": "vertex-anthropic",
        "model": "claude-haiku-4-5@20251001",
        "base_url": "https://us-east5-aiplatform.googleapis.com/v1/projects/${VERTEX_PROJECT_ID}/"
        "locations/us-east5",
        "max_tokens": 512,
    }
    assert targets["llama"] == {
        "type": "openai",
        "provider": "vertex",
        "model": "meta/llama-3.3-70b-instruct-maas",
        "extra_body": {"google": {"model_safety_settings": {"enabled": True}}},
    }
    assert "embedder" not in targets
    assert targets["studio"] == {
        "type": "openai",
        "provider": "gemini",
        "model": "gemini-2.0-flash",
        "top_p": 0.9,
        "system_prompt": "Be terse.",
    }
    assert conversion.suite["judge"] == {"provider": "vertex", "model": "google/gemini-2.5-pro"}
    text = "\n".join(str(w) for w in conversion.warnings)
    assert "googleSearch runs on Google's side" in text
    assert "config.safetySettings" in text
    assert "vertex.yaml:48 providers[3]: left out: provider 'vertex:embedding:" in text


def test_i25_2_a_converted_vertex_suite_runs_against_the_endpoint(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from assay.testing import FakeOpenAIServer

    monkeypatch.setenv("VERTEX_ACCESS_TOKEN", "ya29.token")
    conversion = convert_promptfoo(FIXTURES / "vertex.yaml", display="vertex.yaml")
    with FakeOpenAIServer(api_key="ya29.token", judge={"score": 1.0}) as server:
        location = f"{server.url}/v1/projects/acme-eval/locations/europe-west4"
        suite = dict(conversion.suite)
        suite["target"] = "llama"
        targets = dict(suite["targets"])  # type: ignore[arg-type]
        suite["targets"] = {"llama": {**targets["llama"], "base_url": location}}
        suite["judge"] = {"provider": "vertex", "model": "google/gemini-j", "base_url": location}
        suite["tests"] = [
            {**t, "assertions": [a for a in t["assertions"] if a["type"] != "valid-tool-calls"]}
            for t in suite["tests"]  # type: ignore[union-attr]
        ]
        results = run(parse_suite(suite, base_dir=tmp_path))
        paths = {seen.path for seen in server.seen}
    [result] = results.values()
    assert (result.verdict, result.output) == ("pass", "Weather in Oslo?")
    assert paths == {
        "/v1/projects/acme-eval/locations/europe-west4/endpoints/openapi/chat/completions"
    }
