"""Shared fixtures: every test runs in its own working directory so stores never collide."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Dialog, Page, Route

collect_ignore_glob = ["*.eval.yaml", "*.eval.yml"]
"""Suite files under tests/ are fixtures for the loaders, not evals for assay's pytest plugin."""

CLOSED_ENDPOINT = "http://127.0.0.1:9/v1"
"""The discard port on loopback: nothing listens, so a stray model call fails at once."""


@pytest.fixture(autouse=True)
def _isolated_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Run in a fresh directory with no project config or store env var inherited."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ASSAY_DATABASE_URL", raising=False)
    # No test reaches the internet: a target or judge left on a default endpoint fails fast.
    for name in ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.setenv(name, CLOSED_ENDPOINT)
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    yield
    assert Path.cwd() == tmp_path or os.path.exists(tmp_path)


def write(path: Path, text: str) -> Path:
    """Write a file, creating parent directories; returns the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def postgres_admin_url() -> Iterator[str]:
    """A real PostgreSQL server for the session (see tests/_postgres.py).

    Missing server binaries fail the test under CI (`make test` provisions them) and skip it
    elsewhere, so a contributor without PostgreSQL can still run the rest.
    """
    from tests._postgres import PostgresUnavailable, postgres_server

    try:
        with postgres_server() as url:
            yield url
    except PostgresUnavailable as exc:
        if os.environ.get("CI"):
            pytest.fail(str(exc))
        pytest.skip(str(exc))


@pytest.fixture
def postgres_url(postgres_admin_url: str) -> Iterator[str]:
    """The URL of an empty database of its own on the session's PostgreSQL server."""
    from tests._postgres import fresh_database

    with fresh_database(postgres_admin_url) as url:
        yield url


@pytest.fixture(scope="module")
def chromium() -> Iterator[Browser]:
    """A real headless Chromium for one test module (see tests/_browser.py).

    Module scope, not session: Playwright's sync API keeps an asyncio loop running in the main
    thread while it is open, and every later test calling `asyncio.run` would fail. Missing
    under CI fails the test (`make test` provisions it); elsewhere it skips.
    """
    from playwright.sync_api import sync_playwright

    from tests._browser import LAUNCH_ARGS, ChromiumUnavailable, chromium_path

    try:
        executable = chromium_path()
    except ChromiumUnavailable as exc:
        if os.environ.get("CI"):
            pytest.fail(str(exc))
        pytest.skip(str(exc))
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=LAUNCH_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def page(chromium: Browser) -> Iterator[Page]:
    """A fresh page in its own context. The test fails if the page tries to leave loopback or
    file://, or has a script error, an error on its console or a dialog (e.g. an injected
    `alert`)."""
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    problems: list[str] = []

    def guard(route: Route) -> None:
        url = route.request.url
        if url.startswith(("file://", "data:", "about:", "http://127.0.0.1", "http://localhost")):
            route.continue_()
        else:
            problems.append(f"the page tried to reach the network: {url}")
            route.abort()

    context.route("**/*", guard)
    page = context.new_page()
    page.on("pageerror", lambda exc: problems.append(f"script error: {exc}"))

    def dialog_opened(dialog: Dialog) -> None:
        problems.append(f"dialog: {dialog.message}")
        dialog.dismiss()  # a dialog left open would block the page until the test times out

    page.on("dialog", dialog_opened)
    page.on(
        "console",
        lambda msg: problems.append(f"console: {msg.text}") if msg.type == "error" else None,
    )
    try:
        yield page
    finally:
        context.close()
    assert problems == []
