"""Every provider preset: the endpoint and key variable it fills, and a real request reaching the
local OpenAI-protocol server (or its Anthropic-protocol side) with the preset's path and auth."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml
from pydantic import BaseModel, TypeAdapter, ValidationError

from assay.judge import JudgeClient, JudgeSpec, PromptTemplate
from assay.providers import PRESETS
from assay.targets import AnthropicTarget, OpenAITarget, TargetSpec
from assay.testing import FakeOpenAIServer
from tests.targets._calls import ask, run

EXPECTED: dict[str, tuple[str | None, str | None]] = {
    "openai": ("https://api.openai.com/v1", "OPENAI_API_KEY"),
    "azure": (None, "AZURE_OPENAI_API_KEY"),
    "openrouter": ("https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"),
    "groq": ("https://api.groq.com/openai/v1", "GROQ_API_KEY"),
    "together": ("https://api.together.xyz/v1", "TOGETHER_API_KEY"),
    "fireworks": ("https://api.fireworks.ai/inference/v1", "FIREWORKS_API_KEY"),
    "deepseek": ("https://api.deepseek.com/v1", "DEEPSEEK_API_KEY"),
    "mistral": ("https://api.mistral.ai/v1", "MISTRAL_API_KEY"),
    "gemini": ("https://generativelanguage.googleapis.com/v1beta/openai", "GEMINI_API_KEY"),
    "huggingface": ("https://router.huggingface.co/v1", "HF_TOKEN"),
    "truefoundry": ("https://llm-gateway.truefoundry.com", "TRUEFOUNDRY_API_KEY"),
    "ollama": ("http://127.0.0.1:11434/v1", None),
    "vllm": ("http://127.0.0.1:8000/v1", None),
    "sglang": ("http://127.0.0.1:30000/v1", None),
    "lmstudio": ("http://127.0.0.1:1234/v1", None),
}
"""The documented endpoint and key variable of every OpenAI-compatible preset."""

DOCS = Path(__file__).parents[2] / "docs" / "providers.md"
HOSTED = [name for name, (_, key) in EXPECTED.items() if key is not None and name != "azure"]
LOCAL = [name for name, (_, key) in EXPECTED.items() if key is None]
TEMPLATE = PromptTemplate("t", "Rate this: {{ output }}")


class Verdict(BaseModel):
    score: float
    reasoning: str


@pytest.fixture(autouse=True)
def _no_endpoint_overrides(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in ("OPENAI_BASE_URL", "AZURE_OPENAI_ENDPOINT", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(variable, raising=False)


def test_every_openai_compatible_preset_is_listed_and_documented() -> None:
    openai_wire = {name for name, preset in PRESETS.items() if preset.chat_completions_api}
    assert openai_wire == {*EXPECTED, "vertex"}  # vertex: tests/providers/test_vertex.py
    # bedrock takes Chat Completions bodies but speaks Converse (tests/providers/test_aws.py)
    assert set(PRESETS) == {*EXPECTED, "vertex", "anthropic", "vertex-anthropic", "fake", "bedrock"}
    with open(DOCS, encoding="utf-8") as page:
        text = page.read()
    for name in PRESETS:
        assert f"provider: {name}" in text, f"docs/providers.md shows no config for {name}"


@pytest.mark.parametrize("name", sorted(set(EXPECTED) - {"azure"}))
def test_a_preset_fills_the_endpoint_and_the_key_variable(name: str) -> None:
    target = OpenAITarget(type="openai", provider=name, model="m")
    judge = JudgeSpec(provider=name, model="m")
    base_url, key = EXPECTED[name]
    assert (target.resolved_base_url(), target.api_key_env) == (base_url, key)
    assert judge.resolved_api_key_env == key
    assert JudgeClient(judge)._base_url() == base_url


def local_url(server: FakeOpenAIServer, preset_url: str) -> str:
    """The preset's endpoint path, served by the local server."""
    return server.url + urlsplit(preset_url).path


