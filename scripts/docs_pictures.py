"""Regenerate the pictures in docs/reports.md from a real run of the bundled quickstart.

    .venv/bin/python scripts/docs_pictures.py

Writes docs/images/terminal-summary.png (the `assay run` summary: the real command's colour
output, recorded by rich as HTML and photographed) and docs/images/html-report.png (the HTML
report of that run, a case panel open), both in headless Chromium. Needs the dev extras and a
Chromium binary; nothing is fetched from the network.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright
from rich.console import Console
from rich.text import Text

ROOT = Path(__file__).resolve().parents[1]
IMAGES = ROOT / "docs" / "images"
ASSAY = Path(sys.executable).with_name("assay")


def _run(directory: Path) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ASSAY_", "GITHUB_"))}
    env.update(COLUMNS="104", FORCE_COLOR="1", TERM="xterm-256color")
    done = subprocess.run(
        [str(ASSAY), "run", str(ROOT / "examples" / "quickstart"), "--report", "html:report.html"],
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


def _photograph(terminal: Path, report: Path) -> None:
    chromium = shutil.which("chromium") or os.environ["ASSAY_TEST_CHROMIUM"]
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium, args=["--no-sandbox", "--disable-gpu"]
        )
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        page.goto(terminal.as_uri())
        page.locator("#terminal").screenshot(path=str(IMAGES / "terminal-summary.png"))
        page.goto(report.as_uri())
        page.locator('tr.case-row[data-case-id="warranty"]').click()
        page.locator(".case-panel").wait_for()
        page.screenshot(path=str(IMAGES / "html-report.png"), full_page=True)
        browser.close()


def main() -> None:
    IMAGES.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        terminal = directory / "terminal.html"
        terminal.write_text(_terminal_page(_run(directory), directory), encoding="utf-8")
        _photograph(terminal, directory / "report.html")
    print(f"wrote {IMAGES / 'terminal-summary.png'} and {IMAGES / 'html-report.png'}")


if __name__ == "__main__":
    main()
