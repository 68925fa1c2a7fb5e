"""Regenerate the pictures in docs/reports.md from a real run of the bundled quickstart.

    .venv/bin/python scripts/docs_pictures.py

Writes docs/images/terminal-summary.png (the `assay run` summary: the real command's colour
output, recorded by rich as HTML and photographed), docs/images/html-report.png (the HTML
report of that run, a case panel open) and docs/images/studio-*.png (`assay serve` over that
run and a stricter second one, one case of which is reviewed in the review queue), all in
headless Chromium. Needs the dev extras and a Chromium
binary; nothing is fetched from the network.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from playwright.sync_api import Page, sync_playwright
from rich.console import Console
from rich.text import Text

ROOT = Path(__file__).resolve().parents[1]
IMAGES = ROOT / "docs" / "images"
ASSAY = Path(sys.executable).with_name("assay")


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("ASSAY_", "GITHUB_"))}


def _run(directory: Path, *extra: str) -> str:
    env = _env()
    env.update(COLUMNS="104", FORCE_COLOR="1", TERM="xterm-256color")
    done = subprocess.run(
        [str(ASSAY), "run", str(ROOT / "examples" / "quickstart"), *extra],
        cwd=directory,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode not in (0, 1):
        raise SystemExit(done.stderr)
    return done.stdout


_TERMINAL_PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"><style>
body {{ margin: 0; background: #0d1117; }}
pre {{ margin: 0; padding: 16px 20px; color: #e6edf3; background: #0d1117; display: inline-block;
       font: 14px/1.35 "DejaVu Sans Mono", ui-monospace, monospace; }}
</style></head><body><pre id="terminal">$ assay run examples/quickstart
{body}</pre></body></html>"""


def _terminal_page(ansi: str, directory: Path) -> str:
    console = Console(record=True, width=104, file=open(os.devnull, "w"))  # noqa: SIM115
    # The store lives in a temporary directory here; show where it is in a real project.
    for line in ansi.replace(f"{directory}{os.sep}", "").splitlines():
        console.print(Text.from_ansi(line))
    return _TERMINAL_PAGE.format(body=console.export_html(inline_styles=True, code_format="{code}"))


def _serve(directory: Path) -> tuple[subprocess.Popen[bytes], str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = subprocess.Popen(
        [str(ASSAY), "serve", "--port", str(port)],
        cwd=directory,
        env=_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            with urllib.request.urlopen(f"{url}/api/health", timeout=1):  # noqa: S310
                return server, url
        except OSError:
            time.sleep(0.1)
    server.terminate()
    raise SystemExit("assay serve did not start")


def _review(page: Page, queue: str) -> None:
    """Review the queue's first case with the keyboard, as a person would, and photograph the
    queue back on it (its review and note shown)."""
    page.goto(queue)
    page.locator(".review-case .case-panel").wait_for()
    page.locator("input[name=reviewer]").fill("ana")
    page.keyboard.press("Escape")
    page.keyboard.press("c")
    page.keyboard.type("Says where to cancel, but not that the refund is prorated.")
    page.keyboard.press("Escape")
    page.keyboard.press("f")
    page.locator(".queue-position").filter(has_text="case 2 of").wait_for()
    page.keyboard.press("k")
    page.locator(".current-review .review-box").wait_for()
    page.screenshot(path=str(IMAGES / "studio-review.png"), full_page=True)


def _photograph(directory: Path, runs: tuple[str, str]) -> None:
    chromium = shutil.which("chromium") or os.environ["ASSAY_TEST_CHROMIUM"]
    base, head = runs
    server, url = _serve(directory)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=chromium, args=["--no-sandbox", "--disable-gpu"]
            )
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            page.goto((directory / "terminal.html").as_uri())
            page.locator("#terminal").screenshot(path=str(IMAGES / "terminal-summary.png"))
            page.goto((directory / "report.html").as_uri())
            page.locator('tr.case-row[data-case-id="warranty"]').click()
            page.locator(".case-panel").wait_for()
            page.screenshot(path=str(IMAGES / "html-report.png"), full_page=True)
            _review(page, f"{url}/runs/{head}/review")
            shots = [
                ("studio-runs", "/", "tr.run-row"),
                ("studio-run", f"/runs/{head}", "tr.case-row"),
                ("studio-case", f"/runs/{head}/cases/delivery-promise", ".case-panel"),
                ("studio-compare", f"/compare?base={base}&head={head}", ".compare-cases"),
                ("studio-settings", "/settings", "form.settings"),
            ]
            for name, path, ready in shots:
                page.goto(url + path)
                page.locator(ready).first.wait_for()
                page.wait_for_timeout(300)  # the settings field fills after its request
                page.screenshot(path=str(IMAGES / f"{name}.png"), full_page=True)
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=10)


def main() -> None:
    IMAGES.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        terminal = directory / "terminal.html"
        ansi = _run(directory, "--report", "html:report.html")
        terminal.write_text(_terminal_page(ansi, directory), encoding="utf-8")
        base = json.loads(_run(directory, "--json"))["id"]
        head = json.loads(_run(directory, "--json", "--threshold", "0.95"))["id"]
        _photograph(directory, (base, head))
    print(f"wrote the pictures in {IMAGES}")


if __name__ == "__main__":
    main()
