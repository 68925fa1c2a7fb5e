"""Every grader has a section on a docs/graders page, and every example suite there runs.

Each ```yaml block that is a whole suite (it has `tests:`) is loaded and run offline, and each
test must end with the verdict its `metadata.expect` states — so the examples cannot drift.
Judged graders ask the local fake judge, which answers each test with its
`metadata.judge_reply` (the reply's top-level fields; the rest get defaults).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from assay import EvalConfig, evaluate
from assay.graders import BUILTIN_GRADERS
from assay.testing import FakeOpenAIServer

REPO = Path(__file__).resolve().parents[1]
PAGES = sorted((REPO / "docs" / "graders").glob("*.md"))
_YAML_BLOCK = re.compile(r"^```yaml\n(.*?)^```", re.DOTALL | re.MULTILINE)


def _suites(page: Path) -> list[dict[str, Any]]:
    blocks = (yaml.safe_load(b) for b in _YAML_BLOCK.findall(page.read_text(encoding="utf-8")))
    return [b for b in blocks if isinstance(b, dict) and "tests" in b]


EXAMPLES = [
    pytest.param(page, suite, id=f"{page.stem}:{suite['name']}")
    for page in PAGES
    for suite in _suites(page)
]


@pytest.mark.parametrize("grader", sorted(BUILTIN_GRADERS))
def test_every_grader_has_a_section(grader: str) -> None:
    pages = [p.name for p in PAGES if f"### `{grader}`\n" in p.read_text(encoding="utf-8")]
    assert len(pages) == 1, f"`{grader}` is documented on {pages or 'no page'}"


@pytest.mark.parametrize("page", [p for p in PAGES if p.name != "README.md"], ids=lambda p: p.stem)
def test_every_family_page_has_a_runnable_example(page: Path) -> None:
    assert _suites(page), f"{page.name} has no example suite"


def _scripted_judge(suite: dict[str, Any]) -> Callable[[dict[str, Any], Any], dict[str, Any]]:
    """Judged examples give the judge's reply per test in `metadata.judge_reply`; the test is
    recognised by its input, which the judge's prompt shows."""

    def reply(body: dict[str, Any], schema: Any) -> dict[str, Any]:
        del schema
        prompt = body["messages"][-1]["content"]
        for test in suite["tests"]:
            given = test.get("input")
            if isinstance(given, str) and given in prompt:
                return dict(test["metadata"].get("judge_reply", {}))
        raise AssertionError(f"no example test's input is in the judge prompt: {prompt[:300]}")

    return reply


@pytest.mark.parametrize(("page", "suite"), EXAMPLES)
def test_example_suite_runs_with_the_stated_verdicts(
    page: Path, suite: dict[str, Any], tmp_path: Path
) -> None:
    path = tmp_path / "example.eval.yaml"
    path.write_text(yaml.safe_dump(suite), encoding="utf-8")
    with FakeOpenAIServer(judge=_scripted_judge(suite)) as judge:
        config = EvalConfig(
            store=False,
            cache_mode="off",
            judge_model="judge-model",
            judge_base_url=judge.base_url,
        )
        with pytest.MonkeyPatch.context() as env:
            env.setenv("OPENAI_API_KEY", "unused-by-the-fake-judge")
            result = evaluate(path, config=config)
    expected = {t["id"]: t["metadata"]["expect"] for t in suite["tests"]}
    actual = {c.case_id: c.verdict for c in result.results}
    assert actual == expected, {
        c.case_id: [(g.name, g.score, g.error, g.misses) for g in c.grader_results]
        for c in result.results
    }
