"""The exception tree.

```
AssayError                    base of everything assay raises on purpose
├── UserError                 the user can fix it; CLI exit code 2, no traceback
│   ├── ConfigError           a suite/config file is wrong: one or more located issues
│   ├── UsageError            a bad command-line or API argument
│   └── PluginError           an installed plugin cannot be loaded or clashes with another
├── TargetError               the system under test failed for one case (case verdict `error`)
└── GraderError               a grader could not grade (grader result carries `error`)
```

Anything else that escapes is an internal error: exit code 3 with a traceback.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "AssayError",
    "ConfigError",
    "ConfigIssue",
    "GraderError",
    "PluginError",
    "TargetError",
    "UsageError",
    "UserError",
]


class AssayError(Exception):
    """Base class of every error assay raises deliberately."""


class UserError(AssayError):
    """An error the user caused and can fix; reported without a traceback (exit code 2)."""


@dataclass(frozen=True)
class ConfigIssue:
    """One located problem in a configuration file.

    Rendered as `file:line path: message`, e.g.
    `evals/support.eval.yaml:14 tests[2].assertions[0]: unknown grader type 'contain'.`
    A YAML syntax error also gives the column: `file:line:column: message`.
    """

    file: str
    line: int | None
    path: str
    message: str
    column: int | None = None
    """1-based column, where the problem is a character (a YAML syntax error)."""

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        if self.line is not None and self.column is not None:
            where = f"{where}:{self.column}"
        if self.path:
            where = f"{where} {self.path}"
        return f"{where}: {self.message}"


class ConfigError(UserError):
    """One or more problems in suite or project configuration files."""

    def __init__(self, issues: list[ConfigIssue]) -> None:
        self.issues = issues
        super().__init__("\n".join(str(issue) for issue in issues))


class UsageError(UserError):
    """A bad argument to a command or an API call."""


class PluginError(UserError):
    """An installed plugin (an `assay.*` entry point) cannot be imported, is not what its
    group needs, or takes a type name that is already taken; the message names the package
    and the entry point."""


class TargetError(AssayError):
    """The system under test failed for one case (exception, exit code, timeout, bad reply).

    `retryable` marks transient failures (HTTP 429 and 5xx, dropped connections) that the
    runner retries with backoff; `retry_after_s` carries a server's `Retry-After`;
    `rate_limited` (a 429) also makes the runner lower its concurrency.
    """

    def __init__(
        self,
        message: str,
        *,
        kind: str = "TargetError",
        retryable: bool = False,
        retry_after_s: float | None = None,
        rate_limited: bool = False,
    ) -> None:
        self.kind = kind
        self.retryable = retryable or rate_limited
        self.retry_after_s = retry_after_s
        self.rate_limited = rate_limited
        super().__init__(message)


class GraderError(AssayError):
    """A grader could not produce a score; the grader result carries the error, never a 0."""
