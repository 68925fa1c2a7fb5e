"""The `anthropic` target: the Anthropic Messages API via the official SDK (`assay[anthropic]`).

Like the `openai` target it uses the SDK's aiohttp transport and turns the SDK's own retries off
so the runner alone decides when to retry. `tool_use` and `tool_result` content blocks are
normalised to the same `ToolCall` shape as OpenAI tool calls.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Annotated, ClassVar, Literal, cast

from pydantic import Field

from assay.errors import TargetError, UsageError
from assay.results import JSON, TokenUsage
from assay.targets._base import TargetRequest
from assay.targets._chat import ChatModelTarget, ModelTurn, TurnCall, link_tool_messages

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic

__all__ = ["AnthropicTarget"]

_INSTALL_HINT = "install the extra: pip install 'assay[anthropic]'"


class AnthropicTarget(ChatModelTarget):
    """Calls a Claude model through the Messages API.

    System messages of the input and `system_prompt` become the request's `system` text; with
    `tool_loop`, `tool_use` blocks are answered from the test's `metadata.tool_results`.
    """

    type: Literal["anthropic"]
    """Target type discriminator."""
    api_key_env: str | None = "ANTHROPIC_API_KEY"
    """Environment variable holding the API key; `null` for a local server without auth."""
    max_tokens: Annotated[int, Field(ge=1)] = 1024
    """Upper bound on generated tokens per model call (the Messages API requires one)."""

    provider: ClassVar[str] = "anthropic"
    default_base_url: ClassVar[str] = "https://api.anthropic.com"
    base_url_env: ClassVar[str] = "ANTHROPIC_BASE_URL"
    sdk_parameters: ClassVar[frozenset[str]] = frozenset({"model", "messages", "max_tokens"})

    async def setup(self, base_dir: Path) -> None:
        """Create the SDK client (one per target, shared by concurrent cases).

        Raises:
            UsageError: The `anthropic` package is not installed, or the API key's environment
                variable is not set.
        """
        del base_dir
        anthropic = self.sdk()
        api_key = self.api_key()
        client = anthropic.AsyncAnthropic(
            api_key=api_key,
            base_url=self.resolved_base_url(),
            max_retries=0,
            timeout=anthropic.DEFAULT_TIMEOUT if self.timeout_s is None else self.timeout_s,
            http_client=anthropic.DefaultAioHttpClient(),
        )
        previous = self.set_client(client)
        if previous is not None:
            await cast("AsyncAnthropic", previous).close()

    def sdk(self) -> ModuleType:
        """The `anthropic` module.

        Raises:
            UsageError: It is not installed.
        """
        try:
            import anthropic
        except ImportError:
            raise UsageError(
                f"the anthropic target needs the `anthropic` SDK; {_INSTALL_HINT}"
            ) from None
        return anthropic

    def first_messages(self, request: TargetRequest) -> list[JSON]:
        """The test's messages as Messages API turns; system messages stay as `role: system`
        entries until `request_body` moves them to `system`."""
        messages: list[JSON] = []
        for message, call_ids, answers in link_tool_messages(request.messages):
            if answers is not None:
                block = {
                    "type": "tool_result",
                    "tool_use_id": answers,
                    "content": message.content or "",
                }
                _append_user_blocks(messages, [block])
                continue
            if not message.tool_calls:
                messages.append({"role": message.role, "content": message.content or ""})
                continue
            blocks: list[JSON] = (
                [{"type": "text", "text": message.content}] if message.content else []
            )
            blocks.extend(
                {"type": "tool_use", "id": call_id, "name": call.tool, "input": call.args}
                for call_id, call in zip(call_ids, message.tool_calls, strict=True)
            )
            messages.append({"role": message.role, "content": blocks})
        return messages

    def request_body(self, messages: list[JSON]) -> dict[str, JSON]:
        """Model, `system`, the turns, `max_tokens`, the sampling parameters that are set,
        tools and `extra_body`."""
        system = [self.system_prompt] if self.system_prompt else []
        system += [m["content"] for m in messages if m["role"] == "system"]
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
        blocks: list[JSON] = [{"type": "text", "text": turn.text}] if turn.text else []
        blocks.extend(
            {"type": "tool_use", "id": c.id, "name": c.name, "input": c.args} for c in turn.calls
        )
        answers: list[JSON] = [
            {"type": "tool_result", "tool_use_id": call.id, "content": text}
            for call, text in zip(turn.calls, results, strict=True)
        ]
        return [{"role": "assistant", "content": blocks}, {"role": "user", "content": answers}]

    async def complete(self, client: object, body: dict[str, JSON]) -> ModelTurn:
        """One Messages request; text blocks join into the text, `tool_use` blocks are calls."""
        sdk_client = cast("AsyncAnthropic", client)
        reply = await sdk_client.messages.create(**self.sdk_arguments(body))
        blocks = getattr(reply, "content", None)
        if not isinstance(blocks, list):
            raise TargetError(
                f"{self.describe()}: the reply has no content blocks: {str(reply)[:200]}",
                kind="MalformedResponse",
            )
        texts: list[str] = []
        calls: list[TurnCall] = []
        for block in blocks:
            if block.type == "text":
                texts.append(block.text)
            elif block.type == "tool_use":
                args = block.input
                if not isinstance(args, dict):
                    raise TargetError(
                        f"{self.describe()}: the model called tool '{block.name}' with input "
                        f"that is not a JSON object: {str(args)[:200]}",
                        kind="InvalidToolArguments",
                    )
                calls.append(TurnCall(block.id, block.name, args))
        usage = reply.usage
        tokens = TokenUsage(input=usage.input_tokens, output=usage.output_tokens)
        return ModelTurn(text="".join(texts) if texts else None, calls=calls, usage=tokens)


def _append_user_blocks(messages: list[JSON], blocks: list[JSON]) -> None:
    """Tool results answering one assistant turn must share one user turn."""
    last = messages[-1] if messages else None
    if (
        isinstance(last, dict)
        and last["role"] == "user"
        and isinstance(last["content"], list)
        and all(b.get("type") == "tool_result" for b in last["content"])
    ):
        last["content"].extend(blocks)
        return
    messages.append({"role": "user", "content": blocks})
