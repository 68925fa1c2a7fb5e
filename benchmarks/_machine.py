"""What a benchmark ran on: the lines that head its output, so figures carry their context."""

from __future__ import annotations

import datetime
import os
import platform
import shutil
import subprocess
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

PACKAGES = ("assay", "aiohttp", "pydantic", "SQLAlchemy")


def _proc_field(path: str, key: str) -> str | None:
    """The first `key: value` of a /proc file (Linux), or None elsewhere."""
    try:
        text = Path(path).read_text()
    except OSError:
        return None
    for line in text.splitlines():
        name, _, value = line.partition(":")
        if name.strip() == key:
            return value.strip()
    return None


def _memory() -> str:
    total = _proc_field("/proc/meminfo", "MemTotal")  # "24576000 kB"
    if total is None:
        return "memory unknown"
    return f"{int(total.split()[0]) / 1024**2:.1f} GiB RAM"


def _version(package: str) -> str:
    try:
        return f"{package} {version(package)}"
    except PackageNotFoundError:
        return f"{package} (not installed)"


def _commit() -> str:
    """The checkout's commit, with a note when tracked files differ from it."""
    git = shutil.which("git")
    if git is None:
        return "unknown (no git)"
    root = Path(__file__).resolve().parent.parent

    def output(*args: str) -> str | None:
        done = subprocess.run([git, *args], cwd=root, capture_output=True, text=True, check=False)
        return done.stdout if done.returncode == 0 else None

    head = output("rev-parse", "--short", "HEAD")
    if head is None:
        return "unknown (not a git checkout)"
    changed = len((output("status", "--porcelain", "--untracked-files=no") or "").splitlines())
    return head.strip() + (f" with {changed} changed file(s)" if changed else "")


def describe() -> list[str]:
    """Markdown list items: date, machine, load, versions, commit."""
    model = _proc_field("/proc/cpuinfo", "model name") or platform.processor() or "unknown CPU"
    load = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    now = datetime.datetime.now(datetime.UTC)
    python = f"Python {platform.python_version()}"
    return [
        f"- date: {now:%Y-%m-%d %H:%M} UTC",
        f"- machine: {os.cpu_count()} CPUs ({model}), {_memory()}, {platform.system()}",
        f"- load average at start (1/5/15 min): {load}",
        f"- versions: {python}, {', '.join(_version(p) for p in PACKAGES)}",
        f"- commit: {_commit()}",
    ]
