"""`assay compare` end to end: two runs stored by `assay run`, compared by id, prefix, `latest`,
`baseline` and export file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from assay.comparison import CompareThresholds
from tests.conftest import write
from tests.e2e._cli import assay

SUITE = """\
name: demo
target: {{type: fake, responses: {replies}, delay_ms: {delay}}}
assertions: [{{type: contains, value: ok}}]
tests:
{tests}
"""
BASE = SUITE.format(
    replies='{q1: "ok one", q2: "ok two", q3: "ok three", q4: "nope"}',
    delay=10,
    tests="\n".join(f"  - {{id: {c}, input: q{i}}}" for i, c in enumerate("abcd", 1)),
)
# b now fails, d now passes, c is gone, e is new; every reply takes 13 ms instead of 10.
HEAD = SUITE.format(
    replies='{q1: "ok one", q2: "bad", q4: "ok four", q5: "ok five"}',
    delay=13,
    tests="\n".join(
        f"  - {{id: {c}, input: q{i}}}" for c, i in zip("abde", (1, 2, 4, 5), strict=True)
    ),
)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """A directory whose store holds the base run and then the head run; (dir, base, head)."""
    directory = tmp_path_factory.mktemp("compare")
    ids = []
    for name, text in (("base", BASE), ("head", HEAD)):
        write(directory / f"{name}.eval.yaml", text)
        done = assay("run", f"{name}.eval.yaml", "--json", cwd=directory)
        assert done.returncode in (0, 1), done.stderr
        ids.append(json.loads(done.stdout)["id"])
    return directory, ids[0], ids[1]


def test_a_latency_regression_exits_1_with_the_json_document(runs: tuple[Path, str, str]) -> None:
    directory, base, head = runs
    done = assay("compare", base, head, "--json", cwd=directory)
    assert (done.returncode, done.stderr) == (1, "")
    result = json.loads(done.stdout)
    assert list(result) == [
        "base", "head", "thresholds", "require_significance", "summary", "cases", "statistics",
        "warnings",
    ]  # fmt: skip
    assert result["warnings"] == []
    assert (result["base"], result["head"]) == (base, head)
    assert result["thresholds"] == CompareThresholds().model_dump()
    assert result["summary"] == {
        "base_pass_rate": 0.75,
        "head_pass_rate": 0.75,
        "pass_rate_delta": 0.0,
        "base_avg_score": 0.75,
        "head_avg_score": 0.75,
        "avg_score_delta": 0.0,
        "latency_increase_pct": 30.0,
        "regression_detected": True,
        "reasons": ["mean case latency rose 30.0% (allowed 20.0%)"],
        "notes": [],
        "base_cases": 4,
        "head_cases": 4,
        "base_mean_latency_ms": 10.0,
        "head_mean_latency_ms": 13.0,
        "case_counts": {"regressed": 1, "improved": 1, "unchanged": 1, "new": 1, "removed": 1},
        "gates": {"pass_rate": "ok", "avg_score": "ok", "latency": "regression"},
    }
    assert [(c["case_id"], c["status"], c["score_delta"]) for c in result["cases"]] == [
        ("a", "unchanged", 0.0),
        ("b", "regressed", -1.0),
        ("c", "removed", None),
        ("d", "improved", 1.0),
        ("e", "new", None),
    ]
    assert result["cases"][1] == {
        "case_id": "b", "status": "regressed", "base_verdict": "pass", "head_verdict": "fail",
        "base_score": 1.0, "head_score": 0.0, "score_delta": -1.0,
    }  # fmt: skip
    stats = result["statistics"]
    assert (stats["mcnemar_p"], stats["pass_to_not_pass"], stats["not_pass_to_pass"]) == (1.0, 1, 1)
    assert (stats["mean_delta"], stats["paired_cases"]) == (0.0, 3)
    assert stats["mean_delta_ci95"] == [-1.0, 1.0]


def test_thresholds_from_flags_decide_the_exit_code(runs: tuple[Path, str, str]) -> None:
    directory, base, head = runs
    flags = ("--max-latency-increase-pct", "30", "--case-score-delta", "0.5")
    done = assay("compare", base, head, "--json", "--require-significance", *flags, cwd=directory)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["thresholds"]["max_latency_increase_pct"] == 30.0
    assert result["thresholds"]["case_score_delta"] == 0.5
    assert result["require_significance"] is True
    assert result["summary"]["regression_detected"] is False


def test_latest_and_id_prefixes_name_the_same_runs(runs: tuple[Path, str, str]) -> None:
    directory, base, head = runs
    by_id = json.loads(assay("compare", base, head, "--json", cwd=directory).stdout)
    by_latest = assay("compare", "latest~1", "latest", "--json", cwd=directory)
    by_prefix = assay("compare", base[:-2], head[:-2], "--json", cwd=directory)
    assert json.loads(by_latest.stdout) == by_id
    assert json.loads(by_prefix.stdout) == by_id


def test_the_terminal_report(runs: tuple[Path, str, str]) -> None:
    directory, base, head = runs
    done = assay("compare", base, head, cwd=directory)
    assert (done.returncode, done.stderr) == (1, "")
    lines = [line.rstrip() for line in done.stdout.splitlines()]
    assert lines[0].startswith(f"base  {base}  demo → fake  ")
    assert lines[1].startswith(f"head  {head}  demo → fake  ")
    table = "\n".join(lines)
    for row in (
        "│ pass rate     │ 75.0% │ 75.0% │ +0.0 pt │ drop ≤ 0.0 pt │ ✓    │",
        "│ average score │ 75.0% │ 75.0% │ +0.0 pt │ drop ≤ 5.0 pt │ ✓    │",
        "│ mean latency  │ 10 ms │ 13 ms │  +30.0% │ rise ≤ 20.0%  │ ✗    │",
        "│ regressed │ b    │ pass 1.00 │ fail 0.00 │   -1.00 │",
        "│ removed   │ c    │ pass 1.00 │         — │       — │",
    ):
        assert row in table
    statistics = lines.index(
        "statistics  mean score change +0.0 pt, 95% CI [-100.0, +100.0] pt over 3 paired cases "
        "(includes 0: could be noise)"
    )
    assert lines[statistics + 1] == (
        "            McNemar p = 1 (1 pass→not-pass, 1 not-pass→pass: could be noise)"
    )
    assert "cases       1 regressed  1 improved  1 unchanged  1 new  1 removed" in table
    assert lines[-2:] == [
        "REGRESSION DETECTED",
        "  - mean case latency rose 30.0% (allowed 20.0%)",
    ]


def test_comparing_a_run_with_itself_warns_and_passes(runs: tuple[Path, str, str]) -> None:
    directory, base, _ = runs
    done = assay("compare", base, base, cwd=directory)
    assert done.returncode == 0
    assert done.stderr == f"warning: BASE and HEAD are the same run ({base})\n"
    assert done.stdout.rstrip().endswith("no regression")


def test_i21_8_no_case_in_common_exits_2_and_other_suites_warn(tmp_path: Path) -> None:
    ids = {}
    for name, cases in (("one", "ab"), ("two", "ac"), ("three", "xy")):
        tests = "\n".join(f"  - {{id: {c}, input: q}}" for c in cases)
        text = SUITE.format(replies="{q: ok}", delay=0, tests=tests).replace("demo", name)
        write(tmp_path / f"{name}.eval.yaml", text)
        done = assay("run", f"{name}.eval.yaml", "--json", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        ids[name] = json.loads(done.stdout)["id"]
    refused = assay("compare", ids["one"], ids["three"], cwd=tmp_path)
    assert (refused.returncode, refused.stdout) == (2, "")
    assert refused.stderr == (
        f"error: base run {ids['one']} (suite 'one', 2 cases) and head run {ids['three']} "
        "(suite 'three', 2 cases) have no case id in common, so there is nothing to compare. "
        "Compare two runs of the same suite (e.g. `assay compare latest~1 latest --suite "
        "NAME`).\n"
    )
    warning = (
        "comparing runs of different suites ('one' and 'two'): only cases with the same id "
        "are paired"
    )
    done = assay("compare", ids["one"], ids["two"], "--json", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (0, f"warning: {warning}\n")
    assert json.loads(done.stdout)["warnings"] == [warning]
    markdown = assay("compare", ids["one"], ids["two"], "--markdown", cwd=tmp_path)
    assert markdown.returncode == 0, markdown.stderr
    lines = markdown.stdout.splitlines()
    assert lines[:4] == [
        "## Comparison: one",
        "",
        f"- **base** `{ids['one']}` fake ({'completed'})",
        f"- **head** `{ids['two']}` fake ({'completed'})",
    ]
    assert lines[5].startswith("> ⚠️ **Warning:** comparing runs of different suites")
    assert "**✅ No regression**" in lines


def test_an_unknown_run_exits_2_without_a_traceback(runs: tuple[Path, str, str]) -> None:
    directory, base, _ = runs
    done = assay("compare", base, "nope", cwd=directory)
    assert (done.returncode, done.stdout) == (2, "")
    db = (directory / ".assay" / "assay.db").resolve()
    assert done.stderr == f"error: run 'nope' not found in {db}\n"


def test_latest_beyond_the_stored_runs_exits_2(runs: tuple[Path, str, str]) -> None:
    directory, _, _ = runs
    done = assay("compare", "latest~2", "latest", cwd=directory)
    assert (done.returncode, done.stdout) == (2, "")
    db = (directory / ".assay" / "assay.db").resolve()
    assert done.stderr == (
        f"error: 'latest~2' names no run: {db} holds 2 runs, so latest~1 is the oldest. "
        "Store runs with `assay run`, or give a run id.\n"
    )


def test_a_threshold_outside_0_1_exits_2(runs: tuple[Path, str, str]) -> None:
    directory, base, head = runs
    done = assay("compare", base, head, "--max-pass-rate-drop", "2", cwd=directory)
    assert done.returncode == 2
    assert "Invalid value for '--max-pass-rate-drop'" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_help_states_the_model_defaults() -> None:
    from assay.cli.compare import command

    helps = {p.name: getattr(p, "help", "") or "" for p in command.params}
    defaults = CompareThresholds()
    assert f"(default {defaults.max_pass_rate_drop}:" in helps["max_pass_rate_drop"]
    assert f"(default {defaults.max_avg_score_drop})" in helps["max_avg_score_drop"]
    assert f"(default {defaults.max_latency_increase_pct:g})" in helps["max_latency_increase_pct"]
    assert f"(default {defaults.case_score_delta})" in helps["case_score_delta"]


@pytest.fixture
def copied(runs: tuple[Path, str, str], tmp_path: Path) -> tuple[Path, str, str]:
    """The module's store copied, for tests that pin baselines or add runs."""
    directory, base, head = runs
    copy = tmp_path / "project"
    shutil.copytree(directory, copy)
    return copy, base, head


