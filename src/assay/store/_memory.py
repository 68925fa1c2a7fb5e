"""An in-memory result sink for Python-API runs that keep their results instead of storing them.

It follows the same rules as a persistent store (one run, unique case ids, a finished run is
immutable) so the runner behaves identically whichever sink it is given.
"""

from __future__ import annotations

from collections.abc import Sequence

from assay.errors import UsageError
from assay.results import (
    JSON,
    CaseResult,
    RunResult,
)
from assay.store._finish import RunFinish

__all__ = ["MemorySink"]


class MemorySink:
    """Holds one run and its case results in memory; implements `assay.store.ResultSink`.

    Memory grows with the run by design: the caller asked for every result back.
    """

    def __init__(self) -> None:
        self._run: RunResult | None = None
        self._case_ids: set[str] = set()
        self.results: list[CaseResult] = []
        """Case results in the order they were added."""
        self.snapshot: dict[str, JSON] = {}
        """The configuration snapshot given to `create_run`."""

    @property
    def run(self) -> RunResult:
        """The run with its results attached (a copy; changing it does not change the sink).

        Raises:
            UsageError: No run was created yet.
        """
        if self._run is None:
            raise UsageError("no run recorded yet: call create_run first")
        return self._run.model_copy(update={"results": list(self.results)})

    def create_run(self, run: RunResult, snapshot: dict[str, JSON]) -> None:
        """Record the run; results already on `run` are kept as its first results.

        Raises:
            UsageError: This sink already holds a run.
        """
        if self._run is not None:
            raise UsageError(
                f"this MemorySink already holds run '{self._run.id}'; use one sink per run"
            )
        self._run = run.model_copy(update={"results": []})
        self.snapshot = dict(snapshot)
        for result in run.results:
            self._append(run.id, result)

    def add_case_result(self, run_id: str, result: CaseResult) -> None:
        """Keep one case result.

        Raises:
            UsageError: The run is unknown or finished, or already has this case id.
        """
        self.add_case_results(run_id, [result])

    def spawn_writer(self) -> None:
        """None: results in memory can only be kept by this process."""
        return None

    def add_case_results(self, run_id: str, results: Sequence[CaseResult]) -> None:
        """Keep several case results (all or none).

        Raises:
            UsageError: The run is unknown or finished, or already has one of the case ids.
        """
        run = self._require_running(run_id, "add a case result to")
        ids = [r.case_id for r in results]
        repeated = sorted({i for i in ids if i in self._case_ids or ids.count(i) > 1})
        if repeated:
            raise UsageError(
                f"run '{run_id}' already has a result for case '{repeated[0]}'; "
                "each case is stored once per run"
            )
        for result in results:
            self._append(run.id, result)

    def finish_run(
        self,
        run_id: str,
        finish: RunFinish,
    ) -> None:
        """Mark the run finished; it is never changed again.

        Raises:
            UsageError: The run is unknown or already finished, or `status` is `running`.
        """
        if finish.status == "running":
            raise UsageError(
                f"cannot finish run '{run_id}' with status 'running'; "
                "use 'completed', 'interrupted' or 'failed'"
            )
        self._run = finish.applied_to(self._require_running(run_id, "finish"))

    def _append(self, run_id: str, result: CaseResult) -> None:
        if result.case_id in self._case_ids:
            raise UsageError(
                f"run '{run_id}' already has a result for case '{result.case_id}'; "
                "each case is stored once per run"
            )
        self._case_ids.add(result.case_id)
        self.results.append(result)

    def _require_running(self, run_id: str, action: str) -> RunResult:
        if self._run is None or self._run.id != run_id:
            raise UsageError(f"cannot {action} run '{run_id}': not found in this MemorySink")
        if self._run.status != "running":
            raise UsageError(
                f"cannot {action} run '{run_id}': it is already finished "
                f"(status '{self._run.status}') and finished runs are immutable"
            )
        return self._run
