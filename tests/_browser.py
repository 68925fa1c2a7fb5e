"""Real headless Chromium for the HTML report and studio tests, driven by Playwright.

Playwright's own browser downloads are never used (no test reaches the internet): the tests
drive the system Chromium that `make test` installs, or the binary `ASSAY_TEST_CHROMIUM` names.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

ARTIFACTS = Path(
    os.environ.get("ASSAY_TEST_ARTIFACTS", Path(__file__).parents[1] / "test-artifacts")
)
"""Where browser tests save screenshots; CI uploads the folder."""

LAUNCH_ARGS = [
    "--no-sandbox",  # CI runs as root, where Chromium's sandbox refuses to start
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-default-apps",
    "--disable-sync",
    "--no-first-run",
    "--metrics-recording-only",
]


class ChromiumUnavailable(RuntimeError):
    """No Chromium binary on this machine."""


def chromium_path() -> str:
    """The Chromium binary to drive; raises `ChromiumUnavailable` with how to get one."""
    named = os.environ.get("ASSAY_TEST_CHROMIUM")
    if named:
        return named
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    raise ChromiumUnavailable(
        "no Chromium found: `make test` installs the Debian package `chromium`, "
        "or set ASSAY_TEST_CHROMIUM to a Chromium binary"
    )


def screenshot_path(name: str) -> Path:
    """A path under the artifacts folder for a screenshot called `name`."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS / f"{name}.png"
