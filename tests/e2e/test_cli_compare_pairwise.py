"""`assay compare --pairwise` end to end: runs stored by `assay run`, judged by the `fake`
provider (scripted by each test's `metadata.fake_judge`) or by the local OpenAI-protocol server
(a judge that reads which output is in position A)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from assay.testing import FakeOpenAIServer
from tests.conftest import write
from tests.e2e._cli import assay, assay_env

SUITE = """\
name: pw
target: {{type: fake, responses: {{q1: "{a}", q2: "{b}", q3: "{c}"}}}}
judge: {{provider: fake, model: fake-judge}}
assertions: [{{type: contains, value: ok}}]
tests:
  - {{id: a, input: q1, metadata: {{fake_judge: {{preferred: A}}}}}}
  - {{id: b, input: q2, metadata: {{fake_judge: {{preferred: A}}}}}}
  - {{id: c, input: q3, metadata: {{fake_judge: {{preferred: A}}}}}}
  - {{id: gone, input: q4}}
"""
BASE = SUITE.format(a="ok one", b="ok two", c="ok three")
HEAD = SUITE.format(a="ok one, v2", b="ok two, v2", c="ok three, v2").replace(
    "  - {id: gone, input: q4}\n", ""
)


FAKE_JUDGE = "judge: {provider: fake, model: fake-judge}\n"


def _runs(directory: Path, *flags: str, judge: str = FAKE_JUDGE) -> tuple[str, str]:
    ids = []
    for name, text in (("base", BASE), ("head", HEAD)):
        write(directory / f"{name}.eval.yaml", text.replace(FAKE_JUDGE, judge))
        done = assay("run", f"{name}.eval.yaml", "--json", "--no-cache", *flags, cwd=directory)
        assert done.returncode in (0, 1), done.stderr
        ids.append(json.loads(done.stdout)["id"])
    return ids[0], ids[1]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """Base and head of a suite whose fake judge always prefers position A; (dir, base, head).
    The base's case `gone` has no counterpart in the head: it is not paired."""
    directory = tmp_path_factory.mktemp("pairwise")
    base, head = _runs(directory)
    return directory, base, head


def test_i28_3_a_judge_preferring_the_first_position_makes_every_case_a_tie(
    runs: tuple[Path, str, str],
) -> None:
    directory, base, head = runs
    done = assay("compare", base, head, "--pairwise", "--json", "--no-cache", cwd=directory)
    assert (done.returncode, done.stderr) == (0, "")
    result = json.loads(done.stdout)
    assert list(result) == [
        "base", "head", "thresholds", "require_significance", "summary", "cases", "statistics",
        "warnings", "pairwise",
    ]  # fmt: skip
    pairwise = result["pairwise"]
    assert re.fullmatch(r"pairwise@[0-9a-f]{12}", pairwise.pop("prompt"))
    usage = pairwise.pop("judge_token_usage")
    assert usage["input"] > 0 and usage["output"] > 0
    assert pairwise.pop("cases") == [
        {
            "case_id": case,
            "outcome": "tie",
            "consistent": False,
            "base_first": "A",
            "head_first": "A",
            "reasoning": ["", ""],
            "error": None,
        }
        for case in "abc"
    ]
    assert pairwise == {
        "judge": "fake fake-judge",
        "paired_cases": 3,
        "judged": 3,
        "errors": 0,
        "wins": 0,
        "losses": 0,
        "ties": 3,
        "inconsistent": 3,
        "win_rate": 0.5,
        "win_rate_ci95": [pytest.approx(0.125334, abs=1e-6), pytest.approx(0.874666, abs=1e-6)],
        "inconsistency_rate": 1.0,
        "judge_calls": 6,
        "cached_calls": 0,
        "judge_cost_usd": None,
    }


