"""AgentV v5 `prompts`: read (text, chat messages, `file://`, promptfoo-style mappings) and
rendered with a test's `vars` into the case's input.

Rendering supports `{{ name }}` and `{{ a.b }}` placeholders (assay.interop.agentv._detect);
Nunjucks tags and filters, and a placeholder the test's vars lack, are located errors rather
than a silently different prompt (AgentV would render an unknown name as empty text).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from assay.config._yaml import LocPath, load_yaml
from assay.errors import ConfigError, ConfigIssue
from assay.interop._vars import substitute_vars
from assay.results import JSON

__all__ = ["Prompt", "PromptReader", "slug"]

_PLACEHOLDER = re.compile(r"\{\{-?\s*(.*?)\s*-?\}\}", re.S)
_NAME = re.compile(r"[A-Za-z_][\w.]*")

Report = Callable[[LocPath, str], None]


def slug(text: str) -> str:
    """A test-id-safe form of a label (no whitespace)."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-")[:80] or "case"


class Prompt:
    """One entry of `prompts`: a label, a template (text or chat messages), where it is."""

    def __init__(self, label: str, template: JSON, path: LocPath) -> None:
        self.label = label
        self.template = template
        self.path = path


class PromptReader:
    """Reads and renders prompts; problems go to `error` (located) and `extend` (issues of
    another file)."""

    def __init__(
        self, base_dir: Path, error: Report, extend: Callable[[list[ConfigIssue]], None]
    ) -> None:
        self.base_dir = base_dir
        self.error = error
        self.extend = extend

    def read(self, raw: JSON, path: LocPath) -> list[Prompt]:
        """The prompts of a `prompts` value (one prompt, a list, or a `file://` of either)."""
        if raw is None:
            return []
        if isinstance(raw, str) and raw.startswith("file://"):
            loaded = self._file(raw, path)
            if loaded is None:
                return []
            if not isinstance(loaded, list) or is_chat(loaded):
                return [Prompt("prompt-1", loaded, path)]
            raw = loaded
        entries = raw if isinstance(raw, list) and not is_chat(raw) else [raw]
        out: list[Prompt] = []
        for i, entry in enumerate(entries):
            where = (*path, i) if entries is raw else path
            prompt = self._one(entry, where, i)
            if prompt is not None:
                out.append(prompt)
        return out

    def _one(self, entry: JSON, path: LocPath, index: int) -> Prompt | None:
        label = f"prompt-{index + 1}"
        if isinstance(entry, str):
            template: JSON = entry
            if entry.startswith("file://"):
                template = self._file(entry, path)
            return Prompt(label, template, path) if template is not None else None
        if is_chat(entry):
            return Prompt(label, entry, path)
        if not isinstance(entry, dict):
            self.error(path, "a prompt is text, a file://, chat messages, or a mapping")
            return None
        for key in ("function", "function_file", "command"):
            if key in entry:
                self.error(
                    (*path, key),
                    "assay does not run prompt functions or commands; write the prompt out "
                    "as text or chat messages",
                )
                return None
        return self._mapping(entry, path, label)

    def _mapping(self, entry: dict[str, JSON], path: LocPath, label: str) -> Prompt | None:
        """A promptfoo-style prompt mapping: `raw`/`prompt` text or a `file`/`path`, with an
        `id` or `label` and optional `prefix`/`suffix`."""
        if "config" in entry:
            self.error((*path, "config"), "per-prompt provider config is not supported")
        named = entry.get("id", entry.get("label"))
        label = slug(named) if isinstance(named, str) else label
        template: JSON
        if "raw" in entry or "prompt" in entry:
            template = entry.get("raw", entry.get("prompt"))
        else:
            ref = entry.get("file", entry.get("path"))
            if not isinstance(ref, str):
                self.error(path, "a prompt mapping needs `raw`, `prompt`, `file` or `path`")
                return None
            template = self._file(ref, path)
        if template is None:
            return None
        prefix, suffix = entry.get("prefix"), entry.get("suffix")
        if isinstance(template, str) and isinstance(prefix, str):
            template = prefix + template
        if isinstance(template, str) and isinstance(suffix, str):
            template = template + suffix
        return Prompt(label, template, path)

    def _file(self, ref: str, path: LocPath) -> JSON:
        """A prompt file relative to the suite: JSON/YAML parsed, anything else as text."""
        name = ref.removeprefix("file://")
        file = self.base_dir / name
        if file.suffix.lower() in (".json", ".yaml", ".yml"):
            try:
                data, _ = load_yaml(file, display=name)
            except ConfigError as exc:
                self.extend(exc.issues)
                return None
            return data
        try:
            return file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            self.error(path, f"cannot read prompt file '{name}' (looked at {file}): {exc}")
            return None

    def render(self, prompt: Prompt, context: dict[str, JSON], path: LocPath) -> JSON:
        """The prompt rendered with a test's vars (text, or messages); None after an error,
        which is located at the prompt, or at the test's `vars` for a missing name."""
        template = prompt.template
        texts = (
            [template]
            if isinstance(template, str)
            else [m.get("content") for m in _list(template) if isinstance(m, dict)]
        )
        for text in texts:
            if isinstance(text, str) and not self._renderable(text, prompt, context, path):
                return None
        return substitute_vars(template, context)

    def _renderable(
        self, text: str, prompt: Prompt, context: dict[str, JSON], path: LocPath
    ) -> bool:
        if "{%" in text:
            self.error(
                prompt.path,
                "assay renders `{{ var }}` placeholders only, not Nunjucks tags ({% … %}); "
                "write the prompt out per test",
            )
            return False
        for match in _PLACEHOLDER.finditer(text):
            name = match.group(1)
            if not _NAME.fullmatch(name):
                self.error(
                    prompt.path,
                    f"assay renders `{{{{ var }}}}` placeholders only, not `{match.group(0)}`",
                )
                return False
            if not _has(context, name):
                self.error(
                    (*path, "vars"),
                    f"the prompt uses `{{{{ {name} }}}}` and this test's vars have no `{name}`",
                )
                return False
        return True


def is_chat(value: JSON) -> bool:
    """A list of chat messages (`{role, content}` mappings)."""
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(m, dict) and "role" in m and "content" in m for m in value)
    )


def _has(context: dict[str, JSON], name: str) -> bool:
    node: JSON = context
    for part in name.split("."):
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


def _list(value: JSON) -> list[JSON]:
    return list(value) if isinstance(value, list) else []
