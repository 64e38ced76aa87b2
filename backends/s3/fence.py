"""A fence the store enforces: every change sent under a lease expires with the lease.

The lease is checked in botocore's last hook before a request leaves the process, which leaves
one window: a holder paused (SIGSTOP, a suspended VM, a debugger) between that check and the
send, whose request then lands after another client took the lease over and committed. Where
versions are content hashes (S3's ETags) that late request can even pass its ``If-Match``, if
the other client wrote the very bytes the condition names.

S3 refuses a request signed with query-string authentication once its expiry has passed, by the
store's own clock, whenever the request arrives ("Request has expired", 403). So each change sent
under a lease is signed that way, to expire when the lease's validity ends (its end minus
``backends.lease.VALIDITY_MARGIN``): a request that arrives later is refused by the store and
changes nothing. ``X-Amz-Expires`` counts whole seconds from a whole-second ``X-Amz-Date``, so the
expiry is rounded up by less than :data:`RESOLUTION`, and a waiter adds that second before it
takes a lease over (``CasLease(resolution=RESOLUTION)``): what the store still accepts lands before
any takeover.

The store checks the expiry when the request's head arrives, not when its body has: a request
whose body is still being sent when its sender stops (or whose last bytes the network delays)
lands late all the same (measured on SeaweedFS and on moto with S3's check: headers in time, body
4 s after the expiry, 200 and the object written). So a fenced request is small: a body over
:data:`INLINE_BODY` goes up as a multipart upload, whose parts stay unseen until a fenced
``CompleteMultipartUpload`` (a few hundred bytes, with the write's condition) makes them the
object; a paused or delayed part delays nothing that counts.

What it rests on: the store enforces the expiry (AWS S3 and SeaweedFS do; moto, a test server,
does not), and the store's clock is within the margin of the holder's (a quarter of the lease
time: 7.5 s by default).
"""

from __future__ import annotations

import calendar
import contextvars
import errno
import math
import time
from collections.abc import Callable
from typing import Any

from backends.lease import LeaseLost

#: The store's unit of expiry (whole seconds), which waiters add before a takeover.
RESOLUTION = 1.0

#: The largest body a fenced request carries itself. With its head (~1.5 KB, the query-string
#: signature included) it is handed to the kernel in one write (aiohttp sends a request's head
#: with its body) and fits an idle connection's empty send buffer (never under 16 KiB with
#: Linux's default ``tcp_wmem``): once written, it leaves whole even if the process is stopped.
#: 12 KiB keeps a small file's commit (its journal: the header, a pre- and a post-image) in one
#: request. What no size closes: a request's tail that the network (or a suspended VM's kernel)
#: holds past the expiry; the lease's margin, a quarter of its time, is the room for that.
INLINE_BODY = 12 * 1024

#: The signature version that :func:`choose_signer` names for a fenced request.
SIGNATURE_VERSION = "vfs-s3v4-fenced"

#: The end of validity (epoch seconds, by this host's clock) of the request about to be signed;
#: the callable raises ``LeaseLost`` when there is none left. Set per request by the client.
FENCE: contextvars.ContextVar[Callable[[], float] | None] = contextvars.ContextVar("vfs_s3_fence", default=None)


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


def late(key: str) -> TimeoutError:
    """The error of a change the store refused as late, while the lease itself was renewed."""
    return TimeoutError(
        errno.ETIMEDOUT,
        "the request reached the store after the validity it was signed for (the process paused "
        "or the network stalled); the store refused it: nothing of it was changed",
        key,
    )