@pytest.mark.parametrize("name", HOSTED)
def test_a_hosted_preset_sends_its_key_as_a_bearer_token_to_its_path(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    base_url, key = EXPECTED[name]
    assert base_url is not None and key is not None
    monkeypatch.setenv(key, f"secret-{name}")
    with FakeOpenAIServer(api_key=f"secret-{name}") as server:
        url = local_url(server, base_url)
        target = OpenAITarget(type="openai", provider=name, model="m", base_url=url)
        [output] = run(target, ask("hello"))
        seen = server.seen[-1]
    assert output.output == "hello"
    assert seen.path == urlsplit(base_url).path + "/chat/completions"
    assert seen.headers["authorization"] == f"Bearer secret-{name}"


@pytest.mark.parametrize("name", ["huggingface", "truefoundry"])
def test_i23_2_gateway_presets_send_their_key_to_their_chat_completions_path(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The presets promptfoo's huggingface:chat and truefoundry providers import onto, as a
    target and as a judge: the endpoint's path, the key variable's bearer token, and the
    whole `org/model` name."""
    base_url, key = EXPECTED[name]
    assert base_url is not None and key is not None
    assert OpenAITarget(type="openai", provider=name, model="m").resolved_base_url() == base_url
    monkeypatch.setenv(key, f"secret-{name}")
    with FakeOpenAIServer(api_key=f"secret-{name}", judge={"score": 0.5}) as server:
        url = local_url(server, base_url)
        target = OpenAITarget(type="openai", provider=name, model="org-main/m", base_url=url)
        [output] = run(target, ask("hi"))
        seen, body = server.seen[-1], server.requests[-1]
        verdict = judge_once({"provider": name, "model": "org-main/m", "base_url": url})
        judged = server.seen[-1]
    assert output.output == "hi"
    assert seen.path == urlsplit(base_url).path + "/chat/completions"
    assert seen.headers["authorization"] == f"Bearer secret-{name}"
    assert body["model"] == "org-main/m"
    assert verdict.score == 0.5
    assert judged.headers["authorization"] == f"Bearer secret-{name}"


@pytest.mark.parametrize("name", LOCAL)
def test_a_local_preset_needs_no_key(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    base_url, _ = EXPECTED[name]
    assert base_url is not None
    with FakeOpenAIServer() as server:
        url = local_url(server, base_url)
        [output] = run(OpenAITarget(type="openai", provider=name, model="m", base_url=url), ask())
        seen = server.seen[-1]
    assert output.output == "hello there"
    assert seen.path == "/v1/chat/completions"


def test_azure_sends_the_deployment_path_the_api_version_and_an_api_key_header(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "secret-azure")
    with FakeOpenAIServer(api_key="secret-azure") as server:
        monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", server.url)
        target = OpenAITarget(
            type="openai",
            provider="azure",
            model="gpt-4o",
            deployment="prod-4o",
            api_version="2024-10-21",
        )
        assert target.resolved_base_url() == f"{server.url}/openai/deployments/prod-4o"
        [output] = run(target, ask("hi azure"))
        seen = server.seen[-1]
    assert output.output == "hi azure"
    assert seen.path == "/openai/deployments/prod-4o/chat/completions"
    assert seen.query == {"api-version": "2024-10-21"}
    assert seen.headers["api-key"] == "secret-azure"
    assert "authorization" not in seen.headers


def test_azure_without_an_api_version_is_rejected_when_the_suite_loads() -> None:
    with pytest.raises(ValidationError, match="provider 'azure' needs `api_version`"):
        OpenAITarget(type="openai", provider="azure", model="m", base_url="https://x")
    with pytest.raises(ValidationError, match="apply to `provider: azure` only"):
        OpenAITarget(type="openai", provider="groq", model="m", api_version="2024-10-21")


def test_an_unknown_preset_says_did_you_mean() -> None:
    with pytest.raises(ValidationError, match=r"unknown provider 'grok'\. Did you mean 'groq'\?"):
        OpenAITarget(type="openai", provider="grok", model="m")
    with pytest.raises(ValidationError, match=r"unknown provider 'antropic'\. Did you mean"):
        JudgeSpec(provider="antropic", model="m")
    with pytest.raises(ValidationError, match="speaks the anthropic protocol"):
        OpenAITarget(type="openai", provider="anthropic", model="m")


def test_an_explicit_endpoint_and_key_variable_win_over_the_preset() -> None:
    target = OpenAITarget(
        type="openai", provider="groq", model="m", base_url="http://proxy/v1", api_key_env="K"
    )
    assert (target.resolved_base_url(), target.api_key_env) == ("http://proxy/v1", "K")
    legacy = OpenAITarget(type="openai", model="m", base_url="http://h/v1", api_key_env=None)
    assert (legacy.provider, legacy.api_key_env) == ("openai", None)


def judge_once(spec: dict[str, Any]) -> Verdict:
    client = JudgeClient(JudgeSpec(**spec))

    async def go() -> Verdict:
        try:
            judgement = await client.ask(TEMPLATE.render({"output": "fine"}), Verdict)
            return judgement.answer
        finally:
            await client.close()

    return asyncio.run(go())


@pytest.mark.parametrize("name", [*HOSTED, "azure"])
def test_a_judge_may_use_every_preset_a_target_may(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    base_url, key = EXPECTED[name]
    assert key is not None
    monkeypatch.setenv(key, f"secret-{name}")
    with FakeOpenAIServer(api_key=f"secret-{name}", judge={"score": 0.75}) as server:
        spec: dict[str, Any] = {"provider": name, "model": "judge-m"}
        if name == "azure":
            spec.update(base_url=server.url, api_version="2024-10-21")
        else:
            assert base_url is not None
            spec["base_url"] = local_url(server, base_url)
        verdict = judge_once(spec)
        seen = server.seen[-1]
    assert verdict.score == 0.75
    if name == "azure":
        assert seen.path == "/openai/deployments/judge-m/chat/completions"
        assert seen.query == {"api-version": "2024-10-21"}
    else:
        assert base_url is not None
        assert seen.path == urlsplit(base_url).path + "/chat/completions"


def test_the_anthropic_provider_reaches_the_local_messages_endpoint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "secret-anthropic")
    with FakeOpenAIServer(api_key="secret-anthropic", judge={"score": 0.25}) as server:
        [output] = run(
            AnthropicTarget(type="anthropic", model="claude-x", base_url=server.url), ask("yo")
        )
        target_seen = server.seen[-1]
        verdict = judge_once({"provider": "anthropic", "model": "claude-j", "base_url": server.url})
        judge_seen = server.seen[-1]
    assert (output.output, verdict.score) == ("yo", 0.25)
    for seen in (target_seen, judge_seen):
        assert seen.path == "/v1/messages"
        # The SDK sends the key as `x-api-key` or as a bearer token, depending on its version.
        assert "secret-anthropic" in (
            seen.headers.get("x-api-key"),
            seen.headers.get("authorization", "").removeprefix("Bearer "),
        )
        assert "anthropic-version" in seen.headers


def test_every_one_line_config_in_the_docs_is_a_valid_target() -> None:
    adapter: TypeAdapter[Any] = TypeAdapter(TargetSpec)
    with open(DOCS, encoding="utf-8") as page:
        lines = re.findall(r"`(\{type: .*?\})` \|$", page.read(), flags=re.MULTILINE)
    assert len(lines) == len(PRESETS)
    providers = {adapter.validate_python(yaml.safe_load(line)).provider for line in lines}
    assert providers == set(PRESETS)


@pytest.mark.parametrize(
    "options",
    [
        {"provider": "openai"},
        {"provider": "openai", "api_key_env": None},
        {"provider": "groq"},
        {"provider": "groq", "api_key_env": "MY_KEY"},
        {"provider": "ollama"},
        {"provider": "ollama", "api_key_env": "VLLM_API_KEY"},
    ],
)
def test_a_target_dumped_without_defaults_validates_back_to_the_same_key_variable(
    options: dict[str, Any],
) -> None:
    target = OpenAITarget(type="openai", model="m", **options)
    stored = target.model_dump(mode="json", exclude_defaults=True)
    assert OpenAITarget.model_validate({**stored, "type": "openai"}) == target
