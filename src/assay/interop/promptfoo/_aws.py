"""promptfoo's AWS providers: `bedrock:…` as `openai` targets on the `bedrock` provider (the
Converse API), Bedrock agents as `bedrock-agent` targets, `sagemaker:…` as `sagemaker` targets
(see docs/migrating-from-promptfoo.md).

promptfoo's Bedrock ids are `bedrock:<model>` (InvokeModel, in each model family's own body
format), `bedrock:converse:<model>` (Converse), and kinds that are not chat models
(`bedrock:kb:`, `bedrock:embeddings:`, `bedrock:video:`); agents (`bedrock-agent:`,
`bedrock:agents:`) become `bedrock-agent` targets (InvokeAgent).
The model id is kept whole: inference profiles (`us.anthropic.…`) and ARNs included. Both chat
forms call the same model with the same prompt and sampling settings in assay, through Converse;
the InvokeModel-only settings of a family (`anthropic_version`, Titan's
`textGenerationConfig`, Nova's `interfaceConfig`) are folded into Converse's or reported.
"""

from __future__ import annotations

import re

from assay.interop.promptfoo._providers import MappedProvider
from assay.results import JSON

__all__ = ["map_bedrock", "map_sagemaker"]

_NOT_CHAT_KINDS = {
    "kb": "a Bedrock knowledge base (RetrieveAndGenerate) has no assay target; call it from a "
    "`python` target (boto3's bedrock-agent-runtime `retrieve_and_generate`)",
    "knowledge-base": "a Bedrock knowledge base (RetrieveAndGenerate) has no assay target; call "
    "it from a `python` target (boto3's bedrock-agent-runtime `retrieve_and_generate`)",
    "embedding": "an embeddings model is not a system under test",
    "embeddings": "an embeddings model is not a system under test",
    "video": "video generation has no assay target",
    "image": "image generation has no assay target",
}
# model id patterns that are not chat models, and why
_NOT_CHAT_MODELS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(^|\.)amazon\.nova-sonic"), "Nova Sonic is a bidirectional speech model "
     "(audio streams in and out); assay has no speech target"),
    (re.compile(r"(^|\.)(amazon\.titan-embed|cohere\.embed|amazon\.nova-.*embed)"),
     "an embeddings model is not a system under test"),
    (re.compile(r"(^|\.)(amazon\.titan-image|amazon\.nova-canvas|stability\.)"),
     "image generation has no assay target"),
    (re.compile(r"(^|\.)(amazon\.nova-reel|luma\.)"), "video generation has no assay target"),
)  # fmt: skip
_ARN_REGION = re.compile(r"^arn:aws[\w-]*:bedrock:(?P<region>[a-z0-9-]+):")
_MAX_TOKENS = ("max_tokens", "maxTokens", "max_completion_tokens", "max_gen_len",
               "max_new_tokens", "maxTokenCount", "max_tokens_to_sample")  # fmt: skip
_TOP_P = ("top_p", "topP")
_STOP = ("stop", "stopSequences", "stop_sequences")
_EXTRA = {"top_k", "topK", "thinking", "reasoningConfig", "reasoning_effort",
          "additionalModelRequestFields", "performanceConfig", "serviceTier",
          "requestMetadata", "promptVariables"}  # fmt: skip
_FOLDED = ("inferenceConfig", "interfaceConfig", "textGenerationConfig")
_CREDENTIALS = ("accessKeyId", "secretAccessKey", "sessionToken", "apiKey")
_IGNORED = {"inferenceModelType"}
"""promptfoo uses it to pick an ARN's InvokeModel body format; Converse needs none."""


def map_bedrock(family: str, rest: str, config: dict[str, JSON]) -> MappedProvider:
    """`bedrock:…` or `bedrock-agent:…` with its `config`, as a target or why not."""
    kind, sep, after = rest.partition(":")
    if family == "bedrock-agent" or (kind == "agents" and sep):
        return _agent(rest if family == "bedrock-agent" else after, config)
    converse = kind == "converse" and bool(sep)
    if kind in _NOT_CHAT_KINDS and sep:
        return MappedProvider(unmapped=_NOT_CHAT_KINDS[kind])
    model = after if converse or (kind in ("chat", "completion") and sep) else rest
    if not model:
        return MappedProvider(unmapped="the provider id names no Bedrock model")
    for pattern, why in _NOT_CHAT_MODELS:
        if pattern.search(model):
            return MappedProvider(unmapped=why)
    spec: dict[str, JSON] = {"type": "openai", "provider": "bedrock", "model": model}
    mapped = MappedProvider(spec)
    if not converse:
        mapped.approximated.append(
            "promptfoo calls InvokeModel for it; the assay target calls the same model through "
            "Bedrock's Converse API, with the same prompt and sampling settings"
        )
    extra: dict[str, JSON] = {}
    for key, value in config.items():
        problem = _bedrock_key(spec, extra, key, value)
        if problem:
            mapped.dropped.append(problem)
    arn = _ARN_REGION.match(model)
    if "region" not in spec and arn:
        spec["region"] = arn.group("region")
    if extra:
        spec["extra_body"] = extra
    return mapped


