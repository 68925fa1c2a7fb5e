"""The studio's settings: `studio:` in `.assay/config.yaml` of the project (SPEC §7).

The file belongs to the project, next to the default store, and is written by the studio's
settings page through `PUT /api/config`. Only the keys the studio owns are changed when it is
written; everything else in the file is kept.
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path
from typing import Annotated

import yaml
from pydantic import ConfigDict, Field, ValidationError

from assay._strict_model import StrictModel
from assay.config._project_store import find_project
from assay.config._yaml import parse_yaml
from assay.errors import ConfigError, ConfigIssue
from assay.scoring import DEFAULT_THRESHOLD

__all__ = [
    "STUDIO_CONFIG_FILE",
    "StudioConfig",
    "load_studio_config",
    "save_studio_config",
    "studio_config_path",
]

STUDIO_CONFIG_FILE = Path(".assay") / "config.yaml"
"""Where the studio's settings live, relative to the project directory."""

_SECTION = "studio"
_DEPRECATED = "pass_threshold"


class StudioConfig(StrictModel):
    """The studio's settings."""

    # The HTTP API's OpenAPI document describes the fields from these docstrings.
    model_config = ConfigDict(use_attribute_docstrings=True)

    threshold: Annotated[float, Field(ge=0.0, le=1.0)] = DEFAULT_THRESHOLD
    """Score, 0–1, drawn as the reference line of the studio's trend charts (each case's and
    run's score is marked against its own threshold). Read from the deprecated
    `studio.pass_threshold` when `threshold` is absent."""


def studio_config_path(start: Path | None = None) -> Path:
    """`.assay/config.yaml` in the project directory: the directory of the nearest
    `assay.yaml` above `start` (default: the working directory), else `start` itself."""
    here = (start or Path.cwd()).resolve()
    project = find_project(here)
    return (project.parent if project is not None else here) / STUDIO_CONFIG_FILE


def load_studio_config(path: Path) -> StudioConfig:
    """The settings in `path`; the defaults when the file or its `studio:` is absent.

    Raises:
        ConfigError: The file is not YAML, not a mapping, or holds an invalid setting.
    """
    data = _read(path)
    section = data.get(_SECTION)
    if section is None:
        return StudioConfig()
    if not isinstance(section, dict):
        raise ConfigError([ConfigIssue(str(path), None, _SECTION, "must be a mapping")])
    key = "threshold" if "threshold" in section else _DEPRECATED
    if key not in section:
        return StudioConfig()
    try:
        return StudioConfig(threshold=section[key])
    except ValidationError as exc:
        message = exc.errors()[0]["msg"]
        raise ConfigError(
            [ConfigIssue(str(path), None, f"{_SECTION}.{key}", f"{message} (a score from 0 to 1)")]
        ) from None


def save_studio_config(path: Path, config: StudioConfig) -> None:
    """Write `config` into `path`, keeping the file's other keys.

    Always writes `studio.threshold` and drops the deprecated `studio.pass_threshold`. The
    file is replaced atomically, so a reader never sees half of it, and keeps its mode.

    Raises:
        ConfigError: The existing file is not YAML or not a mapping (it is left as it is).
    """
    data = _read(path)
    section = data.get(_SECTION)
    if not isinstance(section, dict):
        section = {}
    section.pop(_DEPRECATED, None)
    section["threshold"] = config.threshold
    data[_SECTION] = section
    path.parent.mkdir(parents=True, exist_ok=True)
    text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
    temporary = path.with_name(f".config-{secrets.token_hex(8)}.yaml")
    # Not `mkstemp`, which creates the file 0600: the new file gets the mode the old one
    # had, or for a first file what the process's umask gives any file it creates.
    try:
        mode: int | None = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        mode = None
    handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            if mode is not None:
                os.fchmod(out.fileno(), mode)
            out.write(text)
        temporary.replace(path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def _read(path: Path) -> dict[str, object]:
    """The file's top-level mapping ({} when the file is absent or empty)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError([ConfigIssue(str(path), None, "", f"cannot read file: {exc}")]) from None
    # The suites' loader: a syntax error at its line and column in one sentence, aliases
    # bounded (a few bytes of anchors would otherwise expand to gigabytes in the server).
    data, _ = parse_yaml(text, str(path), interpolate=False)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError([ConfigIssue(str(path), None, "", "must be a mapping")])
    return data
