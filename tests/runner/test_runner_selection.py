"""Case selection (tags, excluded tags, id globs) and the `--repeat` override, via RunOptions."""

from __future__ import annotations

import asyncio

import pytest

from assay.config import LoadedSuite, load_project, parse_suite
from assay.errors import UsageError
from assay.results import JSON
from assay.runner import RunOptions, execute, plan_run
from assay.store import MemorySink

CASES: list[tuple[str, list[str]]] = [
    ("refund-window", ["billing", "policy"]),
    ("refund-exceptions", ["billing", "slow"]),
    ("invoice-copy", ["billing"]),
    ("ship-times", ["shipping"]),
    ("ship-Abroad", ["shipping", "slow"]),
    ("greeting", []),
]
ALL = [case_id for case_id, _ in CASES]


def suite(execution: dict[str, JSON] | None = None) -> LoadedSuite:
    return parse_suite(
        {
            "name": "selection",
            "target": {"type": "fake", "responses": ["ok 1", "ok 2", "ok 3"]},
            "execution": execution or {},
            "assertions": [{"type": "contains", "value": "ok"}],
            "tests": [{"id": i, "input": f"q {i}", "tags": tags} for i, tags in CASES],
        }
    )


def selected(
    tags: tuple[str, ...] = (), exclude_tags: tuple[str, ...] = (), cases: tuple[str, ...] = ()
) -> list[str]:
    options = RunOptions(tags=tags, exclude_tags=exclude_tags, cases=cases)
    plan = plan_run(suite(), load_project(), options)
    return [case.test.id for case in plan.cases]


def test_no_selection_keeps_every_case_in_suite_order() -> None:
    assert selected() == ALL


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        pytest.param(
            {"tags": ("billing",)},
            ["refund-window", "refund-exceptions", "invoice-copy"],
            id="one-tag",
        ),
        pytest.param(
            {"tags": ("policy", "shipping")},
            ["refund-window", "ship-times", "ship-Abroad"],
            id="any-of-the-tags",
        ),
        pytest.param(
            {"exclude_tags": ("slow",)},
            ["refund-window", "invoice-copy", "ship-times", "greeting"],
            id="exclude",
        ),
        pytest.param(
            {"exclude_tags": ("slow", "billing")},
            ["ship-times", "greeting"],
            id="exclude-any-of-the-tags",
        ),
        pytest.param({"cases": ("refund-*",)}, ["refund-window", "refund-exceptions"], id="glob"),
        pytest.param(
            {"cases": ("greeting", "ship-?????")},
            ["ship-times", "greeting"],
            id="exact-id-and-single-char-wildcards",
        ),
        pytest.param({"cases": ("ship-[A-Z]*",)}, ["ship-Abroad"], id="glob-is-case-sensitive"),
        pytest.param(
            {"tags": ("billing",), "exclude_tags": ("slow",)},
            ["refund-window", "invoice-copy"],
            id="tag-minus-excluded",
        ),
        pytest.param(
            {"tags": ("billing", "shipping"), "cases": ("*-t*", "*-w*")},
            ["refund-window", "ship-times"],
            id="tag-and-glob",
        ),
        pytest.param(
            {"tags": ("shipping",), "exclude_tags": ("policy",), "cases": ("ship-*",)},
            ["ship-times", "ship-Abroad"],
            id="all-three",
        ),
    ],
)
def test_selection(options: dict[str, tuple[str, ...]], expected: list[str]) -> None:
    assert selected(**options) == expected


@pytest.mark.parametrize(
    "options",
    [
        pytest.param({"tags": ("nope",)}, id="unknown-tag"),
        pytest.param({"cases": ("REFUND-*",)}, id="glob-matches-nothing"),
        pytest.param({"tags": ("policy",), "cases": ("ship-*",)}, id="disjoint"),
        pytest.param({"tags": ("slow",), "exclude_tags": ("slow",)}, id="exclusion-wins"),
        pytest.param(
            {"exclude_tags": ("billing", "shipping", "slow"), "cases": ("ship*",)},
            id="globbed-cases-all-excluded",
        ),
    ],
)
def test_a_selection_that_keeps_nothing_is_a_usage_error(
    options: dict[str, tuple[str, ...]],
) -> None:
    with pytest.raises(UsageError) as raised:
        selected(**options)
    assert str(raised.value) == (
        "<python>: no test matches the selection (--tag / --exclude-tag / --case)"
    )


def test_only_the_selected_cases_run_and_the_selection_is_stored_with_the_run() -> None:
    options = RunOptions(tags=("billing", "shipping"), exclude_tags=("slow",), cases=("*i*",))
    sink = MemorySink()
    result = asyncio.run(execute(plan_run(suite(), load_project(), options), sink))
    assert [r.case_id for r in sink.results] == ["refund-window", "invoice-copy", "ship-times"]
    assert result.summary.total == 3
    stored = sink.snapshot["options"]
    assert isinstance(stored, dict)
    assert (stored["tags"], stored["exclude_tags"], stored["cases"]) == (
        ("billing", "shipping"),
        ("slow",),
        ("*i*",),
    )


# -- repeat ------------------------------------------------------------------------------------


def run_samples(execution: dict[str, JSON] | None, repeat: int | None) -> list[str | None]:
    sink = MemorySink()
    plan = plan_run(suite(execution), load_project(), RunOptions(repeat=repeat, cases=("greet*",)))
    assert [c.repeat for c in plan.cases] == [repeat or 2]
    asyncio.run(execute(plan, sink))
    [only] = sink.results
    return [s.output for s in only.samples]


def test_repeat_option_overrides_the_suite_repeat() -> None:
    # The fake answers from its list in call order: the samples show every call was made.
    assert run_samples({"repeat": 2}, 3) == ["ok 1", "ok 2", "ok 3"]


def test_without_the_option_the_suite_repeat_applies() -> None:
    assert run_samples({"repeat": 2}, None) == ["ok 1", "ok 2"]


def test_repeat_option_overrides_a_test_level_repeat() -> None:
    loaded = parse_suite(
        {
            "name": "selection",
            "target": {"type": "fake", "default": "ok"},
            "tests": [
                {
                    "id": "a",
                    "input": "q",
                    "execution": {"repeat": 5},
                    "assertions": [{"type": "contains", "value": "ok"}],
                },
                {"id": "b", "input": "q", "assertions": [{"type": "contains", "value": "ok"}]},
            ],
        }
    )
    by_default = plan_run(loaded, load_project(), RunOptions())
    assert [c.repeat for c in by_default.cases] == [5, 1]
    overridden = plan_run(loaded, load_project(), RunOptions(repeat=2))
    assert [c.repeat for c in overridden.cases] == [2, 2]
