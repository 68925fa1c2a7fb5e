"""Google Vertex AI: where a project's models listen, and the client for Claude on Vertex.

Vertex serves every model of one Google Cloud project and location under one root,
`https://{location}-aiplatform.googleapis.com/v1/projects/{project}/locations/{location}`
(`aiplatform.googleapis.com` for the `global` location). Gemini and the Model Garden's
OpenAI-compatible models answer Chat Completions at `{root}/endpoints/openapi`; Claude answers
Anthropic's Messages body at `{root}/publishers/anthropic/models/{model}:rawPredict`. Both take
an OAuth access token as a bearer token (`gcloud auth print-access-token`), which assay reads
from the key variable like any API key: assay mints no Google credentials itself.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from assay.errors import UsageError

__all__ = [
    "DEFAULT_VERTEX_REGION",
    "VERTEX_PROJECT_ENVS",
    "VERTEX_REGION_ENV",
    "VertexLocation",
    "missing_vertex_project",
    "vertex_chat_endpoint",
    "vertex_location",
    "vertex_location_url",
]

VERTEX_PROJECT_ENVS = ("VERTEX_PROJECT_ID", "GOOGLE_CLOUD_PROJECT")
"""The variables naming the project, first set wins (promptfoo's and Google's SDKs' names)."""
VERTEX_REGION_ENV = "VERTEX_REGION"
"""The variable naming the location (promptfoo's name)."""
DEFAULT_VERTEX_REGION = "us-central1"
"""The location when neither the endpoint nor `VERTEX_REGION` names one (promptfoo's default)."""

_LOCATION = re.compile(
    r"^(?P<root>https?://[^?#]+?)/projects/(?P<project>[^/?#]+)/locations/(?P<region>[^/?#]+)"
    r"(?P<rest>/[^?#]*)?$"
)


@dataclass(frozen=True)
class VertexLocation:
    """One project's location: the API root before `/projects`, the project and the region."""

    root: str
    project: str
    region: str

    @property
    def url(self) -> str:
        """`{root}/projects/{project}/locations/{region}`."""
        return f"{self.root}/projects/{self.project}/locations/{self.region}"


def vertex_location_url(project: str, region: str) -> str:
    """The location root of `project` in `region` on Google's public endpoint."""
    host = (
        "aiplatform.googleapis.com" if region == "global" else f"{region}-aiplatform.googleapis.com"
    )
    return f"https://{host}/v1/projects/{project}/locations/{region}"


def _env_project() -> str | None:
    return next((os.environ[v] for v in VERTEX_PROJECT_ENVS if os.environ.get(v)), None)


def missing_vertex_project(base_url: str | None, who: str) -> str | None:
    """Why no endpoint can be built (no `base_url` and no project variable), or None."""
    if base_url or _env_project():
        return None
    return (
        f"{who}: Vertex AI needs your Google Cloud project: export VERTEX_PROJECT_ID (and "
        f"VERTEX_REGION, default {DEFAULT_VERTEX_REGION}), or set `base_url: "
        "https://REGION-aiplatform.googleapis.com/v1/projects/PROJECT/locations/REGION`"
    )


def vertex_location(base_url: str | None, who: str) -> VertexLocation:
    """The location `base_url` names, else the one `VERTEX_PROJECT_ID`/`VERTEX_REGION` name.

    Raises:
        UsageError: No project is known, or `base_url` names no `/projects/P/locations/L`.
    """
    if not base_url:
        problem = missing_vertex_project(base_url, who)
        project = _env_project()
        if problem is not None or project is None:
            raise UsageError(problem or who)
        region = os.environ.get(VERTEX_REGION_ENV) or DEFAULT_VERTEX_REGION
        base_url = vertex_location_url(project, region)
    match = _LOCATION.match(base_url.rstrip("/"))
    if match is None:
        raise UsageError(
            f"{who}: `base_url` {base_url} names no Vertex location; write it as "
            "https://REGION-aiplatform.googleapis.com/v1/projects/PROJECT/locations/REGION"
        )
    return VertexLocation(match["root"], match["project"], match["region"])


def vertex_chat_endpoint(base_url: str | None, who: str) -> str:
    """The OpenAI-compatible endpoint: `{location}/endpoints/openapi`. A `base_url` that is not
    a bare location root (a proxy, or one already ending in `/endpoints/openapi`) is used as is.

    Raises:
        UsageError: No `base_url` and no project variable.
    """
    if base_url:
        match = _LOCATION.match(base_url.rstrip("/"))
        if match is None or match["rest"]:
            return base_url
    return f"{vertex_location(base_url, who).url}/endpoints/openapi"
