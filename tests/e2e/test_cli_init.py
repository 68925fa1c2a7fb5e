"""`assay init`: the scaffold runs at once, never overwrites silently, and keeps .gitignore tidy."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path

from tests.conftest import write
from tests.e2e._cli import ASSAY, assay, assay_env

FILES = ["agent.py", "assay.yaml", "evals/support-judged.eval.yaml", "evals/support.eval.yaml"]


def offline_env() -> dict[str, str]:
    """No judge settings; the virtualenv's assay first on PATH, as when it is activated."""
    env = assay_env()
    for name in ("OPENAI_API_KEY", "ASSAY_JUDGE_MODEL", "ASSAY_JUDGE_BASE_URL"):
        env.pop(name, None)
    env["PATH"] = f"{Path(ASSAY).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def test_the_scaffold_runs_offline_and_the_judged_suite_validates(tmp_path: Path) -> None:
    done = assay("init", "proj", cwd=tmp_path, env=offline_env())
    assert done.returncode == 0, done.stderr
    project = tmp_path / "proj"
    assert sorted(str(p.relative_to(project)) for p in project.rglob("*") if p.is_file()) == [
        ".gitignore",
        *FILES,
    ]
    assert done.stdout.splitlines()[:5] == [f"created proj/{name}" for name in FILES] + [
        "updated proj/.gitignore"
    ]
    assert "  cd proj\n  assay run evals/support.eval.yaml" in done.stdout
    assert (
        project / ".gitignore"
    ).read_text() == "# assay: run store and response cache\n.assay/\n"

    run = assay("run", "evals/support.eval.yaml", "--json", cwd=project, env=offline_env())
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)
    assert (result["suite"], result["target"], result["summary"]["passed_count"]) == (
        "support",
        "agent",
        3,
    )
    assert (project / ".assay" / "assay.db").is_file()

    valid = assay("validate", "evals/support-judged.eval.yaml", cwd=project, env=offline_env())
    assert valid.returncode == 0, valid.stderr
    assert valid.stdout == "ok  evals/support-judged.eval.yaml: suite 'support-judged', 2 tests\n"
    judged = assay("run", "evals/support-judged.eval.yaml", cwd=project, env=offline_env())
    assert judged.returncode == 2
    assert "OPENAI_API_KEY, which is not set" in judged.stderr


def test_init_refuses_to_overwrite_unless_forced(tmp_path: Path) -> None:
    assert assay("init", cwd=tmp_path).returncode == 0
    (tmp_path / "agent.py").write_text("# mine\n")
    again = assay("init", ".", cwd=tmp_path)
    assert again.returncode == 2
    assert again.stderr == (
        "error: not overwriting existing files:\n"
        + "".join(f"  {name}\n" for name in FILES)
        + "Move them away, init into another directory, or pass --force to overwrite them.\n"
    )
    assert (tmp_path / "agent.py").read_text() == "# mine\n"
    assert "Traceback" not in again.stderr
    forced = assay("init", "--force", cwd=tmp_path)
    assert forced.returncode == 0, forced.stderr
    assert "def answer(case" in (tmp_path / "agent.py").read_text()
    assert "updated" not in forced.stdout  # .gitignore already had the entry
    assert (tmp_path / ".gitignore").read_text().count(".assay/") == 1


def test_an_existing_gitignore_is_appended_to_once(tmp_path: Path) -> None:
    write(tmp_path / "a" / ".gitignore", "node_modules/\n*.pyc")
    assert assay("init", "a", cwd=tmp_path).returncode == 0
    assert (tmp_path / "a" / ".gitignore").read_text() == (
        "node_modules/\n*.pyc\n# assay: run store and response cache\n.assay/\n"
    )
    write(tmp_path / "b" / ".gitignore", "build/\n.assay\n")
    done = assay("init", "b", cwd=tmp_path)
    assert (tmp_path / "b" / ".gitignore").read_text() == "build/\n.assay\n"
    assert "gitignore" not in done.stdout


def test_init_into_a_file_path_is_a_usage_error(tmp_path: Path) -> None:
    write(tmp_path / "taken", "x")
    done = assay("init", "taken", cwd=tmp_path)
    assert done.returncode == 2
    assert "is a file" in done.stderr


def _next_steps(stdout: str) -> list[str]:
    """The commands `assay init` prints under "Next steps:", without their comments."""
    lines = stdout.split("\nNext steps:\n", 1)[1].splitlines()
    return [line.split("  # ")[0].strip() for line in lines if line.startswith("  ")]


def test_i21_12_init_next_steps_run_as_printed_when_assay_is_not_on_path(tmp_path: Path) -> None:
    # As after `make demo`: the virtualenv's assay, run by its path, the virtualenv not active.
    env = {**offline_env(), "PATH": "/usr/bin:/bin"}
    done = assay("init", "proj", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    steps = _next_steps(done.stdout)
    executable = shlex.quote(ASSAY)
    assert steps == [
        "cd proj",
        f"{executable} run evals/support.eval.yaml",
        f"{executable} runs list",
        f"{executable} serve",
        "export OPENAI_API_KEY=...",
        f"{executable} run evals/support-judged.eval.yaml",
    ]
    # Each runnable step, pasted into a shell in order (`serve` does not end; the judged run
    # needs a key), works as printed.
    script = " && ".join(steps[:3])
    ran = subprocess.run(
        ["/bin/sh", "-c", script],
        check=False,
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ran.returncode == 0, ran.stderr
    assert "result  PASSED" in ran.stdout
    assert "support" in ran.stdout.split("result  PASSED", 1)[1]  # the stored run is listed


def test_i21_12_init_prints_plain_assay_when_that_is_the_one_on_path(tmp_path: Path) -> None:
    done = assay("init", "proj", cwd=tmp_path, env=offline_env())
    assert _next_steps(done.stdout)[1] == "assay run evals/support.eval.yaml"
