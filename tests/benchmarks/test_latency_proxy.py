"""The S3 benchmark's latency proxy: every byte through, in order, each way at least ``rtt/2`` late,
half-closes passed on, a refused upstream passed on as a closed connection."""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator

import pytest

from benchmarks import s3_latency_proxy
from benchmarks.s3_latency_proxy import LatencyProxy


@contextlib.contextmanager
def _serve(handle: Callable[[socket.socket], None]) -> Iterator[int]:
    """A loopback server running ``handle`` on each connection (its own thread); yields its port."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    done = threading.Event()

    def accept() -> None:
        listener.settimeout(0.1)
        while not done.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            conn.settimeout(None)
            threading.Thread(target=handle, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield port
    finally:
        done.set()
        thread.join(timeout=5)
        listener.close()


def _recv_all(conn: socket.socket) -> bytes:
    chunks = []
    while chunk := conn.recv(1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)


def _echo_until_eof(conn: socket.socket) -> None:
    """Reads everything the client sends, until its half-close; then sends it back and closes."""
    with conn:
        data = _recv_all(conn)
        conn.sendall(data)


def _echo_late(conn: socket.socket) -> None:
    """:func:`_echo_until_eof`, after a pause before the first read: the proxy's writes to it
    pile up past the transport's buffer, so the proxy must stop reading the client and resume."""
    time.sleep(0.5)
    _echo_until_eof(conn)


@pytest.fixture
def echo_port() -> Iterator[int]:
    with _serve(_echo_until_eof) as port:
        yield port


def test_a_round_trip_takes_at_least_the_rtt() -> None:
    def ping_pong(conn: socket.socket) -> None:
        with conn:
            while data := conn.recv(16):
                conn.sendall(data)

    with (
        _serve(ping_pong) as port,
        LatencyProxy("127.0.0.1", port, rtt=0.06) as proxy,
        socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as client,
    ):
        client.sendall(b"x")  # the connection set up: the first byte's trip not counted
        assert client.recv(16) == b"x"
        start = time.perf_counter()
        client.sendall(b"ping")
        got = b""
        while len(got) < 4:
            got += client.recv(16)
        elapsed = time.perf_counter() - start
    assert got == b"ping"
    assert elapsed >= 0.06  # 30 ms each way, never less


def test_every_byte_goes_through_in_order_each_way_and_a_half_close_is_passed_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    paused: list[int] = []
    real_pause = s3_latency_proxy._Direction.pause_writing

    def counting(side: s3_latency_proxy._Direction) -> None:
        paused.append(1)
        real_pause(side)

    monkeypatch.setattr(s3_latency_proxy._Direction, "pause_writing", counting)
    data = os.urandom(8 << 20)
    with (
        _serve(_echo_late) as port,
        LatencyProxy("127.0.0.1", port, rtt=0.004) as proxy,
        socket.create_connection(("127.0.0.1", proxy.port), timeout=20) as client,
    ):
        sender = threading.Thread(target=lambda: (client.sendall(data), client.shutdown(socket.SHUT_WR)), daemon=True)
        sender.start()
        echoed = _recv_all(client)  # the server answers only after the client's EOF reached it
        sender.join(timeout=10)
    assert echoed == data
    assert paused, "the server's slow start never filled the proxy's write buffer: flow control not exercised"


def test_connections_are_proxied_independently(echo_port: int) -> None:
    with LatencyProxy("127.0.0.1", echo_port, rtt=0.004) as proxy:
        clients = [socket.create_connection(("127.0.0.1", proxy.port), timeout=10) for _ in range(5)]
        for number, client in enumerate(clients):
            client.sendall(f"client {number}".encode())
            client.shutdown(socket.SHUT_WR)
        answers = [_recv_all(client) for client in clients]
        for client in clients:
            client.close()
        assert proxy.connections == 5
    assert answers == [f"client {number}".encode() for number in range(5)]


def test_an_upstream_that_refuses_closes_the_clients_connection() -> None:
    with socket.create_server(("127.0.0.1", 0)) as placeholder:
        port = placeholder.getsockname()[1]  # closed below: nothing listens there
    with (
        LatencyProxy("127.0.0.1", port, rtt=0.004) as proxy,
        socket.create_connection(("127.0.0.1", proxy.port)) as client,
    ):
        client.settimeout(5)
        client.sendall(b"hello")
        try:
            assert client.recv(16) == b""
        except ConnectionResetError:
            pass  # closed with data unread: also a closed connection
