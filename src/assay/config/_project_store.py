"""Find `assay.yaml` and read its `store:` key without loading the whole project config.

Commands that only read runs (`assay runs`, `compare`, `baseline`) need that one key.
Validating every target and judge of the project there would import every grader and target
model (half a second of start-up) and would refuse to list runs over a typo in an unrelated
target; `load_project` still validates everything for the commands that run suites.
"""

from __future__ import annotations

from pathlib import Path

from assay.errors import ConfigError

__all__ = ["PROJECT_FILE", "find_project", "project_store", "resolve_store"]

PROJECT_FILE = "assay.yaml"


def find_project(start: Path | None = None) -> Path | None:
    """The nearest `assay.yaml` in `start` (default: the working directory) or its parents."""
    here = (start or Path.cwd()).resolve()
    for directory in (here, *here.parents):
        candidate = directory / PROJECT_FILE
        if candidate.is_file():
            return candidate
    return None


def resolve_store(store: str | None, base_dir: Path) -> str | None:
    """A configured store as opened: a URL as written, a relative path against `base_dir`
    (the project file's directory), so every subdirectory finds the same store."""
    if store is None or "://" in store or Path(store).is_absolute():
        return store
    return str(base_dir / store)


def project_store(path: Path | None = None) -> str | None:
    """The `store:` of the project config, resolved as `resolve_store` does (None when there
    is no file or no key).

    Raises:
        ConfigError: The file is not a mapping, or `store` is not a string.
    """
    path = path or find_project()
    if path is None:
        return None
    # Imported here: without a project file (most directories) YAML is never needed.
    from assay.config._datasets import display_path
    from assay.config._yaml import load_yaml

    data, source = load_yaml(path, display=display_path(path))
    if data is None:
        return None
    if not isinstance(data, dict):
        raise ConfigError([source.issue((), "the project config must be a mapping")])
    store = data.get("store")
    if store is not None and not isinstance(store, str):
        raise ConfigError(
            [
                source.issue(
                    ("store",),
                    "must be a string: a SQLite path such as .assay/assay.db or a database "
                    "URL such as postgresql+psycopg://user@host/dbname",
                )
            ]
        )
    return resolve_store(store, path.parent)
