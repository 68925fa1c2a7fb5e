"""`assay run examples/quickstart` through the real console script, checked against SPEC §8."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from assay.store import SQLiteStore
from tests.e2e._cli import assay

REPO = Path(__file__).resolve().parents[2]
QUICKSTART = REPO / "examples" / "quickstart"
SCHEMA = json.loads((Path(__file__).parent / "run_result.schema.json").read_text())

# Each case's verdict and score, worked out by hand from the suite and agent.py with the rules
# of SPEC §1 (every case also carries the suite default `no-ai-disclaimer`, which passes):
EXPECTED = {
    "refund-window": ("pass", 1.0),  # 30 days + receipt + default
    "shipping-time": ("pass", 1.0),
    "order-status": ("pass", 1.0),  # weights 1, 1, 2 (+1), all pass
    "order-json": ("pass", 1.0),  # JSON equal to expected_output structurally
    "greeting": ("pass", 1.0),
    "support-hours": ("pass", 1.0),
    "escalation": ("pass", 1.0),
    "cancel-subscription": ("borderline", 2 / 3),  # 2 of 3 pass: 0.6 <= 0.67 < 0.8
    "cancel-lenient": ("pass", 2 / 3),  # same score, test threshold 0.6
    "delivery-promise": ("fail", 0.0),  # required no-guarantees fails: gate → 0
    "warranty": ("fail", 0.5),  # 1 of 2 pass
}


@pytest.fixture(scope="module")
def quickstart_json(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, object], Path]:
    cwd = tmp_path_factory.mktemp("qs")
    done = assay("run", str(QUICKSTART), "--json", cwd=cwd)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), cwd


def test_json_output_matches_the_spec_shape(
    quickstart_json: tuple[dict[str, object], Path],
) -> None:
    run, _ = quickstart_json
    jsonschema.Draft202012Validator(SCHEMA).validate(run)


def test_verdicts_follow_the_scoring_rules(quickstart_json: tuple[dict[str, object], Path]) -> None:
    run, _ = quickstart_json
    results = run["results"]
    assert isinstance(results, list)
    got = {r["case_id"]: (r["verdict"], r["score"]) for r in results}
    assert set(got) == set(EXPECTED)
    for case_id, (verdict, score) in EXPECTED.items():
        assert got[case_id][0] == verdict, case_id
        assert got[case_id][1] == pytest.approx(score), case_id
    summary = run["summary"]
    assert summary == {
        **summary,
        "total": 11,
        "passed_count": 8,
        "borderline_count": 1,
        "failed_count": 2,
        "error_count": 0,
        "metrics_passed": True,
        "cases_passed": True,
        "passed": True,
        "judge_error_rate": 0.0,
    }
    assert summary["cases_pass_rate_pct"] == pytest.approx(800 / 11)
    mean = sum(s for _, s in EXPECTED.values()) / 11
    assert summary["weighted_metrics_score_pct"] == pytest.approx(100 * mean, abs=1e-3)
    assert run["config"] == {
        **run["config"],
        "threshold": 0.8,
        "borderline": 0.6,
        "metrics_pass_threshold": 0.7,
        "cases_pass_threshold": 0.6,
    }


def test_the_run_is_stored(quickstart_json: tuple[dict[str, object], Path]) -> None:
    run, cwd = quickstart_json
    with SQLiteStore(cwd / ".assay" / "assay.db") as store:
        stored = store.get_run(str(run["id"]), include_results=True)
        snapshot = store.get_snapshot(str(run["id"]))
    assert stored.status == "completed"
    assert stored.model_dump(mode="json")["results"] == run["results"]
    assert snapshot["target"]["name"] == "support-agent"  # type: ignore[index]
    assert snapshot["config"]["threshold"] == 0.8  # type: ignore[index]


def test_terminal_summary(tmp_path: Path) -> None:
    done = assay("run", str(QUICKSTART), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "8 passed (73%)" in out
    assert "1 borderline (9%)" in out
    assert "2 failed (18%)" in out
    assert "no-guarantees: contains 'guarantee'" in out
    assert "result  PASSED" in out
    assert "stored in" in out


def test_cli_threshold_beats_the_test_threshold(tmp_path: Path) -> None:
    done = assay("run", str(QUICKSTART), "--threshold", "0.9", "--json", cwd=tmp_path)
    run = json.loads(done.stdout)
    verdicts = {r["case_id"]: (r["verdict"], r["threshold"]) for r in run["results"]}
    # cancel-lenient sets threshold 0.6 itself; the CLI's 0.9 wins, 0.67 is now borderline
    assert verdicts["cancel-lenient"] == ("borderline", 0.9)
    assert verdicts["refund-window"] == ("pass", 0.9)
    assert run["config"]["threshold"] == 0.9
    # 7 passes of 11 is still above the suite's 60% cases threshold
    assert done.returncode == 0
