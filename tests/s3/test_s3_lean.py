"""The lean PUT (backends/s3/lean.py): signed as botocore signs, taken where it is declared to be,
and its undecided answers sent again through botocore and reported truly."""

from __future__ import annotations

import datetime
import errno
from collections.abc import Iterator
from typing import Any

import pytest

from backends.base import PreconditionFailed, Vanished, WriteItem
from backends.s3 import S3Backend, lean
from tests.s3.conftest import BackendMaker

NOW = 1_796_400_000.0  # a fixed instant (2026-12-04), for signatures compared byte for byte


class _Credentials:
    def __init__(self, token: str | None) -> None:
        self.access_key = "AKIDEXAMPLE"
        self.secret_key = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
        self.token = token


def _botocore_request(url: str, headers: dict[str, str], body: bytes) -> Any:
    from botocore.awsrequest import AWSRequest
    from botocore.config import Config

    request = AWSRequest(method="PUT", url=url, headers=dict(headers), data=body)
    request.context.update(client_config=Config(), has_streaming_input=True)
    return request


@pytest.fixture
def frozen_botocore_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    import botocore.auth

    moment = datetime.datetime.fromtimestamp(NOW, datetime.UTC).replace(tzinfo=None)
    monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda: moment)


@pytest.mark.parametrize("token", [None, "session-token/=+"])
@pytest.mark.parametrize("key", ["ws/a.txt", "ws/a b/c+d~e%f/ü.py", "ws/.vfs/tx/0179-ab.record"])
@pytest.mark.parametrize("base", ["http://127.0.0.1:8333/bucket", "https://bucket.s3.eu-west-1.amazonaws.com"])
def test_the_header_signature_is_botocores(frozen_botocore_clock: None, token: str | None, key: str, base: str) -> None:
    from botocore.auth import S3SigV4Auth, _host_from_url
    from botocore.utils import percent_encode

    body = b"print('hello')\n" * 50
    url = f"{base}/{percent_encode(key, safe='/~')}"
    credentials = _Credentials(token)
    ours = {"x-amz-checksum-crc32": "NhCmhg==", "x-amz-sdk-checksum-algorithm": "CRC32", "If-None-Match": "*"}
    theirs = _botocore_request(url, ours, body)
    lean.Signer(_host_from_url(base), "eu-west-1").sign_headers(
        url.split(_host_from_url(base), 1)[1], ours, body, credentials, NOW
    )
    S3SigV4Auth(credentials, "s3", "eu-west-1").add_auth(theirs)
    assert theirs.headers["X-Amz-Content-SHA256"] == ours["X-Amz-Content-SHA256"]  # the body's hash, signed
    assert ours["Authorization"] == theirs.headers["Authorization"]
    assert ours["X-Amz-Date"] == theirs.headers["X-Amz-Date"]


@pytest.mark.parametrize("token", [None, "session-token/=+"])
@pytest.mark.parametrize("condition", [{}, {"If-Match": '"0123abcd"'}])
def test_the_fenced_query_signature_is_botocores(
    frozen_botocore_clock: None, token: str | None, condition: dict[str, str]
) -> None:
    from botocore.auth import S3SigV4QueryAuth

    base, key = "http://127.0.0.1:8333/bucket", "ws/a b/c.py"
    url = f"{base}/ws/a%20b/c.py"
    credentials = _Credentials(token)
    headers = {"x-amz-checksum-crc32": "NhCmhg==", "x-amz-sdk-checksum-algorithm": "CRC32", **condition}
    query = lean.Signer("127.0.0.1:8333", "us-east-1").sign_query(
        f"/bucket/{key.replace(' ', '%20')}", headers, credentials, NOW, 17
    )
    theirs = _botocore_request(url, headers, b"body")
    theirs.data = b""  # the fenced signer keeps the body out of the query (backends.s3.fence)
    S3SigV4QueryAuth(credentials, "s3", "us-east-1", expires=17).add_auth(theirs)
    assert f"{url}?{query}" == theirs.url


@pytest.fixture
def lean_calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[bool]]:
    """One entry per lean PUT sent (whether it was fenced)."""
    calls: list[bool] = []
    real = lean.LeanPut.put

    async def put(self: lean.LeanPut, kwargs: dict[str, Any], *, fenced: bool) -> Any:
        calls.append(fenced)
        return await real(self, kwargs, fenced=fenced)

    monkeypatch.setattr(lean.LeanPut, "put", put)
    yield calls


def _botocore_puts(backend: S3Backend) -> list[str]:
    """Records each PutObject botocore itself sends from now on (its ``before-call`` event)."""
    backend._run(backend.fs.set_session)
    client = backend._run(lambda: backend.fs.get_s3(backend.bucket))
    seen: list[str] = []
    client.meta.events.register(
        "before-call.s3.PutObject", lambda params=None, **_: seen.append(params["url_path"]), unique_id=f"t{id(seen)}"
    )
    return seen


