"""A TCP proxy that adds network latency in front of a loopback S3 server, and a benchmark using it.

Loopback S3 answers in well under a millisecond of network time, which hides what matters on real
S3 (10-50 ms per round trip): how many *sequential* requests an operation needs. The proxy delays
every chunk by ``rtt/2`` in each direction (a chunk is sent ``rtt/2`` after it arrived, so a
stream is delayed, not throttled), which turns each request/response into one round trip.

Library use::

    with LatencyProxy("127.0.0.1", upstream_port, rtt=0.02) as proxy:
        endpoint = f"http://127.0.0.1:{proxy.port}"

Benchmark (moto by default; ``--server seaweedfs`` needs ``weed``)::

    python benchmarks/s3_latency_proxy.py --rtt-ms 20 --files 32

It prints, per operation, wall time and S3 requests for sequential single-key calls versus the
batch extension (``read_many``/``stat_many``/``write_many``/``matches_many``), and a vfs
transaction commit of the same files.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Collection, Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


class _Direction(asyncio.Protocol):
    """One side of a proxied connection: what arrives on it is written to the other side's
    transport ``delay`` seconds later, in order.

    Protocol callbacks and one timer per direction, not stream readers, queues and a task per
    chunk: the proxy stands for a network, whose latency takes no CPU, and it runs on the same
    cores as the client and the server it sits between (a stream-based version took ~40 ms of
    CPU per 100-file commit here, ~0.3 ms per request).
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, delay: float, sides: set[_Direction]) -> None:
        self.loop = loop
        self.delay = delay
        self.sides = sides  # the proxy's open sides, closed at its stop
        self.transport: asyncio.Transport | None = None
        self.peer: _Direction | None = None
        self.due: collections.deque[tuple[float, bytes | None]] = collections.deque()  # None: EOF
        self.timer: asyncio.TimerHandle | None = None
        self.closed = False

    # -- the transport this side reads from --------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.sides.add(self)
        peer = self.peer
        if peer is not None and peer.due and peer.timer is None:  # what arrived before this side connected
            peer.timer = self.loop.call_at(peer.due[0][0], peer._flush)

    def data_received(self, data: bytes) -> None:
        self._later(data)

    def eof_received(self) -> bool:
        self._later(None)
        return True  # half-closed: the other way may still be sending

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.sides.discard(self)
        self._later(None)

    # -- writing to the other side, ``delay`` later -------------------------------------------

    def _later(self, data: bytes | None) -> None:
        self.due.append((self.loop.time() + self.delay, data))
        if self.timer is None:
            self.timer = self.loop.call_at(self.due[0][0], self._flush)

    def _flush(self) -> None:
        self.timer = None
        peer = self.peer
        if peer is None or peer.transport is None:  # not connected yet: its connection_made flushes
            return
        now = self.loop.time()
        while self.due and self.due[0][0] <= now:
            _, data = self.due.popleft()
            if data is None:
                self._finish(peer.transport)
                self.due.clear()
                return
            if not peer.transport.is_closing():
                peer.transport.write(data)
        if self.due:
            self.timer = self.loop.call_at(self.due[0][0], self._flush)

    def _finish(self, out: asyncio.Transport) -> None:
        """The end of this direction: EOF to the other side, and both closed once both ended."""
        if self.closed:
            out.close()
            return
        with contextlib.suppress(OSError, RuntimeError):
            if out.can_write_eof() and not out.is_closing():
                out.write_eof()
        if self.peer is not None and self.peer.closed and self.transport is not None:
            self.transport.close()

    # -- flow control: the other side's write buffer full, stop reading this one ---------------

    def pause_writing(self) -> None:
        if self.peer is not None and self.peer.transport is not None:
            self.peer.transport.pause_reading()

    def resume_writing(self) -> None:
        if self.peer is not None and self.peer.transport is not None and not self.peer.transport.is_closing():
            self.peer.transport.resume_reading()


