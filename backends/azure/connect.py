"""From ``az://container/prefix`` and fsspec-style storage options to an SDK container client.

Accepted like adlfs: ``connection_string``, ``account_name`` with ``account_key`` / ``sas_token``
/ ``credential``, ``account_url`` (or ``account_host``), ``anon``; the usual environment
variables (``AZURE_STORAGE_CONNECTION_STRING``, ``AZURE_STORAGE_ACCOUNT_NAME``, ``_KEY``,
``_SAS_TOKEN``) fill what the options leave out. ``abfs://container@account.dfs.core.windows.net/p``
names the account in the URL. ``vfs_*`` options are the backend's own (see the package docstring).
"""

from __future__ import annotations

import contextvars
import os
from collections.abc import Callable
from typing import Any

from backends.lease import LeaseLost
from backends.values import value

_ENV = {
    "connection_string": "AZURE_STORAGE_CONNECTION_STRING",
    "account_name": "AZURE_STORAGE_ACCOUNT_NAME",
    "account_key": "AZURE_STORAGE_ACCOUNT_KEY",
    "sas_token": "AZURE_STORAGE_SAS_TOKEN",
}


#: The check a change must pass right before each attempt of its request is sent: set by the
#: backend around the call (a context variable: the calls of a batch run in pool threads, each
#: setting its own).
SEND_CHECK: contextvars.ContextVar[Callable[[], None] | None] = contextvars.ContextVar(
    "vfs_azure_send_check", default=None
)


def check_before_send(request: Any) -> None:
    """The SDK's ``raw_request_hook``: called after every retry wait, right before the request
    is signed and sent; a holder paused past its lease stops here instead of sending a change."""
    check = SEND_CHECK.get()
    if check is not None:
        check()


class NotSent(Exception):
    """The lease was found lost right before a change's bytes were written: nothing was sent.
    Not an ``OSError``: urllib3, requests and the SDK's retry policy would take one for a
    connection failure and retry it."""

    def __init__(self, lost: LeaseLost) -> None:
        super().__init__(str(lost))
        self.lost = lost


def check_before_write() -> None:
    """The check again, in the connection, right before a request's bytes are handed to the
    kernel (``backends.azure.transport``); :class:`NotSent` if the lease is lost."""
    check = SEND_CHECK.get()
    if check is None:
        return
    try:
        check()
    except LeaseLost as lost:
        raise NotSent(lost) from None


@value(frozen=True)
class Location:
    container: str
    prefix: str
    account_name: str | None


def parse_url(url: str) -> Location:
    """``az://c/p``, ``abfs[s]://c/p``, ``abfs://c@acct.dfs.core.windows.net/p`` -> its parts."""
    _, _, rest = url.partition("://")
    head, _, prefix = rest.partition("/")
    container, _, host = head.partition("@")
    if not container:
        raise ValueError("an Azure root needs a container: az://container[/prefix]")
    account = host.split(".", 1)[0] if host else None
    return Location(container, prefix.strip("/"), account or None)


def split_options(storage_options: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the SDK's options, the backend's ``vfs_*`` tuning without the prefix)."""
    options = dict(storage_options)
    tuning = {k[4:]: options.pop(k) for k in list(options) if k.startswith("vfs_")}
    return options, tuning


def _credential(options: dict[str, Any], account: str | None) -> Any:
    if options.get("anon"):
        return None
    if options.get("credential") is not None:
        return options["credential"]
    if options.get("account_key"):
        # a bare string credential would be taken for a SAS token: name the account with the key
        return {"account_name": account, "account_key": options["account_key"]}
    return options.get("sas_token")


def container_client(loc: Location, storage_options: dict[str, Any], client_kwargs: dict[str, Any]) -> Any:
    """The SDK ``ContainerClient`` for ``loc``; ``client_kwargs`` tune the SDK (sizes, transport)."""
    from azure.storage.blob import BlobServiceClient

    options = dict(storage_options)
    for name, var in _ENV.items():
        if options.get(name) is None and os.environ.get(var) and not options.get("anon"):
            options[name] = os.environ[var]
    kwargs = sdk_kwargs(options, client_kwargs)
    if options.get("connection_string"):
        service = BlobServiceClient.from_connection_string(options["connection_string"], **kwargs)
        return service.get_container_client(loc.container)
    account = options.get("account_name") or loc.account_name
    url = options.get("account_url")
    if not url and options.get("account_host"):
        url = f"https://{options['account_host']}"
    if not url:
        if not account:
            raise ValueError("Azure needs account_name, account_url or connection_string in storage_options")
        url = f"https://{account}.blob.core.windows.net"
    service = BlobServiceClient(url, credential=_credential(options, account), **kwargs)
    return service.get_container_client(loc.container)


def sdk_kwargs(storage_options: dict[str, Any], client_kwargs: dict[str, Any]) -> dict[str, Any]:
    """The SDK's keyword arguments for a client: the user's ``client_kwargs``, then the backend's."""
    return {**dict(storage_options.get("client_kwargs") or {}), **client_kwargs}


def fenced_client(container: Any, kwargs: dict[str, Any]) -> Any:
    """A client of ``container``'s container that holds no credential: each of its requests is
    authorised by the ``raw_request_hook`` in ``kwargs`` (``backends.azure.fence``)."""
    from azure.storage.blob import ContainerClient

    return ContainerClient.from_container_url(container.url, credential=None, **kwargs)