def _bedrock_key(
    spec: dict[str, JSON], extra: dict[str, JSON], key: str, value: JSON
) -> str | None:
    """Carry one config key onto the target, or say why it is left out."""
    if key == "region" and isinstance(value, str):
        spec["region"] = value
    elif key in ("endpoint", "endpointUrl", "baseUrl") and isinstance(value, str):
        spec["base_url"] = value
    elif key in _FOLDED and isinstance(value, dict):
        for inner, item in value.items():
            problem = _bedrock_key(spec, extra, inner, item)
            if problem:
                return f"config.{key}.{inner}: {problem.partition(': ')[2]}"
    elif key in _MAX_TOKENS or key in _TOP_P or key in _STOP or key == "temperature":
        return _sampling(spec, key, value)
    elif key in _EXTRA:
        extra["top_k" if key == "topK" else key] = value
    elif key in ("guardrailIdentifier", "guardrailVersion"):
        guardrail = extra.setdefault("guardrailConfig", {})
        assert isinstance(guardrail, dict)
        guardrail[key] = value
    else:
        return _bedrock_other(spec, extra, key, value)
    return None


def _bedrock_other(
    spec: dict[str, JSON], extra: dict[str, JSON], key: str, value: JSON
) -> str | None:
    """Tools, the system prompt and keys that do not carry over."""
    if key in ("tools", "toolConfig"):
        return _tools(spec, extra, key, value)
    if key in ("tool_choice", "toolChoice"):
        choice = _tool_choice(value)
        if choice is None:
            return (
                f"config.{key}: not a tool choice assay knows ({str(value)[:60]}); set it by hand"
            )
        extra["tool_choice"] = choice
        return None
    if key == "systemPrompt" and isinstance(value, str):
        spec["system_prompt"] = value
        return None
    if key in _CREDENTIALS:
        return (
            f"config.{key}: credentials written in the config are not copied into the suite; "
            "export AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (or AWS_PROFILE)"
        )
    if key == "profile":
        return f"config.profile: export AWS_PROFILE={value} before running the suite"
    if key in _IGNORED:
        return None
    why = {
        "anthropic_version": "the InvokeModel body version; Converse takes none",
        "showThinking": "assay's output is the reply's text, without reasoning blocks",
        "stream": "assay reads whole replies",
    }.get(key, "no matching option on the bedrock target; set it by hand (`extra_body` goes "
               "into Converse's additionalModelRequestFields)")  # fmt: skip
    return f"config.{key}: {why}"


def _sampling(spec: dict[str, JSON], key: str, value: JSON) -> str | None:
    if key in _STOP:
        stops = [value] if isinstance(value, str) else value
        if isinstance(stops, list) and all(isinstance(s, str) for s in stops):
            if stops:
                spec["stop"] = stops
            return None
        return f"config.{key}: stop sequences are strings"
    if not isinstance(value, int | float) or isinstance(value, bool):
        return f"config.{key}: not a number ({str(value)[:40]}); set it by hand"
    if key in _MAX_TOKENS:
        spec["max_tokens"] = int(value)
    elif key in _TOP_P:
        spec["top_p"] = value
    else:
        spec["temperature"] = value
    return None


def _tools(spec: dict[str, JSON], extra: dict[str, JSON], key: str, value: JSON) -> str | None:
    """Tools in OpenAI's, Anthropic's or Converse's format as the target's `tools`."""
    listed = value.get("tools") if key == "toolConfig" and isinstance(value, dict) else value
    if key == "toolConfig" and isinstance(value, dict) and "toolChoice" in value:
        choice = _tool_choice(value["toolChoice"])
        if choice is not None:
            extra["tool_choice"] = choice
    tools: list[JSON] = []
    for tool in listed if isinstance(listed, list) else []:
        if not isinstance(tool, dict):
            return f"config.{key}: a tool is not a mapping"
        inner = tool.get("toolSpec") or tool.get("function") or tool
        if not isinstance(inner, dict) or not isinstance(inner.get("name"), str):
            return f"config.{key}: a tool has no name; write the target's `tools` by hand"
        schema = inner.get("parameters", inner.get("input_schema", inner.get("inputSchema")))
        if isinstance(schema, dict) and set(schema) == {"json"}:
            schema = schema["json"]
        entry: dict[str, JSON] = {"name": inner["name"]}
        if isinstance(inner.get("description"), str):
            entry["description"] = inner["description"]
        if isinstance(schema, dict):
            entry["parameters"] = schema
        tools.append(entry)
    if not tools:
        return f"config.{key}: no tools found; write the target's `tools` by hand"
    spec["tools"] = tools
    return None


