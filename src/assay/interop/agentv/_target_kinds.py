"""AgentV target definitions (one entry of a targets file) as assay target specs.

Model APIs map onto the provider layer's presets; `cli` and the coding agents onto `command`
targets whose program is `_agent_cli.py`, given AgentV's command or the agent's CLI options as
JSON. `${{ VAR }}` is resolved as AgentV's `resolveOptionalString` does (whole values only).
See docs/migrating-from-agentv.md, "Targets".
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping
from pathlib import Path

from assay.config._expansions import record
from assay.interop.agentv._env import whole_reference
from assay.results import JSON

__all__ = ["TargetMapper", "Unmapped", "is_builtin_kind"]

_RUNNER = Path(__file__).with_name("_agent_cli.py")
_ASSAY_PLACEHOLDER = re.compile(r"\{(PROMPT|PROMPT_FILE|OUTPUT_FILE|CASE_ID)\}")
"""The command target's own placeholders: escaped in the runner's JSON (only strings can hold
them there) so that AgentV's `{PROMPT}` reaches the runner as written."""
_MOCK_DEFAULT = (
    '{"answer":"Mock provider response. Configure targets.yaml to supply a custom value."}'
)
_AGENTS = {
    "claude": "claude",
    "claude-code": "claude",
    "claude-cli": "claude",
    "claude-sdk": "claude",
    "cc-mirror": "claude",
    "codex": "codex",
    "codex-cli": "codex",
    "copilot": "copilot",
    "copilot-cli": "copilot",
    "copilot-sdk": "copilot",
    "copilot_sdk": "copilot",
    "pi": "pi",
    "pi-cli": "pi",
    "pi-coding-agent": "pi",
}
"""AgentV's coding-agent kinds (aliases included) and the CLI assay runs for each."""
_SDK_KINDS = {"claude-sdk", "copilot-sdk", "copilot_sdk", "pi-coding-agent", "codex"}
_UNSUPPORTED = {
    "vscode": "assay cannot drive VS Code",
    "vscode-insiders": "assay cannot drive VS Code",
    "transcript": "use a `replay` target with the recorded outputs",
    "bedrock": "AgentV itself has no bedrock provider",
    "vertex": "AgentV itself has no vertex provider",
}
_MODEL_API = {
    "openai": "openai",
    "openrouter": "openrouter",
    "azure": "azure",
    "azure-openai": "azure",
    "anthropic": "anthropic",
    "gemini": "gemini",
    "google": "gemini",
    "google-gemini": "gemini",
}


def is_builtin_kind(kind: str) -> bool:
    """Whether `kind` is one of AgentV's own provider kinds (a coding agent, `cli`, `mock`, a
    model API, or one assay refuses with a reason), not a convention provider's name."""
    kind = kind.strip().lower()
    return kind in _AGENTS or kind in _MODEL_API or kind in _UNSUPPORTED or kind in _OWN_KINDS


_OWN_KINDS = frozenset({"cli", "mock", "agentv", "replay", "copilot-log"})
_REPLAY_SOURCES = ("fixtures", "transcripts", "execution_traces")


class Unmapped(Exception):
    """Why a target cannot be an assay target; `key` is the field at fault."""

    def __init__(self, message: str, key: str | None = None) -> None:
        super().__init__(message)
        self.key = key


