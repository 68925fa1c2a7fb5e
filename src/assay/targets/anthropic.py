"""The `anthropic` target: the Anthropic Messages API through a provider (`assay[anthropic]`).

Like the `openai` target, requests go through `assay.providers` (the SDK's aiohttp transport,
its own retries off, so the runner alone decides when to retry). `tool_use` and `tool_result`
content blocks are normalised to the same `ToolCall` shape as OpenAI tool calls.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field
from pydantic.config import JsonDict

from assay.providers import ModelTurn, Wire, anthropic_wire, preset_names
from assay.results import JSON
from assay.targets._base import TargetRequest
from assay.targets._chat import ChatModelTarget

__all__ = ["AnthropicTarget"]


def _provider_names(schema: JsonDict) -> None:
    """The `provider` field's choices in the JSON schema, read when the schema is made so
    that installed provider plugins are among them."""
    schema["enum"] = [*preset_names(("anthropic", "fake"))]


class AnthropicTarget(ChatModelTarget):
    """Calls a Claude model through the Messages API.

    System messages of the input and `system_prompt` become the request's `system` text; with
    `tool_loop`, `tool_use` blocks are answered from the test's `metadata.tool_results`.
    """

    type: Literal["anthropic"]
    """Target type discriminator."""
    provider: Annotated[str, Field(json_schema_extra=_provider_names)] = "anthropic"
    """`anthropic`, `vertex-anthropic` (Claude on Google Vertex AI), `fake` for scripted
    offline replies from each test's `metadata`, or an Anthropic-protocol provider an
    installed package adds (docs/plugins.md)."""
    api_key_env: str | None = "ANTHROPIC_API_KEY"
    """Environment variable holding the API key; `null` for a local server without auth."""
    max_tokens: Annotated[int, Field(ge=1)] = 1024
    """Upper bound on generated tokens per model call (the Messages API requires one)."""

    wire: ClassVar[Literal["openai", "anthropic"]] = "anthropic"
    provider_wires: ClassVar[tuple[Wire, ...]] = ("anthropic", "fake")

    def first_messages(self, request: TargetRequest) -> list[JSON]:
        """The test's messages as Messages API turns; system messages stay as `role: system`
        entries until `request_body` moves them to `system`."""
        return anthropic_wire.turns(request.messages)

    def request_body(self, messages: list[JSON]) -> dict[str, JSON]:
        """Model, `system`, the turns, `max_tokens`, the sampling parameters that are set,
        tools and `extra_body`."""
        system = [self.system_prompt] if self.system_prompt else []
        system += [_text(m["content"]) for m in messages if m["role"] == "system"]
        body: dict[str, JSON] = {
            "model": self.model,
            "messages": [m for m in messages if m["role"] != "system"],
            "max_tokens": self.max_tokens,
        }
        if system:
            body["system"] = "\n\n".join(system)
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if self.top_p is not None:
            body["top_p"] = self.top_p
        if self.stop is not None:
            body["stop_sequences"] = [self.stop] if isinstance(self.stop, str) else self.stop
        if self.tools:
            body["tools"] = [
                {
                    "name": tool.name,
                    **({"description": tool.description} if tool.description else {}),
                    "input_schema": tool.parameters,
                }
                for tool in self.tools
            ]
        body.update(self.extra_body)
        return body

    def follow_up(self, turn: ModelTurn, results: list[str]) -> list[JSON]:
        """The assistant's `tool_use` turn, then a user turn of `tool_result` blocks."""
        return anthropic_wire.follow_up(turn, results)

    def read_turn(self, reply: dict[str, JSON]) -> ModelTurn:
        """Text blocks join into the text, `tool_use` blocks are calls."""
        return anthropic_wire.read_turn(reply)


def _text(content: JSON) -> str:
    """A system message's content as the `system` text (its blocks' texts joined)."""
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return str(content)
