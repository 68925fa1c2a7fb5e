"""What the store raises when a call names something missing or conflicts with what is stored.

Both are `UsageError`s, so the CLI reports them as before (exit 2); the HTTP API tells them
apart to answer 404 and 409 instead of 400.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assay.errors import UsageError

if TYPE_CHECKING:
    from assay.store._owner import RunOwner

__all__ = ["ConflictError", "NotFoundError", "StoreUnavailableError", "resume_refusal"]


class NotFoundError(UsageError):
    """The run, case result or pinned baseline a call names does not exist."""


class ConflictError(UsageError):
    """The call contradicts what is stored: a run id that exists, a run that is not in the
    state the call needs (e.g. pinning a run that did not complete)."""


def resume_refusal(
    run_id: str, status: str, *, takeover: bool, owner: RunOwner | None = None
) -> UsageError | None:
    """Why a run in `status` cannot be claimed for `--resume`, or None when it can.

    A run marked running is being completed by another process, or its process was killed
    before it could mark it interrupted. Its `owner` (the process that created or last
    claimed it) tells which when that process ran on this machine: gone (or its pid now
    another process's), the run is free. Otherwise only the user can tell, so taking it over
    is asked for explicitly (two processes completing one run would both store its missing
    cases)."""
    if status == "completed":
        return ConflictError(
            f"run '{run_id}' completed; there is nothing to resume (completed runs never change)"
        )
    if status != "running" or takeover:
        return None
    hint = f"take it over with: assay run --resume {run_id} --takeover"
    if owner is None:
        return ConflictError(
            f"run '{run_id}' is running, and the store does not say which process runs it "
            "(it was started by an assay that did not record it). Wait for it to "
            f"end; if no process runs it any more (it was killed, or its store failed), {hint}"
        )
    state = owner.state()
    if state == "gone":
        return None
    if state == "alive":
        return ConflictError(
            f"run '{run_id}' is running: {owner.describe()} is completing it. Wait for it to "
            f"end, or end that process (kill {owner.pid}) and resume again"
        )
    return ConflictError(
        f"run '{run_id}' is running: {owner.describe()} is completing it, and a process on "
        "another host (or in another container, or before a restart) cannot be looked up "
        f"from here. Wait for it to end; if that process is gone, {hint}"
    )


class StoreUnavailableError(UsageError):
    """The database failed an operation it should have done: a lock held past the busy
    timeout, a full disk, a damaged or read-only file, a lost server connection.

    Reported as one line (exit 2; 503 from the server), never with the SQL statement or its
    parameters, which may hold case data. What was committed before stays committed."""