class TargetMapper:
    """Maps one concrete AgentV target definition to an assay target spec."""

    def __init__(
        self,
        definition: dict[str, JSON],
        env: Mapping[str, str],
        eval_dir: Path,
        targets_file: str,
        name: str,
        *,
        identity: Mapping[str, str] | None = None,
    ) -> None:
        self.d = definition
        self.identity = identity or {}
        """The eval file's `suite` name and `eval_path`, which a replay target matches."""
        self.env = env
        self.eval_dir = eval_dir
        self.targets_file = targets_file
        self.name = name
        self.warnings: list[str] = []
        self.exports: list[str] = []

    # -- values ----------------------------------------------------------------------------

    def text(self, *keys: str, required: bool = False, default: str | None = None) -> str | None:
        """The first of `keys` that is set, `${{ VAR }}` resolved (an unset or empty variable
        counts as not set, as AgentV's optional fields do; a required one is an error)."""
        for key in keys:
            raw = self.d.get(key)
            if raw is None or (isinstance(raw, str) and not raw.strip()):
                continue
            if not isinstance(raw, str | int | float) or isinstance(raw, bool):
                raise Unmapped(f"`{key}` must be a string", key)
            variable = whole_reference(raw)
            if variable is None:
                return str(raw).strip()
            value = self.env.get(variable, "")
            if value.strip():
                record(str(raw), value, {variable: value})  # stored run copies show `raw`
                return value
            if required:
                state = "is empty" if variable in self.env else "is not set"
                raise Unmapped(f"`{key}` reads {variable}, which {state}", key)
        if required and default is None:
            raise Unmapped(f"`{keys[0]}` is required", keys[0])
        return default

    def number(self, key: str) -> float | None:
        raw = self.d.get(key)
        variable = whole_reference(raw)
        if variable is not None:
            raw = self.env.get(variable) or None
        if raw is None or raw == "":
            return None
        try:
            return float(raw)
        except (TypeError, ValueError):
            raise Unmapped(f"`{key}` must be a number", key) from None

    def key_variable(self) -> str:
        """The variable of `api_key`, which AgentV accepts only as `${{ VAR }}`."""
        variable = whole_reference(self.d.get("api_key"))
        if variable is None:
            raise Unmapped(
                "`api_key` must be `${{ VARIABLE }}` (AgentV refuses keys written in the file)",
                "api_key",
            )
        self.exports.append(variable)
        return variable

    def strings(self, *keys: str) -> list[str]:
        for key in keys:
            raw = self.d.get(key)
            if raw is None:
                continue
            if not isinstance(raw, list) or not all(isinstance(a, str) for a in raw):
                raise Unmapped(f"`{key}` must be a list of strings", key)
            out = []
            for arg in raw:
                variable = whole_reference(arg)
                if variable is not None and not self.env.get(variable, "").strip():
                    raise Unmapped(f"`{key}` reads {variable}, which is not set", key)
                if variable:
                    record(arg, self.env[variable], {variable: self.env[variable]})
                out.append(self.env[variable] if variable else arg.strip())
            return out
        return []

    def sampling(self, spec: dict[str, JSON]) -> dict[str, JSON]:
        temperature = self.number("temperature")
        if temperature is not None:
            spec["temperature"] = temperature
        max_tokens = self.number("max_output_tokens")
        if max_tokens is not None:
            spec["max_tokens"] = int(max_tokens)
        retries = [k for k in self.d if k.startswith(("max_retries", "retry_"))]
        if retries:
            self.warnings.append(
                f"`{retries[0]}`: assay retries with its own policy (docs/providers.md)"
            )
        return spec

    # -- kinds -----------------------------------------------------------------------------

    def spec(self) -> dict[str, JSON]:
        provider = self.text("provider", required=True)
        assert provider is not None
        kind = provider.lower()
        if kind in _UNSUPPORTED:
            raise Unmapped(f"provider '{kind}' is not supported: {_UNSUPPORTED[kind]}", "provider")
        if kind in _MODEL_API:
            return self.model_api(_MODEL_API[kind])
        if kind == "mock":
            return self.mock()
        if kind == "agentv":
            return self.agentv_model()
        if kind in _AGENTS:
            return self.agent(kind)
        if kind == "cli":
            return self.cli(self.text("command", required=True) or "")
        if kind == "replay":
            return self.replay()
        if kind == "copilot-log":
            return self.copilot_log()
        # AgentV runs an unknown kind as a convention provider from .agentv/providers/.
        command = self.text("command") or f"bun run .agentv/providers/{kind}.ts {{PROMPT}}"
        return self.cli(command)

    def model_api(self, preset: str) -> dict[str, JSON]:
        model_keys = ("model", "deployment", "variant")
        if preset == "azure":
            return self.azure()
        if preset == "gemini":
            model = self.text(*model_keys, default="gemini-2.5-flash")
        else:
            model = self.text(*model_keys, required=True)
        spec: dict[str, JSON] = {
            "type": "anthropic" if preset == "anthropic" else "openai",
            "provider": preset,
            "model": model,
            "api_key_env": self.key_variable(),
        }
        if preset == "openai":
            base = self.text("endpoint", "base_url")
            spec["base_url"] = _openai_base_url(base)
            if self.text("api_format") == "responses":
                self.warnings.append(
                    "`api_format: responses`: assay calls the Chat Completions API"
                )
        if preset == "anthropic" and self.d.get("thinking_budget") is not None:
            self.warnings.append("`thinking_budget` is not sent: assay's anthropic target has none")
        return self.sampling(spec)

    def azure(self) -> dict[str, JSON]:
        endpoint = self.text("endpoint", "resource", required=True) or ""
        base = endpoint if "://" in endpoint else f"https://{endpoint}.openai.azure.com"
        version = self.text("version", "api_version")
        if version:
            version = version.split("=", 1)[-1].strip() if "version" in version.lower() else version
        else:
            version = "2024-10-21"
            self.warnings.append(
                "AgentV calls Azure's Responses API (api-version v1); assay calls the "
                "deployment's Chat Completions endpoint with api-version 2024-10-21: set "
                "`version` to choose another"
            )
        spec: dict[str, JSON] = {
            "type": "openai",
            "provider": "azure",
            "model": self.text("deployment", "model", required=True),
            "base_url": base.rstrip("/"),
            "api_version": version,
            "api_key_env": self.key_variable(),
        }
        return self.sampling(spec)

    def agentv_model(self) -> dict[str, JSON]:
        raw = self.text("model", required=True) or ""
        provider, _, model = raw.partition(":")
        preset = _MODEL_API.get(provider.lower())
        if not model or preset is None or preset == "azure":
            raise Unmapped(
                f"model '{raw}': assay maps `provider: agentv` models written "
                "`openai:`, `openrouter:`, `anthropic:` or `gemini:` followed by the model",
                "model",
            )
        spec: dict[str, JSON] = {
            "type": "anthropic" if preset == "anthropic" else "openai",
            "provider": preset,
            "model": model,
            "temperature": self.number("temperature") or 0,
        }
        return spec

    def mock(self) -> dict[str, JSON]:
        response = self.d.get("response")
        spec: dict[str, JSON] = {
            "type": "fake",
            "default": response if isinstance(response, str) else _MOCK_DEFAULT,
        }
        delay = self.number("delay_ms")
        if delay is not None:
            spec["delay_ms"] = delay
        return spec

    def _command(self, runner_spec: dict[str, JSON], cwd: str | None) -> dict[str, JSON]:
        runner_spec = {
            **runner_spec,
            "target": self.name,
            "targets_file": self.targets_file,
        }
        spec: dict[str, JSON] = {
            "type": "command",
            "command": [
                sys.executable,
                str(_RUNNER),
                _ASSAY_PLACEHOLDER.sub(
                    r"\\u007b\1}", json.dumps(runner_spec, ensure_ascii=False, sort_keys=True)
                ),
                "{PROMPT_FILE}",
                "{CASE_ID}",
            ],
        }
        if cwd is not None:
            spec["cwd"] = cwd
        timeout = self.number("timeout_seconds")
        if timeout is not None:
            if timeout <= 0:
                raise Unmapped("`timeout_seconds` must be greater than zero", "timeout_seconds")
            spec["timeout_s"] = timeout
        return spec

    def _cwd(self) -> str | None:
        cwd = self.text("cwd")
        if cwd is None:
            return None
        return str((self.eval_dir / cwd).resolve())

    def cli(self, command: str) -> dict[str, JSON]:
        """AgentV's `cli` provider: its command, in its working directory (relative to the
        eval file's directory, which is also the default)."""
        if self.d.get("healthcheck") is not None:
            self.warnings.append(
                "`healthcheck` is not run: assay starts the command for each case and "
                "reports its failure there"
            )
        if self.d.get("provider_batching"):
            self.warnings.append("`provider_batching`: assay runs the command once per case")
        files = self.d.get("files_format", self.d.get("attachments_format"))
        runner: dict[str, JSON] = {
            "kind": "cli",
            "command": command,
            "label": f"cli target '{self.name}'",
            "keep_temp_files": bool(
                self.d.get("keep_temp_files") or self.d.get("keep_output_files")
            ),
        }
        if files is not None:
            runner["files_format"] = files
        return self._command(runner, self._cwd())

    def replay(self) -> dict[str, JSON]:
        """AgentV's `replay` provider: the recorded outputs of its `fixtures` or `transcripts`
        file (relative to the eval file's directory), read by `_agent_cli.py` at run time as
        AgentV reads them when the case runs."""
        given = {k: v for k in _REPLAY_SOURCES if (v := self.text(k)) is not None}
        if len(given) != 1:
            raise Unmapped(
                "a replay target needs exactly one source: `fixtures`, `transcripts` or "
                "`execution_traces`"
            )
        [(source, value)] = given.items()
        if source == "execution_traces":
            raise Unmapped(
                "replay from `execution_traces` (agentv.trace.v1 artifacts) is not supported: "
                "replay `fixtures` or `transcripts`",
                source,
            )
        runner: dict[str, JSON] = {
            "kind": "replay",
            "source": source,
            "path": str((self.eval_dir / value).resolve()),
            "source_target": self.text("source_target", required=True),
            "label": f"replay target '{self.name}'",
        }
        for key in ("suite", "eval_path", "variant"):
            match = self.text(key) or self.identity.get(key)
            if match:
                runner[key] = match
        return self._command(runner, None)

    def copilot_log(self) -> dict[str, JSON]:
        """AgentV's `copilot-log` provider: a Copilot CLI session transcript read from disk
        by `_agent_cli.py` when the case runs (the same session for every case, as in
        AgentV); paths are as AgentV takes them, from the working directory."""
        discover = self.d.get("discover")
        if discover is not None and discover != "latest":
            raise Unmapped(f'`discover` must be "latest" (got "{discover}")', "discover")
        runner: dict[str, JSON] = {
            "kind": "copilot-log",
            "label": f"copilot-log target '{self.name}'",
        }
        for key in ("session_dir", "session_id", "session_state_dir", "cwd"):
            value = self.text(key)
            if value is not None:
                path = key.endswith("_dir")
                runner[key] = str((Path.cwd() / value).resolve()) if path else value
        if discover is not None:
            runner["discover"] = "latest"
        return self._command(runner, None)

    def agent(self, kind: str) -> dict[str, JSON]:
        """A coding agent's CLI, started by `_agent_cli.py` with AgentV's arguments."""
        cli = _AGENTS[kind]
        executable = self.text("executable", "command", "binary")
        if kind == "cc-mirror" and executable is None:
            variant = self.text("variant", default=self.name) or self.name
            executable = _cc_mirror_binary(variant)
        runner: dict[str, JSON] = {
            "kind": cli,
            "executable": executable or cli,
            "label": f"{kind} target '{self.name}'",
        }
        for key in ("model", "system_prompt", "subprovider", "tools", "thinking"):
            value = self.text(key)
            if value is not None:
                runner[key] = value
        effort = self.text("model_reasoning_effort")
        if effort is not None:
            runner["model_reasoning_effort"] = effort
        args = self.strings("args", "arguments")
        if args:
            runner["args"] = list[JSON](args)
        if isinstance(self.d.get("max_turns"), int):
            runner["max_turns"] = self.d["max_turns"]
        if self.d.get("bypass_permissions") is False:
            runner["bypass_permissions"] = False
        if cli == "pi" and whole_reference(self.d.get("api_key")):
            runner["api_key_env"] = self.key_variable()
        if kind in _SDK_KINDS:
            self.warnings.append(
                f"AgentV drives '{kind}' through the agent's SDK; assay runs its CLI "
                f"(`{runner['executable']}`) with the arguments AgentV's CLI provider uses"
            )
        if cli == "copilot":
            self.warnings.append(
                "AgentV talks to Copilot over ACP; assay runs `copilot -p` (prompt mode) and "
                "grades its printed answer (no tool calls are recorded)"
            )
        cwd = self._cwd()
        if cwd is None and cli == "codex":
            runner["fresh_cwd"] = True  # AgentV gives Codex a fresh temporary workspace
        if cwd is None:
            cwd = str(Path.cwd().resolve())  # AgentV starts agents in its own working directory
        return self._command(runner, cwd)


def _openai_base_url(value: str | None) -> str:
    """AgentV's normalizeOpenAIBaseUrl: `/v1` appended unless it is there (or the URL is an
    Azure deployment's)."""
    if not value or not value.strip():
        return "https://api.openai.com/v1"
    url = value.strip().rstrip("/")
    if "/openai/deployments/" in url or url.endswith("/v1"):
        return url
    return f"{url}/v1"


def _cc_mirror_binary(variant: str) -> str:
    """The binary a cc-mirror variant installed (`~/.cc-mirror/<variant>/variant.json`)."""
    config = Path.home() / ".cc-mirror" / variant / "variant.json"
    try:
        data = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return variant
    binary = data.get("binaryPath") if isinstance(data, dict) else None
    return binary if isinstance(binary, str) and binary else variant
