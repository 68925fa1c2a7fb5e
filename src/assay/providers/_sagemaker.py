"""Amazon SageMaker Runtime's InvokeEndpoint: one signed POST of the caller's payload.

What the payload and the reply look like is the deployed container's business (TGI, JumpStart,
an OpenAI-compatible server, your own), so this only carries bytes; the `sagemaker` target
builds the payload for the format it is told and reads the reply.
"""

from __future__ import annotations

import urllib.parse

from assay.providers._aws import AwsEndpoint

__all__ = ["SageMakerEndpoint", "sagemaker_endpoint"]


def sagemaker_endpoint(region: str) -> str:
    """SageMaker Runtime's public endpoint in `region`."""
    return f"https://runtime.sagemaker.{region}.amazonaws.com"


class SageMakerEndpoint(AwsEndpoint):
    """InvokeEndpoint calls to one SageMaker endpoint.

    Args:
        name: The endpoint's name.
        region: Its AWS region (None: `AWS_REGION`, `AWS_DEFAULT_REGION`, the profile's,
            else `us-east-1`).
        base_url: Another SageMaker Runtime URL (a VPC endpoint, a local fake).
        who: How messages name the caller.
        timeout_s: Timeout of each request.
    """

    def __init__(
        self,
        name: str,
        *,
        region: str | None,
        base_url: str | None,
        who: str,
        timeout_s: float | None,
    ) -> None:
        super().__init__(
            "sagemaker",
            sagemaker_endpoint,
            region=region,
            base_url=base_url,
            who=who,
            timeout_s=timeout_s,
        )
        self.url = f"{self.base_url}/endpoints/{urllib.parse.quote(name, safe='')}/invocations"

    async def invoke(self, payload: bytes, *, content_type: str, accept: str) -> bytes:
        """Send `payload`; the reply body.

        Raises:
            ProviderError: The call failed (throttling as a 429, a container error as 424, no
                AWS credentials as `NoCredentialsError`).
        """
        return await self._client.post(
            self.url, payload, content_type=content_type, accept=accept, where=self.base_url
        )
