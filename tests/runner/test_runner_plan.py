"""plan_run: threshold and borderline resolution, the run config snapshot, target resolution."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from assay.config import LoadedSuite, load_project, load_suite, parse_suite
from assay.errors import UsageError
from assay.results import JSON, RunResult
from assay.runner import DEFAULT_CONCURRENCY, RunOptions, RunPlan, execute, iter_cases, plan_run
from assay.scoring import AllOrNothing, Minimum, WeightedAverage
from assay.store import MemorySink
from assay.targets import FakeTarget, PythonTarget
from tests.conftest import write

FAKE = {"type": "fake", "default": "yes"}


def scoring(score: float) -> list[JSON]:
    """Assertions that give a case exactly `score` for the output "yes" (weighted average)."""
    return [
        {"type": "contains", "value": "yes", "weight": score},
        {"type": "contains", "value": "never-said", "weight": round(1.0 - score, 10)},
    ]


def case(case_id: str, score: float, execution: dict[str, JSON] | None = None) -> JSON:
    test: dict[str, JSON] = {"id": case_id, "input": "q", "assertions": scoring(score)}
    if execution is not None:
        test["execution"] = execution
    return test


def suite(*tests: JSON, execution: dict[str, JSON] | None = None, **top: JSON) -> LoadedSuite:
    data: dict[str, JSON] = {"name": "plan", "target": FAKE, "tests": list(tests), **top}
    if execution is not None:
        data["execution"] = execution
    return parse_suite(data)


def plan(loaded: LoadedSuite, **options: object) -> RunPlan:
    return plan_run(loaded, load_project(), RunOptions(**options))  # type: ignore[arg-type]


def run(loaded: LoadedSuite, **options: object) -> tuple[RunResult, MemorySink]:
    sink = MemorySink()
    asyncio.run(execute(plan(loaded, **options), sink))
    return sink.run, sink


def project(text: str) -> None:
    write(Path.cwd() / "assay.yaml", text)


# -- threshold ---------------------------------------------------------------------------------

# One case scoring 0.75 with the borderline band off, so every level that moves the threshold
# across 0.75 flips the verdict between pass and fail.
THRESHOLD_LEVELS = [
    # (project, suite, test, cli), (case threshold, run threshold, verdict)
    pytest.param((None, None, None, None), (0.8, 0.8, "fail"), id="default"),
    pytest.param((0.7, None, None, None), (0.7, 0.7, "pass"), id="project"),
    pytest.param((0.7, 0.85, None, None), (0.85, 0.85, "fail"), id="suite>project"),
    pytest.param((0.9, 0.7, None, None), (0.7, 0.7, "pass"), id="lower-suite>project"),
    pytest.param((0.7, 0.85, 0.75, None), (0.75, 0.85, "pass"), id="test>suite"),
    pytest.param((None, 0.9, 0.7, None), (0.7, 0.9, "pass"), id="lower-test>suite"),
    pytest.param((0.7, 0.85, 0.75, 0.9), (0.9, 0.9, "fail"), id="cli>test"),
    pytest.param((0.9, 0.85, 0.9, 0.6), (0.6, 0.6, "pass"), id="lower-cli>test"),
    pytest.param((None, None, 0.9, 0.7), (0.7, 0.7, "pass"), id="cli>test-only"),
]

Levels = tuple[float | None, float | None, float | None, float | None]


@pytest.mark.parametrize(("levels", "expected"), THRESHOLD_LEVELS)
def test_threshold_resolution_order(levels: Levels, expected: tuple[float, float, str]) -> None:
    project_t, suite_t, test_t, cli_t = levels
    case_t, run_t, verdict = expected
    if project_t is not None:
        project(f"threshold: {project_t}\n")
    suite_exec: dict[str, JSON] = {"verdicts": {"borderline": None}}
    if suite_t is not None:
        suite_exec["threshold"] = suite_t
    loaded = suite(
        case("c", 0.75, {"threshold": test_t} if test_t is not None else None),
        execution=suite_exec,
    )

    planned = plan(loaded, threshold=cli_t)
    assert [c.bands.threshold for c in planned.cases] == [case_t]
    assert [c.bands.borderline for c in planned.cases] == [None]

    result, _ = run(loaded, threshold=cli_t)
    [only] = result.results
    assert (only.score, only.threshold, only.verdict) == (0.75, case_t, verdict)
    assert result.config.threshold == run_t


def test_every_level_in_one_yaml_suite_with_a_project_file(tmp_path: Path) -> None:
    project("threshold: 0.6\nverdicts: {borderline: null}\n")
    write(
        tmp_path / "levels.eval.yaml",
        """\