def test_a_batch_of_small_writes_goes_the_lean_way_with_its_conditions(
    make_backend: BackendMaker, lean_calls: list[bool]
) -> None:
    backend = make_backend()
    backend.write(WriteItem("old.txt", b"old"))
    botocore_puts = _botocore_puts(backend)
    lean_calls.clear()
    items = [WriteItem(f"src/m{i}.py", f"x = {i}\n".encode(), if_absent=True) for i in range(20)]
    with backend.lock(".vfs/lock", timeout=5):
        written = backend.write_many(items)
    assert not [w for w in written if isinstance(w, BaseException)]
    stats = backend.stat_many([i.key for i in items])
    assert [w.version for w in written if not isinstance(w, BaseException)] == [
        s.version for s in stats if s is not None and not isinstance(s, BaseException)
    ]
    assert lean_calls.count(True) == 20  # every one of the batch, fenced under the lease
    old = backend.stat("old.txt")
    assert old is not None
    with pytest.raises(PreconditionFailed) as exists:
        backend.write(WriteItem("old.txt", b"new", if_absent=True))
    assert exists.value.errno == errno.EEXIST
    with pytest.raises(PreconditionFailed) as stale:
        backend.write(WriteItem("old.txt", b"new", if_version='"0123456789abcdef0123456789abcdef"'))
    assert stale.value.errno == errno.ESTALE and not isinstance(stale.value, Vanished)
    with pytest.raises(Vanished):
        backend.write(WriteItem("gone.txt", b"new", if_version=old.version))
    assert backend.read("old.txt")[0] == b"old"
    assert botocore_puts == []  # the lease's PUT and release included: all lean


def test_extra_request_parameters_go_through_botocore(make_backend: BackendMaker, lean_calls: list[bool]) -> None:
    backend = make_backend(
        storage={"s3_additional_kwargs": {"ContentType": "text/x-python"}, "skip_instance_cache": True}
    )
    botocore_puts = _botocore_puts(backend)
    backend.write(WriteItem("a.py", b"x = 1\n"))
    assert lean_calls == [] and len(botocore_puts) == 1
    meta = backend._run(lambda: backend._call("head_object", "a.py", Key=backend._obj("a.py")))
    assert meta["ContentType"] == "text/x-python"


class _Disconnects:
    """An aiohttp session whose request is sent (``landed``) or not, and then the connection drops
    before its answer is read: a transport error after which no one knows if it landed."""

    def __init__(self, real: Any, landed: bool) -> None:
        self.real = real
        self.landed = landed

    def request(self, *args: Any, **kwargs: Any) -> Any:
        outer = self

        class Context:
            async def __aenter__(self) -> Any:
                import aiohttp

                if outer.landed:
                    async with outer.real.request(*args, **kwargs) as response:
                        await response.read()
                raise aiohttp.ServerDisconnectedError()

            async def __aexit__(self, *exc: object) -> None:
                return None

        return Context()


def _disconnect_lean_puts(backend: S3Backend, monkeypatch: pytest.MonkeyPatch, *, landed: bool) -> None:
    client = backend._run(lambda: backend.fs.get_s3(backend.bucket))
    put = backend._run(lambda: lean.lean_put(client, backend.bucket, 2**20))
    assert put is not None
    http = put._http

    class Http:
        _proxy_config = http._proxy_config

        async def _get_session(self, proxy: object) -> Any:
            return _Disconnects(await http._get_session(proxy), landed)

    monkeypatch.setattr(put, "_http", Http())


@pytest.mark.parametrize("landed", [True, False], ids=["first-attempt-landed", "first-attempt-lost"])
def test_an_undecided_lean_put_is_sent_again_through_botocore_and_reported_truly(
    make_backend: BackendMaker, monkeypatch: pytest.MonkeyPatch, lean_calls: list[bool], landed: bool
) -> None:
    """The create's condition fails on the second attempt either way: because the first one
    landed (then the write is ours: the object holds our bytes) or because another object was
    there (a conflict, never taken for ours)."""
    backend = make_backend()
    backend.write(WriteItem("warm", b"x"))
    if not landed:
        backend.write(WriteItem("f.txt", b"someone else's"))
    _disconnect_lean_puts(backend, monkeypatch, landed=landed)
    botocore_puts = _botocore_puts(backend)
    lean_calls.clear()
    if landed:
        info = backend.write(WriteItem("f.txt", b"ours", if_absent=True))
        current = backend.stat("f.txt")
        assert current is not None and info.version == current.version
        assert backend.read("f.txt")[0] == b"ours"
    else:
        with pytest.raises(PreconditionFailed) as conflict:
            backend.write(WriteItem("f.txt", b"ours", if_absent=True))
        assert conflict.value.errno == errno.EEXIST
        assert backend.read("f.txt")[0] == b"someone else's"
    assert len(lean_calls) == 1 and len(botocore_puts) == 1


def test_a_lean_put_refused_as_late_is_not_a_conflict(
    make_seaweed_backend: BackendMaker, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fenced lean PUT signed to expire before it arrives (as if paused past its expiry) is
    refused by a store that enforces the expiry (SeaweedFS; moto does not) and reported as late."""
    make_backend = make_seaweed_backend
    backend = make_backend(lease_ttl=30)
    backend.write(WriteItem("warm", b"x"))
    real = lean.Signer.sign_query

    def expired(
        self: lean.Signer, path: str, headers: dict[str, str], credentials: Any, now: float, expires: int
    ) -> str:
        return real(self, path, headers, credentials, now - 120, 1)

    monkeypatch.setattr(lean.Signer, "sign_query", expired)
    with backend.lock(".vfs/lock", timeout=5), pytest.raises(TimeoutError) as refused:
        backend.write(WriteItem("late.txt", b"late"))
    assert "the store refused it" in str(refused.value.__cause__ or refused.value)  # fence.late, not a conflict
    assert backend.stat("late.txt") is None
