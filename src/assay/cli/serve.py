"""`assay serve`: the HTTP API over the run store, on loopback unless told otherwise."""

from __future__ import annotations

import os
import socket

import click

from assay.cli._store import db_option

__all__ = ["command"]


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8321,
    show_default=True,
    help="Port to listen on (0: any free port, printed at start).",
)
@click.option(
    "--max-upload-mb",
    type=click.FloatRange(min=0.001),
    default=100.0,
    show_default=True,
    help="Largest request body accepted, in MB (uploads of exported runs).",
)
@click.option(
    "--openapi",
    "print_openapi",
    is_flag=True,
    help="Print the API's OpenAPI document and exit (regenerates schema/openapi.json).",
)
@click.option(
    "--allowed-host",
    "allowed_hosts",
    multiple=True,
    metavar="NAME",
    help="Also answer requests addressed to NAME (the Host a reverse proxy passes on); "
    "repeatable. On loopback only localhost, 127.0.0.1 and ::1 are answered by default.",
)
@db_option
def command(
    host: str,
    port: int,
    max_upload_mb: float,
    print_openapi: bool,
    allowed_hosts: tuple[str, ...],
    db: str | None,
) -> None:
    """Serve the studio (at /) and the JSON API (under /api) over the stored runs.

    Listens on 127.0.0.1 by default. Requests that change data (POST, PUT, DELETE) need
    `Authorization: Bearer $ASSAY_API_TOKEN` whenever ASSAY_API_TOKEN is set; on any other
    address than loopback the server refuses to start without it. On loopback, requests
    addressed to other names than localhost are refused (DNS rebinding); --allowed-host adds
    names.
    """
    from assay.errors import UsageError
    from assay.server import LOOPBACK_NAMES, TOKEN_ENV, is_loopback

    if print_openapi:
        from assay.server import openapi_document

        click.echo(openapi_document(), nl=False)
        return
    token = os.environ.get(TOKEN_ENV) or None
    if token is None and not is_loopback(host):
        raise UsageError(
            f"refusing to listen on {host}, which other machines can reach, without a token "
            f"for requests that change data: set {TOKEN_ENV} (e.g. {TOKEN_ENV}=$(openssl rand "
            "-hex 32)) or listen on 127.0.0.1 behind a reverse proxy"
        )
    import uvicorn

    from assay.config import project_store
    from assay.server import create_app
    from assay.store import open_store

    sock = _listen(host, port)
    store = open_store(db, fallback=project_store())
    try:
        hosts: tuple[str, ...] | None = None
        if is_loopback(host):
            hosts = (*LOOPBACK_NAMES, host, *allowed_hosts)
        elif allowed_hosts:
            hosts = (host, *allowed_hosts)
        app = create_app(
            store,
            token=token,
            max_upload_bytes=int(max_upload_mb * 1_000_000),
            allowed_hosts=hosts,
        )
        bound = sock.getsockname()[1]
        shown = f"[{host}]" if ":" in host else host
        click.echo(
            f"assay serve: the studio at http://{shown}:{bound}/ and the API under /api, "
            f"on the runs in {store.describe()} "
            f"(writes {'need the bearer token' if token else 'open to local clients'}; "
            "Ctrl-C stops)",
            err=True,
        )
        config = uvicorn.Config(app, log_level="info", timeout_graceful_shutdown=5)
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        store.close()
        sock.close()


def _listen(host: str, port: int) -> socket.socket:
    """A socket bound to `host:port`, so a taken port is a clear error before start-up.

    Raises:
        UsageError: The address cannot be bound (taken port, unknown address).
    """
    from assay.errors import UsageError

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        raise UsageError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}; pick another --port "
            "(or stop what is using it)"
        ) from None
    sock.set_inheritable(True)
    return sock
