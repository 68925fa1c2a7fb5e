"""`--executor ray` errors a user can cause: each says what to do, exits 2, stores nothing."""

from __future__ import annotations

import json
import socket
from pathlib import Path

from tests.conftest import write
from tests.e2e._cli import assay, assay_env
from tests.e2e.ray.conftest import LOOPBACK_ENV

SUITE = """name: demo
target: {type: command, command: [echo, hi]}
tests:
  - {id: one, input: q, assertions: [{type: contains, value: hi}]}
"""


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port  # closed again: nothing listens there


def test_an_address_without_a_cluster_fails_at_once(tmp_path: Path) -> None:
    write(tmp_path / "s.eval.yaml", SUITE)
    port = _closed_port()
    done = assay(
        "run",
        "s.eval.yaml",
        "--executor",
        "ray",
        "--ray-address",
        f"127.0.0.1:{port}",
        cwd=tmp_path,
        env=assay_env(**LOOPBACK_ENV),
        timeout=30,
    )
    assert done.returncode == 2
    assert done.stderr == (
        f"error: --ray-address 127.0.0.1:{port}: no Ray cluster answers there ([Errno 111] "
        "Connection refused); start one with `ray start --head`, or pass the address it "
        "printed\n"
    )
    listed = assay("runs", "list", "--json", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout) == []  # the run was never created


def test_a_malformed_address_says_the_expected_form(tmp_path: Path) -> None:
    write(tmp_path / "s.eval.yaml", SUITE)
    done = assay(
        "run", "s.eval.yaml", "--executor", "ray", "--ray-address", "head-node", cwd=tmp_path
    )
    assert done.returncode == 2
    assert done.stderr == (
        "error: --ray-address 'head-node': give the head node as HOST:PORT (e.g. 127.0.0.1:6379)\n"
    )


def test_ray_options_need_the_ray_executor(tmp_path: Path) -> None:
    write(tmp_path / "s.eval.yaml", SUITE)
    done = assay("run", "s.eval.yaml", "--ray-workers", "2", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == "error: --ray-address and --ray-workers need --executor ray\n"


def test_without_ray_installed_the_error_names_the_extra(tmp_path: Path) -> None:
    write(tmp_path / "s.eval.yaml", SUITE)
    # A `ray` package first on the path that fails to import, as an absent one does.
    write(
        tmp_path / "shadow" / "ray" / "__init__.py",
        "raise ImportError(\"No module named 'ray'\")\n",
    )
    done = assay(
        "run",
        "s.eval.yaml",
        "--executor",
        "ray",
        cwd=tmp_path,
        env=assay_env(PYTHONPATH=str(tmp_path / "shadow")),
    )
    assert done.returncode == 2
    assert done.stderr == (
        "error: --executor ray needs Ray, which is not installed (No module named 'ray'); "
        "install it with: pip install 'assay[ray]'\n"
    )
