"""Every built-in target and CLI command is documented, and the CLI page is current.

Graders are checked against docs/graders/ by test_grader_docs.py.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from assay.cli._main import _COMMANDS
from assay.targets import BUILTIN_TARGETS

REPO = Path(__file__).resolve().parents[1]
SUITE_REFERENCE = (REPO / "docs" / "suite-reference.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("target", sorted(BUILTIN_TARGETS))
def test_every_target_is_documented(target: str) -> None:
    assert f"| `{target}` |" in SUITE_REFERENCE


def _cli_docs_module() -> object:
    spec = importlib.util.spec_from_file_location(
        "gen_cli_docs", REPO / "scripts" / "gen_cli_docs.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cli_reference_is_current() -> None:
    committed = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    assert committed == _cli_docs_module().render(), (  # type: ignore[attr-defined]
        "docs/cli.md is stale: run `make docs` and commit the result"
    )


@pytest.mark.parametrize("command", sorted(_COMMANDS))
def test_every_command_is_in_the_cli_reference(command: str) -> None:
    assert f"## `assay {command}`" in (REPO / "docs" / "cli.md").read_text(encoding="utf-8")


def test_readme_shows_the_two_commands() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "make demo" in readme
    assert "make test" in readme
