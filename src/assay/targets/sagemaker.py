"""The `sagemaker` target: a model deployed on an Amazon SageMaker endpoint (InvokeEndpoint).

SageMaker serves whatever container was deployed, so the target is told the payload `format`:

- `openai`: Chat Completions `{messages, max_tokens, temperature, top_p, stop}`; the text at
  `$.choices[0].message.content`.
- `anthropic`: Messages `{messages, system, max_tokens, temperature, top_p, stop_sequences}`;
  the text at `$.content[0].text`.
- `huggingface` (TGI): `{inputs, parameters: {max_new_tokens, temperature, top_p, stop,
  return_full_text: false}}`; `generated_text` of the reply or of its first item.
- `jumpstart`, `llama`: `{inputs, parameters: {max_new_tokens, temperature, top_p, stop}}`;
  `generated_text` or `generation`, of the reply or of its first item.
- `custom`: the prompt is the payload as it is (write the JSON in the prompt); the whole reply.

`output_path` (RFC 9535 JSONPath) picks the text from any reply instead. Requests are signed
with SigV4 from the AWS credential chain (`assay.providers`, the `bedrock` extra).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import Field, PrivateAttr, field_validator

from assay.errors import TargetError
from assay.providers import ProviderError
from assay.results import JSON, TargetOutput, TokenUsage
from assay.targets._base import Target, TargetRequest
from assay.targets._client import Slot, target_error

if TYPE_CHECKING:
    from assay.providers._sagemaker import SageMakerEndpoint

__all__ = ["SageMakerTarget"]

Format = Literal["openai", "anthropic", "huggingface", "jumpstart", "llama", "custom"]
_DEFAULT_PATHS: dict[str, tuple[str, ...]] = {
    "openai": ("$.choices[0].message.content", "$.choices[0].text"),
    "anthropic": ("$.content[0].text",),
    "huggingface": ("$[0].generated_text", "$.generated_text"),
    "jumpstart": ("$.generated_text", "$[0].generated_text", "$.generation", "$[0].generation"),
    "llama": ("$.generation", "$[0].generation", "$.generated_text", "$[0].generated_text"),
}
_DEFAULT_ANTHROPIC_MAX_TOKENS = 1024


class SageMakerTarget(Target):
    """Calls a SageMaker endpoint with the case's prompt in the payload `format` it serves."""

    type: Literal["sagemaker"]
    """Target type discriminator."""
    endpoint: Annotated[str, Field(min_length=1)]
    """The SageMaker endpoint's name."""
    format: Format = "custom"
    """The payload the container takes: `openai`, `anthropic`, `huggingface`, `jumpstart`,
    `llama`, or `custom` (the prompt is sent as it is)."""
    region: str | None = None
    """The AWS region; default: `AWS_REGION`, `AWS_DEFAULT_REGION`, the AWS profile's, else
    `us-east-1`."""
    base_url: str | None = None
    """Another SageMaker Runtime URL (a VPC endpoint); default: the region's public one."""
    max_tokens: Annotated[int, Field(ge=1)] | None = None
    """Most tokens to generate (`max_new_tokens` for the TGI and JumpStart formats)."""
    temperature: Annotated[float, Field(ge=0.0, le=2.0)] | None = None
    """Sampling temperature; default: the container's."""
    top_p: Annotated[float, Field(ge=0.0, le=1.0)] | None = None
    """Nucleus sampling probability mass; default: the container's."""
    stop: list[str] | None = None
    """Stop sequences."""
    system_prompt: str | None = None
    """System prompt (`openai` and `anthropic` formats)."""
    content_type: str = "application/json"
    """The payload's media type."""
    accept: str = "application/json"
    """The media type asked for in reply."""
    output_path: str | None = None
    """JSONPath (RFC 9535) of the reply text; default: the format's (see the module)."""
    timeout_s: Annotated[float, Field(gt=0)] | None = None
    """Timeout of each request; default 10 minutes."""

    _client: Slot[SageMakerEndpoint] = PrivateAttr(default_factory=Slot)

    @field_validator("output_path")
    @classmethod
    def _check_path(cls, value: str | None) -> str | None:
        if value is None:
            return None
        from jsonpath_rfc9535 import JSONPathError, compile

        try:
            compile(value)
        except JSONPathError as exc:
            raise ValueError(f"invalid JSONPath '{value}': {exc}") from None
        return value

    def describe(self) -> str:
        """`sagemaker <endpoint> (<format>)`."""
        return f"sagemaker {self.endpoint} ({self.format})"

    def check(self, base_dir: Path) -> None:
        """`botocore` is installed (it signs the requests).

        Raises:
            UsageError: It is not.
        """
        del base_dir
        from assay.providers._aws import require_botocore

        require_botocore(f"sagemaker target {self.endpoint}")

    async def setup(self, base_dir: Path) -> None:
        """Open the endpoint client (one per target, shared by concurrent cases)."""
        self.check(base_dir)
        from assay.providers._sagemaker import SageMakerEndpoint

        client = SageMakerEndpoint(
            self.endpoint,
            region=self.region,
            base_url=self.base_url,
            who=f"sagemaker target {self.endpoint}",
            timeout_s=self.timeout_s,
        )
        await self._client.hold(client)

    async def teardown(self) -> None:
        """Close the client's connections."""
        await self._client.close()

    def cache_key(self, request: TargetRequest) -> dict[str, JSON] | None:
        """Endpoint, region, format and the exact payload."""
        return {
            "provider": "sagemaker",
            "endpoint": self.endpoint,
            "region": self.region,
            "base_url": self.base_url,
            "payload": self.payload(request).decode("utf-8", "replace"),
            "output_path": self.output_path,
        }

    def payload(self, request: TargetRequest) -> bytes:
        """The request body for `request` in the target's format."""
        if self.format == "custom":
            return request.prompt.encode()
        body: dict[str, JSON]
        if self.format in ("openai", "anthropic"):
            messages: list[JSON] = [
                {"role": m.role, "content": m.content or ""}
                for m in request.messages
                if m.role in ("user", "assistant")
            ]
            system = self.system_prompt
            if self.format == "openai":
                if system:
                    messages.insert(0, {"role": "system", "content": system})
                body = {"messages": messages}
                self._sampling(body, "max_tokens", "stop")
            else:
                body = {"messages": messages}
                if system:
                    body["system"] = system
                self._sampling(body, "max_tokens", "stop_sequences")
                body.setdefault("max_tokens", _DEFAULT_ANTHROPIC_MAX_TOKENS)
        else:
            parameters: dict[str, JSON] = {}
            self._sampling(parameters, "max_new_tokens", "stop")
            if self.format == "huggingface":
                parameters["return_full_text"] = False
            body = {"inputs": request.prompt, "parameters": parameters}
        return json.dumps(body, ensure_ascii=False).encode()

    def _sampling(self, body: dict[str, JSON], max_key: str, stop_key: str) -> None:
        if self.max_tokens is not None:
            body[max_key] = self.max_tokens
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if self.top_p is not None:
            body["top_p"] = self.top_p
        if self.stop:
            body[stop_key] = list(self.stop)

    async def call(self, request: TargetRequest) -> TargetOutput:
        """Invoke the endpoint and read the reply text.

        Raises:
            TargetError: The call failed (throttling, timeouts, dropped connections and 5xx
                are retryable), or the reply has no text where the format or `output_path`
                says.
        """
        slot: Slot[SageMakerEndpoint] = self.run_state("_client", Slot)
        client = slot.held(self.describe())
        started = time.perf_counter()
        try:
            raw = await client.invoke(
                self.payload(request), content_type=self.content_type, accept=self.accept
            )
        except ProviderError as exc:
            raise target_error(self.describe(), exc) from exc
        text, usage = self._read(raw)
        return TargetOutput(
            output=text, token_usage=usage, duration_ms=(time.perf_counter() - started) * 1000
        )

    def _read(self, raw: bytes) -> tuple[str, TokenUsage | None]:
        body = raw.decode("utf-8", "replace")
        try:
            data: JSON = json.loads(body)
        except ValueError:
            if self.output_path is None and self.format == "custom":
                return body, None
            raise TargetError(
                f"{self.describe()}: the reply is not JSON: {body[:200]}",
                kind="MalformedResponse",
            ) from None
        paths = (self.output_path,) if self.output_path else _DEFAULT_PATHS.get(self.format, ())
        if not paths:
            return (data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)), None
        from jsonpath_rfc9535 import compile

        for path in paths:
            found = compile(path).find(data).values()
            if found:
                texts = [v if isinstance(v, str) else json.dumps(v) for v in found]
                return "".join(texts), _usage(data)
        raise TargetError(
            f"{self.describe()}: the reply has nothing at {' or '.join(paths)}; set "
            f"`output_path` to the JSONPath of its text: {body[:200]}",
            kind="MalformedResponse",
        )


def _usage(data: JSON) -> TokenUsage | None:
    usage = data.get("usage") if isinstance(data, dict) else None
    if not isinstance(usage, dict):
        return None
    given = usage.get("prompt_tokens", usage.get("input_tokens"))
    produced = usage.get("completion_tokens", usage.get("output_tokens"))
    if not isinstance(given, int) and not isinstance(produced, int):
        return None
    return TokenUsage(
        input=given if isinstance(given, int) else 0,
        output=produced if isinstance(produced, int) else 0,
    )
