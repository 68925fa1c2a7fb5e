"""The HTTP API of `assay serve`: a FastAPI app over the run store (SPEC §7).

Imported only by `assay serve` and by users embedding the app: FastAPI stays out of every
other command's start-up.
"""

from assay.server._app import API_PREFIX, DEFAULT_MAX_UPLOAD_MB, create_app, openapi_document
from assay.server._security import LOOPBACK_NAMES, TOKEN_ENV, is_loopback

__all__ = [
    "API_PREFIX",
    "DEFAULT_MAX_UPLOAD_MB",
    "LOOPBACK_NAMES",
    "TOKEN_ENV",
    "create_app",
    "is_loopback",
    "openapi_document",
]
