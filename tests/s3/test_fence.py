"""The store fences a paused lease holder: a change that reaches S3 after the validity of the lease
it was sent under is refused by the store itself (backends/s3/fence.py).

The pause is simulated exactly where the client-side check cannot help: vfs's last check before
the send has passed, then the request waits (as a SIGSTOPped process would) past the lease's end
before it leaves. Only a store that enforces a signature's expiry refuses it: SeaweedFS here (AWS
S3 does too); moto does not, so these run on SeaweedFS only.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from backends.base import WriteItem
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


@pytest.fixture
def paused_after_the_check(make_seaweed_backend: BackendMaker) -> Iterator[tuple[Any, list[str]]]:
    """A backend whose fenced PUTs of ``f.txt`` pause, after vfs's own check, until the lease
    they were signed under has run out (its renewals stopped, as in a stopped process)."""
    be = make_seaweed_backend(lease_ttl=3, clock_skew=0)
    be.write(WriteItem("f.txt", b"one\n"))
    events = _client(be).meta.events
    events.unregister("before-send.s3", unique_id="vfs-lease-check")  # it passed: the pause comes after
    sent: list[str] = []

    def pause(request: Any, **_: Any) -> None:
        if fence.FENCE.get() is not None and request.method == "PUT" and "f.txt" in request.url:
            sent.append(request.url)
            for lease in list(be._held._held):
                lease._stop.set()  # the renewal thread stops with the process
            time.sleep(3 + fence.RESOLUTION + 0.5)

    events.register("before-send.s3", pause, unique_id="test-pause")
    yield be, sent
    events.unregister("before-send.s3", unique_id="test-pause")


@pytest.mark.seaweedfs
def test_a_change_that_arrives_after_the_lease_is_refused_by_the_store(
    paused_after_the_check: tuple[Any, list[str]], seaweed_ep: S3Endpoint
) -> None:
    be, sent = paused_after_the_check
    version = be.stat("f.txt").version
    lease = be.lock(".vfs/lock", timeout=5)
    with pytest.raises(TimeoutError) as refused, lease:
        be.write(WriteItem("f.txt", b"late\n", if_version=version))
    assert sent and "X-Amz-Expires=" in sent[0]  # it was sent, signed to expire with the lease
    assert lease.lost  # and the store, not vfs, said no: nothing of it landed
    raw = seaweed_ep.client().get_object(Bucket=be.bucket, Key=be._obj("f.txt"))["Body"].read()
    assert raw == b"one\n"
    assert "lock expired" in str(refused.value) or "refused" in str(refused.value)


@pytest.mark.seaweedfs
def test_a_change_in_time_lands_signed_the_same_way(make_seaweed_backend: BackendMaker) -> None:
    be = make_seaweed_backend(lease_ttl=3, clock_skew=0)
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
