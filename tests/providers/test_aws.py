"""The `bedrock` provider (Converse, as a target and as a judge) and the `sagemaker` target,
against a local fake of the AWS services that recomputes each request's SigV4 signature."""

from __future__ import annotations

import asyncio
import base64
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from assay.judge import JudgeClient, JudgeError, JudgeSpec, PromptTemplate
from assay.providers import ProviderConfig, RetryPolicy
from assay.targets import BedrockAgentTarget, OpenAITarget, SageMakerTarget
from tests.providers._aws_fake import (
    ACCESS_KEY,
    SECRET_KEY,
    FakeAws,
    agent_chunk,
    converse_reply,
    event_stream,
)
from tests.targets._calls import ask, failure, run

TEMPLATE = PromptTemplate("t", "Rate this: {{ output }}")


class Verdict(BaseModel):
    score: float
    reasoning: str


@pytest.fixture(autouse=True)
def _aws_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Static test credentials from the environment; no profile, no instance metadata."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    for name in ("AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION",
                 "AWS_ENDPOINT_URL_BEDROCK_RUNTIME"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


def bedrock(aws: FakeAws, model: str = "amazon.nova-lite-v1:0", **options: Any) -> OpenAITarget:
    return OpenAITarget(
        type="openai",
        provider="bedrock",
        model=model,
        base_url=aws.url,
        region="us-west-2",
        **options,
    )


def judge_once(spec: dict[str, Any], **kwargs: Any) -> Verdict:
    client = JudgeClient(JudgeSpec(**spec), **kwargs)

    async def go() -> Verdict:
        try:
            return (await client.ask(TEMPLATE.render({"output": "fine"}), Verdict)).answer
        finally:
            await client.close()

    return asyncio.run(go())


def test_i23_2_a_bedrock_target_calls_converse_signed_for_bedrock_in_its_region() -> None:
    with FakeAws([converse_reply("Hello from Nova")]) as aws:
        target = bedrock(
            aws, system_prompt="Be brief.", temperature=0.2, max_tokens=64, stop=["END"]
        )
        [output] = run(target, ask("hi there"))
    assert aws.problems == []
    [seen] = aws.seen
    # The whole model id, percent-encoded in the path (its `:` included).
    assert seen.path == "/model/amazon.nova-lite-v1%3A0/converse"
    assert seen.scope.endswith("/us-west-2/bedrock/aws4_request")
    assert seen.body == {
        "messages": [{"role": "user", "content": [{"text": "hi there"}]}],
        "system": [{"text": "Be brief."}],
        "inferenceConfig": {"maxTokens": 64, "temperature": 0.2, "stopSequences": ["END"]},
    }
    assert output.output == "Hello from Nova"
    assert output.token_usage is not None
    assert (output.token_usage.input, output.token_usage.output) == (11, 7)


def test_i23_2_a_bedrock_target_runs_its_tool_loop_over_converse() -> None:
    replies = [
        converse_reply("Looking it up.", tool=("lookup_order", {"id": 7})),
        converse_reply("Order 7 was delivered."),
    ]
    arn = "arn:aws:bedrock:us-west-2:123456789012:application-inference-profile/prod"
    with FakeAws(replies) as aws:
        target = bedrock(
            aws,
            model=arn,
            tools=[{"name": "lookup_order", "parameters": {"type": "object"}}],
            tool_loop=True,
        )
        [output] = run(target, ask("Where is order 7?", tool_results={"lookup_order": "shipped"}))
    assert aws.problems == []
    first, second = aws.seen
    assert first.path == "/model/" + arn.replace(":", "%3A").replace("/", "%2F") + "/converse"
    assert first.body["toolConfig"] == {
        "tools": [
            {"toolSpec": {"name": "lookup_order", "inputSchema": {"json": {"type": "object"}}}}
        ]
    }
    # The tool call and its result go back as Converse blocks, roles alternating.
    assert second.body["messages"][1:] == [
        {
            "role": "assistant",
            "content": [
                {"text": "Looking it up."},
                {"toolUse": {"toolUseId": "tooluse_1", "name": "lookup_order", "input": {"id": 7}}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"toolResult": {"toolUseId": "tooluse_1", "content": [{"text": "shipped"}]}}
            ],
        },
    ]
    assert output.output == "Order 7 was delivered."
    assert [c.tool for c in output.tool_calls] == ["lookup_order"]