name: levels
target: {type: fake, default: "yes"}
execution: {threshold: 0.7}
tests:
  - {id: suite-level, input: q, assertions: [{type: contains, value: "yes", weight: 0.65},
                                             {type: contains, value: nope, weight: 0.35}]}
  - id: test-level
    input: q
    execution: {threshold: 0.8}
    assertions: [{type: contains, value: "yes", weight: 0.75},
                 {type: contains, value: nope, weight: 0.25}]
  - id: test-lenient
    input: q
    execution: {threshold: 0.5}
    assertions: [{type: contains, value: "yes", weight: 0.55},
                 {type: contains, value: nope, weight: 0.45}]
""",
    )
    loaded = load_suite("levels.eval.yaml")
    assert {c.test.id: c.bands.threshold for c in plan(loaded).cases} == {
        "suite-level": 0.7,
        "test-level": 0.8,
        "test-lenient": 0.5,
    }
    result, _ = run(loaded)
    assert {r.case_id: (r.score, r.threshold, r.verdict) for r in result.results} == {
        "suite-level": (0.65, 0.7, "fail"),
        "test-level": (0.75, 0.8, "fail"),
        "test-lenient": (0.55, 0.5, "pass"),
    }
    overridden, _ = run(loaded, threshold=0.6)
    assert {r.case_id: (r.threshold, r.verdict) for r in overridden.results} == {
        "suite-level": (0.6, "pass"),
        "test-level": (0.6, "pass"),
        "test-lenient": (0.6, "fail"),
    }


@pytest.mark.parametrize("level", ["project", "suite", "test"])
def test_verdicts_pass_is_the_threshold_knob(level: str) -> None:
    bands = {"pass": 0.7, "borderline": None}
    if level == "project":
        project("verdicts: {pass: 0.7, borderline: null}\n")
    loaded = suite(
        case("c", 0.75, {"verdicts": bands} if level == "test" else None),
        case("d", 0.65, {"verdicts": bands} if level == "test" else None),
        execution={"verdicts": bands} if level == "suite" else None,
    )
    assert [(c.bands.threshold, c.bands.borderline) for c in plan(loaded).cases] == [
        (0.7, None),
        (0.7, None),
    ]
    result, _ = run(loaded)
    assert [(r.threshold, r.verdict) for r in result.results] == [(0.7, "pass"), (0.7, "fail")]


def test_the_cli_threshold_beats_a_test_verdicts_pass() -> None:
    loaded = suite(case("c", 0.75, {"verdicts": {"pass": 0.7}}))
    result, _ = run(loaded, threshold=0.9)
    assert [(r.threshold, r.verdict) for r in result.results] == [(0.9, "borderline")]


# -- borderline --------------------------------------------------------------------------------

_OFF = "off"

BORDERLINE_LEVELS = [
    # project, suite, test (None = unset, "off" = explicit null) -> bound, verdict of 0.65
    pytest.param(None, None, None, 0.6, "borderline", id="default-0.6"),
    pytest.param(0.7, None, None, 0.7, "fail", id="project"),
    pytest.param(0.7, 0.5, None, 0.5, "borderline", id="suite>project"),
    pytest.param(0.5, 0.7, None, 0.7, "fail", id="stricter-suite>project"),
    pytest.param(0.5, 0.5, 0.7, 0.7, "fail", id="test>suite"),
    pytest.param(None, 0.7, 0.6, 0.6, "borderline", id="looser-test>suite"),
    pytest.param(None, _OFF, None, None, "fail", id="suite-off"),
    pytest.param(_OFF, None, None, None, "fail", id="project-off"),
    pytest.param(_OFF, 0.6, None, 0.6, "borderline", id="suite-on-over-project-off"),
    pytest.param(None, _OFF, 0.6, 0.6, "borderline", id="test-on-over-suite-off"),
    pytest.param(None, 0.6, _OFF, None, "fail", id="test-off"),
]


def _bands(value: float | str | None) -> dict[str, JSON] | None:
    if value is None:
        return None
    return {"verdicts": {"borderline": None if value == _OFF else value}}


@pytest.mark.parametrize(("project_b", "suite_b", "test_b", "bound", "verdict"), BORDERLINE_LEVELS)
def test_borderline_resolution_order(
    project_b: float | str | None,
    suite_b: float | str | None,
    test_b: float | str | None,
    bound: float | None,
    verdict: str,
) -> None:
    if project_b is not None:
        project(f"verdicts: {{borderline: {'null' if project_b == _OFF else project_b}}}\n")
    loaded = suite(case("c", 0.65, _bands(test_b)), execution=_bands(suite_b))
    assert [c.bands.borderline for c in plan(loaded).cases] == [bound]
    result, _ = run(loaded)
    [only] = result.results
    assert (only.score, only.threshold, only.borderline, only.verdict) == (
        0.65,
        0.8,
        bound,
        verdict,
    )


# -- run config snapshot -----------------------------------------------------------------------


def test_the_config_snapshot_defaults() -> None:
    result, sink = run(suite(case("a", 1.0)))
    expected = {
        "threshold": 0.8,
        "borderline": 0.6,
        "metrics_pass_threshold": 0.8,
        "cases_pass_threshold": 1.0,
        "threshold_override": None,
        "case_thresholds": {},
    }
    assert result.config.model_dump() == expected
    assert sink.snapshot["config"] == expected


def test_the_config_snapshot_records_every_threshold_in_force() -> None:
    project(
        "threshold: 0.5\nverdicts: {borderline: 0.3}\n"
        "metrics_pass_threshold: 0.4\ncases_pass_threshold: 0.6\n"
    )
    loaded = suite(
        case("inherits", 0.75),
        case("stricter", 0.75, {"threshold": 0.9}),
        case("same", 0.75, {"threshold": 0.7}),
        case("bands", 0.75, {"verdicts": {"pass": 0.65, "borderline": 0.5}}),
        execution={"threshold": 0.7, "metrics_pass_threshold": 0.75},
    )
    result, sink = run(loaded)
    expected = {
        "threshold": 0.7,
        "borderline": 0.3,
        "metrics_pass_threshold": 0.75,
        "cases_pass_threshold": 0.6,
        "threshold_override": None,
        "case_thresholds": {"stricter": 0.9, "bands": 0.65},
    }
    assert result.config.model_dump() == expected
    assert sink.snapshot["config"] == expected
    # The run-level dimensions use the snapshotted thresholds: 3 of 4 pass (75% >= 60%), and
    # the mean score 0.75 reaches metrics_pass_threshold 0.75.
    assert [r.verdict for r in result.results] == ["pass", "borderline", "pass", "pass"]
    assert (
        result.summary.cases_pass_rate_pct,
        result.summary.weighted_metrics_score_pct,
        result.summary.cases_passed,
        result.summary.metrics_passed,
        result.summary.passed,
    ) == (75.0, 75.0, True, True, True)


def test_the_cli_threshold_is_snapshotted_as_an_override() -> None:
    loaded = suite(
        case("inherits", 0.75),
        case("stricter", 0.75, {"threshold": 0.9}),
        execution={"threshold": 0.7},
    )
    result, _ = run(loaded, threshold=0.75)
    assert result.config.model_dump() == {
        "threshold": 0.75,
        "borderline": 0.6,
        "metrics_pass_threshold": 0.8,
        "cases_pass_threshold": 1.0,
        "threshold_override": 0.75,
        "case_thresholds": {},
    }
    assert [(r.threshold, r.verdict) for r in result.results] == [(0.75, "pass"), (0.75, "pass")]


def test_the_suite_overrides_the_project_run_level_thresholds() -> None:
    project("metrics_pass_threshold: 0.4\ncases_pass_threshold: 0.6\n")
    loaded = suite(
        case("a", 1.0),
        execution={"metrics_pass_threshold": 0.9, "cases_pass_threshold": 0.5},
    )
    config = plan(loaded).config
    assert (config.metrics_pass_threshold, config.cases_pass_threshold) == (0.9, 0.5)


# -- per-case execution settings ---------------------------------------------------------------


def test_case_settings_come_from_the_test_then_the_suite() -> None:
    loaded = suite(
        case("own", 1.0, {"repeat": 2, "timeout_s": 1.5, "aggregator": {"type": "minimum"}}),
        case("inherits", 1.0),
        execution={
            "repeat": 3,
            "repeat_strategy": "pass_at_k",
            "timeout_s": 9.0,
            "aggregator": {"type": "all_or_nothing", "threshold": 0.5},
        },
    )
    own, inherits = plan(loaded).cases
    assert (own.repeat, own.repeat_strategy, own.timeout_s) == (2, "pass_at_k", 1.5)
    assert isinstance(own.aggregator, Minimum)
    assert (inherits.repeat, inherits.repeat_strategy, inherits.timeout_s) == (3, "pass_at_k", 9.0)
    assert inherits.aggregator == AllOrNothing(type="all_or_nothing", threshold=0.5)


def test_case_settings_defaults() -> None:
    [only] = plan(suite(case("a", 1.0))).cases
    assert (only.repeat, only.repeat_strategy, only.timeout_s) == (1, "mean", None)
    assert isinstance(only.aggregator, WeightedAverage)
    assert [g.display_name for g in only.graders] == ["contains", "contains"]


def test_suite_default_assertions_follow_the_test_ones_unless_skipped() -> None:
    loaded = suite(
        {"id": "both", "input": "q", "assertions": [{"type": "equals", "value": "yes"}]},
        {
            "id": "own-only",
            "input": "q",
            "assertions": [{"type": "equals", "value": "yes"}],
            "execution": {"skip_defaults": True},
        },
        assertions=[{"type": "contains", "value": "y", "name": "default"}],
    )
    assert [[g.display_name for g in c.graders] for c in plan(loaded).cases] == [
        ["equals", "default"],
        ["equals"],
    ]


@pytest.mark.parametrize(
    ("suite_concurrency", "option", "expected"),
    [(None, None, DEFAULT_CONCURRENCY), (4, None, 4), (4, 2, 2), (None, 16, 16)],
)
def test_concurrency_resolution(
    suite_concurrency: int | None, option: int | None, expected: int
) -> None:
    execution = {"concurrency": suite_concurrency} if suite_concurrency else None
    assert plan(suite(case("a", 1.0), execution=execution), concurrency=option).concurrency == (
        expected
    )


def test_iter_cases_keeps_suite_order_and_skips_done_cases() -> None:
    planned = plan(suite(case("a", 1.0), case("b", 1.0), case("c", 1.0)))
    assert [(i, c.test.id) for i, c in iter_cases(planned)] == [(0, "a"), (1, "b"), (2, "c")]
    assert [(i, c.test.id) for i, c in iter_cases(planned, skip={"b", "zzz"})] == [
        (0, "a"),
        (2, "c"),
    ]


def test_the_request_carries_the_case() -> None:
    loaded = suite(
        {
            "id": "chat",
            "input": [
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": "hello"},
            ],
            "metadata": {"lang": "en"},
            "assertions": scoring(1.0),
        }
    )
    [only] = plan(loaded).cases
    request = only.request(Path("/suites"), 2)
    assert request.as_mapping() == {
        "id": "chat",
        "input": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "hello"},
        ],
        "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "hello"},
        ],
        "metadata": {"lang": "en"},
        "repeat_index": 2,
    }
    assert (request.prompt, request.base_dir) == ("hello", Path("/suites"))


# -- targets -----------------------------------------------------------------------------------


def test_the_suite_target_name_resolves_in_the_suite_targets(tmp_path: Path) -> None:
    project("targets:\n  bot: {type: fake, default: project}\n")
    write(
        tmp_path / "evals" / "s.eval.yaml",
        """\
