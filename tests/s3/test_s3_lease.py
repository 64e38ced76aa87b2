"""The S3 commit lease: acquire, exclusion, renewal, expiry, takeover, loss (moto and SeaweedFS)."""

from __future__ import annotations

import json
import threading
import time

import pytest

from backends.s3 import LeaseLost, S3Lease
from tests.s3.conftest import BackendMaker
from tests.support.s3_servers import S3Endpoint

LOCK = ".vfs/lock"


def _lease_body(server: S3Endpoint, backend: object, key: str = LOCK) -> dict[str, object]:
    be = backend
    raw = server.client().get_object(Bucket=be.bucket, Key=be._obj(key))["Body"].read()  # type: ignore[attr-defined]
    body: dict[str, object] = json.loads(raw)
    return body


def test_acquire_creates_lease_and_release_removes_it(make_backend: BackendMaker, server: S3Endpoint) -> None:
    be = make_backend(lease_ttl=30)
    lease = be.lock(LOCK, timeout=5)
    with lease:
        body = _lease_body(server, be)
        assert body["owner"] == lease.owner
        assert float(body["expires_at"]) > time.time() + 20  # type: ignore[arg-type]
        assert lease.held
    assert be.stat(LOCK) is None
    assert not lease.lost


def test_second_client_times_out_while_lease_is_held(make_backend: BackendMaker) -> None:
    a = make_backend(lease_ttl=30)
    b = make_backend(bucket=a.bucket, prefix=a.prefix, lease_ttl=30)
    with a.lock(LOCK, timeout=5):
        started = time.monotonic()
        with pytest.raises(TimeoutError), b.lock(LOCK, timeout=0.6):
            pytest.fail("acquired a lease that another client holds")
        assert 0.5 <= time.monotonic() - started < 5
    # once released, the other client gets it at once
    with b.lock(LOCK, timeout=2) as nothing:
        assert nothing is None
        assert b.stat(LOCK) is not None


def test_lease_excludes_concurrent_holders(make_backend: BackendMaker) -> None:
    clients = [make_backend(lease_ttl=30)]
    clients += [make_backend(bucket=clients[0].bucket, prefix=clients[0].prefix, lease_ttl=30) for _ in range(3)]
    inside = 0
    max_inside = 0
    entries = 0
    guard = threading.Lock()
    errors: list[BaseException] = []

    def worker(be: object) -> None:
        nonlocal inside, max_inside, entries
        try:
            for _ in range(3):
                with be.lock(LOCK, timeout=30):  # type: ignore[attr-defined]
                    with guard:
                        inside += 1
                        entries += 1
                        max_inside = max(max_inside, inside)
                    time.sleep(0.02)
                    with guard:
                        inside -= 1
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(c,)) for c in clients]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert entries == 12
    assert max_inside == 1


def test_renewal_keeps_a_live_lease(make_backend: BackendMaker, server: S3Endpoint) -> None:
    a = make_backend(lease_ttl=0.9, clock_skew=0)
    b = make_backend(bucket=a.bucket, prefix=a.prefix, lease_ttl=0.9, clock_skew=0)
    lease = a.lock(LOCK, timeout=5)
    with lease:
        etag0 = a.stat(LOCK).version  # type: ignore[union-attr]
        # hold for several lease times: renewals must stop b from taking over
        with pytest.raises(TimeoutError), b.lock(LOCK, timeout=2.5):
            pytest.fail("took over a lease that is being renewed")
        assert lease.renewals >= 3
        assert a.stat(LOCK).version != etag0  # type: ignore[union-attr]
        assert _lease_body(server, a)["owner"] == lease.owner
        assert lease.held
    assert not lease.lost


def test_expired_lease_of_a_dead_holder_is_taken_over(make_backend: BackendMaker, server: S3Endpoint) -> None:
    be = make_backend(lease_ttl=30, clock_skew=1)
    dead = {"owner": "dead-client", "expires_at": time.time() - 5, "ttl": 30}
    server.client().put_object(Bucket=be.bucket, Key=be._obj(LOCK), Body=json.dumps(dead).encode())
    started = time.monotonic()
    lease = be.lock(LOCK, timeout=5)
    with lease:
        assert time.monotonic() - started < 2  # expired by its own clock: no need to wait
        assert lease.took_over
        assert _lease_body(server, be)["owner"] == lease.owner
    assert be.stat(LOCK) is None


