"""Package attributes imported on first use (PEP 562), for packages on the CLI's start-up path.

`assay.config` and `assay.api` re-export names whose modules import every grader and target;
commands that only read stored runs must not pay for those imports.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["lazy_getattr"]


def lazy_getattr(
    package: str, modules: Mapping[str, Sequence[str]], namespace: dict[str, Any]
) -> Callable[[str], Any]:
    """A module `__getattr__` that imports `name` from the module `modules` lists it under,
    and caches it in the package's `namespace` so later lookups skip the hook."""
    where = {name: module for module, names in modules.items() for name in names}

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    return __getattr__