name: s
target: bot
targets:
  bot: {type: fake, default: suite}
  other: {type: fake, default: other}
tests: [{id: a, input: q, assertions: [{type: contains, value: suite}]}]
""",
    )
    planned = plan(load_suite("evals/s.eval.yaml"))
    assert planned.target_name == "bot"
    assert planned.target == FakeTarget(type="fake", default="suite")
    assert planned.target_base_dir == tmp_path / "evals"
    result, _ = run(load_suite("evals/s.eval.yaml"))
    assert (result.target, result.results[0].output, result.results[0].verdict) == (
        "bot",
        "suite",
        "pass",
    )


def test_a_suite_target_name_can_name_a_project_target(tmp_path: Path) -> None:
    project("targets:\n  shared: {type: fake, default: shared}\n")
    loaded = parse_suite(
        {"name": "s", "target": "shared", "tests": [case("a", 1.0)]},
        base_dir=tmp_path / "elsewhere",
    )
    planned = plan(loaded)
    assert (planned.target_name, planned.target) == (
        "shared",
        FakeTarget(type="fake", default="shared"),
    )
    assert planned.target_base_dir == tmp_path


def test_the_project_target_is_the_default(tmp_path: Path) -> None:
    # Planning imports a python target's module (as the set-up does), next to assay.yaml.
    write(tmp_path / "plan_project_agent.py", "def answer(case):\n    return 'x'\n")
    project(
        "target: shared\ntargets:\n"
        "  shared: {type: python, function: 'plan_project_agent:answer'}\n"
        "  spare: {type: fake, default: x}\n"
    )
    loaded = parse_suite({"name": "s", "tests": [case("a", 1.0)]}, base_dir=tmp_path / "evals")
    planned = plan(loaded)
    assert planned.target_name == "shared"
    assert planned.target == PythonTarget(type="python", function="plan_project_agent:answer")
    assert planned.target_base_dir == tmp_path


def test_the_project_default_target_may_be_defined_in_the_suite() -> None:
    project("target: bot\n")
    loaded = parse_suite(
        {"name": "s", "targets": {"bot": {"type": "fake", "default": "s"}}, "tests": [case("a", 1)]}
    )
    assert plan(loaded).target == FakeTarget(type="fake", default="s")


def test_the_run_option_overrides_the_suite_target() -> None:
    project("targets:\n  from-project: {type: fake, default: p}\n")
    loaded = suite(
        case("a", 1.0),
        target="main",
        targets={"main": FAKE, "alt": {"type": "fake", "default": "alt"}},
    )
    assert plan(loaded, target="alt").target_name == "alt"
    assert plan(loaded, target="alt").target == FakeTarget(type="fake", default="alt")
    assert plan(loaded, target="from-project").target_name == "from-project"
    result, _ = run(loaded, target="alt")
    assert (result.target, result.results[0].output) == ("alt", "alt")


def test_an_inline_target_is_described_by_its_type(tmp_path: Path) -> None:
    fake = plan(suite(case("a", 1.0)))
    assert (fake.target_name, fake.target) == ("fake", FakeTarget(type="fake", default="yes"))
    assert fake.target_base_dir == tmp_path
    write(tmp_path / "plan_inline_bot.py", "def answer(case):\n    return 'x'\n")
    inline = {"type": "python", "function": "plan_inline_bot:answer"}
    assert plan(suite(case("a", 1.0), target=inline)).target_name == "python plan_inline_bot:answer"


def test_an_unknown_target_lists_the_known_ones() -> None:
    project("targets:\n  shared: {type: fake, default: x}\n")
    loaded = suite(case("a", 1.0), target="nope", targets={"bot": FAKE, "alpha": FAKE})
    with pytest.raises(UsageError) as raised:
        plan(loaded)
    assert str(raised.value) == (
        "<python>: unknown target 'nope'. Known targets: alpha, bot, shared."
    )


def test_an_unknown_target_without_any_defined_says_where_to_define_one() -> None:
    with pytest.raises(UsageError) as raised:
        plan(suite(case("a", 1.0)), target="ghost")
    assert str(raised.value) == "<python>: unknown target 'ghost'. Define it under `targets:`."


def test_an_unknown_target_names_the_suite_file(tmp_path: Path) -> None:
    write(
        tmp_path / "evals" / "s.eval.yaml",
        "name: s\ntarget: bto\ntargets: {bot: {type: fake, default: x}}\n"
        "tests: [{id: a, input: q, assertions: [{type: contains, value: x}]}]\n",
    )
    with pytest.raises(UsageError) as raised:
        plan(load_suite("evals/s.eval.yaml"))
    assert str(raised.value) == "evals/s.eval.yaml: unknown target 'bto'. Known targets: bot."


def test_no_target_is_a_usage_error() -> None:
    loaded = parse_suite({"name": "s", "tests": [case("a", 1.0)]})
    with pytest.raises(UsageError) as raised:
        plan(loaded)
    assert str(raised.value) == (
        "<python>: no target. Set `target:` in the suite or in assay.yaml, or pass --target NAME"
    )


@pytest.mark.parametrize(
    ("suite_judge_concurrency", "option", "expected"),
    [(None, None, DEFAULT_CONCURRENCY), (4, None, 4), (4, 64, 64), (None, 2, 2)],
)
def test_i23_3_judge_concurrency_option_wins_over_the_suite(
    suite_judge_concurrency: int | None, option: int | None, expected: int
) -> None:
    execution = {"judge_concurrency": suite_judge_concurrency} if suite_judge_concurrency else None
    planned = plan(suite(case("a", 1.0), execution=execution), judge_concurrency=option)
    assert planned.judge_concurrency == expected


def test_i23_3_a_resumed_run_keeps_its_judge_concurrency_option() -> None:
    from assay.runner._resume import _options

    options = RunOptions(concurrency=8, judge_concurrency=64)
    assert _options(options.snapshot()).judge_concurrency == 64