def test_i28_3_without_pairwise_the_json_is_unchanged_and_judge_flags_are_refused(
    runs: tuple[Path, str, str],
) -> None:
    directory, base, head = runs
    plain = json.loads(assay("compare", base, head, "--json", cwd=directory).stdout)
    assert "pairwise" not in plain
    done = assay("compare", base, head, "--judge-model", "m", "--no-cache", cwd=directory)
    assert done.returncode == 2
    assert "--judge-model, --no-cache only apply with --pairwise" in done.stderr
    assert "Traceback" not in done.stderr


def test_i28_3_the_terminal_and_markdown_reports(runs: tuple[Path, str, str]) -> None:
    directory, base, head = runs
    done = assay("compare", base, head, "--pairwise", cwd=directory)
    assert done.returncode == 0, done.stderr
    lines = [line.rstrip() for line in done.stdout.splitlines()]
    start = next(i for i, line in enumerate(lines) if line.startswith("pairwise"))
    assert lines[start : start + 3] == [
        "pairwise    head win rate 50.0%, 95% CI [12.5, 87.5]% over 3 judged cases (0 won, "
        "0 lost, 3 tied; a tie counts half)",
        "            position-inconsistent answers: 3 of 3 (100.0%)",
        "            judge fake fake-judge: 6 calls (0 cached)",
    ]
    assert lines[start + 3].startswith("cases       ")
    markdown = assay("compare", base, head, "--pairwise", "--markdown", cwd=directory)
    assert markdown.returncode == 0, markdown.stderr
    assert markdown.stdout.endswith(
        "### Pairwise judging\n\n"
        "Judge `fake fake-judge`, each paired case asked twice with the outputs swapped: "
        "6 calls (6 cached).\n\n"  # the terminal's comparison filled the cache
        "| head win rate | 95% CI | won | lost | tied | position-inconsistent | judged |\n"
        "|---:|---:|---:|---:|---:|---:|---:|\n"
        "| 50.0% | [12.5, 87.5]% | 0 | 0 | 3 | 3 of 3 (100.0%) | 3 of 3 |\n\n"
        "A tie (the two answers disagree, or both say tie) counts as half a win.\n\n"
    )


def _output_a(body: dict[str, Any]) -> str:
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    match = re.search(r"<<<OUTPUT_A (\w+)>>>\n(.*?)\n<<<END OUTPUT_A \1>>>", user, re.S)
    assert match is not None, user
    return match.group(2)


