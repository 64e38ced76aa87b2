"""S3's store-side fence (see :mod:`backends.fence`): each change sent under a lease is signed
with query-string authentication (SigV4), to expire when the lease's validity ends.

S3 refuses a request signed with query-string authentication once its expiry has passed, by the
store's own clock, whenever the request arrives ("Request has expired", 403). ``X-Amz-Expires``
counts whole seconds from a whole-second ``X-Amz-Date``: hence :data:`backends.fence.RESOLUTION`.
A body over :data:`backends.fence.INLINE_BODY` goes up as a multipart upload, whose parts stay
unseen until a fenced ``CompleteMultipartUpload`` (a few hundred bytes, with the write's
condition) makes them the object; a paused or delayed part delays nothing that counts. aiohttp
hands a request's head to the kernel with its body, in one write.

What it rests on: the store enforces the expiry (AWS S3 and SeaweedFS do; moto, a test server,
does not), and the store's clock is within the margin of the holder's (a quarter of the lease
time: 7.5 s by default).
"""

from __future__ import annotations

import calendar
import math
import time
from typing import Any

from backends.fence import FENCE, INLINE_BODY, RESOLUTION, late
from backends.lease import LeaseLost

__all__ = ["FENCE", "INLINE_BODY", "RESOLUTION", "NotSent", "choose_signer", "install", "late", "refused_as_late"]

#: The signature version that :func:`choose_signer` names for a fenced request.
SIGNATURE_VERSION = "vfs-s3v4-fenced"


class NotSent(Exception):
    """A lost lease, out of botocore's hooks: not a TimeoutError there, which its retry handler
    would retry (with back-off) before the caller heard of it."""

    def __init__(self, lost: LeaseLost) -> None:
        super().__init__(str(lost))
        self.lost = lost


def expires_in(valid_until: float, signed_at: int) -> int:
    """``X-Amz-Expires`` for a request signed at ``signed_at`` (whole seconds) that must not be
    accepted after ``valid_until``, rounded up (see the module docstring); at least 1."""
    return max(1, math.ceil(valid_until) - signed_at)


def expires_for(signed_at: int) -> int:
    """``X-Amz-Expires`` of the fenced request being signed at ``signed_at`` (whole seconds), by
    the fence :data:`FENCE` holds; ``NotSent`` when the lease has no validity left."""
    fence = FENCE.get()
    if fence is None:  # pragma: no cover - a fenced signature is chosen only while a fence is set
        raise RuntimeError("a fenced signature without a fence")
    try:
        valid_until = fence()
    except LeaseLost as lost:
        raise NotSent(lost) from None
    return expires_in(valid_until, signed_at)


def _fenced_auth_class() -> type[Any]:
    from botocore.auth import SIGV4_TIMESTAMP, S3SigV4QueryAuth

    class FencedQueryAuth(S3SigV4QueryAuth):  # type: ignore[misc]
        """Query-string SigV4 whose expiry is the lease's validity; the body stays the body."""

        def _modify_request_before_signing(self, request: Any) -> None:
            signed_at = calendar.timegm(time.strptime(request.context["timestamp"], SIGV4_TIMESTAMP))
            self._expires = expires_for(signed_at)
            # the query-string signer moves a request's body into its query (right for the
            # form-encoded APIs, wrong for an object's bytes): keep it where it is
            body, request.data = request.data, b""
            try:
                super()._modify_request_before_signing(request)
            finally:
                request.data = body

    return FencedQueryAuth


def install() -> None:
    """Make :data:`SIGNATURE_VERSION` known to botocore (once per process)."""
    from botocore.auth import AUTH_TYPE_MAPS

    if SIGNATURE_VERSION not in AUTH_TYPE_MAPS:
        AUTH_TYPE_MAPS[SIGNATURE_VERSION] = _fenced_auth_class()


def choose_signer(signature_version: str | None = None, **_: Any) -> str | None:
    """botocore's ``choose-signer`` hook: a fenced request is signed to expire with its lease."""
    if FENCE.get() is None or signature_version not in ("s3v4", "v4"):
        return None
    return SIGNATURE_VERSION


def refused_as_late(exc: BaseException) -> bool:
    """Whether a fenced request's failure is the store refusing it as arrived after its expiry
    (S3: 403 AccessDenied "Request has expired")."""
    response = getattr(exc, "response", None)
    if not isinstance(response, dict):
        return False
    error = response.get("Error") or {}
    status = (response.get("ResponseMetadata") or {}).get("HTTPStatusCode")
    return (status == 403 or error.get("Code") == "AccessDenied") and "expired" in str(error.get("Message", "")).lower()