def _tool_choice(value: JSON) -> JSON:
    """promptfoo's and Converse's tool choices as a Chat Completions `tool_choice`."""
    if value in ("auto", "none", "required"):
        return value
    if value == "any":
        return "required"
    if isinstance(value, dict):
        if "auto" in value:
            return "auto"
        if "any" in value:
            return "required"
        named = value.get("tool") if isinstance(value.get("tool"), dict) else value
        name = named.get("name") if isinstance(named, dict) else None
        if isinstance(name, str):
            return {"type": "function", "function": {"name": name}}
    return None


_AGENT_KEYS = {"agentId": "agent_id", "agentAliasId": "agent_alias_id", "region": "region",
               "sessionId": "session_id", "memoryId": "memory_id", "enableTrace": "enable_trace",
               "endpoint": "base_url"}  # fmt: skip


def _agent(name: str, config: dict[str, JSON]) -> MappedProvider:
    """`bedrock-agent:<agent>` (or `bedrock:agents:<agent>`) as a `bedrock-agent` target; the
    agent's id is `config.agentId`, else the name in the provider id."""
    agent_id = config.get("agentId", name)
    if not isinstance(agent_id, str) or not agent_id:
        return MappedProvider(unmapped="the Bedrock agent provider names no agent (`agentId`)")
    spec: dict[str, JSON] = {"type": "bedrock-agent", "agent_id": agent_id}
    mapped = MappedProvider(spec)
    for key, value in config.items():
        if key in _AGENT_KEYS and isinstance(value, str | bool):
            spec[_AGENT_KEYS[key]] = value
        elif key in _CREDENTIALS or key == "profile":
            mapped.dropped.append(str(_bedrock_other({}, {}, key, value)))
        else:
            mapped.dropped.append(
                f"config.{key}: no matching option on the bedrock-agent target; set it by hand"
            )
    if "agent_alias_id" not in spec:
        mapped.approximated.append(
            "no `agentAliasId`: the target calls the working draft, alias TSTALIASID; set "
            "`agent_alias_id` to the alias you deploy"
        )
    return mapped


_SAGEMAKER_TYPES = {"openai", "anthropic", "llama", "huggingface", "jumpstart", "custom"}


def map_sagemaker(rest: str, config: dict[str, JSON], json_path: object) -> MappedProvider:
    """`sagemaker:[<modelType>:]<endpoint>` with its `config`, as a `sagemaker` target.

    `json_path` turns promptfoo's `responseFormat.path` (`json.generated_text`) into a
    JSONPath, or None when the expression is more than a path.
    """
    kind, sep, after = rest.partition(":")
    if kind in ("embedding", "embeddings") and sep:
        return MappedProvider(unmapped="an embeddings endpoint is not a system under test")
    model_type = kind if sep and kind in _SAGEMAKER_TYPES else None
    endpoint = after if model_type else rest
    if not endpoint:
        return MappedProvider(unmapped="the provider id names no SageMaker endpoint")
    config = dict(config)
    given = config.pop("modelType", None)
    fmt = given if isinstance(given, str) and given in _SAGEMAKER_TYPES else model_type
    spec: dict[str, JSON] = {"type": "sagemaker", "endpoint": endpoint, "format": fmt or "custom"}
    mapped = MappedProvider(spec)
    if fmt is None:
        mapped.approximated.append(
            "the SageMaker provider names no modelType; the target sends the prompt as the "
            "payload as it is (`format: custom`); set `format` to the container's"
        )
    for key, value in config.items():
        problem = _sagemaker_key(spec, key, value, json_path)
        if problem:
            mapped.dropped.append(problem)
    return mapped


def _sagemaker_key(spec: dict[str, JSON], key: str, value: JSON, json_path: object) -> str | None:
    names = {"region": "region", "contentType": "content_type", "acceptType": "accept",
             "endpoint": "base_url", "systemPrompt": "system_prompt"}  # fmt: skip
    if key in names and isinstance(value, str):
        spec[names[key]] = value
        return None
    if key in ("maxTokens", "max_tokens", "temperature", "topP", "top_p", "stopSequences"):
        return _sampling(spec, key, value)
    if key == "responseFormat" and isinstance(value, dict) and isinstance(value.get("path"), str):
        assert callable(json_path)
        path = json_path(value["path"])
        if isinstance(path, str):
            spec["output_path"] = path
            return None
        return (
            f"config.responseFormat.path `{value['path'][:60]}`: only a plain `json.a[0].b` path "
            "converts; set the target's `output_path` to the JSONPath of the text"
        )
    if key == "transform":
        return (
            "config.transform: the JavaScript transform of the prompt does not run in assay; "
            "the prompt is sent untransformed (write its result into the prompt)"
        )
    if key == "delay":
        return "config.delay: assay paces calls by `concurrency` and its adaptive limit instead"
    if key in _CREDENTIALS or key == "profile":
        return _bedrock_key({}, {}, key, value)
    return f"config.{key}: no matching option on the sagemaker target; set it by hand"
