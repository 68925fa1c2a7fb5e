"""Issue 24 item 4: an AgentV file's files are found and read the way AgentV resolves them.

Each test writes a small AgentV repository (a `.git` directory marks its root) and loads a
suite from a subdirectory, as `agentv eval` run from the repository root would.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from assay.config import LoadedSuite, load_project, load_suite
from assay.errors import ConfigError
from assay.results import RunResult
from assay.runner import RunOptions, execute, plan_run
from assay.store import MemorySink
from assay.testing import FakeOpenAIServer
from tests.conftest import write

FAKE = "targets:\n  bot: {type: fake, default: hello there}\ntarget: bot\n"
"""An offline target for the suites below (an assay key, kept in an AgentV file)."""


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """An AgentV repository root, the working directory."""
    (tmp_path / ".git").mkdir()
    return tmp_path


def document(loaded: LoadedSuite) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(loaded.document)
    return data


def messages(loaded: LoadedSuite) -> list[str]:
    return [str(w) for w in loaded.warnings]


def run(loaded: LoadedSuite, server: FakeOpenAIServer) -> RunResult:
    options = RunOptions(judge_model="judge", judge_base_url=server.base_url)
    sink = MemorySink()
    asyncio.run(execute(plan_run(loaded, load_project(), options), sink))
    return sink.run


def test_i24_4_input_files_are_found_from_the_eval_dir_up_to_the_repository_root(
    repo: Path,
) -> None:
    write(repo / "plugins" / "deploy" / "SKILL.md", "Deploy in order.\n")
    write(repo / "evals" / "shared.md", "Shared notes.\n")
    suite = write(
        repo / "evals" / "deploy" / "plan.eval.yaml",
        FAKE + "tests:\n  - id: plan\n    criteria: Plans the deploy\n    input:\n"
        "      - role: user\n        content:\n"
        "          - {type: file, value: /plugins/deploy/SKILL.md}\n"
        "          - {type: file, value: shared.md}\n"
        "          - {type: text, value: Plan it.}\n",
    )
    loaded = load_suite(suite)
    assert document(loaded)["tests"][0]["input"] == (
        '<file path="plugins/deploy/SKILL.md">\nDeploy in order.\n\n</file>\n\n'
        '<file path="shared.md">\nShared notes.\n\n</file>\n\nPlan it.'
    )


def test_i24_4_a_missing_input_file_names_every_place_looked(repo: Path) -> None:
    suite = write(
        repo / "evals" / "a.eval.yaml",
        FAKE + "tests:\n  - id: a\n    criteria: c\n    input_files: [/nowhere.md]\n"
        "    input: hi\n",
    )
    with pytest.raises(ConfigError) as caught:
        load_suite(suite)
    assert [str(i) for i in caught.value.issues] == [
        f"evals/a.eval.yaml:7 tests[0].input_files[0]: input file '/nowhere.md' "
        f"not found (looked at /nowhere.md, {repo}/evals/nowhere.md, {repo}/nowhere.md); fix "
        "the path (relative to the eval file, a parent up to the repository root, or the "
        "working directory)"
    ]


def test_i24_4_a_file_prompt_is_found_on_the_search_roots(repo: Path) -> None:
    write(repo / "graders" / "strict.md", "Is the reply polite? {{ output }}\n")
    suite = write(
        repo / "evals" / "x" / "a.eval.yaml",
        FAKE + "tests:\n  - id: a\n    input: hi\n    assertions:\n"
        "      - {type: llm-grader, prompt: 'file://graders/strict.md'}\n",
    )
    loaded = load_suite(suite)
    prompt = document(loaded)["tests"][0]["assertions"][0]["prompt"]
    assert prompt == f"file://{repo}/graders/strict.md"


def test_i24_4_a_bare_prompt_naming_a_file_is_inline_text_as_in_agentv_4_6(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(repo / "graders" / "refusal.md", "SECRET FILE TEXT\n")
    suite = write(
        repo / "evals" / "a.eval.yaml",
        FAKE + "tests:\n  - id: a\n    input: hi\n    assertions:\n"
        "      - {type: llm-grader, prompt: ../graders/refusal.md}\n",
    )
    loaded = load_suite(suite)
    assert (
        "evals/a.eval.yaml:8 tests[0].assertions[0].prompt: AgentV (since 4.6) reads a bare "
        "`prompt:` as inline text, so the judge is given the text '../graders/refusal.md' "
        "itself, not a file's; assay does the same. Write `prompt: "
        "file://../graders/refusal.md` to grade with the file"
    ) in messages(loaded)
    monkeypatch.setenv("OPENAI_API_KEY", "unused")
    prompts: list[str] = []

    def judge(body: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
        prompts.append(json.dumps(body))
        return {"score": 1.0, "reasoning": "r", "hits": [], "misses": []}

    with FakeOpenAIServer(judge=judge) as server:
        assert run(loaded, server).results[0].verdict == "pass"
    assert "../graders/refusal.md" in prompts[0]
    assert "SECRET FILE TEXT" not in prompts[0]


def test_i24_4_tests_from_file_references_in_yaml_jsonl_and_csv(repo: Path) -> None:
    write(repo / "evals" / "cases" / "a.yaml", "- id: from-yaml\n  criteria: c\n  input: hi\n")
    write(
        repo / "evals" / "cases" / "b.jsonl",
        json.dumps({"id": "from-jsonl", "criteria": "c", "input": "hi"}) + "\n",
    )
    write(repo / "evals" / "more.csv", "id,criteria,input\nfrom-csv,c,hi\n")
    inline = write(
        repo / "evals" / "inline.eval.yaml",
        FAKE + "tests:\n  - id: first\n    criteria: c\n    input: hi\n"
        "  - file://cases/*.yaml\n  - file://cases/b.jsonl\n  - file://missing/*.yaml\n",
    )
    loaded = load_suite(inline)
    assert [t["id"] for t in document(loaded)["tests"]] == ["first", "from-yaml", "from-jsonl"]
    assert (
        "evals/inline.eval.yaml:10 tests[3]: no files match 'missing/*.yaml' (AgentV reads no "
        "tests from it either)" in messages(loaded)
    )
    csv = write(repo / "evals" / "csv.eval.yaml", FAKE + "tests: file://more.csv\n")
    assert [t["id"] for t in document(load_suite(csv))["tests"]] == ["from-csv"]


def test_i24_4_a_problem_in_a_dataset_is_located_in_its_own_file(repo: Path) -> None:
    write(repo / "evals" / "cases.yaml", "- id: a\n  criteria: c\n  input: hi\n  expected: x\n")
    suite = write(repo / "evals" / "s.eval.yaml", FAKE + "tests:\n  - file://cases.yaml\n")
    loaded = load_suite(suite)
    assert any(m.startswith("evals/cases.yaml:4 tests[0].expected:") for m in messages(loaded))


def test_i24_4_tests_from_a_directory_of_case_folders(repo: Path) -> None:
    write(repo / "evals" / "cases" / "greet" / "case.yaml", "criteria: Greets\ninput: hi\n")
    write(repo / "evals" / "cases" / "bye" / "case.yml", "id: farewell\ncriteria: c\ninput: bye\n")
    write(repo / "evals" / "cases" / "notes" / "README.md", "not a case\n")
    suite = write(repo / "evals" / "EVAL.yaml", FAKE + "tests: ./cases/\n")
    assert [t["id"] for t in document(load_suite(suite))["tests"]] == ["farewell", "greet"]


def test_i24_4_suite_level_input_and_governance_apply_to_tests_from_a_dataset(
    repo: Path,
) -> None:
    write(repo / "evals" / "cases.jsonl", json.dumps({"id": "j", "criteria": "c", "input": "q"}))
    suite = write(
        repo / "evals" / "s.eval.yaml",
        FAKE + "input:\n  - {role: system, content: Be brief.}\ngovernance: {risk_tier: high}\n"
        "tests: ./cases.jsonl\n",
    )
    test = document(load_suite(suite))["tests"][0]
    assert test["input"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "q"},
    ]
    assert test["metadata"] == {"governance": {"risk_tier": "high"}}


def test_i24_4_environment_variables_in_agentv_s_form(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GREETING", "hello")
    monkeypatch.setenv("RETRIES", "3")
    monkeypatch.delenv("UNSET_VAR", raising=False)
    write(repo / "evals" / "cases.yaml", "- id: b\n  criteria: c\n  input: '${{ GREETING }}'\n")
    suite = write(
        repo / "evals" / "env.eval.yaml",
        FAKE + "governance: {owner: '${{GREETING}}', tries: '${{ RETRIES }}'}\ntests:\n"
        "  - id: a\n    criteria: Says ${{ GREETING }} ${{ UNSET_VAR }}twice\n"
        "    input: hi\n    expected_output: '${{ GREETING }}'\n  - file://cases.yaml\n",
    )
    tests = document(load_suite(suite))["tests"]
    assert tests[0]["assertions"][0]["prompt"] == "Says hello twice"
    assert tests[0]["expected_output"] == "hello"
    assert tests[0]["metadata"] == {"governance": {"owner": "hello", "tries": 3}}
    assert tests[1]["input"] == "hello"


def test_i25_4_an_image_input_file_becomes_an_image_part(repo: Path) -> None:
    import base64

    from tests.runner.test_runner_multimodal import tiny_png

    (repo / "evals").mkdir()
    (repo / "evals" / "cat.png").write_bytes(tiny_png())
    write(repo / "evals" / "notes.md", "A note.\n")
    suite = write(
        repo / "evals" / "a.eval.yaml",
        FAKE + "tests:\n  - id: a\n    criteria: Names the animal\n"
        "    input_files: [cat.png, notes.md]\n    input: What animal is this?\n",
    )
    loaded = load_suite(suite)
    url = "data:image/png;base64," + base64.b64encode(tiny_png()).decode()
    assert document(loaded)["tests"][0]["input"] == [
        {
            "role": "user",
            "content": [
                {"type": "image_url", "image_url": {"url": url}},
                {"type": "text", "text": '<file path="notes.md">\nA note.\n\n</file>'},
                {"type": "text", "text": "What animal is this?"},
            ],
        }
    ]


def test_i25_4_an_image_file_over_the_limit_is_a_located_error(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("assay.interop.agentv._rewrite.MAX_IMAGE_BYTES", 10)
    write(repo / "evals" / "big.png", "x" * 11)
    suite = write(
        repo / "evals" / "a.eval.yaml",
        FAKE + "tests:\n  - id: a\n    criteria: c\n    input:\n      - role: user\n"
        "        content:\n          - {type: file, value: big.png}\n",
    )
    with pytest.raises(ConfigError) as caught:
        load_suite(suite)
    assert [str(i) for i in caught.value.issues] == [
        "evals/a.eval.yaml:10 tests[0].input[0].content[0].value: image 'big.png' is 11 bytes, "
        "over the 10-byte limit for an inlined image; make it smaller, or give it by https:// URL"
    ]
