"""The store fences a paused lease holder: a change that reaches S3 after the validity of the lease
it was sent under is refused by the store itself (backends/s3/fence.py).

The pause is simulated exactly where the client-side check cannot help: vfs's last check before
the send has passed, then the request waits (as a SIGSTOPped process would) past the lease's end
before it leaves. Only a store that enforces a signature's expiry refuses it: AWS S3 and SeaweedFS
do; moto does not by itself, and the test suite's moto server adds S3's check
(``tests.support.s3_servers``), so these run on both servers.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from backends.base import PreconditionFailed, WriteItem
from backends.s3 import client as s3_client
from backends.s3 import fence
from tests.s3.conftest import BackendMaker
from tests.support.s3_servers import S3Endpoint


def test_expiry_is_rounded_up_to_whole_seconds_from_the_signing_second() -> None:
    assert fence.expires_in(valid_until=100.2, signed_at=99) == 2
    assert fence.expires_in(valid_until=100.0, signed_at=99) == 1
    assert fence.expires_in(valid_until=99.5, signed_at=99) == 1  # never below the store's minimum


def test_a_takeover_waits_the_stores_resolution_too(make_backend: BackendMaker) -> None:
    be = make_backend(lease_ttl=30)
    assert be.lock(".vfs/lock", timeout=1).resolution == fence.RESOLUTION


def _client(be: Any) -> Any:
    return be._run(lambda: be.fs.get_s3(be.bucket))


def _makes_visible(request: Any) -> bool:
    """A PUT of an object's bytes or the completion of its multipart upload (not a part)."""
    if request.method == "PUT":
        return "partNumber=" not in request.url
    return request.method == "POST" and "uploadId=" in request.url


def _body_size(request: Any) -> int:
    body = request.body
    return len(body) if isinstance(body, bytes | bytearray) else int(request.headers.get("Content-Length") or 0)


@pytest.fixture
def paused_after_the_check(make_backend: BackendMaker) -> Iterator[tuple[Any, list[str]]]:
    """A backend whose fenced PUTs of ``f.txt`` pause, after vfs's own check, until the lease
    they were signed under has run out (its renewals stopped, as in a stopped process)."""
    be = make_backend(lease_ttl=3, clock_skew=0)
    be.write(WriteItem("f.txt", b"one\n"))
    events = _client(be).meta.events
    events.unregister("before-send.s3", unique_id="vfs-lease-check")  # it passed: the pause comes after
    sent: list[str] = []

    def pause(request: Any, **_: Any) -> None:
        if fence.FENCE.get() is not None and _makes_visible(request) and "f.txt" in request.url:
            sent.append(request.url)
            for lease in list(be._held._held):
                lease._stop.set()  # the renewal thread stops with the process
            time.sleep(3 + fence.RESOLUTION + 0.5)

    events.register("before-send.s3", pause, unique_id="test-pause")
    yield be, sent
    events.unregister("before-send.s3", unique_id="test-pause")
    # the client is shared with later tests (s3fs's instance cache): its check comes back
    events.register_last("before-send.s3", s3_client._check_before_send, unique_id="vfs-lease-check")


@pytest.mark.parametrize("late", [b"late\n", b"late body\n" * 10_000], ids=["inline", "in parts"])
def test_a_change_that_arrives_after_the_lease_is_refused_by_the_store(
    paused_after_the_check: tuple[Any, list[str]], server: S3Endpoint, late: bytes
) -> None:
    be, sent = paused_after_the_check
    version = be.stat("f.txt").version
    lease = be.lock(".vfs/lock", timeout=5)
    with pytest.raises(TimeoutError) as refused, lease:
        be.write(WriteItem("f.txt", late, if_version=version))
    assert sent and "X-Amz-Expires=" in sent[0]  # it was sent, signed to expire with the lease
    assert lease.lost  # and the store, not vfs, said no: nothing of it landed
    raw = server.client().get_object(Bucket=be.bucket, Key=be._obj("f.txt"))["Body"].read()
    assert raw == b"one\n"
    assert "lock expired" in str(refused.value) or "refused" in str(refused.value)


