"""The CLI's imports stay light: `assay.config`, `assay.api`, `assay.report` and `assay.store`
load on use."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import assay.api
import assay.config
import assay.report
import assay.store


@pytest.mark.parametrize(
    "statement",
    [
        "from assay.config import project_store",
        "from assay.api import compare_stored, read_export",
    ],
)
def test_reading_runs_does_not_import_graders_or_targets(statement: str) -> None:
    probe = f"import sys; {statement}; print(sorted(m for m in sys.modules if m in "
    probe += "('assay.graders', 'assay.targets', 'assay.runner')))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_the_run_summary_does_not_import_the_file_report_formats() -> None:
    # `assay run` prints with the terminal renderer; HTML and JUnit (~14 ms of imports, their
    # escaping regexes among them) load only when a report file is asked for.
    probe = "import sys; from assay.report import listed_verdicts, render_json, render_run; "
    probe += "print(sorted(m for m in sys.modules if m.startswith('assay.report.')))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "['assay.report.json', 'assay.report.terminal']"


def test_every_exported_name_resolves_and_unknown_names_fail() -> None:
    for package in (assay.config, assay.api, assay.report, assay.store):
        for name in package.__all__:
            assert getattr(package, name) is not None
        with pytest.raises(AttributeError, match=r"has no attribute 'nope'"):
            _ = package.nope  # type: ignore[attr-defined]


def test_a_run_without_judge_or_http_target_does_not_import_jinja2(tmp_path: Path) -> None:
    # Jinja2 renders judge prompts and HTTP target templates; ~15 ms of every other run's
    # start-up went to importing it.
    suite = tmp_path / "s.eval.yaml"
    suite.write_text(
        "name: s\ntarget: {type: python, function: 'builtins:str'}\n"
        "tests: [{id: a, input: hi, assertions: [{type: contains, value: hi}]}]\n"
    )
    probe = (
        "import sys\nfrom assay import EvalConfig, evaluate\n"
        f"run = evaluate({str(suite)!r}, config=EvalConfig(store=False))\n"
        "print(run.summary.passed, 'jinja2' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["True", "False"]


def test_loading_an_assay_suite_does_not_import_the_other_tools_readers(tmp_path: Path) -> None:
    # Every suite load asks whether the file is AgentV's; only an AgentV file pays for its
    # targets lookup and v5 reader, and nothing loads promptfoo's converter.
    suite = tmp_path / "s.eval.yaml"
    suite.write_text(
        "name: s\ntarget: {type: fake, default: hi}\n"
        "tests: [{id: a, input: x, assertions: [{type: contains, value: hi}]}]\n",
        encoding="utf-8",
    )
    probe = f"import sys; from assay.config import load_suite; load_suite({str(suite)!r}); "
    probe += "print(sorted(m for m in sys.modules if m in ('assay.interop.promptfoo._convert', "
    probe += "'assay.interop.agentv._v5', 'assay.interop.agentv._target_lookup')))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


_LOADED_GRADER_TYPES = (
    "import sys\nfrom assay.graders._registry import BUILTIN_GRADER_CLASSES\n{statement}\n"
    "modules = {{path.partition(':')[0] for path in BUILTIN_GRADER_CLASSES.values()}}\n"
    "print(' '.join(sorted(m.rpartition('.')[2] for m in modules if m in sys.modules)))"
)


def test_i23_3_loading_a_contains_suite_imports_only_the_text_graders(tmp_path: Path) -> None:
    # A suite's load imports the modules of its grader types (and the two a test's own keys
    # need: `rubrics`, `expected_tool_calls`), not the ~40 others: ~0.1 s of CPU per start-up.
    suite = tmp_path / "s.eval.yaml"
    suite.write_text(
        "name: s\ntarget: {type: fake, default: hi}\n"
        "tests: [{id: a, input: x, assertions: [{type: contains, value: hi}]}]\n",
        encoding="utf-8",
    )
    probe = _LOADED_GRADER_TYPES.format(
        statement=f"from assay.config import load_suite; load_suite({str(suite)!r})"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["rubric", "text", "trajectory"]


def test_i23_3_a_run_imports_the_grader_modules_of_its_types_nested_ones_included(
    tmp_path: Path,
) -> None:
    suite = tmp_path / "s.eval.yaml"
    suite.write_text(
        "name: s\ntarget: {type: python, function: 'builtins:str'}\ntests:\n"
        "  - id: a\n    input: hi\n    assertions:\n"
        "      - {type: composite, assertions: [{type: regex, value: h.}, {type: is-json, "
        "negate: true}]}\n",
        encoding="utf-8",
    )
    run = (
        "from assay import EvalConfig, evaluate\n"
        f"run = evaluate({str(suite)!r}, config=EvalConfig(store=False))\n"
        "assert run.summary.passed == 1, run.summary"
    )
    probe = _LOADED_GRADER_TYPES.format(statement=run)
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    loaded = done.stdout.split()
    assert {"composite", "structured", "text"} <= set(loaded)
    assert not {"tone", "agent_judge", "factuality", "moderation", "pii"} & set(loaded)


def test_i23_3_a_run_without_a_baseline_does_not_import_the_comparison(tmp_path: Path) -> None:
    # The regression metric needs `assay.comparison` (~20 ms of start-up) only when a run is
    # measured against a baseline.
    suite = tmp_path / "s.eval.yaml"
    suite.write_text(
        "name: s\ntarget: {type: fake, default: hi}\n"
        "tests: [{id: a, input: x, assertions: [{type: contains, value: hi}]}]\n",
        encoding="utf-8",
    )
    probe = (
        "import sys\nfrom assay import EvalConfig, evaluate\n"
        f"run = evaluate({str(suite)!r}, config=EvalConfig(store=False))\n"
        "print(run.summary.passed, 'assay.comparison' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["True", "False"]
