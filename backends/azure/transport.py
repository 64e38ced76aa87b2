"""The Azure backend's HTTP transport: a requests session whose connections hand a request's head
to the kernel together with its body's first bytes, in one write.

Why: the store checks a fenced change's SAS when the request's head arrives
(:mod:`backends.fence`). urllib3 sends the head, then the body, in writes of their own, and
between the two the GIL can pass to the other threads of a batch for milliseconds: a process
stopped there has sent a head the store accepts, and its body, sent on resumption, lands after
the expiry (the pause campaign on Azurite, before this: 2 of 100 trials left a file that the
paused committer's late create put back after another client's commit). A fenced body is at most
:data:`backends.fence.INLINE_BODY`, so head and body leave in one ``sendall``: once it returns
they are the kernel's to send, stopped process or not.

A request without a body sends its head when its response is asked for. Only the connections of
this session do this (a proxy's tunnel is urllib3's own).

Right before that write, the lease is checked once more (``connect.check_before_write``): the
last instant before the bytes are the kernel's. Where no fence can be signed (a SAS token), what
stays open is the few instructions between that check and the write.
"""

from __future__ import annotations

from typing import Any

import requests
import urllib3
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection

from backends.azure.connect import check_before_write as _last_check


class _HeadWithBody:
    """Keeps the head http.client would send at ``endheaders`` until the first ``send`` (the
    body's first chunk) or ``getresponse``, and sends it with that chunk."""

    _buffer: list[bytes]
    _held_head: bytes | None = None

    def _send_output(self, message_body: Any = None, encode_chunked: bool = False) -> None:
        self._buffer.extend((b"", b""))
        head = b"\r\n".join(self._buffer)
        del self._buffer[:]
        self._held_head = head
        if message_body is not None:  # (urllib3 sends bodies itself, in chunks)
            self.send(message_body)

    def send(self, data: Any) -> None:
        head, self._held_head = self._held_head, None
        if head is not None:
            _last_check()
            if isinstance(data, bytes | bytearray | memoryview):
                data = head + bytes(data)
            else:
                super().send(head)  # type: ignore[misc]
        super().send(data)  # type: ignore[misc]

    def getresponse(self) -> Any:
        head, self._held_head = self._held_head, None
        if head is not None:
            _last_check()
            super().send(head)  # type: ignore[misc]
        return super().getresponse()  # type: ignore[misc]


class OneWriteHTTPConnection(_HeadWithBody, HTTPConnection):
    pass


class OneWriteHTTPSConnection(_HeadWithBody, HTTPSConnection):
    pass


class _HTTPPool(urllib3.HTTPConnectionPool):
    ConnectionCls = OneWriteHTTPConnection


class _HTTPSPool(urllib3.HTTPSConnectionPool):
    ConnectionCls = OneWriteHTTPSConnection


class OneWriteAdapter(HTTPAdapter):
    """requests' adapter, its pools making :class:`OneWriteHTTPConnection` connections."""

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {"http": _HTTPPool, "https": _HTTPSPool}


def session(concurrency: int) -> requests.Session:
    """A session whose pool holds ``concurrency`` connections (requests' default of 10 would
    otherwise be the real bound of a batch), each sending a request's head with its body."""
    adapter = OneWriteAdapter(pool_connections=4, pool_maxsize=max(concurrency, 10))
    made = requests.Session()
    made.mount("http://", adapter)
    made.mount("https://", adapter)
    return made
