"""`assay serve` as a user starts it: a real server process, reached over loopback HTTP."""

from __future__ import annotations

from pathlib import Path

from tests.e2e._cli import assay, assay_env
from tests.e2e._serve import ready, serving

TOKEN = "e2e-token-0123456789"


def test_it_listens_on_loopback_by_default_and_serves_the_store(tmp_path: Path) -> None:
    with serving(tmp_path) as base:
        assert base.startswith("http://127.0.0.1:")
        with ready(base) as client:
            assert client.get("/api/runs").json()["total"] == 0
            # No token configured on loopback: local clients may write.
            assert client.put("/api/config", json={"threshold": 0.6}).json() == {"threshold": 0.6}
            missing = client.get("/api/runs/nope-0000")
            assert missing.status_code == 404
            assert missing.json()["error"]["type"] == "not_found"
    assert (tmp_path / ".assay" / "config.yaml").read_text(encoding="utf-8") == (
        "studio:\n  threshold: 0.6\n"
    )
    assert (tmp_path / ".assay" / "assay.db").exists()


def test_it_refuses_a_public_address_without_a_token(tmp_path: Path) -> None:
    done = assay("serve", "--host", "0.0.0.0", "--port", "0", cwd=tmp_path, timeout=30)
    assert done.returncode == 2
    assert "refusing to listen on 0.0.0.0" in done.stderr
    assert "ASSAY_API_TOKEN" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_public_address_with_a_token_enforces_it_on_writes(tmp_path: Path) -> None:
    env = assay_env(ASSAY_API_TOKEN=TOKEN)
    with serving(tmp_path, "--host", "0.0.0.0", env=env) as base, ready(base) as client:
        assert client.get("/api/config").status_code == 200
        refused = client.put("/api/config", json={"threshold": 0.5})
        assert refused.status_code == 401
        assert refused.json()["error"]["type"] == "unauthorized"
        wrong = client.put(
            "/api/config", json={"threshold": 0.5}, headers={"Authorization": "Bearer nope"}
        )
        assert wrong.status_code == 403
        ok = client.put(
            "/api/config", json={"threshold": 0.5}, headers={"Authorization": f"Bearer {TOKEN}"}
        )
        assert ok.json() == {"threshold": 0.5}


def test_a_taken_port_is_a_clear_error(tmp_path: Path) -> None:
    with serving(tmp_path) as base, ready(base):
        port = base.rsplit(":", 1)[1]
        done = assay("serve", "--port", port, cwd=tmp_path, timeout=30)
    assert done.returncode == 2
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr
    assert "Traceback" not in done.stderr


def test_openapi_prints_the_committed_document(tmp_path: Path) -> None:
    done = assay("serve", "--openapi", cwd=tmp_path, timeout=30)
    committed = Path(__file__).resolve().parents[2] / "schema" / "openapi.json"
    assert done.returncode == 0, done.stderr
    assert done.stdout == committed.read_text(encoding="utf-8")


def test_on_loopback_other_host_names_are_refused(tmp_path: Path) -> None:
    """A DNS-rebinding page reaches 127.0.0.1 under its own name: it gets no runs."""
    with serving(tmp_path, "--allowed-host", "runs.internal") as base, ready(base) as client:
        rebound = client.get("/api/runs", headers={"host": "attacker.example"})
        assert rebound.status_code == 421
        assert rebound.json()["error"]["type"] == "misdirected_request"
        assert client.get("/api/runs", headers={"host": "runs.internal:8321"}).status_code == 200
        assert client.get("/", headers={"host": "localhost"}).status_code == 200
