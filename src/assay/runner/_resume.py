"""Plan the run `--resume` completes: the suite on disk, checked against the run's snapshot.

A stored snapshot is data anybody may have written (`assay runs import`, `POST /api/runs`),
so nothing that runs code or names a file comes from it: the suite, the project config and
the target are the user's own files as they are now. The snapshot only proves they are the
files the run started with (compared with `${VAR}` values as written, as snapshots store
them); any difference refuses the resume. The stored options (thresholds, selection, repeat,
the target's name) are data and are kept, validated; the judge endpoint is not (it would
receive the judge's API key), it must be the one configured now.

Ray workers plan from the driver's own, in-memory snapshot (`plan_from_snapshot`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from assay.config import (
    SUITE_SUFFIXES,
    LoadedProject,
    LoadedSuite,
    ProjectConfig,
    SourceMap,
    parse_suite,
)
from assay.errors import UsageError
from assay.judge import judge_from_env
from assay.results import JSON, RunResult
from assay.runner._execute import redact_snapshot, snapshot_of
from assay.runner._plan import RunOptions, RunPlan, plan_run
from assay.store import RawJSON, RunOwner, resume_refusal

__all__ = ["check_resumable", "plan_for_resume", "plan_from_snapshot", "stored_suite_file"]

_SHOWN_DIFFERENCES = 3


class _StoredOptions(BaseModel):
    """The run options as a snapshot stores them (`RunOptions.snapshot`), validated."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    threshold: Annotated[float, Field(ge=0.0, le=1.0)] | None = None
    borderline: Annotated[float, Field(ge=0.0, le=1.0)] | Literal["off"] | None = None
    concurrency: Annotated[int, Field(ge=1, le=4096)] | None = None
    judge_concurrency: Annotated[int, Field(ge=1, le=4096)] | None = None
    target: str | None = None
    repeat: Annotated[int, Field(ge=1, le=1000)] | None = None
    tags: tuple[str, ...] = ()
    exclude_tags: tuple[str, ...] = ()
    cases: tuple[str, ...] = ()
    judge_model: str | None = None
    judge_base_url: str | None = None
    baseline: str | None = None
    keep_workspaces: Literal["never", "on_failure", "always"] | None = None

    def options(self, judge_base_url: str | None) -> RunOptions:
        return RunOptions(
            threshold=self.threshold,
            borderline=self.borderline,
            concurrency=self.concurrency,
            judge_concurrency=self.judge_concurrency,
            target=self.target,
            repeat=self.repeat,
            tags=self.tags,
            exclude_tags=self.exclude_tags,
            cases=self.cases,
            judge_model=self.judge_model,
            judge_base_url=judge_base_url,
            baseline=self.baseline,
            keep_workspaces=self.keep_workspaces,
        )


def _options(raw: Any) -> RunOptions:
    if not isinstance(raw, dict):
        return RunOptions()
    return _StoredOptions.model_validate(raw).options(raw.get("judge_base_url"))


def plan_from_snapshot(run_id: str, snapshot: dict[str, JSON]) -> RunPlan:
    """The plan of a snapshot this process trusts: a Ray worker's copy of its driver's plan,
    never one read from a store (`plan_for_resume` is for those).

    Raises:
        UsageError: the snapshot is incomplete.
    """
    try:
        suite_data = snapshot["suite"]
        base_dir = Path(str(snapshot["suite_dir"]))
        display = str(snapshot["suite_file"])
        project_raw = snapshot["project"]
        options_raw = snapshot["options"]
    except (KeyError, TypeError):
        raise UsageError(f"run '{run_id}' cannot be planned: its snapshot is incomplete") from None
    assert isinstance(project_raw, dict)
    loaded = parse_suite(suite_data, source=SourceMap(default_file=display), base_dir=base_dir)
    path = project_raw.get("path")
    project = LoadedProject(
        ProjectConfig.model_validate(project_raw.get("config") or {}),
        Path(path) if isinstance(path, str) else None,
    )
    return plan_run(loaded, project, _options(options_raw))


def check_resumable(
    run: RunResult, *, owner: RunOwner | None = None, takeover: bool = False
) -> None:
    """Refuse at once a run that cannot be claimed (before its suite is loaded); the claim
    itself (`Store.reopen_run`) checks again, atomically.

    Raises:
        UsageError: the run completed, or is running, its `owner` not known to be gone, and
            `takeover` is not given.
    """
    refusal = resume_refusal(run.id, run.status, takeover=takeover, owner=owner)
    if refusal is not None:
        raise refusal


def stored_suite_file(run_id: str, snapshot: dict[str, JSON]) -> Path:
    """The suite file a resume loads when none is given: the run's own, as the snapshot names
    it, only if that is a suite file under the working directory.

    The snapshot may have been written by anybody; the file it names is still the user's own,
    and `plan_for_resume` refuses it unless it is the suite the run started with.

    Raises:
        UsageError: the snapshot names no such file; the message says to give the path.
    """
    name = snapshot.get("suite_file")
    how = f"give the run's suite file: assay run --resume {run_id} path/to/suite.eval.yaml"
    if not isinstance(name, str) or not name.endswith(SUITE_SUFFIXES):
        raise UsageError(f"cannot resume run '{run_id}': it does not come from a suite file; {how}")
    path = Path(name)
    if path.is_absolute() or ".." in path.parts or not path.is_file():
        raise UsageError(
            f"cannot resume run '{run_id}': its suite file {_shown(name)} is not a file "
            f"under the working directory; {how}"
        )
    return path