def test_i23_2_a_bedrock_judge_gets_its_verdict_through_a_forced_tool() -> None:
    reply = converse_reply(tool=("Verdict", {"score": 0.75, "reasoning": "ok"}))
    with FakeAws([reply]) as aws:
        verdict = judge_once(
            {
                "provider": "bedrock",
                "model": "us.anthropic.claude-sonnet-4-6",
                "base_url": aws.url,
                "region": "eu-west-1",
            }
        )
    assert aws.problems == []
    assert verdict == Verdict(score=0.75, reasoning="ok")
    [seen] = aws.seen
    assert seen.scope.endswith("/eu-west-1/bedrock/aws4_request")
    assert seen.body["toolConfig"]["toolChoice"] == {"tool": {"name": "Verdict"}}
    assert seen.body["inferenceConfig"] == {"maxTokens": 1024, "temperature": 0.0}


def test_i23_2_a_bedrock_judge_steps_down_to_text_when_the_model_refuses_tool_choice() -> None:
    refused = (
        400,
        {"message": "This model doesn't support the toolConfig.toolChoice.tool field."},
        {"x-amzn-ErrorType": "ValidationException:http://internal.amazon.com/coral/"},
    )
    replies = [refused, converse_reply('{"score": 0.5, "reasoning": "meh"}')]
    with FakeAws(replies) as aws:
        verdict = judge_once(
            {"provider": "bedrock", "model": "meta.llama3-8b-instruct-v1:0", "base_url": aws.url}
        )
    assert verdict.score == 0.5
    assert "toolConfig" in aws.seen[0].body and "toolConfig" not in aws.seen[1].body
    # No region anywhere: us-east-1, as promptfoo and the AWS SDKs default.
    assert aws.seen[0].scope.endswith("/us-east-1/bedrock/aws4_request")


def test_i23_2_bedrock_throttling_is_a_retryable_429_and_access_denied_is_not() -> None:
    throttled = (
        400,
        {"message": "Too many requests, please wait before trying again."},
        {"x-amzn-ErrorType": "ThrottlingException:http://internal.amazon.com/coral/"},
    )
    with FakeAws([throttled]) as aws:
        error = failure(bedrock(aws))
    assert (error.kind, error.retryable, error.rate_limited) == ("ThrottlingException", True, True)
    assert "Too many requests" in str(error)
    denied = (403, {"message": "You don't have access to the model"}, {
        "x-amzn-ErrorType": "AccessDeniedException:http://internal.amazon.com/coral/"})  # fmt: skip
    with FakeAws([denied]) as aws:
        error = failure(bedrock(aws))
    assert (error.kind, error.retryable) == ("AccessDeniedException", False)
    assert "us-west-2" in str(error)


def test_i23_2_a_bedrock_judge_retries_throttling_under_the_one_policy() -> None:
    throttled = (429, {"message": "slow down"}, {"x-amzn-ErrorType": "ThrottlingException"})
    verdict_reply = converse_reply(tool=("Verdict", {"score": 1.0, "reasoning": "good"}))
    with FakeAws([throttled, throttled, verdict_reply]) as aws:
        verdict = judge_once(
            {"provider": "bedrock", "model": "m", "base_url": aws.url},
            retry=RetryPolicy(max_retries=3, base_delay_s=0.01),
        )
    assert verdict.score == 1.0
    assert len(aws.seen) == 3
    with FakeAws([throttled]) as aws, pytest.raises(JudgeError, match="after 2 attempts"):
        judge_once(
            {"provider": "bedrock", "model": "m", "base_url": aws.url, "max_retries": 1},
            retry=RetryPolicy(base_delay_s=0.01),
        )