class LatencyProxy:
    """Forward 127.0.0.1:<port> to ``upstream`` with ``rtt/2`` of delay each way (own thread/loop)."""

    def __init__(self, upstream_host: str, upstream_port: int, *, rtt: float, host: str = "127.0.0.1") -> None:
        self.upstream = (upstream_host, upstream_port)
        self.delay = rtt / 2
        self.host = host
        self.port = 0
        self.connections = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="latency-proxy", daemon=True)
        self._server: asyncio.base_events.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._sides: set[_Direction] = set()

    def _accepted(self) -> _Direction:
        """A client connected: its side, and the upstream connection opened for it."""
        self.connections += 1
        client = _Direction(self._loop, self.delay, self._sides)
        task = self._loop.create_task(self._connect(client))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return client

    async def _connect(self, client: _Direction) -> None:
        upstream = _Direction(self._loop, self.delay, self._sides)
        client.peer, upstream.peer = upstream, client
        try:
            await self._loop.create_connection(lambda: upstream, *self.upstream)
        except OSError:
            client.peer = None  # nothing to forward to: what the client sent is dropped with it
            client.due.clear()
            if client.transport is not None:
                client.transport.close()

    async def _start(self) -> None:
        self._server = await self._loop.create_server(self._accepted, self.host, 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        for side in list(self._sides):
            if side.timer is not None:
                side.timer.cancel()
            if side.transport is not None:
                side.transport.close()
        if self._server is not None:
            await self._server.wait_closed()

    def start(self) -> LatencyProxy:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(timeout=10)
        return self

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self._stop(), self._loop).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()

    def __enter__(self) -> LatencyProxy:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


class LatencyProxyProcess:
    """The same proxy in a child process (no GIL shared with the client being measured)."""

    def __init__(self, upstream_host: str, upstream_port: int, *, rtt: float) -> None:
        self.args = [upstream_host, str(upstream_port), str(rtt)]
        self.port = 0
        self._proc: subprocess.Popen[str] | None = None

    @property
    def pid(self) -> int | None:
        """The proxy's process (its CPU is the rig's, not the client's nor the server's)."""
        return self._proc.pid if self._proc is not None else None

    def __enter__(self) -> LatencyProxyProcess:
        self._proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--serve", *self.args],
            stdout=subprocess.PIPE,
            stdin=subprocess.PIPE,
            text=True,
        )
        assert self._proc.stdout is not None
        self.port = int(self._proc.stdout.readline().strip())
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        proc = self._proc
        if proc is None:
            return
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.close()  # the child exits when its stdin closes
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        proc.stdout.close()


def _serve(host: str, port: str, rtt: str) -> int:
    with LatencyProxy(host, int(port), rtt=float(rtt)) as proxy:
        print(proxy.port, flush=True)
        sys.stdin.read()  # until the parent closes our stdin
    return 0


# -- the benchmark ------------------------------------------------------------------------------


@contextlib.contextmanager
def _server(kind: str) -> Iterator[Any]:
    from tests.support import s3_servers

    if kind == "moto":
        with s3_servers.moto_endpoint() as ep:
            yield ep
    else:
        with s3_servers.seaweedfs_endpoint() as ep:
            yield ep


