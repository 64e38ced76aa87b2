"""Azure's store-side fence (see :mod:`backends.fence`): each change sent under a lease carries a
service SAS whose signed expiry (``se``) is the lease's validity, rounded up to the second.

Azure Storage refuses a request whose SAS has expired (403 ``AuthenticationFailed``), by its own
clock, whenever the request arrives; Azurite does too. A fenced change goes through a client of
its own that holds no credential (a shared-key ``Authorization`` beside a SAS would be two
authorisations): :func:`fenced_hook`, that client's last hook before each attempt is signed and
sent, checks the lease and adds the SAS to the request's query. The SAS is signed here with the
account key, so the fence needs one (a connection string with ``AccountKey``, or
``account_key``); a workspace opened with a SAS token or an Azure AD credential keeps the
client-side check alone (``AzureBackend.fenced`` says which).

A body over :data:`backends.fence.INLINE_BODY` goes up as uncommitted blocks (signed as reads are:
no one sees them) behind a fenced, small Put Block List; and the backend's connections send a
request's head together with its body, in one write (:mod:`backends.azure.transport`: urllib3
sends them apart, and a body sent after a pause lands late, head accepted in time).

What it rests on, as on S3: the store enforces the expiry (Azure Storage and Azurite do), and the
store's clock is within the lease's margin of this host's (a quarter of the lease time: 7.5 s by
default). A host clock ahead of the store's lets a late change through for that much longer; one
behind it by more than a change's validity (three quarters of the lease time) has every change
under the lease refused as late.
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Callable
from typing import Any

from backends.azure import connect
from backends.azure.errors import code_of, status_of
from backends.fence import FENCE

#: The permissions of a fenced change's SAS: create and write a blob (Put Blob, Put Block List),
#: delete one. Reads never go through the fenced client.
PERMISSIONS = "cwd"


class SasSigner:
    """Container SASes for one container, signed with the account key, one per expiry second."""

    def __init__(self, account_name: str, account_key: str, container: str) -> None:
        self.account_name = account_name
        self.account_key = account_key
        self.container = container
        self._last: tuple[int, str] | None = None  # (se, token): a commit's changes share a second

    def query(self, valid_until: float) -> str:
        """The SAS query string of a change that must not land after ``valid_until`` (epoch s)."""
        if not math.isfinite(valid_until):
            raise RuntimeError("a fenced change sent with no lease held")
        expiry = math.ceil(valid_until)
        last = self._last
        if last is not None and last[0] == expiry:
            return last[1]
        from azure.storage.blob import ContainerSasPermissions, generate_container_sas

        token: str = generate_container_sas(
            self.account_name,
            self.container,
            account_key=self.account_key,
            permission=ContainerSasPermissions.from_string(PERMISSIONS),
            expiry=datetime.datetime.fromtimestamp(expiry, tz=datetime.UTC),
        )
        self._last = (expiry, token)
        return token


def fenced_hook(signer: SasSigner) -> Callable[[Any], None]:
    """The fenced client's ``raw_request_hook`` (run before each attempt, after each retry's wait):
    the lease is checked (``LeaseLost`` stops the request here, unretried) and the attempt is
    signed to expire with it."""

    def sign(request: Any) -> None:
        connect.check_before_send(request)
        fence = FENCE.get()
        if fence is None:
            raise RuntimeError("the fenced client used outside a change under a lease")
        query = signer.query(fence())
        http = request.http_request
        url = request.context.setdefault("vfs_unsigned_url", http.url)  # (a retry signs anew)
        http.url = f"{url}{'&' if '?' in url else '?'}{query}"

    return sign


def signer_for(container: Any) -> SasSigner | None:
    """A signer for the SDK ``ContainerClient`` ``container`` if it holds the account's key."""
    credential = getattr(container, "credential", None)
    name, key = getattr(credential, "account_name", None), getattr(credential, "account_key", None)
    if not (isinstance(name, str) and isinstance(key, str) and name and key):
        return None
    return SasSigner(name, key, str(container.container_name))


#: The codes of a refused signature: Azure Storage answers an expired SAS with the first, Azurite
#: with the second (both 403).
_REFUSED = ("AuthenticationFailed", "AuthorizationFailure")


def refused_as_late(exc: BaseException) -> bool:
    """Whether a fenced change's failure is the store refusing its SAS, as it does once the SAS
    has expired (the caller then finds the lease's validity gone too, or says it was late)."""
    return status_of(exc) == 403 and code_of(exc) in _REFUSED
