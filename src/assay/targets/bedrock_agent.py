"""The `bedrock-agent` target: an Amazon Bedrock agent, called with InvokeAgent.

Each case sends its prompt as the agent's `inputText`, in a session of its own unless
`session_id` names one to share (then the agent remembers earlier cases, as a conversation
would). The answer is the text of the stream's chunks; the knowledge-base passages it cites are
the case's runtime `context`. Requests are SigV4-signed with the AWS credential chain
(`assay.providers`, the `bedrock` extra).
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import Field, PrivateAttr

from assay.providers import ProviderError
from assay.results import JSON, RetrievedPassage, TargetOutput
from assay.targets._base import Target, TargetRequest
from assay.targets._client import Slot, target_error

if TYPE_CHECKING:
    from assay.providers._bedrock_agent import BedrockAgentClient

__all__ = ["BedrockAgentTarget"]


class BedrockAgentTarget(Target):
    """Asks a Bedrock agent (one alias of it) each case's prompt."""

    type: Literal["bedrock-agent"]
    """Target type discriminator."""
    agent_id: Annotated[str, Field(min_length=1)]
    """The agent's id (ten characters, e.g. `ABCDEFGHIJ`)."""
    agent_alias_id: Annotated[str, Field(min_length=1)] = "TSTALIASID"
    """The alias to call; default `TSTALIASID`, the agent's working draft."""
    region: str | None = None
    """The AWS region; default: `AWS_REGION`, `AWS_DEFAULT_REGION`, the AWS profile's, else
    `us-east-1`."""
    base_url: str | None = None
    """Another Bedrock Agent Runtime URL (a VPC endpoint); default: the region's public one."""
    session_id: str | None = None
    """One session for every case (the agent remembers earlier ones); default: a new session
    per case."""
    memory_id: str | None = None
    """The agent memory to use (`memoryId`), for agents with long-term memory."""
    enable_trace: bool = False
    """Ask the agent for its trace events (they are not part of the output)."""
    timeout_s: Annotated[float, Field(gt=0)] | None = None
    """Timeout of each request; default 10 minutes."""

    _client: Slot[BedrockAgentClient] = PrivateAttr(default_factory=Slot)

    def describe(self) -> str:
        """`bedrock-agent <id>/<alias>`."""
        return f"bedrock-agent {self.agent_id}/{self.agent_alias_id}"

    def check(self, base_dir: Path) -> None:
        """`botocore` is installed (it signs the requests and reads the event stream).

        Raises:
            UsageError: It is not.
        """
        del base_dir
        from assay.providers._aws import require_botocore

        require_botocore(self.describe())

    async def setup(self, base_dir: Path) -> None:
        """Open the agent client (one per target, shared by concurrent cases)."""
        self.check(base_dir)
        from assay.providers._bedrock_agent import BedrockAgentClient

        client = BedrockAgentClient(
            self.agent_id,
            self.agent_alias_id,
            region=self.region,
            base_url=self.base_url,
            who=self.describe(),
            timeout_s=self.timeout_s,
        )
        await self._client.hold(client)

    async def teardown(self) -> None:
        """Close the client's connections."""
        await self._client.close()

    def request_body(self, request: TargetRequest) -> dict[str, JSON]:
        """InvokeAgent's body for `request`."""
        body: dict[str, JSON] = {"inputText": request.prompt}
        if self.enable_trace:
            body["enableTrace"] = True
        if self.memory_id is not None:
            body["memoryId"] = self.memory_id
        return body

    async def call(self, request: TargetRequest) -> TargetOutput:
        """Invoke the agent and collect its answer.

        Raises:
            TargetError: The call failed (throttling, timeouts, dropped connections and 5xx are
                retryable).
        """
        slot: Slot[BedrockAgentClient] = self.run_state("_client", Slot)
        client = slot.held(self.describe())
        started = time.perf_counter()
        session = self.session_id or f"assay-{uuid.uuid4().hex}"
        try:
            reply = await client.invoke(session, self.request_body(request))
        except ProviderError as exc:
            raise target_error(self.describe(), exc) from exc
        return TargetOutput(
            output=reply.text,
            context=[RetrievedPassage(text=text) for text in reply.passages],
            duration_ms=(time.perf_counter() - started) * 1000,
        )
