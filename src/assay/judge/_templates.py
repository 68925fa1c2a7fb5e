"""Judge prompt templates: package data, versioned by content hash, overridable per grader.

A template is the user message of a judge call, written in Jinja2 and rendered in a sandbox.
It sees the test fields of SPEC §2 (`input`, `output`, `expected_output`, `context`,
`metadata`) plus what its grader adds (rubric items, metrics, outcomes...). Untrusted fields
arrive already wrapped as delimited data blocks (`assay.judge._hardening`), so a custom
template cannot forget the hardening.

The version stored with every judged result is a hash of the system rules and the template
text: editing a template (or upgrading assay to one with different wording) changes it, and
cached judgements of the old wording are not reused.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from assay._content import readable
from assay._paths import FILE_SCHEME, could_be_path, existing_file, is_file
from assay.judge._hardening import SYSTEM_RULES, block, documents, new_nonce, untrusted_texts
from assay.results import JSON

if TYPE_CHECKING:
    import jinja2
    from jinja2.sandbox import SandboxedEnvironment

__all__ = [
    "TEST_FIELDS",
    "UNTRUSTED_FIELDS",
    "PromptTemplate",
    "RenderedPrompt",
    "builtin",
    "load_override",
]

TEST_FIELDS = frozenset(
    {"input", "output", "expected_output", "context", "retrieved_context", "metadata"}
)
"""The SPEC §2 variables every template may use, and `retrieved_context`: the passages the
target retrieved (its runtime context, SPEC §3), apart from the test's static `context`."""

UNTRUSTED_FIELDS = frozenset(
    {
        "input",
        "output",
        "expected_output",
        "context",
        "transcript",
        "tool_calls",
        "claims",
        "output_a",
        "output_b",
        "retrieved_context",
    }
)
"""Fields rendered as delimited data blocks, never as raw text."""

_CACHED_TEMPLATES = 1024
"""Distinct template texts kept compiled: a suite's prompts, not one per case."""


@functools.cache
def _env() -> SandboxedEnvironment:
    """The sandbox templates compile in; Jinja2 is imported on first use (~15 ms a run
    without a judge would pay at start-up)."""
    import jinja2
    from jinja2.sandbox import SandboxedEnvironment

    return SandboxedEnvironment(
        undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=False
    )


@dataclass(frozen=True)
class RenderedPrompt:
    """A judge request's text: the user message and the nonce its data blocks carry."""

    template: str
    """Template name, e.g. `llm-grader` or `llm-grader+file:criteria.md`."""
    version: str
    """12 hex digits of the template's content hash."""
    user: str
    nonce: str

    @property
    def label(self) -> str:
        """`name@version`, as stored with each judged result."""
        return f"{self.template}@{self.version}"


@dataclass(frozen=True)
class PromptTemplate:
    """A named Jinja2 template of a judge call's user message."""

    name: str
    source: str
    variables: frozenset[str] = field(default=TEST_FIELDS)
    """Names the template may use (checked when it is created)."""

    def __post_init__(self) -> None:
        unknown = sorted(self.used - self.variables)
        if unknown:
            known = ", ".join(sorted(self.variables))
            raise ValueError(
                f"prompt template '{self.name}' uses unknown variable(s) {', '.join(unknown)}; "
                f"the variables are {known}"
            )

    @property
    def _compiled(self) -> jinja2.Template:
        return _compile(self.source)

    def compile(self) -> None:
        """Compile the template now (once per process), e.g. before a run's first case, so
        that no judge call pays for Jinja2's import and the compilation."""
        self._compiled  # noqa: B018 — the property compiles and caches

    @property
    def used(self) -> frozenset[str]:
        """The variables the template refers to.

        Raises:
            ValueError: The template is not valid Jinja2 (with the line).
        """
        from jinja2 import TemplateSyntaxError

        try:
            return _variables(self.source)
        except TemplateSyntaxError as exc:
            raise ValueError(
                f"prompt template '{self.name}' line {exc.lineno}: {exc.message}"
            ) from None

    @cached_property
    def version(self) -> str:
        """Hash of the system rules and this template's text."""
        digest = hashlib.sha256(f"{SYSTEM_RULES}\x00{self.source}".encode())
        return digest.hexdigest()[:12]

    def render(self, values: Mapping[str, JSON], nonce: str | None = None) -> RenderedPrompt:
        """Render with `values`; the untrusted ones become data blocks carrying `nonce` (by
        default a fresh random one that none of them contains).

        Raises:
            jinja2.TemplateError: The template failed while rendering (e.g. a sandbox violation).
        """
        # content parts become text with media placeholders: no image data in a prompt
        untrusted = {k: readable(v) for k, v in values.items() if k in UNTRUSTED_FIELDS}
        nonce = nonce or new_nonce(untrusted_texts(untrusted))
        rendered = {
            k: _data(k, untrusted[k], nonce) if k in UNTRUSTED_FIELDS else v
            for k, v in values.items()
        }
        user = _own_lines(self._compiled.render(rendered), nonce).strip()
        return RenderedPrompt(self.name, self.version, user, nonce)

    def with_override(self, prompt: str, origin: str) -> PromptTemplate:
        """A custom template replacing this one (same variables), named after where it came
        from."""
        return PromptTemplate(f"{self.name}+{origin}", prompt, self.variables)


