"""AgentV v5 eval files (promptfoo-like: `providers`, `prompts`, `tests[].vars`, `assert`),
converted into the v4 shape that the v4 rewriter (assay.interop.agentv._rewrite) reads.

v5 is the same model as v4 written another way: a case's input is a prompt rendered with its
`vars`, the target is named under `providers`, graders are `assert`. So the document is
rewritten in place into v4 (`target`, `tests[].input`, `assertions`), then read as any v4
file. Every key of v5's schema is mapped, a warning (it changes no result), or a located
error saying why. A file that mixes v4 and v5 keys is one located error: AgentV v5 rejects
v4 keys, and reading half of each would guess. See docs/migrating-from-agentv.md#v5.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from assay.config._yaml import LocPath, SourceMap, format_path, load_yaml
from assay.errors import ConfigError, ConfigIssue
from assay.interop._vars import substitute_vars
from assay.interop.agentv._target_kinds import Unmapped, is_builtin_kind
from assay.interop.agentv._v5_asserts import V5Asserts
from assay.interop.agentv._v5_environment import EnvironmentReader
from assay.interop.agentv._v5_inline import inline_target
from assay.interop.agentv._v5_prompts import Prompt, PromptReader, slug
from assay.interop.agentv._v5_rows import Origin, RowReader
from assay.interop.agentv._v5_transform import TransformWrapper
from assay.results import JSON

__all__ = ["V5Reader"]

_REJECTED = {
    "graders": "a grader is a provider in v5: AgentV rejects `graders`; set the judge "
    "with `judge:` in assay.yaml",
    "model": "put the model in the provider (AgentV rejects top-level `model`)",
    "repeat": "use `evaluate_options.repeat` (AgentV rejects top-level `repeat`)",
    "runs": "use `evaluate_options.repeat` (AgentV rejects top-level `runs`)",
    "early_exit": "use `evaluate_options.repeat` (AgentV rejects top-level `early_exit`)",
    "budget_usd": "use `evaluate_options.budget_usd` (AgentV rejects top-level `budget_usd`)",
    "policy": "AgentV rejects top-level `policy`: use `evaluate_options` and `threshold`",
    "on_run_complete": "AgentV rejects it (extensions replace it), and assay runs no hooks",
    "providerPromptMap": "AgentV rejects it: give one provider per suite in `providers`",
    "provider_prompt_map": "AgentV rejects it: give one provider per suite in `providers`",
    "env": "export these variables before `assay run` (assay's targets read the environment) "
    "and remove `env`",
}
"""v5 top-level keys that are errors: the AgentV feature has no assay equivalent."""

_IGNORED = {
    "derived_metrics": "assay reports its own run metrics; these derived metrics are not computed",
    "output_path": "pass `--json PATH` to `assay run` or use `assay report`",
    "nunjucks_filters": "assay renders `{{ var }}` placeholders only (a prompt using a filter "
    "is an error)",
    "governance": "catalogue metadata; it changes no result",
    "metadata": "suite metadata; it changes no result",
}
"""v5 top-level keys that change no case result: dropped with a warning."""

_OPTIONS_IGNORED = {
    "cache": "use `assay run --no-cache` or `--cache-mode`",
    "delay": "assay paces requests with its rate limits, not a fixed delay",
    "generate_suggestions": "assay does not generate suggestions",
    "timeout_ms": "set `timeout_s` on the target",
    "max_eval_time_ms": "assay has no whole-run time limit",
    "filter_range": "select cases with `assay run --test`",
    "budget_usd": "assay has no run budget: the run is not stopped when it costs more",
}

_OPENAI_PROTOCOL = frozenset(
    {
        "openai",
        "azure",
        "openrouter",
        "groq",
        "together",
        "fireworks",
        "deepseek",
        "mistral",
        "gemini",
        "ollama",
        "vllm",
        "lmstudio",
    }
)
_PROVIDER_CONFIG = {
    "temperature": "temperature",
    "max_tokens": "max_tokens",
    "top_p": "top_p",
    "seed": "seed",
    "stop": "stop",
    "apiBaseUrl": "base_url",
    "base_url": "base_url",
    "apiKeyEnvar": "api_key_env",
    "api_key_env": "api_key_env",
}
_ENV = re.compile(r"\{\{\s*env\.([A-Za-z_]\w*)\s*\}\}")
_STRATEGIES = {"pass_any": "pass_at_k", "pass_all": "pass_all", "mean": "mean"}


def _list(value: JSON) -> list[JSON]:
    return list(value) if isinstance(value, list) else []


class V5Reader:
    """Rewrites one v5 document in place into the v4 shape; collects warnings and errors."""

    def __init__(self, source: SourceMap, base_dir: Path) -> None:
        self.source = source
        self.base_dir = base_dir
        self.warnings: list[ConfigIssue] = []
        self.errors: list[ConfigIssue] = []
        self.asserts = V5Asserts(self.error, self.warn, base_dir)
        self.transforms = TransformWrapper(base_dir, self.error)
        self.transform: tuple[JSON, LocPath] | None = None
        """`default_test.options.transform` and where it is written."""
        self.test_transform: tuple[JSON, LocPath] | None = None
        self.prompts = PromptReader(base_dir, self.error, self.errors.extend)
        self.rows = RowReader(source, base_dir, self.error, self.errors.extend)
        self.target: str | None = None
        self.base_vars: dict[str, JSON] = {}
        self.base_metadata: dict[str, JSON] = {}
        self.templated: list[tuple[LocPath, int, JSON]] = []
        """Suite-level assertions that use `{{ var }}`: rendered into each test instead."""
        self._pending: list[tuple[int, Prompt | None, bool]] = []
        self.rubric_prompt: JSON = None
        """`default_test.options.rubric_prompt`: the judge prompt of rubric assertions."""
        self.test_rubric_prompt: JSON = None
        self.testbed = EnvironmentReader(base_dir, self.error, self.warn)
        self.suite_environment: dict[str, JSON] | None = None
        self.workspaces: dict[LocPath, JSON] = {}
        """assay `workspace` mappings built from `environment` and `extensions`, by where
        they go (`()` the suite, `("tests", i)` a test): set once the v4 rewriting is done,
        as they are assay's already."""

    def error(self, path: LocPath, message: str) -> None:
        self.errors.append(self.source.issue(path, message))

    def warn(self, path: LocPath, message: str) -> None:
        self.warnings.append(self.source.issue(path, message))

    # -- detection -------------------------------------------------------------------------

    def mixed(self, marker: LocPath, v4: list[LocPath]) -> None:
        """The one located error of a file that mixes v4 and v5 keys."""
        line = self.source.locate(marker).line
        more = ", ".join(f"`{format_path(p)}`" for p in v4[1:4])
        also = f" (also {more}{', …' if len(v4) > 4 else ''})" if more else ""
        self.error(
            v4[0],
            f"this file mixes AgentV v5 keys (`{format_path(marker)}`, line {line}) with v4 "
            f"keys (`{format_path(v4[0])}` here){also}; AgentV v5 rejects v4 keys. Write the "
            "file in one format: v5 (`providers`, `prompts` with `tests[].vars`, `assert`) or "
            "v4 (`target`, `tests[].input`, `assertions`); see docs/migrating-from-agentv.md#v5",
        )

    # -- suite -----------------------------------------------------------------------------

    def convert(self, data: dict[str, JSON]) -> None:
        """Rewrite the document in place: suite keys first, then every test."""
        for key in list(data):
            if key in _REJECTED:
                data.pop(key)
                why = _REJECTED[key]
                self.error((key,), f"AgentV v5's `{key}` is not supported by assay: {why}")
            elif key in _IGNORED:
                data.pop(key)
                self.warn((key,), f"`{key}` is ignored: {_IGNORED[key]}")
        tags = data.get("tags")
        if isinstance(tags, dict):
            data["tags"] = [f"{k}:{v}" for k, v in tags.items()]
        self._providers(data)
        self._testbed(data)
        self._execution(data)
        default_test = self._default_test(data)
        prompts = self.prompts.read(data.pop("prompts", None), ("prompts",))
        if not prompts and isinstance(default_test.get("prompts"), list | str | dict):
            prompts = self.prompts.read(default_test["prompts"], ("default_test", "prompts"))
        suite_asserts = self._suite_asserts(data, default_test)
        if suite_asserts:
            data["assertions"] = suite_asserts
        rows = list(self.rows.tests(data.get("tests")))
        scenarios = data.pop("scenarios", None)
        if scenarios is not None:
            rows += self.rows.scenarios(scenarios)
        if rows or "tests" in data:
            self._tests(data, rows, prompts)
        hooks = self.testbed.hooks_path
        if hooks is not None and not self.workspaces:
            self.warn(
                hooks,
                "AgentV runs a provider's hooks in the case's workspace, and this file sets up "
                "none (no `environment` or `extensions`): they are not run",
            )

    def _variables(self) -> dict[str, str]:
        """What `{{ env.NAME }}` reads in an environment recipe: the process environment over
        the `.env` files AgentV loads."""
        from assay.interop.agentv._env import AgentVEnv, find_repo_root

        return dict(AgentVEnv.for_eval(self.base_dir, find_repo_root(self.base_dir)))

    def _testbed(self, data: dict[str, JSON]) -> None:
        """`extensions` and `environment` as the suite's assay `workspace`."""
        if "extensions" in data:
            self.testbed.read_extensions(data.pop("extensions"), ("extensions",))
        if "environment" in data:
            self.suite_environment = self.testbed.environment(
                data.pop("environment"), ("environment",), self._variables()
            )
        workspace = self.testbed.workspace(self.suite_environment)
        if workspace is not None:
            self.workspaces[()] = workspace
            where = ("environment",) if ("environment",) in self.source.entries else None
            self.source.entries.setdefault(
                ("workspace",), self.source.locate(where or ("extensions",))
            )

    def _providers(self, data: dict[str, JSON]) -> None:
        defaults = data.pop("defaults", None)
        if defaults is not None and not isinstance(defaults, dict):
            self.error(("defaults",), "give `defaults` inline as {provider, grader}")
        if isinstance(defaults, dict) and "grader" in defaults:
            self.warn(
                ("defaults", "grader"),
                "assay's judge is set with `judge:` in assay.yaml; `defaults.grader` is not read",
            )
        raw = data.pop("providers", None)
        if raw is None and isinstance(defaults, dict) and isinstance(defaults.get("provider"), str):
            raw = defaults["provider"]
            self.source.rename(("defaults", "provider"), ("providers",))
        if raw is None:
            return
        entries = _provider_entries(raw)
        if not entries:
            self.error(("providers",), "`providers` names no provider")
            return
        if len(entries) > 1:
            self.error(
                ("providers", 1),
                "assay runs one target per run: keep one provider here and run the suite again "
                "with `--target` for each other one",
            )
        path: LocPath = ("providers", 0) if isinstance(raw, list) else ("providers",)
        self._provider(entries[0], path, data)

    def _provider(self, entry: JSON, path: LocPath, data: dict[str, JSON]) -> None:
        if isinstance(entry, str):
            if ":" not in entry:
                # a label from AgentV's provider catalogue, resolved as a target name
                data["target"] = self.target = entry
                self.source.entries.setdefault(("target",), self.source.locate(path))
                return
            entry = {"id": entry}
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
            self.error(path, "a provider is a label, a provider id, or a mapping with `id`")
            return
        ident: str = entry["id"]
        if "hooks" in entry:
            self.testbed.read_provider_hooks(entry["hooks"], (*path, "hooks"))
        self._provider_keys(entry, path)
        if ":" not in ident and is_builtin_kind(ident):
            self._builtin_provider(entry, ident, path, data)
            return
        parts = ident.split(":")
        kind = parts[0]
        if len(parts) < 2 or (kind not in _OPENAI_PROTOCOL and kind != "anthropic"):
            self.error(
                (*path, "id"),
                f"assay builds inline targets from `openai:`, `anthropic:` and other "
                f"OpenAI-protocol model ids, not '{ident}': define the target in assay.yaml "
                "and name it here by its label",
            )
            return
        target: dict[str, JSON] = {"type": "anthropic" if kind == "anthropic" else "openai"}
        if kind != "anthropic":
            target["provider"] = kind
        target["model"] = parts[-1]
        config = entry.get("config")
        for key, value in config.items() if isinstance(config, dict) else ():
            if key in _PROVIDER_CONFIG:
                target[_PROVIDER_CONFIG[key]] = self._env(value, (*path, "config", key))
            else:
                self.error(
                    (*path, "config", key),
                    f"provider config `{key}` has no assay equivalent; the target options are "
                    "temperature, max_tokens, top_p, seed, stop, apiBaseUrl and apiKeyEnvar",
                )
        label = entry.get("label")
        name = slug(label if isinstance(label, str) else ident.replace(":", "-"))
        data["targets"] = {name: target}
        data["target"] = self.target = name
        self.source.entries.setdefault(("target",), self.source.locate(path))
        self.source.entries.setdefault(("targets", name), self.source.locate(path))

    def _provider_keys(self, entry: dict[str, JSON], path: LocPath) -> None:
        """The provider keys assay has no equivalent for (errors), and `delay` (ignored)."""
        for key in ("runtime", "environment", "env", "inputs", "transform", "prompts"):
            if key in entry:
                self.error(
                    (*path, key),
                    f"provider `{key}` is not supported by assay: define the target in "
                    "assay.yaml and name it here",
                )
        if "delay" in entry:
            self.warn((*path, "delay"), "`delay` is ignored: assay paces requests itself")

    def _builtin_provider(
        self, entry: dict[str, JSON], ident: str, path: LocPath, data: dict[str, JSON]
    ) -> None:
        """An inline provider of one of AgentV's own kinds (a coding agent, `cli`, `mock`, a
        model API): the target a catalogue entry of that kind would be."""
        label = entry.get("label")
        name = slug(label if isinstance(label, str) and label.strip() else ident)
        try:
            target, warnings = inline_target(
                entry, name, self.base_dir, self.source.locate(path).file
            )
        except Unmapped as exc:
            at = (*path, exc.key) if exc.key in entry else path
            self.error(at, f"provider '{ident}': {exc}")
            return
        for warning in warnings:
            self.warn(path, warning)
        config = entry.get("config")
        if "grader_target" in entry or (isinstance(config, dict) and "grader_target" in config):
            self.warn(
                path,
                "an inline provider's `grader_target` is not read: its judge is the one "
                "`defaults.grader` of .agentv/config.yaml names, else assay's settings",
            )
        data["targets"] = {name: target}
        data["target"] = self.target = name
        self.source.entries.setdefault(("target",), self.source.locate(path))
        self.source.entries.setdefault(("targets", name), self.source.locate(path))

    def _env(self, value: JSON, path: LocPath) -> JSON:
        """`{{ env.NAME }}` in a provider setting, read from the environment (AgentV's
        spelling of assay's `${NAME}`); an unset variable is an error."""
        if not isinstance(value, str) or "env." not in value:
            return value

        def replace(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in os.environ:
                self.error(path, f"environment variable {name} is not set")
                return ""
            return os.environ[name]

        return _ENV.sub(replace, value)

    def _execution(self, data: dict[str, JSON]) -> None:
        execution: dict[str, JSON] = {}
        if "threshold" in data:
            execution["threshold"] = data.pop("threshold")
            self.source.rename(("threshold",), ("execution", "threshold"))
        if "timeout_seconds" in data:
            execution["timeout_s"] = data.pop("timeout_seconds")
            self.source.rename(("timeout_seconds",), ("execution", "timeout_s"))
        options = data.pop("evaluate_options", None)
        if isinstance(options, dict):
            for key, value in options.items():
                where = ("evaluate_options", key)
                if key == "max_concurrency":
                    execution["concurrency"] = value
                    self.source.rename(where, ("execution", "concurrency"))
                elif key == "repeat":
                    self._repeat(value, where, execution)
                elif key in _OPTIONS_IGNORED:
                    self.warn(where, f"`{key}` is ignored: {_OPTIONS_IGNORED[key]}")
                else:
                    self.error(where, f"unknown evaluate_options key '{key}'")
        if execution:
            data["execution"] = execution

    def _repeat(self, value: JSON, where: LocPath, execution: dict[str, JSON]) -> None:
        if isinstance(value, int):
            execution["repeat"] = value
            return
        if not isinstance(value, dict):
            self.error(where, "`repeat` is a count or {count, strategy}")
            return
        execution["repeat"] = value.get("count", 1)
        strategy = value.get("strategy")
        if strategy is not None:
            if strategy in _STRATEGIES:
                execution["repeat_strategy"] = _STRATEGIES[str(strategy)]
            else:
                self.error((*where, "strategy"), f"repeat strategy {strategy!r} is not known")
        if value.get("early_exit"):
            self.warn((*where, "early_exit"), "assay runs every repeat; `early_exit` is ignored")
        if "cost_limit_usd" in value:
            self.warn((*where, "cost_limit_usd"), "assay has no cost limit; it is ignored")

    def _default_test(self, data: dict[str, JSON]) -> dict[str, JSON]:
        raw = data.pop("default_test", None)
        if isinstance(raw, str):
            raw = self._load_ref(raw, ("default_test",))
        if not isinstance(raw, dict):
            return {}
        path: LocPath = ("default_test",)
        variables = raw.get("vars")
        if isinstance(variables, dict):
            self.base_vars = dict(variables)
        metadata = raw.get("metadata")
        if isinstance(metadata, dict):
            self.base_metadata = dict(metadata)
        if "threshold" in raw:
            execution = data.setdefault("execution", {})
            if isinstance(execution, dict):
                execution.setdefault("threshold", raw["threshold"])
        for key in ("provider", "providers"):
            if key in raw and raw[key] not in (self.target, [self.target]):
                self.error(
                    (*path, key),
                    "assay runs one target per run: name it in the top-level `providers`",
                )
        self.rubric_prompt = self._unsupported_test_keys(raw, path)
        self.transform = _transform_of(raw, path)
        return raw

    def _load_ref(self, ref: str, path: LocPath) -> JSON:
        name = ref.strip().removeprefix("file://")
        if ref.strip().startswith("ref://"):
            self.error(path, "`ref://` references are not supported by assay; use file://")
            return None
        file = self.base_dir / name
        try:
            data, other = load_yaml(file, display=str(Path(name)))
        except ConfigError as exc:
            self.errors += exc.issues
            return None
        self.source.graft(path, other)
        return data

    def _suite_asserts(self, data: dict[str, JSON], default_test: dict[str, JSON]) -> list[JSON]:
        out: list[JSON] = []
        for path in (("assert",), ("default_test", "assert")):
            specs = data.pop("assert", None) if path == ("assert",) else default_test.get("assert")
            if not isinstance(specs, list):
                continue
            if "{{" in str(specs):
                self.templated += [(path, i, spec) for i, spec in enumerate(specs)]
                continue
            converted = self.asserts.convert(specs, path, {})
            if isinstance(converted, list):
                start = len(out)
                for i in range(len(converted)):
                    where = self.source.locate((*path, i))
                    self.source.entries.setdefault(("assertions", start + i), where)
                out += converted
        return out

    # -- prompts ---------------------------------------------------------------------------

    # -- tests -----------------------------------------------------------------------------

    def _tests(
        self,
        data: dict[str, JSON],
        rows: list[tuple[JSON, Origin]],
        prompts: list[Prompt],
    ) -> None:
        entries = self.source.entries
        origins: list[tuple[int, Origin]] = []
        tests: list[JSON] = []
        for test, where in rows:
            if not isinstance(test, dict):
                origins.append((len(tests), where))
                tests.append(test)
                continue
            variants = prompts if len(prompts) > 1 else [prompts[0] if prompts else None]
            for prompt in variants:
                origins.append((len(tests), where))
                tests.append(dict(test))
                self._pending.append((len(tests) - 1, prompt, len(prompts) > 1))
        # move each test's locations to its new index before rewriting (errors locate)
        old = {p: w for p, w in entries.items() if p[:1] == ("tests",) and len(p) > 1}
        for p in old:
            del entries[p]
        for index, where in origins:
            if isinstance(where, tuple):
                size = len(where)
                pool = old if where[:1] == ("tests",) else entries
                for p, w in list(pool.items()):
                    if p[:size] == where:
                        entries[("tests", index, *p[size:])] = w
            else:
                for p, w in where.items():
                    entries[("tests", index, *p)] = w
        data["tests"] = tests
        for index, prompt, many in self._pending:
            self._test(tests[index], ("tests", index), prompt, many)

    def _test(self, test: JSON, path: LocPath, prompt: Prompt | None, many: bool) -> None:
        if not isinstance(test, dict):
            return
        variables: dict[str, JSON] = {**self.base_vars, **_dict(test.pop("vars", None))}
        for _ in range(2):  # vars may refer to other vars (`{{ vars.person.name }}`)
            variables = _dict(substitute_vars(variables, {**variables, "vars": variables}))
        context: dict[str, JSON] = {**variables, "vars": variables}
        if "id" not in test:
            test["id"] = slug(str(test.get("description") or f"test-{path[-1]}"))
        own = test.pop("prompts", None)
        if own is not None:
            chosen = self.prompts.read(own, (*path, "prompts"))
            prompt = chosen[0] if chosen else prompt
        if many and prompt is not None:
            test["id"] = f"{test['id']}-{prompt.label}"
        self._test_keys(test, path)
        self._test_execution(test, path)
        self._input(test, path, prompt, context)
        for key in ("criteria", "turns", "input_files"):
            if key in test:
                test[key] = substitute_vars(test[key], context)
        self._turns(test, path, context)
        self._test_asserts(test, path, context)
        metadata = {**self.base_metadata, **_dict(test.get("metadata"))}
        if variables:
            metadata.setdefault("vars", variables)
        if prompt is not None and many:
            metadata.setdefault("prompt", prompt.label)
        if metadata:
            test["metadata"] = metadata

    def _input(
        self,
        test: dict[str, JSON],
        path: LocPath,
        prompt: Prompt | None,
        context: dict[str, JSON],
    ) -> None:
        """The prompt rendered with the vars as v4's `input`; `vars.expected_output` as v4's
        `expected_output` (a conversation's turns carry their own inputs)."""
        # a raw case from a file may carry its own `input` (AgentV keeps that form for files)
        if prompt is not None and "turns" not in test and "input" not in test:
            rendered = self.prompts.render(prompt, context, path)
            if rendered is not None:
                test["input"] = rendered
                self.source.entries.setdefault(
                    (*path, "input"), self.source.locate((*path, "vars", "input"))
                )
        variables = _dict(context.get("vars"))
        if "expected_output" in variables:
            test["expected_output"] = variables["expected_output"]
            self.source.entries.setdefault(
                (*path, "expected_output"), self.source.locate((*path, "vars"))
            )

    def _test_keys(self, test: dict[str, JSON], path: LocPath) -> None:
        """A test's provider (only the suite's), and its keys assay has no place for."""
        for key in ("provider", "providers"):
            value = test.pop(key, None)
            if value is not None and value not in (self.target, [self.target]):
                self.error(
                    (*path, key),
                    f"assay runs one target per run, and this test names {value!r}; run it in "
                    "a suite of its own (or with --target), or remove it",
                )
        self.test_rubric_prompt = self._unsupported_test_keys(test, path) or self.rubric_prompt
        if "environment" in test:
            environment = self.testbed.environment(
                test.pop("environment"), (*path, "environment"), self._variables()
            )
            workspace = self.testbed.workspace(environment)
            if workspace is not None:
                self.workspaces[path] = workspace
                self.source.entries.setdefault(
                    (*path, "workspace"), self.source.locate((*path, "environment"))
                )
        self.test_transform = _transform_of(test, path) or self.transform
        for key in ("options", "assert_scoring_function", "environment"):
            test.pop(key, None)
        if "suite" in test:
            test.pop("suite")
            self.warn((*path, "suite"), "`suite` is ignored: assay groups a run by its suite")

    def _test_asserts(self, test: dict[str, JSON], path: LocPath, context: dict[str, JSON]) -> None:
        """The test's `assert` as v4 `assertions`, then the suite's templated ones rendered."""
        graders = self.asserts.convert(test.pop("assert", None), (*path, "assert"), context)
        self.source.rename((*path, "assert"), (*path, "assertions"))
        execution = test.get("execution")
        skip = isinstance(execution, dict) and execution.get("skip_defaults") is True
        merged = [*_list(graders), *([] if skip else self._templated(context))]
        if isinstance(self.test_rubric_prompt, str):
            merged = _with_rubric_prompt(merged, self.test_rubric_prompt)
        if self.test_transform is not None and merged:
            command = self.transforms.command(*self.test_transform)
            if command is not None:
                merged = self.transforms.wrap(merged, command)
        if merged or graders is not None:
            test["assertions"] = merged

    def _templated(self, context: dict[str, JSON]) -> list[JSON]:
        out: list[JSON] = []
        for path, i, spec in self.templated:
            converted = self.asserts.convert([spec], (*path, i), context)
            out += _list(converted)
        return out

    def _unsupported_test_keys(self, test: dict[str, JSON], path: LocPath) -> JSON:
        """Errors for test keys assay has no place for; returns `options.rubric_prompt`."""
        options = test.get("options")
        rubric_prompt: JSON = None
        if isinstance(options, dict):
            rubric_prompt = options.get("rubric_prompt")
            for key in (k for k in options if k not in ("rubric_prompt", "transform")):
                why = (
                    "AgentV removed it; use `transform`"
                    if key == "postprocess"
                    else "test options are not read by assay"
                )
                self.error((*path, "options", key), f"`options.{key}` is not supported: {why}")
        if "assert_scoring_function" in test:
            self.error(
                (*path, "assert_scoring_function"),
                "assay scores a case with its aggregator: use `execution.aggregator`",
            )
        return rubric_prompt

    def _test_execution(self, test: dict[str, JSON], path: LocPath) -> None:
        execution = test.get("execution")
        execution = dict(execution) if isinstance(execution, dict) else {}
        if "assert" in execution:
            converted = self.asserts.convert(
                execution.pop("assert"), (*path, "execution", "assert"), {}
            )
            execution["assertions"] = converted
            self.source.rename((*path, "execution", "assert"), (*path, "execution", "assertions"))
        if "threshold" in test:
            execution["threshold"] = test.pop("threshold")
        run = test.pop("run", None)
        if isinstance(run, dict):
            for key, value in run.items():
                if key == "threshold":
                    execution["threshold"] = value
                elif key == "repeat":
                    execution["repeat"] = value
                elif key == "timeout_seconds":
                    execution["timeout_s"] = value
                elif key == "budget_usd":
                    self.warn((*path, "run", key), f"`{key}` is ignored: {_OPTIONS_IGNORED[key]}")
                else:
                    self.error((*path, "run", key), f"unknown `run` key '{key}'")
        if execution:
            test["execution"] = execution

    def _turns(self, test: dict[str, JSON], path: LocPath, context: dict[str, JSON]) -> None:
        for i, turn in enumerate(_list(test.get("turns"))):
            if isinstance(turn, dict) and "assert" in turn:
                where = (*path, "turns", i)
                turn["assertions"] = self.asserts.convert(
                    turn.pop("assert"), (*where, "assert"), context
                )
                self.source.rename((*where, "assert"), (*where, "assertions"))


def _transform_of(test: dict[str, JSON], path: LocPath) -> tuple[JSON, LocPath] | None:
    """A test's `options.transform` (AgentV's output transform) and where it is written."""
    options = test.get("options")
    if isinstance(options, dict) and "transform" in options:
        return options["transform"], (*path, "options", "transform")
    return None


def _dict(value: JSON) -> dict[str, JSON]:
    return dict(value) if isinstance(value, dict) else {}


def _with_rubric_prompt(graders: list[JSON], prompt: str) -> list[JSON]:
    """Rubric assertions judged with `options.rubric_prompt`: the plain strings folded into
    one rubrics grader where the first stood (as v4 folds them), and each rubric list."""
    out: list[JSON] = []
    folded: list[JSON] = []
    for grader in graders:
        if isinstance(grader, str):
            if not folded:
                out.append({"type": "rubrics", "criteria": folded, "prompt": prompt})
            folded.append(grader)
        elif (
            isinstance(grader, dict)
            and grader.get("type") == "llm-grader"
            and ("rubrics" in grader and "prompt" not in grader and "target" not in grader)
        ):
            rest = {k: v for k, v in grader.items() if k not in ("type", "rubrics")}
            out.append({"type": "rubrics", "criteria": grader["rubrics"], "prompt": prompt, **rest})
        else:
            out.append(grader)
    return out


def _provider_entries(raw: JSON) -> list[JSON]:
    if isinstance(raw, list):
        return list(raw)
    if isinstance(raw, dict) and "id" not in raw:
        # the map form: {"openai:gpt-4o": {label, config}}
        return [{"id": key, **_dict(value)} for key, value in raw.items()]
    return [raw]
