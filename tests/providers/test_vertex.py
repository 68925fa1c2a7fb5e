"""Google Vertex AI: Gemini on its OpenAI-compatible endpoint and Claude on its rawPredict path,
both with an access token as the bearer key, against the local protocol server."""

from __future__ import annotations

import pytest

from assay.errors import UsageError
from assay.targets import AnthropicTarget, OpenAITarget
from assay.testing import FakeOpenAIServer
from tests.providers.test_presets import judge_once
from tests.targets._calls import ask, run

TOKEN = "ya29.local-token"
LOCATION_PATH = "/v1/projects/proj-1/locations/europe-west4"


@pytest.fixture(autouse=True)
def _vertex_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in ("VERTEX_PROJECT_ID", "GOOGLE_CLOUD_PROJECT", "VERTEX_REGION"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("VERTEX_ACCESS_TOKEN", TOKEN)


def test_i23_2_vertex_endpoint_is_built_from_the_project_and_region_variables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    target = OpenAITarget(type="openai", provider="vertex", model="google/gemini-2.5-flash")
    assert target.api_key_env == "VERTEX_ACCESS_TOKEN"
    assert target.missing_key() is not None and "VERTEX_PROJECT_ID" in str(target.missing_key())
    with pytest.raises(UsageError, match="VERTEX_PROJECT_ID"):
        target.resolved_base_url()
    monkeypatch.setenv("VERTEX_PROJECT_ID", "proj-1")
    assert target.missing_key() is None
    assert target.resolved_base_url() == (
        "https://us-central1-aiplatform.googleapis.com/v1/projects/proj-1/locations/"
        "us-central1/endpoints/openapi"
    )
    monkeypatch.setenv("VERTEX_REGION", "global")
    assert target.resolved_base_url() == (
        "https://aiplatform.googleapis.com/v1/projects/proj-1/locations/global/endpoints/openapi"
    )


def test_i23_2_gemini_on_vertex_sends_the_token_to_the_openapi_endpoint() -> None:
    with FakeOpenAIServer(api_key=TOKEN, judge={"score": 0.5}) as server:
        location = server.url + LOCATION_PATH
        target = OpenAITarget(
            type="openai", provider="vertex", model="google/gemini-2.5-flash", base_url=location
        )
        [output] = run(target, ask("hi vertex"))
        seen = server.seen[-1]
        verdict = judge_once({"provider": "vertex", "model": "gemini-j", "base_url": location})
        judge_seen = server.seen[-1]
    assert output.output == "hi vertex"
    assert verdict.score == 0.5
    for request in (seen, judge_seen):
        assert request.path == f"{LOCATION_PATH}/endpoints/openapi/chat/completions"
        assert request.headers["authorization"] == f"Bearer {TOKEN}"


def test_i23_2_claude_on_vertex_posts_the_messages_body_to_raw_predict() -> None:
    with FakeOpenAIServer(api_key=TOKEN, judge={"score": 0.25}) as server:
        location = f"{server.url}/v1/projects/proj-2/locations/us-east5"
        target = AnthropicTarget(
            type="anthropic",
            provider="vertex-anthropic",
            model="claude-haiku-4-5@20251001",
            base_url=location,
        )
        [output] = run(target, ask("hi claude"))
        seen = server.seen[-1]
        verdict = judge_once(
            {"provider": "vertex-anthropic", "model": "claude-j", "base_url": location}
        )
        judge_seen = server.seen[-1]
    assert (output.output, verdict.score) == ("hi claude", 0.25)
    assert seen.path == (
        "/v1/projects/proj-2/locations/us-east5/publishers/anthropic/models/"
        "claude-haiku-4-5@20251001:rawPredict"
    )
    assert judge_seen.path.endswith("/models/claude-j:rawPredict")
    for request in (seen, judge_seen):
        assert request.headers["authorization"] == f"Bearer {TOKEN}"
        assert "x-api-key" not in request.headers


def test_i23_2_a_base_url_without_a_location_is_refused_for_claude_on_vertex() -> None:
    target = AnthropicTarget(
        type="anthropic", provider="vertex-anthropic", model="claude-x", base_url="http://x/v1"
    )
    with pytest.raises(UsageError, match="names no Vertex location"):
        target.resolved_base_url()
