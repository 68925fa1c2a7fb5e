"""Amazon Bedrock Agents' InvokeAgent: one signed POST, an AWS event stream back.

The reply is a sequence of binary event-stream messages (botocore's parser reads them): `chunk`
events carry the answer's text in base64 `bytes` (with the knowledge-base passages that support
it under `attribution`), `trace` events the agent's reasoning, and an `exception` message a
failure that happened after the HTTP status was sent.
"""

from __future__ import annotations

import base64
import json
import urllib.parse
from dataclasses import dataclass, field

from assay.providers._aws import AwsEndpoint, aws_error
from assay.providers._errors import MalformedReplyError
from assay.results import JSON

__all__ = ["AgentReply", "BedrockAgentClient", "agent_runtime_endpoint", "read_agent_stream"]


def agent_runtime_endpoint(region: str) -> str:
    """Bedrock Agent Runtime's public endpoint in `region`."""
    return f"https://bedrock-agent-runtime.{region}.amazonaws.com"


@dataclass
class AgentReply:
    """What one InvokeAgent call answered."""

    text: str
    passages: list[str] = field(default_factory=list)
    """The text of each retrieved passage the answer cites."""


class BedrockAgentClient(AwsEndpoint):
    """InvokeAgent calls to one agent alias.

    Args:
        agent_id: The agent's id.
        alias_id: The alias to call (`TSTALIASID` is the working draft).
        region: Its region (None: `AWS_REGION`, `AWS_DEFAULT_REGION`, the profile's, else
            `us-east-1`).
        base_url: Another Agent Runtime URL (a VPC endpoint, a local fake).
        who: How messages name the caller.
        timeout_s: Timeout of each request.
    """

    def __init__(
        self,
        agent_id: str,
        alias_id: str,
        *,
        region: str | None,
        base_url: str | None,
        who: str,
        timeout_s: float | None,
    ) -> None:
        # Bedrock Agent Runtime signs as `bedrock`, like the model runtime.
        super().__init__(
            "bedrock",
            agent_runtime_endpoint,
            region=region,
            base_url=base_url,
            who=who,
            timeout_s=timeout_s,
        )
        quote = urllib.parse.quote
        self._prefix = (
            f"{self.base_url}/agents/{quote(agent_id, safe='')}/agentAliases/"
            f"{quote(alias_id, safe='')}/sessions/"
        )

    async def invoke(self, session_id: str, body: dict[str, JSON]) -> AgentReply:
        """Send `body` (`inputText`, `enableTrace`, `memoryId`, …) in session `session_id`.

        Raises:
            ProviderError: The call failed, or the stream carried an exception (throttling as
                a 429).
        """
        url = f"{self._prefix}{urllib.parse.quote(session_id, safe='')}/text"
        data = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
        raw = await self._client.post(
            url, data, accept="application/vnd.amazon.eventstream", where=self.base_url
        )
        return read_agent_stream(raw, region=self.region)


def read_agent_stream(raw: bytes, *, region: str) -> AgentReply:
    """The answer and cited passages of an InvokeAgent event stream.

    Raises:
        ProviderError: An `exception` message in the stream.
        MalformedReplyError: The bytes are not an event stream.
    """
    from botocore.eventstream import EventStreamBuffer, ParserError

    buffer = EventStreamBuffer()
    buffer.add_data(raw)
    texts: list[str] = []
    passages: list[str] = []
    try:
        for message in buffer:
            headers = message.headers
            if headers.get(":message-type") == "exception":
                kind = str(headers.get(":exception-type", "exception"))
                name = kind[:1].upper() + kind[1:]
                raise aws_error(
                    _status(name), message.payload, {"x-amzn-ErrorType": name}, region=region
                )
            if headers.get(":event-type") != "chunk":
                continue
            chunk = json.loads(message.payload)
            encoded = chunk.get("bytes") if isinstance(chunk, dict) else None
            if isinstance(encoded, str):
                texts.append(base64.b64decode(encoded).decode("utf-8", "replace"))
            passages.extend(
                _passages(chunk.get("attribution") if isinstance(chunk, dict) else None)
            )
    except (ParserError, ValueError) as exc:
        raise MalformedReplyError(
            f"the InvokeAgent reply is not a readable event stream ({exc})",
            kind="MalformedResponse",
            retryable=True,
        ) from None
    return AgentReply("".join(texts), passages)


def _status(name: str) -> int:
    """The HTTP status AWS documents for a stream exception (for the retry rules)."""
    return {
        "ThrottlingException": 429,
        "AccessDeniedException": 403,
        "ResourceNotFoundException": 404,
        "ValidationException": 400,
        "ConflictException": 409,
        "ServiceQuotaExceededException": 400,
        "DependencyFailedException": 424,
        "BadGatewayException": 502,
        "ModelNotReadyException": 424,
    }.get(name, 500)


def _passages(attribution: object) -> list[str]:
    citations = attribution.get("citations") if isinstance(attribution, dict) else None
    found: list[str] = []
    for citation in citations if isinstance(citations, list) else []:
        refs = citation.get("retrievedReferences") if isinstance(citation, dict) else None
        for ref in refs if isinstance(refs, list) else []:
            content = ref.get("content") if isinstance(ref, dict) else None
            text = content.get("text") if isinstance(content, dict) else None
            if isinstance(text, str):
                found.append(text)
    return found
