"""The openai target through the real SDK against the local server, with injected faults."""

from __future__ import annotations

import collections
import json
from pathlib import Path

from assay.api import EvalConfig, evaluate
from assay.store import SQLiteStore
from assay.testing import FakeOpenAIServer
from tests.conftest import write
from tests.e2e._cli import assay

N = 500


def _suite(base_url: str, n: int, *, model: str = "fake-model") -> dict[str, object]:
    return {
        "name": "faults",
        "target": {
            "type": "openai",
            "model": model,
            "base_url": base_url,
            "api_key_env": None,
            "timeout_s": 0.5,
            "temperature": 0,
        },
        "execution": {"concurrency": 32, "cases_pass_threshold": 0.0, "max_retries": 3},
        "tests": [
            {
                "id": f"c{i}",
                "input": f"question {i}",
                "assertions": [{"type": "contains", "value": f"question {i}"}],
            }
            for i in range(n)
        ],
    }


def test_twenty_percent_faults_lose_nothing(tmp_path: Path) -> None:
    faults = {"429": 0.05, "500": 0.05, "timeout": 0.04, "malformed": 0.03, "drop": 0.03}
    with FakeOpenAIServer(faults=faults, seed=7, retry_after_s=0.01, hang_s=2.0) as server:
        summary = evaluate(
            _suite(server.base_url, N),
            config=EvalConfig(store=str(tmp_path / "runs.db"), cache_mode="off"),
        )
        requests = server.request_count
        injected = server.fault_counts
    assert sum(injected.values()) >= 0.15 * N  # the faults really happened
    assert set(injected) == set(faults)

    ids = [r.case_id for r in summary.results]
    assert collections.Counter(ids) == collections.Counter(f"c{i}" for i in range(N))
    for result in summary.results:
        if result.verdict == "error":
            assert result.error is not None and result.error.message  # a reason, always
        else:
            assert result.verdict == "pass", result  # the echo always contains the question
    graded = sum(r.verdict == "pass" for r in summary.results)
    assert graded >= N - 5  # P(4 faults in a row) = 0.2^4: at most a handful give up
    scheduling = summary.scheduling
    assert scheduling is not None
    assert scheduling.retries == requests - N  # every extra request was a counted retry
    assert scheduling.rate_limited == injected["429"]
    assert scheduling.target_concurrency_lowest < 32  # 429s lowered the limit

    with SQLiteStore(tmp_path / "runs.db") as store:
        stored = list(store.iter_case_results(summary.id))
    assert sorted(r.case_id for r in stored) == sorted(ids)


def test_cache_hits_skip_the_server_and_a_model_change_misses(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        write(tmp_path / "s.eval.yaml", json.dumps(_suite(server.base_url, 5)))
        first = assay("run", "s.eval.yaml", "--json", cwd=tmp_path)
        assert first.returncode == 0, first.stderr
        assert server.request_count == 5
        second = assay("run", "s.eval.yaml", "--json", cwd=tmp_path)
        assert server.request_count == 5  # all five served from .assay/cache.db
        assert json.loads(second.stdout)["scheduling"]["cache_hits"] == 5
        outputs = {r["case_id"]: r["output"] for r in json.loads(second.stdout)["results"]}
        assert outputs == {r["case_id"]: r["output"] for r in json.loads(first.stdout)["results"]}
        no_cache = assay("run", "s.eval.yaml", "--no-cache", cwd=tmp_path)
        assert no_cache.returncode == 0
        assert server.request_count == 10
        write(tmp_path / "s.eval.yaml", json.dumps(_suite(server.base_url, 5, model="other")))
        replay = assay("run", "s.eval.yaml", "--cache-mode", "replay", cwd=tmp_path)
        assert replay.returncode == 2  # a new model never hits a stale entry
        assert "cache miss in replay mode for target openai/other" in replay.stderr
        assert "Traceback" not in replay.stderr
        assert server.request_count == 10
        record = assay("run", "s.eval.yaml", "--cache-mode", "record", cwd=tmp_path)
        assert record.returncode == 0
        assert server.request_count == 15
        replayed = assay("run", "s.eval.yaml", "--cache-mode", "replay", cwd=tmp_path)
        assert replayed.returncode == 0, replayed.stderr
        assert server.request_count == 15
