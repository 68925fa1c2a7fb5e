"""promptfoo's AWS providers (issue 25 item 2): `bedrock:…` as `openai` targets on the `bedrock`
provider, `sagemaker:…` as `sagemaker` targets, the kinds that are not chat models reported
where they stand, and a converted suite run against a local fake of Bedrock."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from assay.config import load_project, parse_suite
from assay.interop.promptfoo import convert_promptfoo
from assay.runner import RunOptions, execute, plan_run
from assay.store import MemorySink
from tests.providers._aws_fake import ACCESS_KEY, SECRET_KEY, FakeAws, converse_reply

FIXTURES = Path(__file__).parent / "fixtures" / "promptfoo" / "i25"


def test_i25_2_bedrock_providers_become_bedrock_targets_with_their_whole_model_id() -> None:
    conversion = convert_promptfoo(FIXTURES / "aws.yaml", display="aws.yaml", output_dir=FIXTURES)
    targets = conversion.suite["targets"]
    assert targets["claude-converse"] == {
        "type": "openai",
        "provider": "bedrock",
        "model": "us.anthropic.claude-sonnet-4-6",  # an inference profile, kept whole
        "region": "us-west-2",
        "max_tokens": 512,
        "temperature": 0.3,
        "extra_body": {  # Converse's additionalModelRequestFields, and its guardrail
            "top_k": 40,
            "thinking": {"type": "enabled", "budget_tokens": 2048},
            "guardrailConfig": {"guardrailIdentifier": "gr-123", "guardrailVersion": "1"},
        },
    }
    # Nova's and Titan's InvokeModel settings are folded into the sampling options.
    assert targets["nova-invoke"] == {
        "type": "openai", "provider": "bedrock", "model": "amazon.nova-lite-v1:0",
        "max_tokens": 256, "temperature": 0.7, "top_p": 0.9, "extra_body": {"top_k": 50},
    }  # fmt: skip
    assert targets["titan"]["max_tokens"] == 300 and "stop" not in targets["titan"]
    # An ARN is the model id; its region is the target's when the config names none.
    arn = "arn:aws:bedrock:eu-west-1:123456789012:application-inference-profile/team-claude"
    assert targets["profile-arn"] == {
        "type": "openai", "provider": "bedrock", "model": arn, "region": "eu-west-1"
    }  # fmt: skip
    assert targets["nova-tools"]["tools"] == [
        {
            "name": "get_weather",
            "description": "Weather for a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        }
    ]
    assert targets["nova-tools"]["extra_body"] == {"tool_choice": "auto"}
    assert conversion.suite["judge"] == {
        "provider": "bedrock",
        "model": "us.anthropic.claude-haiku-4-5-20251001-v1:0",
        "region": "us-east-2",
        "temperature": 0,
    }
    loaded = parse_suite(conversion.suite, base_dir=FIXTURES)  # the suite validates as it is
    assert set(loaded.suite.targets) == set(targets)


def test_i25_2_what_is_not_a_bedrock_chat_model_is_reported_on_its_line() -> None:
    conversion = convert_promptfoo(FIXTURES / "aws.yaml", display="aws.yaml", output_dir=FIXTURES)
    said = [str(w) for w in conversion.warnings]

    def about(ident: str) -> str:
        (line,) = [w for w in said if f"provider '{ident}'" in w and "left out" in w]
        return line

    assert about("bedrock:kb:us.anthropic.claude-sonnet-4-6").startswith("aws.yaml:39 ")
    assert "knowledge base" in about("bedrock:kb:us.anthropic.claude-sonnet-4-6")
    assert "embeddings" in about("bedrock:embeddings:amazon.titan-embed-text-v2:0")
    assert "video generation" in about("bedrock:video:amazon.nova-reel-v1:1")
    assert "speech" in about("bedrock:amazon.nova-sonic-v1:0")
    assert "not copied" in about("bedrock:amazon.nova-lite-v1:0")  # config.accessKeyId
    invoke = [w for w in said if "calls InvokeModel" in w]
    assert len(invoke) == 3  # the three `bedrock:<model>` ids; `bedrock:converse:` ones are not
    assert not any("inferenceModelType" in w for w in said)  # Converse needs no body format


def test_i25_2_bedrock_agents_become_bedrock_agent_targets() -> None:
    conversion = convert_promptfoo(FIXTURES / "aws.yaml", display="aws.yaml", output_dir=FIXTURES)
    targets = conversion.suite["targets"]
    assert targets["bedrock-agent-support-agent"] == {
        "type": "bedrock-agent",
        "agent_id": "ABCDEFGHIJ",  # config.agentId wins over the name in the id
        "agent_alias_id": "PROD",
        "session_id": "shared-1",
        "enable_trace": True,
    }
    assert targets["bedrock-agents-klmnopqrst"] == {
        "type": "bedrock-agent",
        "agent_id": "KLMNOPQRST",
    }
    said = [str(w) for w in conversion.warnings]
    assert any("bedrock:agents:KLMNOPQRST" in w and "TSTALIASID" in w for w in said)


def test_i25_2_sagemaker_providers_become_sagemaker_targets_in_their_format() -> None:
    conversion = convert_promptfoo(FIXTURES / "aws.yaml", display="aws.yaml", output_dir=FIXTURES)
    targets = conversion.suite["targets"]
    assert targets["sm-mistral"] == {
        "type": "sagemaker",
        "endpoint": "mistral-endpoint",
        "format": "huggingface",
        "region": "us-west-2",
        "max_tokens": 256,
        "top_p": 0.9,
        "content_type": "application/json",
        "accept": "application/json",
        "output_path": "$[0].generated_text",  # promptfoo's `json[0].generated_text`
    }
    assert targets["sm-jumpstart"] == {
        "type": "sagemaker", "endpoint": "llama-endpoint", "format": "jumpstart"
    }  # fmt: skip
    assert targets["sm-plain"]["format"] == "custom"
    said = [str(w) for w in conversion.warnings]
    assert any("config.transform" in w and "untransformed" in w for w in said)
    assert any("sagemaker:plain-endpoint" in w and "no modelType" in w for w in said)
    assert any("sagemaker:embedding:embed-endpoint" in w and "left out" in w for w in said)


def test_i25_2_a_converted_bedrock_suite_runs_with_a_bedrock_judge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    for name in ("AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    verdict = {"score": 1.0, "reasoning": "mentions scattering", "hits": [], "misses": []}
    replies: list[Any] = [
        converse_reply("Rayleigh scattering."),
        converse_reply(tool=("LlmGraderReply", verdict)),
    ]
    with FakeAws(replies) as aws:
        config = tmp_path / "promptfooconfig.yaml"
        config.write_text(
            "prompts: ['{{question}}']\n"
            f"providers:\n  - id: bedrock:converse:amazon.nova-lite-v1:0\n"
            f"    config: {{region: us-west-2, endpoint: '{aws.url}'}}\n"
            "defaultTest:\n  options:\n    provider:\n"
            f"      id: bedrock:converse:us.anthropic.claude-haiku-4-5-20251001-v1:0\n"
            f"      config: {{endpoint: '{aws.url}'}}\n"
            "tests:\n  - vars: {question: Why is the sky blue?}\n"
            "    assert: [{type: llm-rubric, value: Mentions scattering}]\n"
        )
        conversion = convert_promptfoo(config, display="promptfooconfig.yaml", output_dir=tmp_path)
        loaded = parse_suite(conversion.suite, base_dir=tmp_path)
        sink = MemorySink()
        asyncio.run(execute(plan_run(loaded, load_project(), RunOptions()), sink))
    assert aws.problems == []
    [result] = sink.run.results
    assert result.output == "Rayleigh scattering."
    assert (result.verdict, result.score) == ("pass", 1.0)
    target_call, judge_call = aws.seen[0], aws.seen[1]
    assert target_call.path == "/model/amazon.nova-lite-v1%3A0/converse"
    assert target_call.scope.endswith("/us-west-2/bedrock/aws4_request")
    assert judge_call.path.startswith("/model/us.anthropic.claude-haiku-4-5")
    assert "toolConfig" in judge_call.body  # the verdict's schema as a forced tool