class RequestLog:
    """Every S3 request one backend made since the last :meth:`clear`: its operation, key and
    start and end instants (``time.perf_counter``, taken around the request in the client)."""

    def __init__(self) -> None:
        self.counts: collections.Counter[str] = collections.Counter()
        self.spans: list[tuple[str, str, float, float]] = []

    def clear(self) -> None:
        self.counts.clear()
        self.spans.clear()

    def round_trips(self, until: float | None = None) -> int:
        """The requests on the critical path: the longest chain of requests each sent after the
        previous one's answer came back (requests in flight together are one round trip). The
        greedy choice of the earliest-ending request is the longest such chain. ``until``: only
        requests answered by then (the caller's wait; a lease release still in flight when the
        call returned is not latency the caller waited for)."""
        chain, free_at = 0, float("-inf")
        spans = [span for span in self.spans if until is None or span[3] <= until]
        for _, _, start, end in sorted(spans, key=lambda span: span[3]):
            if start >= free_at:
                chain, free_at = chain + 1, end
        return chain

    def span(self, op: str, keys: Collection[str]) -> float | None:
        """Seconds from the first start to the last answer of the ``op`` requests on ``keys``
        (a commit's wave of PUTs of its files); ``None`` if there were none."""
        spans = [(start, end) for o, key, start, end in self.spans if o == op and key in keys]
        if not spans:
            return None
        return max(end for _, end in spans) - min(start for start, _ in spans)

    def timeline(self, returned: float | None = None) -> str:
        """One entry per request, in the order sent: ms from the first start, op, key; those
        answered after ``returned`` (the caller had its result) are marked."""
        if not self.spans:
            return "no requests"
        first = min(span[2] for span in self.spans)
        rows = sorted(self.spans, key=lambda span: span[2])
        late = " (answered after the call returned)"
        return "; ".join(
            f"{1000 * (s - first):.0f}-{1000 * (e - first):.0f} ms {op} {key}"
            + (late if returned is not None and e > returned else "")
            for op, key, s, e in rows
        )


def record_requests(backend: Any) -> RequestLog:
    """Record every S3 request ``backend`` (a ``backends.s3.S3Backend``) makes from now on.

    It wraps the backend's ``_call``, the one coroutine every request of the backend goes through
    (batched ones included), on this instance only; a request is counted when it is sent, whether
    it succeeds or not, and its span ends when its answer (or error) is back. Call it once per
    backend: a second call counts twice.
    """
    log = RequestLog()
    real = backend._call

    async def call(op: str, key: str, **kw: Any) -> Any:
        log.counts[op] += 1
        start = time.perf_counter()
        try:
            return await real(op, key, **kw)
        finally:
            log.spans.append((op, key, start, time.perf_counter()))

    backend._call = call
    return log


def count_requests(backend: Any) -> collections.Counter[str]:
    """The request counts of :func:`record_requests` (operation name -> requests), updated in
    place: ``clear()`` it before a measurement, read it (or a copy of it) after."""
    return record_requests(backend).counts


def _measure(label: str, counts: collections.Counter[str], fn: Callable[[], Any], rows: list[dict[str, Any]]) -> None:
    counts.clear()
    started = time.perf_counter()
    fn()
    elapsed = time.perf_counter() - started
    rows.append({"operation": label, "seconds": round(elapsed, 4), "requests": sum(counts.values())})


def _suite(be: Any, n: int, label: str) -> list[dict[str, Any]]:
    import vfs
    from backends.base import WriteItem

    rows: list[dict[str, Any]] = []
    counts = count_requests(be)
    keys = [f"{label}/src/f{i:03}.txt" for i in range(n)]
    payload = [f"file {i}\n".encode() * 20 for i in range(n)]
    be.stat("warmup")  # connection + client setup out of the measurements
    _measure(
        f"write x{n} sequential",
        counts,
        lambda: [be.write(WriteItem(k, d)) for k, d in zip(keys, payload, strict=True)],
        rows,
    )
    _measure(
        f"write_many x{n}",
        counts,
        lambda: be.write_many([WriteItem(k, d) for k, d in zip(keys, payload, strict=True)]),
        rows,
    )
    _measure(f"read x{n} sequential", counts, lambda: [be.read(k) for k in keys], rows)
    _measure(f"read_many x{n}", counts, lambda: be.read_many(keys), rows)
    _measure(f"stat x{n} sequential", counts, lambda: [be.stat(k) for k in keys], rows)
    _measure(f"stat_many x{n}", counts, lambda: be.stat_many(keys), rows)
    versions = [(k, be.stat(k).version) for k in keys]
    _measure(f"matches x{n} sequential", counts, lambda: [be.matches(k, v) for k, v in versions], rows)
    _measure(f"matches_many x{n}", counts, lambda: be.matches_many(versions), rows)
    _measure("list one directory", counts, lambda: be.list(f"{label}/src"), rows)
    _measure("lock + unlock", counts, lambda: be.lock(f"{label}/lock", timeout=5).acquire().release(), rows)

    ws: list[Any] = []
    mount = "/workspace"
    _measure("open workspace", counts, lambda: ws.append(vfs.Workspace(be, mount=mount)), rows)

    def tx_commit() -> None:
        with ws[0].transaction(label="bench") as tx:
            for k in keys:
                tx.write(f"{mount}/{k}", b"edited\n")

    _measure(f"vfs transaction writing {n} files", counts, tx_commit, rows)
    _measure("vfs read one file", counts, lambda: ws[0].read(f"{mount}/{keys[0]}"), rows)
    _measure("vfs write one file", counts, lambda: ws[0].write_bytes(f"{mount}/{keys[0]}", b"x\n"), rows)
    return rows


