"""What an S3 failure means: botocore errors classified, then translated into the builtin (and
``backends.base``) exceptions the seam speaks.

Server differences live here and nowhere else: AWS/moto answer ``If-Match`` on a missing key with
404, SeaweedFS with 412 and without the ``Condition`` field that s3fs needs to raise
``FileExistsError``; so errors are read from the raw botocore response, never from s3fs's
translation.
"""

from __future__ import annotations

import errno
from typing import NamedTuple

from backends.base import PreconditionFailed


class ErrorParts(NamedTuple):
    """The fields of a botocore ``ClientError`` this package decides on."""

    status: int
    code: str
    condition: str
    retries: int  # botocore's RetryAttempts: >0 means an earlier attempt may have landed


def error_parts(exc: BaseException) -> ErrorParts | None:
    """The parts of a botocore ClientError; None for anything else (transport errors...)."""
    response = getattr(exc, "response", None)
    if not isinstance(response, dict) or "Error" not in response:
        return None
    meta = response.get("ResponseMetadata", {})
    error = response.get("Error", {})
    status = int(meta.get("HTTPStatusCode") or 0)
    code = str(error.get("Code", ""))
    if not status and code.isdigit():
        status = int(code)
    return ErrorParts(status, code, str(error.get("Condition", "")), int(meta.get("RetryAttempts") or 0))


def is_precondition(parts: ErrorParts | None) -> bool:
    """412 (condition failed) or 409 (a concurrent conditional request won)."""
    return parts is not None and (
        parts.status in (409, 412) or parts.code in ("PreconditionFailed", "ConditionalRequestConflict")
    )


def is_not_found(parts: ErrorParts | None) -> bool:
    return parts is not None and (parts.status == 404 or parts.code in ("NoSuchKey", "NotFound", "404"))


def conflict(key: str, if_absent: bool) -> PreconditionFailed:
    """The error of a failed condition: a create met an object, or the version moved on."""
    if if_absent:
        return PreconditionFailed(errno.EEXIST, "already exists", key)
    return PreconditionFailed(errno.ESTALE, "changed since it was read", key)


def translate(exc: BaseException, key: str) -> BaseException:
    """A builtin exception for a botocore failure (ClientError or transport error)."""
    parts = error_parts(exc)
    if parts is None:
        if isinstance(exc, OSError):
            return exc
        # botocore transport errors (EndpointConnectionError, ReadTimeoutError, ...)
        if type(exc).__module__.startswith(("botocore", "aiobotocore", "aiohttp")):
            return OSError(errno.EIO, f"S3 request failed: {type(exc).__name__}: {exc}", key)
        return exc
    status, code = parts.status, parts.code
    if is_precondition(parts):
        return PreconditionFailed(errno.ESTALE, "changed since it was read", key)
    if is_not_found(parts):
        return FileNotFoundError(errno.ENOENT, "No such file or directory", key)
    if status == 403 or code in ("AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch"):
        return PermissionError(errno.EACCES, f"S3 denied access ({code})", key)
    if code == "NoSuchBucket":
        return FileNotFoundError(errno.ENOENT, f"No such bucket ({exc})", key)
    if code == "EntityTooLarge":
        return OSError(errno.EFBIG, "object too large for S3", key)
    return OSError(errno.EIO, f"S3 error {status} {code}: {exc}", key)