def _compared(directory: Path, *args: str) -> dict[str, object]:
    done = assay("compare", *args, "--json", cwd=directory)
    assert done.returncode in (0, 1), done.stderr
    return dict(json.loads(done.stdout))


def test_baseline_is_the_pinned_run_of_the_other_sides_suite(
    copied: tuple[Path, str, str],
) -> None:
    directory, base, head = copied
    assert assay("baseline", "pin", base, cwd=directory).returncode == 0
    by_id = _compared(directory, base, head)
    assert _compared(directory, "baseline", "latest") == by_id
    assert _compared(directory, "baseline", head[:-2]) == by_id
    reversed_ = _compared(directory, "latest", "baseline")
    assert (reversed_["base"], reversed_["head"]) == (head, base)


def test_baseline_without_a_pin_or_on_both_sides_exits_2(runs: tuple[Path, str, str]) -> None:
    directory, _, _ = runs
    db = (directory / ".assay" / "assay.db").resolve()
    unpinned = assay("compare", "baseline", "latest", cwd=directory)
    assert (unpinned.returncode, unpinned.stdout) == (2, "")
    assert unpinned.stderr == (
        f"error: 'baseline' names no run: suite 'demo' has no pinned baseline in {db}. "
        "Pin one with `assay baseline pin RUN`.\n"
    )
    both = assay("compare", "baseline", "baseline", "--suite", "demo", cwd=directory)
    assert (both.returncode, both.stdout) == (2, "")
    assert both.stderr == (
        "error: BASE and HEAD are both 'baseline': 'baseline' is the pinned baseline of the "
        "other run's suite, so name a run for one side (e.g. `assay compare baseline latest`)\n"
    )


