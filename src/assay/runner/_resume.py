"""Rebuild the plan of a stored run from its snapshot, so `--resume` runs exactly that run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assay.config import LoadedProject, ProjectConfig, SourceMap, parse_suite
from assay.errors import UsageError
from assay.results import JSON
from assay.runner._plan import RunOptions, RunPlan, plan_run

__all__ = ["plan_from_snapshot"]


def _options(raw: Any) -> RunOptions:
    if not isinstance(raw, dict):
        return RunOptions()
    return RunOptions(
        threshold=raw.get("threshold"),
        borderline=raw.get("borderline"),
        concurrency=raw.get("concurrency"),
        target=raw.get("target"),
        repeat=raw.get("repeat"),
        tags=tuple(raw.get("tags") or ()),
        exclude_tags=tuple(raw.get("exclude_tags") or ()),
        cases=tuple(raw.get("cases") or ()),
        judge_model=raw.get("judge_model"),
        judge_base_url=raw.get("judge_base_url"),
        baseline=raw.get("baseline"),
    )


def plan_from_snapshot(run_id: str, snapshot: dict[str, JSON]) -> RunPlan:
    """The plan the run was created with: its suite, project config and options as stored.

    Later edits to the suite file or `assay.yaml` do not change what a resumed run does.

    Raises:
        UsageError: the snapshot predates resumable runs or is incomplete.
    """
    try:
        suite_data = snapshot["suite"]
        base_dir = Path(str(snapshot["suite_dir"]))
        display = str(snapshot["suite_file"])
        project_raw = snapshot["project"]
        options_raw = snapshot["options"]
    except (KeyError, TypeError):
        raise UsageError(f"run '{run_id}' cannot be resumed: its snapshot is incomplete") from None
    assert isinstance(project_raw, dict)
    loaded = parse_suite(suite_data, source=SourceMap(default_file=display), base_dir=base_dir)
    path = project_raw.get("path")
    project = LoadedProject(
        ProjectConfig.model_validate(project_raw.get("config") or {}),
        Path(path) if isinstance(path, str) else None,
    )
    return plan_run(loaded, project, _options(options_raw))