def test_a_change_in_time_lands_signed_the_same_way(make_backend: BackendMaker) -> None:
    be = make_backend(lease_ttl=3, clock_skew=0)
    version = be.write(WriteItem("f.txt", b"one\n")).version
    urls: list[str] = []
    _client(be).meta.events.register(
        "before-send.s3", lambda request, **_: urls.append(request.url) if request.method == "PUT" else None
    )
    with be.lock(".vfs/lock", timeout=5):
        be.write(WriteItem("f.txt", b"two\n", if_version=version))
    assert be.read("f.txt")[0] == b"two\n"
    fenced = [u for u in urls if "f.txt" in u]
    assert fenced and all("X-Amz-Expires=" in u for u in fenced)
    lease_puts = [u for u in urls if ".vfs/lock" in u]
    assert lease_puts and not any("X-Amz-Expires=" in u for u in lease_puts)  # the lease's own CAS is not fenced


def test_a_fenced_request_carries_a_small_body_whatever_the_file_size(make_backend: BackendMaker) -> None:
    """The store checks a signature's expiry when the request's head arrives: a body still on its
    way when the sender stops would land late. So the request that makes a big file's bytes the
    object is a small one (the bytes went up before, in parts no one sees)."""
    be = make_backend(lease_ttl=3, clock_skew=0)
    version = be.write(WriteItem("f.txt", b"one\n")).version
    big = b"0123456789abcdef" * 4096  # 64 KiB
    seen: list[tuple[bool, bool, int]] = []  # (fenced, makes it visible, body size) per request
    _client(be).meta.events.register(
        "before-send.s3",
        lambda request, **_: (
            seen.append(("X-Amz-Expires=" in request.url, _makes_visible(request), _body_size(request)))
            if "f.txt" in request.url
            else None
        ),
    )
    with be.lock(".vfs/lock", timeout=5):
        be.write(WriteItem("f.txt", big, if_version=version))
    assert be.read("f.txt")[0] == big
    visible = [size for fenced, makes_visible, size in seen if makes_visible]
    assert len(visible) == 1 and visible[0] <= fence.INLINE_BODY
    assert all(fenced for fenced, makes_visible, _ in seen if makes_visible)
    assert any(size >= len(big) for fenced, makes_visible, size in seen if not makes_visible)  # the part


def test_a_big_fenced_change_keeps_its_condition(make_backend: BackendMaker) -> None:
    """Sent in parts, the write is still conditional: a stale version is refused, nothing lands."""
    be = make_backend(lease_ttl=3, clock_skew=0)
    stale = be.write(WriteItem("f.txt", b"one\n")).version
    be.write(WriteItem("f.txt", b"two\n"))
    with be.lock(".vfs/lock", timeout=5), pytest.raises(PreconditionFailed):
        be.write(WriteItem("f.txt", b"x" * 100_000, if_version=stale))
    assert be.read("f.txt")[0] == b"two\n"


def test_a_parts_body_is_sent_without_waiting_for_100_continue(make_backend: BackendMaker) -> None:
    """botocore asks UploadPart (as PutObject) for ``Expect: 100-continue``: the body then waits a
    round trip for the store's interim answer. A part of a commit's journal is small; it goes at
    once, as a small PutObject's body does."""
    be = make_backend(lease_ttl=3, clock_skew=0)
    be.write(WriteItem("g.txt", b"connected\n"))
    expects: list[tuple[str, bool]] = []  # (request kind, asked for 100-continue) per body sent
    _client(be).meta.events.register(
        "before-send.s3",
        lambda request, **_: (
            expects.append(("part" if "partNumber=" in request.url else "put", "Expect" in request.headers))
            if request.method == "PUT" and "f.txt" in request.url
            else None
        ),
    )
    be.write(WriteItem("f.txt", b"x" * 100_000))  # no lease: one PutObject
    with be.lock(".vfs/lock", timeout=5):
        be.write(WriteItem("f.txt", b"y" * 100_000))  # under a lease: in a part
    assert be.read("f.txt")[0] == b"y" * 100_000
    assert sorted(kind for kind, _ in expects) == ["part", "put"]
    assert not any(asked for _, asked in expects)