def test_unrenewed_lease_is_taken_over_after_ttl_without_trusting_clocks(
    make_backend: BackendMaker, server: S3Endpoint
) -> None:
    be = make_backend(lease_ttl=0.8, clock_skew=0)
    # a holder whose clock says "valid for an hour" but which never renews
    frozen = {"owner": "frozen", "expires_at": time.time() + 3600, "ttl": 0.8}
    server.client().put_object(Bucket=be.bucket, Key=be._obj(LOCK), Body=json.dumps(frozen).encode())
    started = time.monotonic()
    with be.lock(LOCK, timeout=10) as _:
        waited = time.monotonic() - started
        assert 0.8 <= waited < 5
        assert _lease_body(server, be)["owner"] != "frozen"


def test_garbage_lease_is_taken_over_after_ttl(make_backend: BackendMaker, server: S3Endpoint) -> None:
    be = make_backend(lease_ttl=0.5)
    server.client().put_object(Bucket=be.bucket, Key=be._obj(LOCK), Body=b"not json")
    lease = be.lock(LOCK, timeout=10)
    with lease:
        assert lease.took_over


def test_takeover_race_has_exactly_one_winner(make_backend: BackendMaker, server: S3Endpoint) -> None:
    base = make_backend(lease_ttl=30, clock_skew=0)
    clients = [make_backend(bucket=base.bucket, prefix=base.prefix, lease_ttl=30, clock_skew=0) for _ in range(4)]
    dead = {"owner": "dead", "expires_at": time.time() - 60}
    server.client().put_object(Bucket=base.bucket, Key=base._obj(LOCK), Body=json.dumps(dead).encode())
    barrier = threading.Barrier(len(clients))
    outcomes: list[str] = []
    holders: list[S3Lease] = []
    guard = threading.Lock()

    def contend(be: object) -> None:
        lease: S3Lease = be.lock(LOCK, timeout=0.5)  # type: ignore[attr-defined]
        barrier.wait()
        try:
            lease.acquire()
        except TimeoutError:
            with guard:
                outcomes.append("timeout")
            return
        with guard:
            outcomes.append("won")
            holders.append(lease)

    threads = [threading.Thread(target=contend, args=(c,)) for c in clients]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        assert sorted(outcomes) == ["timeout"] * 3 + ["won"]
        assert holders[0].took_over
        assert _lease_body(server, base)["owner"] == holders[0].owner
    finally:
        for h in holders:
            h.release()


def test_stalled_holder_loses_lease_and_is_told(make_backend: BackendMaker, server: S3Endpoint) -> None:
    a = make_backend(lease_ttl=0.6, clock_skew=0)
    b = make_backend(bucket=a.bucket, prefix=a.prefix, lease_ttl=0.6, clock_skew=0)
    lease = a.lock(LOCK, timeout=5)
    with pytest.raises(LeaseLost), lease:
        # simulate a stall: the renewal thread stops, the process keeps going
        lease._stop.set()
        assert lease._thread is not None
        lease._thread.join()
        with b.lock(LOCK, timeout=10):
            assert _lease_body(server, b)["owner"] != lease.owner
            assert not lease.renew()
            assert lease.lost
    # the loser's release did not delete the new holder's lease... which b released itself
    assert a.stat(LOCK) is None


def test_close_releases_held_leases(make_backend: BackendMaker) -> None:
    be = make_backend(lease_ttl=30)
    lease = be.lock(LOCK, timeout=5).acquire()
    assert be.stat(LOCK) is not None
    be.close()
    assert not lease.held
    other = make_backend(bucket=be.bucket, prefix=be.prefix)
    assert other.stat(LOCK) is None


def test_a_change_is_checked_again_right_before_it_is_sent(make_backend: BackendMaker, server: S3Endpoint) -> None:
    """A holder paused after the first check (signing, waiting for a connection, a retry's
    back-off) must not send: botocore's last hook before the request leaves checks the lease
    again. The pause is simulated by the lease running out inside the signing step."""
    from backends.base import WriteItem

    be = make_backend(lease_ttl=30)
    lease = be.lock(LOCK, timeout=5)
    with pytest.raises(LeaseLost), lease:
        be.write(WriteItem("before.txt", b"sent while valid"))
        client = be.fs.s3  # the client that request went through

        def pause_past_the_lease(**_: object) -> None:
            lease._deadline_mono = 0.0  # as if the process stopped here for longer than the TTL

        client.meta.events.register("before-sign.s3.PutObject", pause_past_the_lease, unique_id="test-pause")
        try:
            be.write(WriteItem("after.txt", b"must never be sent"))
        finally:
            client.meta.events.unregister("before-sign.s3.PutObject", unique_id="test-pause")
    names = {o["Key"] for o in server.client().list_objects_v2(Bucket=be.bucket, Prefix=be._obj("")).get("Contents", [])}
    assert be._obj("before.txt") in names
    assert be._obj("after.txt") not in names
