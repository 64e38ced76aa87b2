"""The Azure backend's connections hand a request's head to the kernel with its body, in one write
(backends/azure/transport.py): a store checks a fenced change's SAS when the head arrives, so a
body sent in a write of its own after a pause would land after the expiry."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

pytest.importorskip("requests")

import requests

from backends.azure import transport
from backends.fence import INLINE_BODY


class _Handler(BaseHTTPRequestHandler):
    received: list[tuple[str, bytes]] = []

    def _answer(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.received.append((self.command, body))
        self.send_response(201)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_PUT = do_DELETE = do_GET = _answer

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _Handler.received = []
    yield f"http://127.0.0.1:{server.server_address[1]}/c/f.txt"
    server.shutdown()
    server.server_close()


@pytest.fixture
def writes(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """Every ``sendall`` this thread makes (the server answers from threads of its own)."""
    made: list[bytes] = []
    caller = threading.get_ident()
    real = socket.socket.sendall

    def sendall(self: socket.socket, data: Any, *args: Any) -> Any:
        if threading.get_ident() == caller:
            made.append(bytes(data))
        return real(self, data, *args)

    monkeypatch.setattr(socket.socket, "sendall", sendall)
    return made


def test_a_fenced_body_leaves_with_its_head_in_one_write(url: str, writes: list[bytes]) -> None:
    body = b"x" * INLINE_BODY
    with transport.session(4) as session:
        assert session.put(url, data=body).status_code == 201
    assert len(writes) == 1
    assert writes[0].startswith(b"PUT /c/f.txt HTTP/1.1\r\n") and writes[0].endswith(b"\r\n\r\n" + body)
    assert _Handler.received == [("PUT", body)]


def test_a_request_without_a_body_still_goes(url: str, writes: list[bytes]) -> None:
    with transport.session(4) as session:
        assert session.delete(url).status_code == 201
        assert session.put(url, data=b"").status_code == 201  # an empty body: no chunk to send with
        assert session.put(url, data=b"after").status_code == 201  # the connection is reused cleanly
    assert [method for method, _ in _Handler.received] == ["DELETE", "PUT", "PUT"]
    assert _Handler.received[-1] == ("PUT", b"after")
    assert len(writes) == 3 and all(w.count(b" HTTP/1.1\r\n") == 1 for w in writes)


def test_a_plain_session_sends_the_head_and_the_body_apart(url: str, writes: list[bytes]) -> None:
    """What the transport changes (and what this file would catch if it stopped doing so)."""
    with requests.Session() as session:
        assert session.put(url, data=b"x" * INLINE_BODY).status_code == 201
    assert len(writes) == 2 and writes[1] == b"x" * INLINE_BODY


def test_a_lost_lease_found_at_the_write_sends_nothing(url: str, writes: list[bytes]) -> None:
    """The lease is checked once more right before the bytes go to the kernel; lost, nothing goes,
    and the error is not one urllib3, requests or the SDK would retry as a connection failure."""
    from backends.azure import connect
    from backends.lease import LeaseLost

    def lost() -> None:
        raise LeaseLost(110, "the commit lock expired while held", ".vfs/lock")

    token = connect.SEND_CHECK.set(lost)
    try:
        with transport.session(4) as session, pytest.raises(connect.NotSent) as stopped:
            session.put(url, data=b"late")
    finally:
        connect.SEND_CHECK.reset(token)
    assert isinstance(stopped.value.lost, LeaseLost)
    assert writes == [] and _Handler.received == []
