"""Planning a run builds test models only where it needs them: a loaded suite keeps its tests
as JSON text, and each read validates one again (~5 µs), so planning 100,000 cases must not
read every test, and a run reads each test once, when its case is planned."""

from __future__ import annotations

import pytest

from assay.config import LoadedSuite, SuiteTests, load_project, parse_suite
from assay.config import TestCase as Case
from assay.results import JSON
from assay.runner import RunOptions, RunPlan, iter_cases, plan_run

N = 50


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The id of every test built from the suite's text, in order."""
    built: list[str] = []
    read = SuiteTests.__getitem__

    def counting(self: SuiteTests, index: int) -> Case:
        test: Case = read(self, index)
        built.append(test.id)
        return test

    monkeypatch.setattr(SuiteTests, "__getitem__", counting)
    return built


def _suite() -> LoadedSuite:
    tests: list[dict[str, JSON]] = [
        {"id": f"t{i}", "input": "q", "tags": ["even" if i % 2 == 0 else "odd"]} for i in range(N)
    ]
    tests[7]["execution"] = {"threshold": 0.3}
    tests[8]["execution"] = {"repeat": 2}  # its own execution, the suite's threshold
    return parse_suite(
        {
            "name": "s",
            "target": {"type": "fake", "default": "yes"},
            "assertions": [{"type": "contains", "value": "yes"}],
            "tests": list(tests),
        }
    )


def _case_thresholds(plan: RunPlan) -> JSON:
    """The per-case thresholds the run config records (an extra field of the snapshot)."""
    return plan.config.model_dump()["case_thresholds"]


def test_planning_every_case_builds_only_tests_with_their_own_execution(
    builds: list[str],
) -> None:
    plan = plan_run(_suite(), load_project(), RunOptions())
    assert builds == ["t7", "t8"]
    assert _case_thresholds(plan) == {"t7": 0.3}
    assert len(plan.cases) == N


def test_running_builds_each_test_once(builds: list[str]) -> None:
    plan = plan_run(_suite(), load_project(), RunOptions())
    builds.clear()
    ids = [case.test.id for _, case in iter_cases(plan)]
    assert ids == builds == [f"t{i}" for i in range(N)]


def test_a_selection_reads_each_test_once_and_thresholds_follow_it(builds: list[str]) -> None:
    plan = plan_run(_suite(), load_project(), RunOptions(tags=("even",)))
    assert builds == [*(f"t{i}" for i in range(N)), "t8"]  # t7 is odd: not selected
    assert (len(plan.cases), _case_thresholds(plan)) == (N // 2, {})


def test_i23_3_a_run_plans_its_cases_in_chunks(
    builds: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Taking the next case plans the following ones with it (`PLAN_AHEAD` at a time, so the
    validators stay warm), never the whole suite, and each test still once."""
    monkeypatch.setattr("assay.runner._plan.PLAN_AHEAD", 16)
    plan = plan_run(_suite(), load_project(), RunOptions())
    builds.clear()
    cases = iter_cases(plan)
    first = next(cases)
    assert first[1].test.id == "t0" and builds == [f"t{i}" for i in range(16)]
    for _ in range(15):
        next(cases)
    assert len(builds) == 16
    next(cases)
    assert len(builds) == 32
    rest = [case.test.id for _, case in cases]
    assert rest == [f"t{i}" for i in range(17, N)] and builds == [f"t{i}" for i in range(N)]