@functools.lru_cache(maxsize=_CACHED_TEMPLATES)
def _compile(source: str) -> jinja2.Template:
    """The compiled template of `source`, once per process: every test's grader builds its
    own `PromptTemplate`, and compiling (~2 ms) per case made a judged run CPU-bound."""
    return _env().from_string(source)


@functools.lru_cache(maxsize=_CACHED_TEMPLATES)
def _variables(source: str) -> frozenset[str]:
    """The variables `source` refers to (parsed once per process, like `_compile`)."""
    from jinja2 import meta

    return frozenset(meta.find_undeclared_variables(_env().parse(source)))


_DELIMITER_TO_BREAK_BEFORE = re.compile(r"(?<!\n)(<<<(?:END )?[A-Z_]+ ([0-9a-f]+)>>>)")
_DELIMITER_TO_BREAK_AFTER = re.compile(r"(<<<(?:END )?[A-Z_]+ ([0-9a-f]+)>>>)(?!\n|$)")
"""Delimiters not yet on a line of their own. Compiled once with the nonce as a group: a
pattern with the nonce written in is new for every prompt, and compiling two (~0.1 ms each)
per judge call cost more than the rest of the prompt's rendering."""


def _own_lines(text: str, nonce: str) -> str:
    """Put every delimiter on a line of its own, as the system rules describe them, also where
    a template writes a field mid-sentence (`Rate {{ output }} now`). Safe because data never
    contains `<<<` (neutralised), so every match is a real delimiter; only this prompt's
    nonce counts."""
    if _on_own_lines(text):
        return text  # the usual case (`{{ output }}` on its line): no regex pass at all
    text = _DELIMITER_TO_BREAK_BEFORE.sub(
        lambda m: f"\n{m.group(1)}" if m.group(2) == nonce else m.group(0), text
    )
    return _DELIMITER_TO_BREAK_AFTER.sub(
        lambda m: f"{m.group(1)}\n" if m.group(2) == nonce else m.group(0), text
    )


def _on_own_lines(text: str) -> bool:
    """Whether no delimiter needs a line break, counted at C speed: every `<<<` run (of
    exactly three) follows a newline and every `>>>` run precedes one or ends the text.
    Anything else (a longer run, a delimiter first in the text, `>>>` mid-line) is left to
    the regexes, which decide the same way."""
    if "<<<<" in text or ">>>>" in text:
        return False
    ended = text.count(">>>\n") + text.endswith(">>>")
    return text.count("<<<") == text.count("\n<<<") and text.count(">>>") == ended


def _data(name: str, value: JSON, nonce: str) -> str:
    """An untrusted value as a data block; empty values render as "" so `{% if %}` skips them."""
    if value is None or value in ("", [], {}):
        return ""
    if name in ("context", "retrieved_context") and isinstance(value, list):
        value = documents(str(v) for v in value)
    return block(name, value, nonce)


def builtin(name: str, variables: frozenset[str] = TEST_FIELDS) -> PromptTemplate:
    """The packaged template `templates/<name>.j2`."""
    source = resources.files("assay.judge").joinpath("templates", f"{name}.j2").read_text("utf-8")
    return PromptTemplate(name, source, variables | TEST_FIELDS)


def load_override(prompt: str, base_dir: Path | None) -> tuple[str, str]:
    """A `prompt:` option's template text and origin.

    A prompt is a file when written `file://path` (AgentV 4.6+), or when it is a path to a
    file that exists (relative to the suite); any other text is the prompt itself. Text that
    cannot be a path (several lines, too long) is never probed as one.

    Raises:
        ValueError: A `file://` path names no readable file, or a single word ending in
            .md/.txt/.j2/.jinja/.jinja2 names no file (a prompt file meant and mistyped).
    """
    candidate = prompt.strip()
    if candidate.startswith(FILE_SCHEME):
        name = candidate.removeprefix(FILE_SCHEME)
        path = Path(name)
        if base_dir is not None and not path.is_absolute():
            path = base_dir / path
        if not could_be_path(name) or not is_file(path):
            raise ValueError(f"prompt file '{name}' does not exist (looked at {path})")
        return _read(path, name), f"file:{path.name}"
    found = existing_file(candidate, base_dir)
    if found is not None:
        return _read(found, candidate), f"file:{found.name}"
    if could_be_path(candidate) and not any(c.isspace() for c in candidate):
        path = Path(candidate)
        if path.suffix in _TEMPLATE_SUFFIXES:
            where = base_dir / path if base_dir is not None and not path.is_absolute() else path
            raise ValueError(
                f"prompt file '{candidate}' does not exist (looked at {where}); write the "
                "prompt text instead, or fix the path"
            )
    return prompt, "inline"


def _read(path: Path, name: str) -> str:
    try:
        return path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot read prompt file '{name}': {exc}") from None


_TEMPLATE_SUFFIXES = frozenset({".md", ".txt", ".j2", ".jinja", ".jinja2"})
