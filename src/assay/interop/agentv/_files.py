"""Files named in an AgentV eval file, found where AgentV looks for them.

AgentV resolves a referenced file (an input file, a `file://` prompt, an assertion template)
against a list of search roots: the eval file's directory, each parent up to the repository
root (the nearest directory of the working directory holding `.git`), the repository root
itself, then the working directory. A leading `/` does not make a path absolute: it is trimmed
first, so `/plugins/x.md` is read from the repository root. An absolute path that exists is
used as it is. Datasets (`tests: ./cases.jsonl`, `file://cases/*.yaml` entries) are relative
to the eval file's directory only.
"""

from __future__ import annotations

from pathlib import Path

from assay._paths import could_be_path, is_file

__all__ = ["FILE_SCHEME", "SearchRoots", "repo_root"]

FILE_SCHEME = "file://"


def repo_root(start: Path) -> Path:
    """The nearest directory from `start` upward holding `.git`, else `start` (AgentV's rule)."""
    start = start.resolve()
    for directory in (start, *start.parents):
        if (directory / ".git").exists():
            return directory
    return start


class SearchRoots:
    """The directories a relative file reference of one eval file is looked up in, in order."""

    def __init__(self, base_dir: Path, cwd: Path | None = None) -> None:
        cwd = (cwd or Path.cwd()).resolve()
        self.root = repo_root(cwd)
        roots: list[Path] = []
        current = base_dir.resolve()
        while True:
            roots.append(current)
            if current in (self.root, current.parent):
                break
            current = current.parent
        roots += [self.root, cwd]
        self.roots = list(dict.fromkeys(roots))

    def candidates(self, name: str) -> list[Path]:
        """Where `name` is looked for, in order."""
        trimmed = name.lstrip("/\\") or name
        found = [Path(name)] if Path(name).is_absolute() else []
        found += [root / trimmed for root in self.roots]
        return list(dict.fromkeys(found))

    def find(self, name: str) -> Path | None:
        """The first existing file `name` names, or None."""
        if not could_be_path(name):
            return None
        return next((p for p in self.candidates(name) if is_file(p)), None)

    def looked_at(self, name: str) -> str:
        """The places `name` was looked for, for a message."""
        return ", ".join(str(p) for p in self.candidates(name))
