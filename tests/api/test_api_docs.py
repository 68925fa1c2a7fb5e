"""Every Python example in docs/python-api.md runs, in order, offline, in an empty directory."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "python-api.md"
_PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)


def test_the_page_has_examples() -> None:
    assert len(_PYTHON_BLOCK.findall(PAGE.read_text(encoding="utf-8"))) >= 6


@pytest.mark.parametrize(
    "index", range(len(_PYTHON_BLOCK.findall(PAGE.read_text(encoding="utf-8"))))
)
def test_example_runs(index: int, monkeypatch: pytest.MonkeyPatch) -> None:
    source = _PYTHON_BLOCK.findall(PAGE.read_text(encoding="utf-8"))[index]
    # Run as a script would (`__main__`), so functions report `__main__:name` as documented.
    module = types.ModuleType("__main__")
    monkeypatch.setitem(sys.modules, "__main__", module)
    exec(compile(source, f"{PAGE.name}[{index}]", "exec"), module.__dict__)
