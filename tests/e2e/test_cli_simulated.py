"""Simulated users through the real CLI (issue 27): the retail example offline, its HTML report
and studio page turn by turn with the stop reason, and an interrupted simulated run resumed."""

from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from playwright.sync_api import expect

from tests._browser import screenshot_path
from tests.conftest import write
from tests.e2e._cli import assay, assay_env, interrupt_once_stored
from tests.e2e._serve import ready, serving

if TYPE_CHECKING:
    from playwright.sync_api import Page

EXAMPLE = Path(__file__).parents[2] / "examples" / "simulated"


def _example(tmp_path: Path) -> Path:
    directory = tmp_path / "simulated"
    shutil.copytree(EXAMPLE, directory, ignore=shutil.ignore_patterns("state", "__pycache__"))
    return directory


def test_i27_5_the_retail_example_runs_offline_and_reports_each_conversation(
    tmp_path: Path, page: Page
) -> None:
    directory = _example(tmp_path)
    done = assay("run", ".", "--json", "--report", "html:report.html", cwd=directory)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    ended = {
        r["case_id"]: (r["verdict"], len(r["turns"]), r["turns"][-1]["stop_reason"])
        for r in result["results"]
    }
    assert ended == {
        "dana-refund": ("pass", 2, "stop_when"),
        "lee-replacement": ("pass", 3, "stop_when"),
        "max-not-damaged": ("pass", 1, "done"),
    }
    # Tool calls of every turn are the case's, in order (the agent saw the whole history).
    lee = next(r for r in result["results"] if r["case_id"] == "lee-replacement")
    assert [c["tool"] for c in lee["tool_calls"]] == [
        "lookup_order",
        "lookup_order",
        "send_replacement",
    ]
    # The code grader read the database each conversation left behind.
    state = json.loads((directory / "state" / "lee-replacement.json").read_text())
    assert state["2077"]["status"] == "replacement sent"
    assert state["1042"]["status"] == "delivered"

    page.goto((directory / "report.html").as_uri())
    page.locator('tr.case-row[data-case-id="dana-refund"]').click()
    panel = page.locator('.case-panel[data-case-id="dana-refund"]')
    expect(panel.locator("h3", has_text="Turn 1")).to_have_count(1)
    expect(panel.locator(".stop-reason")).to_have_text(
        "Conversation ended: a stop_when grader passed (contains)"
    )
    assert "Hi, my teapot arrived broken." in panel.inner_text()
    page.screenshot(path=screenshot_path("html-simulated"), full_page=True)

    with serving(directory) as url, ready(url):
        page.goto(f"{url}/runs/{result['id']}/cases/max-not-damaged")
        studio = page.locator(".case-panel")
        expect(studio.locator(".stop-reason")).to_have_text(
            "Conversation ended: the simulated user was done (Max heard that the scarf has shipped)"
        )
        page.screenshot(path=screenshot_path("studio-simulated"), full_page=True)


AGENT = """import os, time

def answer(case):
    if case["id"] == "c2" and os.environ.get("HANG"):
        time.sleep(60)
    return "What is your order number?"
"""


def test_i27_3_an_interrupted_simulated_run_resumes_and_completes(tmp_path: Path) -> None:
    write(tmp_path / "agent.py", AGENT)
    tests = "".join(
        f"  - id: c{i}\n"
        "    simulate: {user: Dana, max_turns: 2}\n"
        "    metadata: {fake_user_turns: [hello, 'order 7']}\n"
        "    assertions: [{type: contains, value: order}]\n"
        for i in range(4)
    )
    write(
        tmp_path / "s.eval.yaml",
        "name: demo\ntarget: {type: python, function: 'agent:answer'}\n"
        "simulator: {provider: fake, model: user}\n"
        f"execution: {{concurrency: 1}}\ntests:\n{tests}",
    )
    db = tmp_path / "r.db"
    # Two workers (one target slot, one judge slot): a conversation's later turns queue behind
    # the cases started after it, so with more workers c2's hang would hold c0 and c1 back.
    run_id, returncode, stderr = interrupt_once_stored(
        ["run", "s.eval.yaml", "--db", str(db), "--judge-concurrency", "1"],
        cwd=tmp_path,
        db=db,
        stored=2,
        env=assay_env(HANG="1"),
    )
    assert returncode == 130
    command = stderr.splitlines()[-1].removeprefix("Resume it with: ")
    resumed = assay(*shlex.split(command)[1:], "--json", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    final = json.loads(resumed.stdout)
    assert final["id"] == run_id
    assert sorted(
        (r["case_id"], [t["input"] for t in r["turns"]], r["turns"][-1]["stop_reason"])
        for r in final["results"]
    ) == [(f"c{i}", ["hello", "order 7"], "max_turns") for i in range(4)]