def prefers_head(body: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """A judge that always prefers the head's output, wherever it is."""
    head_in_a = _output_a(body).endswith("v2")
    return {"preferred": "A" if head_in_a else "B", "reasoning": "v2 is better"}


def test_i28_3_a_judge_always_preferring_the_head_gives_a_win_rate_of_1(
    tmp_path: Path,
) -> None:
    with FakeOpenAIServer(judge=prefers_head) as server:
        # The runs' judge had its own endpoint: a stored run's endpoint is not reused.
        judge = f"judge: {{model: j, base_url: '{server.base_url}'}}\n"
        base, head = _runs(tmp_path, judge=judge)
        refused = assay("compare", base, head, "--pairwise", "--json", cwd=tmp_path)
        assert refused.returncode == 2
        assert refused.stderr == (
            f"error: run '{head}' asked its judge j at {server.base_url}, and a stored run's "
            "judge endpoint is not reused (it would receive the judge's API key): pass "
            f"--judge-base-url {server.base_url} if you trust it, or name a judge with "
            "--judge-model\n"
        )
        assert server.requests == []
        flags = ("--pairwise", "--json", "--judge-base-url", server.base_url)
        env = assay_env(OPENAI_API_KEY="unused")
        done = assay(
            "compare", base, head, *flags, "--judge-concurrency", "2", cwd=tmp_path, env=env
        )
        assert done.returncode == 0, done.stderr
        seen = [_output_a(body) for body in server.requests]
        again = assay("compare", base, head, *flags, cwd=tmp_path, env=env)
        assert len(server.requests) == 6  # the second comparison was answered from the cache
    # Each case asked twice, once with each output in position A.
    assert sorted(seen) == sorted(
        ["ok one", "ok one, v2", "ok two", "ok two, v2", "ok three", "ok three, v2"]
    )
    pairwise = json.loads(done.stdout)["pairwise"]
    assert (pairwise["judge"], pairwise["judge_calls"]) == (f"openai j at {server.base_url}", 6)
    assert (pairwise["wins"], pairwise["losses"], pairwise["ties"]) == (3, 0, 0)
    assert (pairwise["win_rate"], pairwise["inconsistency_rate"]) == (1.0, 0.0)
    assert pairwise["win_rate_ci95"] == [pytest.approx(0.438503, abs=1e-6), 1.0]
    assert [(c["base_first"], c["head_first"]) for c in pairwise["cases"]] == [("B", "A")] * 3
    cached = json.loads(again.stdout)["pairwise"]
    assert (cached["judge_calls"], cached["cached_calls"], cached["wins"]) == (6, 6, 3)


def test_i28_3_no_judge_anywhere_or_a_missing_key_exits_2(tmp_path: Path) -> None:
    suite = BASE.replace(FAKE_JUDGE, "")
    write(tmp_path / "s.eval.yaml", suite)
    ids = []
    for _ in range(2):
        ran = assay("run", "s.eval.yaml", "--json", cwd=tmp_path)
        ids.append(json.loads(ran.stdout)["id"])
    env = {k: v for k, v in assay_env().items() if not k.startswith(("ASSAY_JUDGE", "OPENAI"))}
    none = assay("compare", *ids, "--pairwise", cwd=tmp_path, env=env)
    assert none.returncode == 2 and "Traceback" not in none.stderr
    assert "--pairwise needs a judge and none is configured: pass --judge-model" in none.stderr
    keyless = assay("compare", *ids, "--pairwise", "--judge-model", "gpt-x", cwd=tmp_path, env=env)
    assert keyless.returncode == 2
    assert keyless.stderr == (
        "error: the judge gpt-x reads its API key from OPENAI_API_KEY, which is not set; "
        "export it, or name another variable in assay.yaml's `judge.api_key_env`\n"
    )


def test_i28_3_export_files_are_judged_like_stored_runs(
    runs: tuple[Path, str, str], tmp_path: Path
) -> None:
    directory, base, head = runs
    files = []
    for run_id in (base, head):
        out = tmp_path / f"{run_id}.jsonl"
        assert assay("runs", "export", run_id, "-o", str(out), cwd=directory).returncode == 0
        files.append(str(out))
    flags = ("--pairwise", "--json", "--no-cache")
    stored = json.loads(assay("compare", base, head, *flags, cwd=directory).stdout)
    alone = tmp_path / "alone"
    alone.mkdir()
    done = assay("compare", *files, *flags, cwd=alone)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["pairwise"] == stored["pairwise"]
    assert list(alone.iterdir()) == []  # no store, and no cache with --no-cache


def test_i28_3_cases_the_judge_could_not_answer_are_warned_about(tmp_path: Path) -> None:
    def judge(body: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
        if _output_a(body).startswith("ok two"):
            return {"preferred": "both"}  # never valid
        return {"preferred": "tie"}

    base, head = _runs(tmp_path, judge="")
    with FakeOpenAIServer(judge=judge) as server:
        flags = ("--judge-model", "j", "--judge-base-url", server.base_url, "--json")
        done = assay("compare", base, head, "--pairwise", *flags, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith(
        "warning: pairwise: 1 of 3 paired cases could not be judged (case b: judge j: no valid "
        "reply after 3 attempts; last problem: it does not match the schema (preferred: "
    )
    pairwise = json.loads(done.stdout)["pairwise"]
    assert (pairwise["judged"], pairwise["errors"], pairwise["ties"]) == (2, 1, 2)
    assert (pairwise["win_rate"], pairwise["inconsistency_rate"]) == (0.5, 0.0)