def test_i23_2_aws_calls_without_credentials_say_how_to_give_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    with FakeAws([converse_reply("never")]) as aws:
        error = failure(bedrock(aws))
    assert (error.kind, error.retryable) == ("NoCredentialsError", False)
    assert "AWS_ACCESS_KEY_ID" in str(error) and "AWS_PROFILE" in str(error)
    assert aws.seen == []


def test_i23_2_region_applies_to_bedrock_only_and_the_endpoint_follows_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(ValidationError, match="`region` applies to `provider: bedrock` only"):
        OpenAITarget(type="openai", provider="groq", model="m", region="us-west-2")
    target = OpenAITarget(type="openai", provider="bedrock", model="m")
    assert target.api_key_env is None and target.missing_key() is None
    monkeypatch.setenv("AWS_REGION", "ap-south-1")
    assert target.resolved_base_url() == "https://bedrock-runtime.ap-south-1.amazonaws.com"
    config = ProviderConfig(provider="bedrock", region="ca-central-1")
    assert config.endpoint() == "https://bedrock-runtime.ca-central-1.amazonaws.com"


@pytest.mark.parametrize(
    ("fmt", "reply", "payload"),
    [
        (
            "huggingface",
            [{"generated_text": "Bean There"}],
            {"inputs": "Name a cafe", "parameters": {"max_new_tokens": 32, "temperature": 0.7,
                                                    "return_full_text": False}},
        ),
        (
            "jumpstart",
            {"generated_text": "Bean There"},
            {"inputs": "Name a cafe", "parameters": {"max_new_tokens": 32, "temperature": 0.7}},
        ),
        (
            "openai",
            {"choices": [{"message": {"content": "Bean There"}}],
             "usage": {"prompt_tokens": 3, "completion_tokens": 2}},
            {"messages": [{"role": "user", "content": "Name a cafe"}], "max_tokens": 32,
             "temperature": 0.7},
        ),
    ],
)  # fmt: skip
def test_i23_2_a_sagemaker_target_invokes_its_endpoint_in_the_format_it_serves(
    fmt: str, reply: Any, payload: dict[str, Any]
) -> None:
    with FakeAws([reply]) as aws:
        target = SageMakerTarget(
            type="sagemaker",
            endpoint="my-endpoint",
            format=fmt,  # type: ignore[arg-type]
            region="us-west-2",
            base_url=aws.url,
            max_tokens=32,
            temperature=0.7,
        )
        [output] = run(target, ask("Name a cafe"))
    assert aws.problems == []
    [seen] = aws.seen
    assert seen.path == "/endpoints/my-endpoint/invocations"
    assert seen.scope.endswith("/us-west-2/sagemaker/aws4_request")
    assert seen.body == payload
    assert output.output == "Bean There"


def test_i23_2_a_sagemaker_target_reads_its_output_path_and_maps_errors() -> None:
    with FakeAws([{"result": {"answer": "42"}}]) as aws:
        target = SageMakerTarget(
            type="sagemaker", endpoint="calc", base_url=aws.url, format="jumpstart",
            output_path="$.result.answer",
        )  # fmt: skip
        [output] = run(target, ask("6 x 7"))
    assert output.output == "42"
    model_error = (424, {"Message": "Received server error (500) from primary"}, {
        "x-amzn-ErrorType": "ModelError:http://internal.amazon.com/coral/"})  # fmt: skip
    throttled = (400, {"message": "Rate exceeded"}, {"x-amzn-ErrorType": "ThrottlingException"})
    with FakeAws([model_error, throttled]) as aws:
        target = SageMakerTarget(type="sagemaker", endpoint="calc", base_url=aws.url)
        first, second = failure(target), failure(target)
    assert (first.kind, first.retryable) == ("ModelError", False)
    assert "Received server error" in str(first)
    assert (second.kind, second.rate_limited) == ("ThrottlingException", True)
    with FakeAws([{"no": "text"}]) as aws:
        target = SageMakerTarget(
            type="sagemaker", endpoint="e", base_url=aws.url, format="huggingface"
        )
        assert "set `output_path`" in str(failure(target))


