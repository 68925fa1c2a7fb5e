"""Process checks shared by tests that watch a child outlive, or not, its parent."""

from __future__ import annotations

from pathlib import Path

__all__ = ["running"]


def running(pid: int) -> bool:
    """Alive and not a zombie (an orphan's zombie waits for whoever adopted it to reap it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"
