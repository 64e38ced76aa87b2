"""What a store-side fence is, for every backend whose commit lock is a lease that can expire.

A holder paused (SIGSTOP, a suspended VM, a debugger) between vfs's last check of its lease and
the send of a change can land that change after another client took the lease over and
committed. A store that refuses a request signed to expire closes that window: each change sent
under a lease is signed so that it expires when the lease's validity ends (its end less
``backends.lease.VALIDITY_MARGIN``), and a request that arrives later is refused by the store and
changes nothing. How a store signs so is the backend's (S3: query-string SigV4,
``backends/s3/fence.py``; Azure: a SAS, ``backends/azure/fence.py``); what they share is here.

Two rules follow from how stores check an expiry, and both backends keep them:

- The expiry is given in whole seconds, so it is rounded up by less than :data:`RESOLUTION`, and
  a waiter adds that second before it takes a lease over (``CasLease(resolution=RESOLUTION)``):
  what the store still accepts lands before any takeover.
- The store checks the expiry when the request's head arrives, not when its body has: a body
  still being sent when its sender stops lands late all the same (measured on SeaweedFS and on
  moto with S3's check: headers in time, body 4 s after the expiry, 200 and the object written).
  So a fenced request is small (:data:`INLINE_BODY`): a bigger body goes up first in pieces no
  one sees (S3's parts, Azure's uncommitted blocks) behind a small fenced request that makes
  them the object.
"""

from __future__ import annotations

import contextvars
import errno
from collections.abc import Callable

#: The stores' unit of expiry (whole seconds), which waiters add before a takeover.
RESOLUTION = 1.0

#: The largest body a fenced request carries itself: with its head it is handed to the kernel
#: at once and fits an idle connection's empty send buffer (never under 16 KiB with Linux's
#: default ``tcp_wmem``), so once sent it leaves whole even if the process is stopped. 12 KiB
#: keeps a small file's commit (its journal: the header, a pre- and a post-image) in one request.
#: What no size closes: a request's tail that the network (or a suspended VM's kernel) holds past
#: the expiry; the lease's margin, a quarter of its time, is the room for that.
INLINE_BODY = 12 * 1024

#: The end of validity (epoch seconds, by this host's clock) of the change about to be signed;
#: the callable raises ``LeaseLost`` when there is none left. Set per request by the backend,
#: only around a change sent under a lease (a context variable: a batch's calls run in threads or
#: tasks of their own).
FENCE: contextvars.ContextVar[Callable[[], float] | None] = contextvars.ContextVar("vfs_fence", default=None)


def late(key: str) -> TimeoutError:
    """The error of a change the store refused as late, while the lease itself was renewed."""
    return TimeoutError(
        errno.ETIMEDOUT,
        "the request reached the store after the validity it was signed for (the process paused "
        "or the network stalled); the store refused it: nothing of it was changed",
        key,
    )
