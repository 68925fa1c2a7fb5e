"""Workspaces (issue 24 item 2): a fresh directory per case from a template or a git repository,
hooks around the case, the target and code graders run in it, deleted unless kept. Real
subprocesses, real directories, a real git repository."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from assay import EvalConfig, evaluate
from assay.config import load_suite
from assay.errors import ConfigError
from assay.results import CaseResult
from tests.conftest import write

PY = sys.executable

AGENT = """\
import json, os, sys
case = json.load(sys.stdin)
with open("notes.txt", "a") as f:
    f.write(case["id"] + "\\n")
print(json.dumps({"output": os.getcwd() + " " + ",".join(sorted(os.listdir(".")))}))
"""

CHECK = """\
import json, os, sys
ctx = json.load(sys.stdin)
here = os.getcwd()
notes = open("notes.txt").read().split() if os.path.exists("notes.txt") else []
print(json.dumps({"assertions": [
    {"text": "runs in the workspace", "passed": here == ctx["workspace_path"], "evidence": here},
    {"text": "only this case wrote here", "passed": notes == [ctx["case_id"]],
     "evidence": ",".join(notes)},
]}))
"""


def suite(tmp_path: Path, workspace: str, tests: str | None = None, extra: str = "") -> Path:
    write(tmp_path / "tpl" / "README.md", "template\n")
    write(tmp_path / "tpl" / "src" / "app.py", "print('app')\n")
    write(tmp_path / "agent.py", AGENT)
    write(tmp_path / "graders" / "check.py", CHECK)
    tests = tests or (
        "  - {id: a, input: one}\n  - {id: b, input: two}\n  - {id: c, input: three}\n"
    )
    return write(
        tmp_path / "ws.eval.yaml",
        f"name: ws\ntarget: {{type: command, command: [{PY}, agent.py]}}\n"
        f"execution: {{concurrency: 3}}\n{extra}"
        f"workspace:\n{workspace}"
        "assertions:\n  - {type: code-grader, command: [" + PY + ", graders/check.py]}\n"
        f"tests:\n{tests}",
    )


def results(path: Path, **config: object) -> dict[str, CaseResult]:
    summary = evaluate(str(path), config=EvalConfig(store=False, **config))
    return {r.case_id: r for r in summary.results}


def leftovers(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir() if p.name.startswith("assay-ws-"))


def test_i24_2_each_case_runs_in_a_fresh_copy_of_the_template(tmp_path: Path) -> None:
    root = tmp_path / "spaces"
    path = suite(tmp_path, "  template: tpl\n  root: spaces\n")
    got = results(path)
    assert {k: (r.verdict, r.score) for k, r in got.items()} == {
        "a": ("pass", 1.0),
        "b": ("pass", 1.0),
        "c": ("pass", 1.0),
    }
    dirs = set()
    for case in got.values():
        assert case.output is not None
        cwd, listing = case.output.split(" ")
        assert listing == "README.md,notes.txt,src"
        assert Path(cwd).parent == root.resolve()
        dirs.add(cwd)
    assert len(dirs) == 3  # cases in parallel, each in a directory of its own
    assert (tmp_path / "tpl" / "notes.txt").exists() is False  # the template is untouched
    assert leftovers(root) == []  # deleted once graded
    assert got["a"].workspaces == []


HOOK = """\
import json, sys
ctx = json.load(sys.stdin)
name, log = sys.argv[1], sys.argv[2]
with open(log, "a") as f:
    f.write(json.dumps([name, sys.argv[3], ctx["test_id"], ctx["case_input"],
                        ctx["case_metadata"], ctx["workspace_path"] == sys.argv[3]]) + "\\n")
if name == "before_each":
    open(sys.argv[3] + "/seeded.txt", "w").write("seed")