def run(kind: str, rtt: float, n: int, repeat: int = 3) -> list[dict[str, Any]]:
    """Each operation with the proxy at 0 ms and at ``rtt``: the difference divided by ``rtt``
    is the number of round trips the operation makes one after the other."""
    from backends.s3 import S3Backend
    from tests.support import s3_servers

    with _server(kind) as ep:
        bucket = s3_servers.make_bucket(ep, "bench")
        upstream_port = int(ep.endpoint_url.rsplit(":", 1)[1])
        results: dict[float, list[dict[str, Any]]] = {}
        for delay in (0.0, rtt):
            with LatencyProxyProcess("127.0.0.1", upstream_port, rtt=delay) as proxy:
                opts = dict(s3_servers.storage_options_for(f"http://127.0.0.1:{proxy.port}"), skip_instance_cache=True)
                runs = []
                for attempt in range(repeat):
                    be = S3Backend.from_url(f"s3://{bucket}/bench-{int(delay * 1000)}ms-{attempt}", opts)
                    try:
                        runs.append(_suite(be, n, "p"))
                    finally:
                        be.close()
                # the fastest of the runs: noise only ever adds time
                results[delay] = [min(rs, key=lambda r: r["seconds"]) for rs in zip(*runs, strict=True)]
    rows = []
    for base, slow in zip(results[0.0], results[rtt], strict=True):
        trips = (slow["seconds"] - base["seconds"]) / rtt if rtt else 0.0
        rows.append(
            {
                "operation": slow["operation"],
                "seconds": slow["seconds"],
                "seconds_at_0ms": base["seconds"],
                "requests": slow["requests"],
                "sequential_round_trips": round(max(trips, 0.0), 1),
            }
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--serve"]:
        return _serve(*argv[1:4])
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", choices=["moto", "seaweedfs"], default="moto")
    parser.add_argument("--rtt-ms", type=float, default=20.0)
    parser.add_argument("--files", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=3, help="runs per setting; the fastest counts")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args(argv)
    os.environ.setdefault("AWS_EC2_METADATA_DISABLED", "true")
    rows = run(args.server, args.rtt_ms / 1000, args.files, args.repeat)
    if args.json:
        print(json.dumps({"server": args.server, "rtt_ms": args.rtt_ms, "rows": rows}, indent=2))
    else:
        print(f"# S3 backend on {args.server}, proxy at 0 ms and at {args.rtt_ms:g} ms RTT")
        print(f"{'operation':36} {'s @0ms':>8} {'s @rtt':>8} {'requests':>9} {'seq. round trips':>17}")
        for row in rows:
            print(
                f"{row['operation']:36} {row['seconds_at_0ms']:8.3f} {row['seconds']:8.3f} "
                f"{row['requests']:9d} {row['sequential_round_trips']:17.1f}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
