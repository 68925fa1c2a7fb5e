"""The studio's routes: six page shells and a fixed set of static files.

No part of a request path reaches the filesystem: static files are looked up by name in a
table of package resources, and path parameters only reach the page as escaped `data-`
attributes, which the page script passes to the API URL-encoded.
"""

from __future__ import annotations

import functools
from importlib import resources
from typing import Annotated

from fastapi import APIRouter, HTTPException, Path
from fastapi.responses import HTMLResponse, Response
from jinja2 import Environment, PackageLoader, select_autoescape

__all__ = ["CONTENT_SECURITY_POLICY", "router"]

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
"""Only the studio's own files and API: model output that reached a page could not run."""

_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}

_STATIC: dict[str, tuple[str, str, str]] = {
    "assay-view.js": ("assay.report", "assets/assay-view.js", "text/javascript"),
    "assay-view.css": ("assay.report", "assets/assay-view.css", "text/css"),
    "studio.js": ("assay.studio", "static/studio.js", "text/javascript"),
    "studio.css": ("assay.studio", "static/studio.css", "text/css"),
}
"""Every file under /static: name → (package, resource, media type)."""

router = APIRouter(include_in_schema=False)


@functools.cache
def _templates() -> Environment:
    return Environment(
        loader=PackageLoader("assay.studio", "templates"),
        autoescape=select_autoescape(default=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )


@functools.cache
def _static(name: str) -> bytes:
    package, resource, _ = _STATIC[name]
    return (resources.files(package) / resource).read_bytes()


def _page(page: str, title: str, **data: str) -> HTMLResponse:
    html = _templates().get_template("page.html.j2").render(page=page, title=title, data=data)
    return HTMLResponse(html, headers=_HEADERS)


@router.get("/", response_class=HTMLResponse)
def runs_page() -> HTMLResponse:
    """Runs, newest first, with a pass-rate and score trend per suite."""
    return _page("runs", "Runs")


@router.get("/runs/{run_id}", response_class=HTMLResponse)
def run_page(run_id: Annotated[str, Path(max_length=200)]) -> HTMLResponse:
    """One run: distribution, both dimensions, regression, the case table."""
    return _page("run", f"Run {run_id}", run_id=run_id)


@router.get("/runs/{run_id}/review", response_class=HTMLResponse)
def review_page(run_id: Annotated[str, Path(max_length=200)]) -> HTMLResponse:
    """The run's review queue: borderline cases first, then failed, then the rest, one at a
    time beside pass and fail buttons (SPEC §6)."""
    return _page("review", f"Review run {run_id}", run_id=run_id)


@router.get("/runs/{run_id}/cases/{case_id:path}", response_class=HTMLResponse)
def case_page(
    run_id: Annotated[str, Path(max_length=200)], case_id: Annotated[str, Path(min_length=1)]
) -> HTMLResponse:
    """One case result: input, transcript, tool calls, outcomes, graders, samples."""
    return _page("case", f"Case {case_id}", run_id=run_id, case_id=case_id)


@router.get("/compare", response_class=HTMLResponse)
def compare_page() -> HTMLResponse:
    """Two runs side by side: the gate, the statistics and per-case deltas."""
    return _page("compare", "Compare runs")


@router.get("/settings", response_class=HTMLResponse)
def settings_page() -> HTMLResponse:
    """The studio's settings (its threshold)."""
    return _page("settings", "Settings")


@router.get("/static/{name}")
def static_file(name: str) -> Response:
    """One of the studio's fixed files; anything else is a 404."""
    if name not in _STATIC:
        raise HTTPException(404, f"no static file '{name}'")
    return Response(
        _static(name),
        media_type=_STATIC[name][2],
        headers={"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"},
    )