"""


def test_i24_2_hooks_run_around_the_case_with_its_context(tmp_path: Path) -> None:
    write(tmp_path / "hook.py", HOOK)
    log = tmp_path / "hooks.log"
    hooks = "".join(
        f"    {name}: {{command: [{PY}, hook.py, {name}, {log}, '{{{{workspace_path}}}}']}}\n"
        for name in ("before_all", "before_each", "after_each", "after_all")
    )
    seeded = (
        "  - id: a\n    input: one\n    metadata: {tier: gold}\n"
        "    assertions:\n      - type: code-grader\n"
        f"        command: [{PY}, -c, 'import os; print(int(os.path.exists(\"seeded.txt\")))']\n"
    )
    path = suite(tmp_path, f"  template: tpl\n  hooks:\n{hooks}", tests=seeded)
    got = results(path)
    assert (got["a"].verdict, got["a"].error) == ("pass", None)
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [line[0] for line in lines] == ["before_all", "before_each", "after_each", "after_all"]
    assert {line[1] for line in lines} == {lines[0][1]}  # one workspace, its path substituted
    assert all(line[2:] == ["a", "one", {"tier": "gold"}, True] for line in lines)
    assert not Path(lines[0][1]).exists()


def test_i24_2_a_failed_setup_hook_is_the_cases_error_with_the_reason(tmp_path: Path) -> None:
    marker = tmp_path / "target-ran"
    write(tmp_path / "agent.py", f"open({str(marker)!r}, 'w')\nprint('x')\n")
    fail = f"[{PY}, -c, 'import sys; sys.stderr.write(\"no database\"); sys.exit(3)']"
    path = suite(
        tmp_path,
        f"  template: tpl\n  root: spaces\n  hooks:\n    before_each: {{command: {fail}}}\n",
        tests="  - {id: a, input: one}\n",
    )
    write(tmp_path / "agent.py", f"open({str(marker)!r}, 'w')\nprint('x')\n")
    case = results(path)["a"]
    assert (case.verdict, case.score) == ("error", None)
    assert case.error is not None
    assert case.error.type == "WorkspaceError"
    assert case.error.message == (
        f"workspace hook before_each ('{PY}') exited with code 3: no database"
    )
    assert not marker.exists()  # the target never ran
    assert leftovers(tmp_path / "spaces") == []


def test_i24_2_a_hook_past_its_timeout_is_killed_and_an_error(tmp_path: Path) -> None:
    slow = f"[{PY}, -c, 'import time; time.sleep(30)']"
    path = suite(
        tmp_path,
        f"  hooks:\n    before_all: {{command: {slow}, timeout_ms: 300}}\n",
        tests="  - {id: a, input: one}\n",
    )
    started = time.monotonic()
    case = results(path)["a"]
    assert time.monotonic() - started < 15  # not the hook's 30 s
    assert case.error is not None
    assert case.error.message == (
        f"workspace hook before_all ('{PY}') timed out after 0.3s and was killed (no stderr)"
    )


def test_i24_2_a_failed_teardown_hook_makes_a_graded_case_an_error(tmp_path: Path) -> None:
    fail = f"[{PY}, -c, 'import sys; print(\"cleanup failed\", file=sys.stderr); sys.exit(1)']"
    path = suite(
        tmp_path,
        f"  template: tpl\n  hooks:\n    after_all: {{command: {fail}}}\n",
        tests="  - {id: a, input: one}\n",
    )
    case = results(path)["a"]
    assert (case.verdict, case.score) == ("error", None)
    assert case.error is not None
    assert case.error.message == (
        f"workspace hook after_all ('{PY}') exited with code 1: cleanup failed"
    )
    assert case.grader_results[0].score == 1.0  # graded before the teardown, and kept


def test_i24_2_keep_workspaces_on_failure_keeps_and_prints_them(tmp_path: Path) -> None:
    tests = (
        "  - {id: good, input: one}\n"
        "  - id: bad\n    input: two\n    assertions: [{type: contains, value: nowhere}]\n"
    )
    path = suite(tmp_path, "  template: tpl\n  root: spaces\n", tests=tests)  # keep: never
    assay = Path(PY).parent / "assay"
    run = subprocess.run(
        [str(assay), "run", str(path), "--no-cache", "--json", "--keep-workspaces", "on_failure"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert run.returncode == 1, run.stderr
    by_id = {r["case_id"]: r for r in json.loads(run.stdout)["results"]}
    assert by_id["good"].get("workspaces", []) == []
    (kept,) = by_id["bad"]["workspaces"]
    assert Path(kept).parent == (tmp_path / "spaces").resolve()
    assert sorted(os.listdir(kept)) == ["README.md", "notes.txt", "src"]
    assert f"kept the workspace of case bad: {kept}" in run.stderr
    assert leftovers(tmp_path / "spaces") == [Path(kept).name]


def test_i24_2_a_python_target_gets_the_workspace_path(tmp_path: Path) -> None:
    write(
        tmp_path / "bot.py",
        "import os\n"
        "def answer(case):\n"
        "    path = case['workspace']\n"
        "    with open(os.path.join(path, 'notes.txt'), 'w') as f:\n"
        "        f.write(case['id'])\n"
        "    return path\n",
    )
    path = suite(tmp_path, "  template: tpl\n", tests="  - {id: a, input: one}\n")
    text = path.read_text().replace(
        f"{{type: command, command: [{PY}, agent.py]}}", "{type: python, function: 'bot:answer'}"
    )
    path.write_text(text)
    case = results(path)["a"]
    assert (case.verdict, case.score) == ("pass", 1.0), case.grader_results
    assert case.output is not None and case.output.startswith(
        os.path.join(os.path.realpath(os.environ.get("TMPDIR", "/tmp")), "assay-ws-a-")
    )


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, check=True, timeout=60
    )
    return done.stdout.strip()


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_i24_2_a_repository_is_cloned_at_its_commit(tmp_path: Path) -> None:
    repo = tmp_path / "upstream"
    repo.mkdir()
    git(repo, "init", "-q")
    for version in ("v1", "v2"):
        write(repo / "VERSION", version)
        git(repo, "add", "VERSION")
        git(repo, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", version)
    first = git(repo, "rev-parse", "HEAD~1")
    read = f"[{PY}, -c, 'print(open(\"code/VERSION\").read())']"
    target = f"{{type: command, command: {read}}}"
    tests = (
        "  - {id: head, input: x}\n"
        f"  - {{id: pinned, input: x, workspace: {{repos: [{{path: code, repo: upstream, "
        f"commit: '{first}'}}]}}}}\n"
        "  - {id: parent, input: x, workspace: {repos: [{path: code, repo: upstream, "
        "ancestor: 1}]}}\n"
    )
    path = write(
        tmp_path / "repo.eval.yaml",
        f"name: repo\ntarget: {target}\n"
        "workspace:\n  repos: [{path: code, repo: upstream}]\n"
        "assertions: [{type: regex, value: '.'}]\n"
        f"tests:\n{tests}",
    )
    got = results(path)
    assert {k: r.output for k, r in got.items()} == {
        "head": "v2",
        "pinned": "v1",
        "parent": "v1",
    }


def test_i24_2_a_missing_template_or_hook_directory_is_a_located_load_error(
    tmp_path: Path,
) -> None:
    path = suite(
        tmp_path,
        "  template: tpl\n",
        tests=(
            "  - id: a\n    input: one\n    workspace:\n      template: nowhere\n"
            "      hooks: {before_each: {command: [ls], cwd: gone}}\n"
            "      repos: [{path: lib, repo: ../missing-repo}]\n"
        ),
    )
    with pytest.raises(ConfigError) as caught:
        load_suite(path)
    assert [str(issue) for issue in caught.value.issues] == [
        f"ws.eval.yaml:12 tests[0].workspace.template: workspace template 'nowhere' is not a "
        f"directory (looked at {tmp_path / 'nowhere'}); give a directory relative to the suite",
        f"ws.eval.yaml:14 tests[0].workspace.repos[0].repo: repository '../missing-repo' is not "
        f"a directory (looked at {tmp_path / '../missing-repo'})",
        f"ws.eval.yaml:13 tests[0].workspace.hooks.before_each.cwd: hook directory 'gone' does not "
        f"exist (looked at {tmp_path / 'gone'})",
    ]


def test_i24_2_a_template_gone_at_run_time_is_the_cases_error(tmp_path: Path) -> None:
    path = suite(tmp_path, "  template: tpl\n", tests="  - {id: a, input: one}\n")
    loaded = load_suite(path)
    shutil.rmtree(tmp_path / "tpl")
    summary = evaluate(loaded, config=EvalConfig(store=False))
    (case,) = summary.results
    assert case.error is not None
    assert case.error.message == f"workspace template {tmp_path / 'tpl'} is not a directory"


def test_i24_2_repeats_get_fresh_workspaces_and_turns_share_one(tmp_path: Path) -> None:
    tests = (
        "  - id: repeated\n    input: one\n    execution: {repeat: 2}\n"
        "  - id: talk\n    turns: [{input: first}, {input: second}]\n"
        "    assertions: [{type: regex, value: 'notes.txt'}]\n"
        "    execution: {skip_defaults: true}\n"
    )
    path = suite(tmp_path, "  template: tpl\n  keep: always\n  root: spaces\n", tests=tests)
    got = results(path)
    repeated = got["repeated"]
    assert [s.verdict for s in repeated.samples] == ["pass", "pass"]  # each wrote alone
    assert len(set(repeated.workspaces)) == 2
    (talk,) = got["talk"].workspaces
    # both turns ran in the same directory: the agent appended twice to one notes.txt
    assert Path(talk, "notes.txt").read_text().split() == ["talk", "talk"]
    assert leftovers(tmp_path / "spaces") == sorted(
        Path(p).name for p in [*repeated.workspaces, talk]
    )
