"""Signed requests to AWS services (Bedrock Runtime, SageMaker Runtime) over aiohttp.

`botocore` supplies what is AWS's own and easy to get wrong: the credential chain (environment
variables, `AWS_PROFILE` and the shared config files, SSO, container and instance roles, with
refresh) and Signature Version 4. The bytes travel on one `aiohttp.ClientSession`, as on the
OpenAI-compatible wire, so a Bedrock or SageMaker call costs what a bare client's does plus the
signature. `botocore` is imported on first use only (the `bedrock` extra), never at start-up.
Failures map onto the `ProviderError` tree: the `x-amzn-ErrorType` header names the exception,
throttling is a 429 whatever the status code says (SageMaker answers it with 400).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from assay._version import __version__
from assay.errors import UsageError
from assay.providers._errors import (
    ProviderError,
    ProviderStatusError,
    RateLimitError,
)
from assay.providers._sdk_errors import connection_error, retry_after_s, timeout_error

if TYPE_CHECKING:
    import aiohttp

__all__ = [
    "DEFAULT_REGION",
    "AwsClient",
    "AwsEndpoint",
    "aws_region",
    "botocore_available",
    "require_botocore",
]

DEFAULT_REGION = "us-east-1"
"""The region when neither the config, `AWS_REGION`, `AWS_DEFAULT_REGION` nor the profile names
one (promptfoo's default too)."""
_DEFAULT_TIMEOUT_S = 600.0
_CONNECT_TIMEOUT_S = 5.0
_MAX_CONNECTIONS = 1000

_THROTTLED = {"ThrottlingException", "TooManyRequestsException"}
_RETRYABLE = {
    "ServiceUnavailableException",
    "InternalServerException",
    "ModelNotReadyException",
    "ModelTimeoutException",
    "InternalFailure",
}


def require_botocore(who: str) -> None:
    """Raise the install hint when `botocore` is missing.

    Raises:
        UsageError: It is not installed.
    """
    if not botocore_available():
        raise UsageError(
            f"{who}: AWS providers (bedrock, sagemaker) need botocore for credentials and "
            "request signing: pip install 'assay[bedrock]'"
        )


def botocore_available() -> bool:
    """Whether `botocore` can be imported (without importing it)."""
    import importlib.util

    return importlib.util.find_spec("botocore") is not None


def aws_region(configured: str | None) -> str:
    """The region: the configured one, `AWS_REGION`, `AWS_DEFAULT_REGION`, the active
    profile's (~/.aws/config), else `us-east-1`."""
    return (
        configured
        or os.environ.get("AWS_REGION")
        or os.environ.get("AWS_DEFAULT_REGION")
        or profile_region()
        or DEFAULT_REGION
    )


class AwsClient:
    """POSTs signed requests to one AWS service endpoint; one session shared by every call.

    Args:
        service: The SigV4 signing name (`bedrock`, `sagemaker`).
        region: The region requests are signed for.
        who: How messages name the caller.
        timeout_s: Timeout of each request; None for 10 minutes.
    """

    def __init__(self, service: str, region: str, *, who: str, timeout_s: float | None) -> None:
        require_botocore(who)
        self.service = service
        self.region = region
        self.who = who
        self.timeout_s = timeout_s
        self._credentials: Any = None
        self._lock = asyncio.Lock()
        self._session: aiohttp.ClientSession | None = None

    async def post(
        self,
        url: str,
        data: bytes,
        *,
        content_type: str = "application/json",
        accept: str = "application/json",
        where: str,
    ) -> bytes:
        """POST `data` to `url` (already percent-encoded), signed; the reply body.

        Args:
            where: The endpoint as messages name it (connection failures).

        Raises:
            ProviderError: The request failed; `retryable` says whether to try again (kind
                `NoCredentialsError`: the credential chain found none, not retryable).
        """
        import aiohttp
        from yarl import URL

        headers = await self._signed_headers(url, data, content_type, accept)
        session = self._session or self._open_session()
        try:
            async with session.post(URL(url, encoded=True), data=data, headers=headers) as reply:
                raw = await reply.read()
                if not 200 <= reply.status < 300:
                    raise aws_error(reply.status, raw, reply.headers, region=self.region)
                return raw
        except TimeoutError as exc:
            raise timeout_error(self.timeout_s) from exc
        except (aiohttp.ClientError, OSError) as exc:
            raise connection_error(where, exc, name_root=True) from exc

    async def close(self) -> None:
        """Close the session and its connections."""
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def _signed_headers(
        self, url: str, data: bytes, content_type: str, accept: str
    ) -> dict[str, str]:
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest

        credentials = await self._frozen_credentials()
        request = AWSRequest(
            method="POST",
            url=url,
            data=data,
            headers={
                "Content-Type": content_type,
                "Accept": accept,
                "User-Agent": f"assay/{__version__}",
            },
        )
        SigV4Auth(credentials, self.service, self.region).add_auth(request)
        return {str(k): str(v) for k, v in request.headers.items()}

    async def _frozen_credentials(self) -> Any:
        """The credentials of botocore's chain, resolved once (off the event loop: it may read
        files or ask the instance metadata service) and refreshed by botocore when they
        expire."""
        if self._credentials is None:
            async with self._lock:
                if self._credentials is None:
                    self._credentials = await asyncio.to_thread(_resolve_credentials, self.who)
        credentials = self._credentials
        due = getattr(credentials, "refresh_needed", None)
        if callable(due) and due():  # a refresh may call STS, SSO or the metadata service
            return await asyncio.to_thread(credentials.get_frozen_credentials)
        return credentials.get_frozen_credentials()

    def _open_session(self) -> aiohttp.ClientSession:
        import aiohttp

        timeout = (
            aiohttp.ClientTimeout(total=_DEFAULT_TIMEOUT_S, connect=_CONNECT_TIMEOUT_S)
            if self.timeout_s is None
            else aiohttp.ClientTimeout(total=self.timeout_s)
        )
        self._session = aiohttp.ClientSession(
            timeout=timeout,
            connector=aiohttp.TCPConnector(limit=_MAX_CONNECTIONS),
            trust_env=True,  # HTTPS_PROXY / NO_PROXY, as botocore honours them
        )
        return self._session


class AwsEndpoint:
    """One AWS service endpoint called with signed POSTs: the region, the base URL and the client
    that the InvokeEndpoint (SageMaker) and InvokeAgent (Bedrock Agents) callers share.

    Args:
        service: The SigV4 signing name (`bedrock`, `sagemaker`).
        public_url: The service's public endpoint in a region.
        region: The region (None: `AWS_REGION`, `AWS_DEFAULT_REGION`, the profile's, else
            `us-east-1`).
        base_url: Another URL of the service (a VPC endpoint, a local fake).
        who: How messages name the caller.
        timeout_s: Timeout of each request.
    """

    def __init__(
        self,
        service: str,
        public_url: Callable[[str], str],
        *,
        region: str | None,
        base_url: str | None,
        who: str,
        timeout_s: float | None,
    ) -> None:
        self.region = aws_region(region)
        self.base_url = (base_url or public_url(self.region)).rstrip("/")
        self._client = AwsClient(service, self.region, who=who, timeout_s=timeout_s)

    async def close(self) -> None:
        """Close the HTTP session."""
        await self._client.close()


def _resolve_credentials(who: str) -> Any:
    import botocore.session

    credentials = botocore.session.get_session().get_credentials()
    if credentials is None:
        raise ProviderError(
            "no AWS credentials found. Export AWS_ACCESS_KEY_ID and "
            "AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for temporary ones), or AWS_PROFILE "
            "naming a profile of ~/.aws/config, or run where an IAM role is attached",
            kind="NoCredentialsError",
        )
    return credentials


def profile_region() -> str | None:
    """The region of the active AWS profile (~/.aws/config), if botocore is installed."""
    if not botocore_available():
        return None
    import botocore.session

    with contextlib.suppress(Exception):  # a broken config file: the default region then
        region = botocore.session.get_session().get_config_variable("region")
        return region if isinstance(region, str) and region else None
    return None


def aws_error(status: int, raw: bytes, headers: Mapping[str, str], *, region: str) -> ProviderError:
    """The `ProviderError` for an AWS error reply: the exception named by `x-amzn-ErrorType`
    (or the body's `__type`), with the service's message."""
    body: object = None
    with contextlib.suppress(ValueError):
        body = json.loads(raw)
    kind = (headers.get("x-amzn-ErrorType") or "").split(":")[0]
    if not kind and isinstance(body, dict):
        kind = str(body.get("__type", "")).rpartition("#")[2]
    message = _message(body, raw)
    name = kind or f"HTTP{status}"
    if kind in _THROTTLED or status == 429:
        return RateLimitError(
            f"rate limited (HTTP {status}, {name}): {message}",
            status=429,
            kind=kind or "RateLimitError",
            retry_after_s=retry_after_s(headers),
        )
    text = f"HTTP {status}: {name}: {message}"
    if status in (401, 403):
        text += (
            f" (check the AWS credentials, that they may call this model or endpoint, "
            f"and the region: {region})"
        )
    error = ProviderStatusError(text, status=status, kind=name)
    if kind in _RETRYABLE:
        error.retryable = True
    return error


def _message(body: object, raw: bytes) -> str:
    if isinstance(body, dict):
        for key in ("message", "Message", "OriginalMessage"):
            if isinstance(body.get(key), str):
                return str(body[key])
    return raw.decode("utf-8", "replace").strip()[:200] or "(no message)"