def test_i23_2_a_bedrock_agent_target_reads_the_invoke_agent_event_stream() -> None:
    stream = event_stream(
        agent_chunk("15 x 27 is ", cited="Multiplication table, row 15"),
        ({":message-type": "event", ":event-type": "trace"}, b'{"trace": {}}'),
        agent_chunk("405."),
    )
    with FakeAws([stream]) as aws:
        target = BedrockAgentTarget(
            type="bedrock-agent", agent_id="ABCDEFGHIJ", agent_alias_id="PROD",
            region="us-east-1", base_url=aws.url, session_id="s-1", memory_id="MEM",
            enable_trace=True,
        )  # fmt: skip
        [output] = run(target, ask("What is 15 x 27?"))
    assert aws.problems == []
    [seen] = aws.seen
    assert seen.path == "/agents/ABCDEFGHIJ/agentAliases/PROD/sessions/s-1/text"
    assert seen.scope.endswith("/us-east-1/bedrock/aws4_request")
    assert seen.body == {"inputText": "What is 15 x 27?", "enableTrace": True, "memoryId": "MEM"}
    assert output.output == "15 x 27 is 405."
    assert [p.text for p in output.context] == ["Multiplication table, row 15"]


def test_i23_2_a_bedrock_agent_gets_a_session_per_case_and_maps_stream_exceptions() -> None:
    throttled = event_stream(
        (
            {":message-type": "exception", ":exception-type": "throttlingException"},
            b'{"message": "Your request rate is too high."}',
        )
    )
    with FakeAws([event_stream(agent_chunk("hi")), throttled]) as aws:
        target = BedrockAgentTarget(type="bedrock-agent", agent_id="AGENT", base_url=aws.url)
        [output] = run(target, ask("hello"))
        error = failure(target)
    assert output.output == "hi"
    session = aws.seen[0].path.split("/")[-2]
    assert aws.seen[0].path == f"/agents/AGENT/agentAliases/TSTALIASID/sessions/{session}/text"
    assert session.startswith("assay-") and session not in aws.seen[1].path  # a new session
    assert (error.kind, error.rate_limited, error.retryable) == ("ThrottlingException", True, True)
    assert "Your request rate is too high." in str(error)


def test_i23_2_loading_targets_and_providers_does_not_import_botocore() -> None:
    probe = "import sys, assay.targets, assay.providers, assay.judge; "
    probe += "print('botocore' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_i25_4_image_parts_of_an_input_reach_converse_as_inline_image_blocks() -> None:
    from assay.results import Message
    from assay.targets import TargetRequest

    png = b"\x89PNG\r\n\x1a\n" + b"\x00" * 12
    url = "data:image/png;base64," + base64.b64encode(png).decode()
    content = [{"type": "text", "text": "What is it?"},
               {"type": "image_url", "image_url": {"url": url}}]  # fmt: skip
    request = TargetRequest(
        case_id="c", input=[], messages=(Message(role="user", content=content),)
    )
    with FakeAws([converse_reply("A pixel.")]) as aws:
        [output] = run(bedrock(aws), request)
    assert aws.problems == []
    [seen] = aws.seen
    assert seen.body["messages"] == [
        {
            "role": "user",
            "content": [
                {"text": "What is it?"},
                {"image": {"format": "png", "source": {"bytes": base64.b64encode(png).decode()}}},
            ],
        }
    ]
    assert output.output == "A pixel."
