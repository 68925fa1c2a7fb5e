"""A throwaway PostgreSQL server for the store tests: started once per session, on loopback.

`ASSAY_TEST_POSTGRES_URL` points the tests at an existing server instead (an admin URL of a
user that may create databases). Otherwise the server binaries that `make test` installs
(Debian's `postgresql` package) run a fresh cluster in a temporary directory, with fsync off:
the tests need a real server, not a durable one. Each test gets a database of its own.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

URL_ENV = "ASSAY_TEST_POSTGRES_URL"
_UNPRIVILEGED_USER = "postgres"  # PostgreSQL refuses to run as root


class PostgresUnavailable(RuntimeError):
    """No server binaries and no `ASSAY_TEST_POSTGRES_URL`."""


def _bin_dir() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), reverse=True)
    on_path = shutil.which("initdb")
    if found:
        return Path(found[0]).parent
    if on_path:
        return Path(on_path).parent
    raise PostgresUnavailable(
        "PostgreSQL server binaries (initdb) not found; `make test` installs them "
        "(apt-get install postgresql), or set ASSAY_TEST_POSTGRES_URL to a server's admin URL"
    )


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _as_server_user(command: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return command
    return ["runuser", "-u", _UNPRIVILEGED_USER, "--", *command]


def _run(command: list[str], *, check: bool = True) -> None:
    done = subprocess.run(
        _as_server_user(command),
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    if check and done.returncode != 0:
        raise RuntimeError(f"{command[0]} failed ({done.returncode}): {done.stderr}")


@contextmanager
def postgres_server() -> Iterator[str]:
    """Yield the admin URL of a running server (`postgresql+psycopg://...`)."""
    existing = os.environ.get(URL_ENV)
    if existing:
        yield existing
        return
    bin_dir = _bin_dir()
    root = Path(tempfile.mkdtemp(prefix="assay-pg-"))
    if os.geteuid() == 0:
        account = pwd.getpwnam(_UNPRIVILEGED_USER)
        os.chown(root, account.pw_uid, account.pw_gid)
    data, log = root / "data", root / "server.log"
    port = _free_port()
    initdb = [str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust"]
    _run([*initdb, "--no-sync", "-E", "UTF8"])
    options = (
        f"-k {root} -p {port} -c listen_addresses=127.0.0.1 -c fsync=off "
        "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
    )
    pg_ctl = str(bin_dir / "pg_ctl")
    _run([pg_ctl, "-D", str(data), "-o", options, "-l", str(log), "-w", "start"])
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres"
    finally:
        _run([pg_ctl, "-D", str(data), "-m", "immediate", "-w", "stop"], check=False)
        shutil.rmtree(root, ignore_errors=True)


@contextmanager
def fresh_database(admin_url: str) -> Iterator[str]:
    """Create an empty database on the server, yield its URL, and drop it afterwards."""
    import psycopg
    from sqlalchemy.engine import make_url

    admin = make_url(admin_url)
    name = f"assay_test_{uuid.uuid4().hex[:12]}"
    dsn = admin.set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield admin.set(database=name).render_as_string(hide_password=False)
    finally:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