def test_suite_resolves_latest_and_baseline_within_one_suite(
    copied: tuple[Path, str, str],
) -> None:
    directory, base, head = copied
    # A newer run of another suite: `latest` alone now names it.
    exported = assay("runs", "export", head, cwd=directory).stdout.splitlines()
    header = json.loads(exported[0])
    header["run"].update(
        id="20991231T000000-0ther0", suite="other", started_at="2099-12-31T00:00:00+00:00"
    )
    write(directory / "other.jsonl", "\n".join([json.dumps(header), *exported[1:]]) + "\n")
    assert assay("runs", "import", "other.jsonl", cwd=directory).returncode == 0
    (directory / "other.jsonl").unlink()

    by_id = _compared(directory, base, head)
    assert _compared(directory, "latest~1", "latest", "--suite", "demo") == by_id
    assert _compared(directory, "latest~1", "latest")["head"] == "20991231T000000-0ther0"
    assert assay("baseline", "pin", base, cwd=directory).returncode == 0
    assert _compared(directory, "baseline", "latest", "--suite", "demo") == by_id
    # Without --suite, `baseline` follows the other side: suite `other` has no pin.
    done = assay("compare", "baseline", "latest", cwd=directory)
    assert done.returncode == 2 and "suite 'other' has no pinned baseline" in done.stderr
    beyond = assay("compare", "latest~2", "latest", "--suite", "demo", cwd=directory)
    assert beyond.returncode == 2
    assert "'latest~2' names no run: " in beyond.stderr
    assert "holds 2 runs of suite 'demo', so latest~1 is the oldest." in beyond.stderr


