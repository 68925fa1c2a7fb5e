"""A real plugin package, installed by pip into a new virtual environment, used from YAML.

The package is the example of docs/plugins.md, taken from the page itself: its `pyproject.toml`
(entry points in `assay.graders`, `assay.targets`, `assay.providers`, `assay.reporters`) and its
module (a grader, a target, a provider preset and a report format). pip builds it with hatchling
and installs it offline into a venv that sees this environment's packages (assay included)
through a `.pth` file, and the tests run that venv's assay: `plugins`, `schema`, `validate`,
`run` with the plugin's report format, a target and a judge on the plugin's provider (pointed at
the local OpenAI-protocol server), and a run interrupted with Ctrl-C then resumed.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import sysconfig
import time
from pathlib import Path
from typing import Any

import pytest

from assay.store import SQLiteStore
from assay.testing import FakeOpenAIServer
from tests.conftest import write
from tests.e2e._cli import assay_env

pytestmark = pytest.mark.slow

DOC = Path(__file__).parents[2] / "docs" / "plugins.md"


def doc_files() -> dict[str, str]:
    """The fenced blocks of docs/plugins.md whose first line names a file (`# path`)."""
    blocks = re.findall(r"```(?:toml|python|yaml)\n# (\S+)\n(.*?)```", DOC.read_text(), re.S)
    return {path: f"# {path}\n{body}" for path, body in blocks}


class Venv:
    """The test venv: runs its `python -m assay` in a work directory."""

    def __init__(self, python: Path, work: Path) -> None:
        self.python = python
        self.work = work

    def assay(
        self, *args: str, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.python), "-m", "assay", *args],
            cwd=self.work,
            capture_output=True,
            text=True,
            timeout=120,
            env={**assay_env(), **(env or {})},
            check=False,
        )

    def popen(self, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [str(self.python), "-m", "assay", *args],
            cwd=self.work,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env={**assay_env(), **(env or {})},
        )


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Venv:
    root = tmp_path_factory.mktemp("plugin")
    files = doc_files()
    package = root / "acme-assay"
    for name in ("pyproject.toml", "src/acme_assay/__init__.py"):
        write(package / name, files[name])
    made = subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(root / "venv")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert made.returncode == 0, made.stderr
    python = root / "venv" / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # This environment's packages (assay, pip, hatchling) after the venv's own.
    outer = sysconfig.get_paths()["purelib"]
    write(Path(site) / "outer.pth", f"import site; site.addsitedir({outer!r})\n")
    offline = ["--no-index", "--no-build-isolation", "--no-deps", "--disable-pip-version-check"]
    installed = subprocess.run(
        [str(python), "-m", "pip", "install", *offline, "--quiet", str(package)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert installed.returncode == 0, installed.stderr
    assert (Path(site) / "acme_assay" / "__init__.py").is_file()  # in the venv, not here
    work = root / "work"
    write(work / "evals" / "acme.eval.yaml", files["evals/acme.eval.yaml"])
    write(work / "gateway" / "gateway.eval.yaml", files["evals/gateway.eval.yaml"])
    return Venv(python, work)


def test_assay_plugins_lists_the_installed_package(venv: Venv) -> None:
    listed = venv.assay("plugins")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout == (
        "kind      name             package     version  object                status\n"
        "grader    acme-word-limit  acme-assay  1.0.0    acme_assay:WordLimit  ok\n"
        "target    acme-echo        acme-assay  1.0.0    acme_assay:Echo       ok\n"
        "provider  acme-llm         acme-assay  1.0.0    acme_assay:ACME_LLM   ok\n"
        "reporter  acme-csv         acme-assay  1.0.0    acme_assay:write_csv  ok\n"
    )
    as_json = venv.assay("plugins", "--json")
    assert as_json.returncode == 0, as_json.stderr
    common = {"package": "acme-assay", "version": "1.0.0", "checked": True, "error": None}
    assert json.loads(as_json.stdout) == [
        {"kind": "grader", "name": "acme-word-limit", "object": "acme_assay:WordLimit"}
        | {"group": "assay.graders", **common},
        {"kind": "target", "name": "acme-echo", "object": "acme_assay:Echo"}
        | {"group": "assay.targets", **common},
        {"kind": "provider", "name": "acme-llm", "object": "acme_assay:ACME_LLM"}
        | {"group": "assay.providers", **common},
        {"kind": "reporter", "name": "acme-csv", "object": "acme_assay:write_csv"}
        | {"group": "assay.reporters", **common},
    ]


def test_the_schema_describes_the_plugin_types(venv: Venv) -> None:
    printed = venv.assay("schema")
    assert printed.returncode == 0, printed.stderr
    defs = json.loads(printed.stdout)["$defs"]
    assert defs["WordLimit"]["properties"]["max_words"] == {
        "description": "The most words the answer may have.",
        "title": "Max Words",
        "type": "integer",
    }
    assert defs["Echo"]["properties"]["type"]["const"] == "acme-echo"
    graders = defs["TestCase"]["properties"]["assertions"]["items"]["discriminator"]["mapping"]
    assert graders["acme-word-limit"] == "#/$defs/WordLimit"
    assert graders["contains"] == "#/$defs/Contains"  # built-ins stay
    openai_providers = defs["OpenAITarget"]["properties"]["provider"]["enum"]
    assert "acme-llm" in openai_providers and "groq" in openai_providers
    assert "acme-llm" not in defs["AnthropicTarget"]["properties"]["provider"]["enum"]
    judge_provider = defs["JudgeSpec"]["properties"]["provider"]["anyOf"][0]
    assert "acme-llm" in judge_provider["enum"]


def test_validate_knows_the_plugin_types_and_suggests_them(venv: Venv) -> None:
    ok = venv.assay("validate", "evals/acme.eval.yaml")
    assert (ok.returncode, ok.stdout) == (0, "ok  evals/acme.eval.yaml: suite 'acme', 2 tests\n")
    write(
        venv.work / "typo.eval.yaml",
        "name: typo\ntarget: {type: acme-echo, prefx: x}\n"
        "tests:\n  - {id: a, input: q, assertions: [{type: acme-word-limt, max_words: 2}]}\n",
    )
    bad = venv.assay("validate", "typo.eval.yaml")
    assert bad.returncode == 2
    assert "Traceback" not in bad.stderr
    assert "typo.eval.yaml:2 target.prefx: unknown key 'prefx'" in bad.stderr
    assert (
        "typo.eval.yaml:4 tests[0].assertions[0]: unknown grader type 'acme-word-limt'. "
        "Did you mean 'acme-word-limit'?"
    ) in bad.stderr


def test_targets_and_judges_name_the_plugin_provider_and_typos_are_suggested(
    venv: Venv,
) -> None:
    def judge(body: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
        return {"score": 0.9, "reasoning": "greets"}

    with FakeOpenAIServer(judge=judge, api_key="acme-secret") as server:
        env = {"ACME_LLM_BASE_URL": server.base_url, "ACME_API_KEY": "acme-secret"}
        ran = venv.assay("run", "gateway/gateway.eval.yaml", "--json", "--no-cache", env=env)
        models = sorted(r["model"] for r in server.requests)
    assert ran.returncode == 0, ran.stderr
    run = json.loads(ran.stdout)
    (result,) = run["results"]
    assert (result["output"], result["verdict"]) == ("hello", "pass")
    assert [g["score"] for g in result["grader_results"]] == [1.0, 0.9]
    assert models == ["acme-chat", "acme-judge"]  # both through the plugin's endpoint and key

    unset = venv.assay("validate", "gateway/gateway.eval.yaml")
    assert unset.returncode == 0, unset.stderr  # validate warns about the key, run refuses
    assert "ACME_API_KEY is not set" in unset.stderr
    write(
        venv.work / "typo.eval.yaml",
        "name: typo\ntarget: {type: openai, provider: acme-lm, model: m}\n"
        "judge: {provider: acme-lm, model: j}\ntests:\n  - {id: a, input: q}\n",
    )
    bad = venv.assay("validate", "typo.eval.yaml")
    assert (bad.returncode, "Traceback" in bad.stderr) == (2, False)
    assert "unknown provider 'acme-lm'. Did you mean 'acme-llm'?" in bad.stderr
    assert "typo.eval.yaml:2 target.provider" in bad.stderr
    assert "typo.eval.yaml:3 judge.provider" in bad.stderr


def test_a_run_uses_the_plugin_target_grader_and_report_format(venv: Venv) -> None:
    ran = venv.assay("run", "evals/acme.eval.yaml", "--json", "--report", "acme-csv:acme.csv")
    assert ran.returncode == 1, ran.stderr  # `long` has 8 words: over the limit of 3
    run = json.loads(ran.stdout)
    assert run["target"] == "acme-echo"
    results = {r["case_id"]: r for r in run["results"]}
    assert results["short"]["output"] == "you said: hello"
    assert (results["short"]["verdict"], results["short"]["score"]) == ("pass", 1.0)
    assert (results["long"]["verdict"], results["long"]["score"]) == ("fail", 0.375)
    (grader,) = results["long"]["grader_results"]
    assert (grader["name"], grader["misses"]) == ("acme-word-limit", ["8 words, over 3"])
    rows = (venv.work / "acme.csv").read_text().splitlines()
    rid = run["id"]
    assert rows == ["run,case,verdict,score", f"{rid},short,pass,1.0", f"{rid},long,fail,0.375"]


def test_an_interrupted_run_of_plugin_types_is_resumed(venv: Venv) -> None:
    n = 30
    tests = "".join(f"  - {{id: c{i:02d}, input: word{i}}}\n" for i in range(n))
    write(
        venv.work / "slow.eval.yaml",
        "name: slow\ntarget: {type: acme-echo, prefix: 'ok ', delay_ms: 100}\n"
        "execution: {concurrency: 1}\nassertions: [{type: acme-word-limit, max_words: 2}]\n"
        "tests:\n" + tests,
    )
    db = venv.work / ".assay" / "assay.db"
    proc = venv.popen("run", "slow.eval.yaml")
    done, deadline = 0, time.monotonic() + 60
    while done < 3 and time.monotonic() < deadline and proc.poll() is None:
        if db.exists():
            with SQLiteStore(db) as store:
                runs = store.list_runs(suite="slow")
                done = len(list(store.iter_case_results(runs[0].id))) if runs else 0
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    with SQLiteStore(db) as store:
        (interrupted,) = store.list_runs(suite="slow")
        kept = len(list(store.iter_case_results(interrupted.id)))
    assert interrupted.status == "interrupted"
    assert 3 <= kept < n

    resumed = venv.assay("run", "--resume", interrupted.id, "--json")
    assert resumed.returncode == 0, resumed.stderr
    run = json.loads(resumed.stdout)
    assert (run["id"], run["status"]) == (interrupted.id, "completed")
    assert sorted(r["case_id"] for r in run["results"]) == [f"c{i:02d}" for i in range(n)]
    assert {(r["verdict"], r["output"][:3]) for r in run["results"]} == {("pass", "ok ")}
    assert os.path.getsize(db) > 0


def test_an_interrupted_run_on_the_plugin_provider_is_resumed(venv: Venv) -> None:
    n = 20
    tests = "".join(f"  - {{id: g{i:02d}, input: word{i}}}\n" for i in range(n))
    write(
        venv.work / "gateway-slow.eval.yaml",
        "name: gateway-slow\ntarget: {type: openai, provider: acme-llm, model: acme-chat}\n"
        "execution: {concurrency: 1}\nassertions: [{type: contains, value: word}]\n"
        "tests:\n" + tests,
    )
    db = venv.work / ".assay" / "assay.db"
    with FakeOpenAIServer(latency_ms=100) as server:
        env = {"ACME_LLM_BASE_URL": server.base_url, "ACME_API_KEY": "k"}
        proc = venv.popen("run", "gateway-slow.eval.yaml", "--no-cache", env=env)
        done, deadline = 0, time.monotonic() + 60
        while done < 3 and time.monotonic() < deadline and proc.poll() is None:
            if db.exists():
                with SQLiteStore(db) as store:
                    runs = store.list_runs(suite="gateway-slow")
                    done = len(list(store.iter_case_results(runs[0].id))) if runs else 0
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
        assert proc.returncode == 130, stderr
        with SQLiteStore(db) as store:
            (interrupted,) = store.list_runs(suite="gateway-slow")
        resumed = venv.assay("run", "--resume", interrupted.id, "--json", "--no-cache", env=env)
    assert resumed.returncode == 0, resumed.stderr
    run = json.loads(resumed.stdout)
    assert (run["id"], run["status"]) == (interrupted.id, "completed")
    assert sorted(r["case_id"] for r in run["results"]) == [f"g{i:02d}" for i in range(n)]
    assert {r["verdict"] for r in run["results"]} == {"pass"}