def plan_for_resume(
    run_id: str,
    snapshot: dict[str, JSON],
    loaded: LoadedSuite,
    project: LoadedProject,
    *,
    judge_base_url: str | None = None,
) -> RunPlan:
    """The plan of a stored run from the suite and project config on disk.

    `judge_base_url` is the `--judge-base-url` of the resume; without it, the environment's
    (`ASSAY_JUDGE_BASE_URL`).

    Raises:
        UsageError: the snapshot is incomplete, or the suite, the project config, the target
            or the judge endpoint differ from the run's; the message names where.
    """
    options_raw = snapshot.get("options")
    if not isinstance(options_raw, dict) or not isinstance(snapshot.get("suite"), dict):
        raise UsageError(f"run '{run_id}' cannot be resumed: its snapshot is incomplete")
    try:
        stored = _StoredOptions.model_validate(options_raw)
    except ValidationError as exc:
        raise UsageError(
            f"run '{run_id}' cannot be resumed: its snapshot's options are not valid "
            f"({exc.error_count()} problem(s)); start a new run"
        ) from None
    if judge_base_url is None:
        env = judge_from_env()
        judge_base_url = env.base_url if env else None
    if (stored.judge_base_url or None) != (judge_base_url or None):
        raise UsageError(_judge_refusal(run_id, stored.judge_base_url, judge_base_url))
    plan = plan_run(loaded, project, stored.options(judge_base_url))
    _check_unchanged(run_id, snapshot, plan)
    return plan


def _judge_refusal(run_id: str, stored: str | None, now: str | None) -> str:
    """Why the judge endpoint stops a resume, and what the user can do."""
    start = f"cannot resume run '{run_id}': it asked its judge at "
    if stored is None:
        return (
            f"{start}the default endpoint, and this resume would ask {_shown(now or '')} "
            "(--judge-base-url or ASSAY_JUDGE_BASE_URL); resume without it, or start a new run"
        )
    return (
        f"{start}{_shown(stored)}, and this resume would ask "
        f"{_shown(now or 'the default endpoint')}. If you trust that endpoint (it receives the "
        f"judge's API key), resume with --judge-base-url {_shown(stored)}; otherwise start a "
        "new run"
    )


def _check_unchanged(run_id: str, snapshot: dict[str, JSON], plan: RunPlan) -> None:
    """Refuse a resume whose suite, project config or target is not the run's.

    The stored parts are compared with the plan's redacted snapshot (what runs store now)
    and its unredacted one (what runs stored before `${VAR}` values were redacted)."""
    raw = snapshot_of(plan, redact=False)
    redacted = redact_snapshot(plan, raw)
    project = snapshot.get("project")
    parts: list[tuple[str, str, JSON, str]] = [
        ("the suite", plan.loaded.display, snapshot.get("suite"), "suite"),
        (
            "the project config",
            str(plan.project.path or "no assay.yaml"),
            project.get("config") if isinstance(project, dict) else None,
            "project",
        ),
        ("the target", plan.target_name, snapshot.get("target"), "target"),
    ]
    for what, name, stored, key in parts:
        now = [_parsed(redacted[key]), _parsed(raw[key])]
        if key == "project":
            now = [part.get("config") if isinstance(part, dict) else None for part in now]
        if stored in now:
            continue
        hint = _given_in_python(stored, now[0]) if key == "suite" else ""
        raise UsageError(
            f"cannot resume run '{run_id}': {what} ({name}) differs from the one the run "
            f"started with (at {', '.join(_differences(stored, now[0]))}).{hint} A resumed run "
            "only runs the suite as it is on disk: restore it as it was, or start a new run "
            f"(assay run {plan.loaded.display})"
        )


def _given_in_python(stored: JSON, now: JSON) -> str:
    """A hint when the run had more default graders than the suite file: graders
    `assay.evaluate(graders=[...])` was given, which only the same Python call can give again."""
    if not isinstance(stored, dict) or not isinstance(now, dict):
        return ""
    had, has = stored.get("assertions") or [], now.get("assertions") or []
    if not isinstance(had, list) or not isinstance(has, list) or len(had) <= len(has):
        return ""
    if had[: len(has)] != has:
        return ""
    names = [g.get("function") or g.get("type") for g in had[len(has) :] if isinstance(g, dict)]
    shown = ", ".join(_shown(str(name)) for name in names)
    return (
        f" The run was also given graders in Python ({shown}): resume it from Python with "
        "the same ones, assay.api.resume_run(store, run_id, suite=..., graders=[...])."
    )


def _parsed(value: JSON) -> JSON:
    return json.loads(value) if isinstance(value, RawJSON) else value


def _differences(stored: JSON, now: JSON) -> list[str]:
    found = list(_walk(stored, now, ""))
    shown = [_shown(path or "the top level") for path in found[:_SHOWN_DIFFERENCES]]
    if len(found) > _SHOWN_DIFFERENCES:
        shown.append(f"and {len(found) - _SHOWN_DIFFERENCES} more")
    return shown or ["the top level"]


def _walk(stored: JSON, now: JSON, path: str) -> Iterator[str]:
    """The paths where two JSON values differ (`targets.app.command`, `tests[3].input`)."""
    if isinstance(stored, dict) and isinstance(now, dict):
        for key in sorted({*stored, *now}):
            child = f"{path}.{key}" if path else key
            if key not in stored or key not in now:
                yield child
            else:
                yield from _walk(stored[key], now[key], child)
    elif isinstance(stored, list) and isinstance(now, list) and len(stored) == len(now):
        for index, (old, new) in enumerate(zip(stored, now, strict=True)):
            yield from _walk(old, new, f"{path}[{index}]")
    elif stored != now:
        yield path


def _shown(text: str, limit: int = 80) -> str:
    """Text from a stored snapshot, safe to print: printable characters only, bounded."""
    clean = "".join(c if c.isprintable() else "?" for c in text)
    return clean if len(clean) <= limit else clean[: limit - 1] + "…"