def test_export_files_compare_like_stored_runs(runs: tuple[Path, str, str], tmp_path: Path) -> None:
    directory, base, head = runs
    by_id = _compared(directory, base, head)
    for run_id, name in ((base, "base.jsonl"), (head, "head.export")):
        out = tmp_path / name
        assert assay("runs", "export", run_id, "-o", str(out), cwd=directory).returncode == 0
    assert _compared(directory, str(tmp_path / "base.jsonl"), head) == by_id
    # Two files need no store: none is opened, and none is created.
    alone = tmp_path / "alone"
    alone.mkdir()
    both = _compared(alone, str(tmp_path / "base.jsonl"), str(tmp_path / "head.export"))
    assert both == by_id
    assert list(alone.iterdir()) == []


def test_baseline_against_an_export_file(copied: tuple[Path, str, str]) -> None:
    directory, base, head = copied
    assert assay("runs", "export", head, "-o", "head.jsonl", cwd=directory).returncode == 0
    assert assay("baseline", "pin", base, cwd=directory).returncode == 0
    assert _compared(directory, "baseline", "head.jsonl") == _compared(directory, base, head)


def test_a_missing_jsonl_file_exits_2(runs: tuple[Path, str, str]) -> None:
    directory, base, _ = runs
    done = assay("compare", base, "gone.jsonl", cwd=directory)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "error: gone.jsonl: file not found (a reference ending in .jsonl is read as an "
        "`assay runs export` file)\n"
    )
