"""The Azure commit lease (the shared CasLease on a lease blob) on Azurite: acquire, exclusion,
renewal, expiry, takeover, loss: the S3 lease tests, run against Azure's If-Match / If-None-Match."""

from __future__ import annotations

import json
import threading
import time

import pytest

from backends.azure import AzureLease, LeaseLost
from tests.azure.conftest import BackendMaker
from tests.support.azurite import AzuriteEndpoint

pytestmark = pytest.mark.azurite

LOCK = ".vfs/lock"


def _outside(server: AzuriteEndpoint, be: object, key: str = LOCK) -> object:
    """The lease blob through another SDK client (behind the backend's back)."""
    return server.service().get_blob_client(be.container.container_name, be._name(key))  # type: ignore[attr-defined]


def _lease_body(server: AzuriteEndpoint, backend: object, key: str = LOCK) -> dict[str, object]:
    raw = _outside(server, backend, key).download_blob().readall()  # type: ignore[attr-defined]
    body: dict[str, object] = json.loads(raw)
    return body


def test_acquire_creates_lease_and_release_removes_it(make_backend: BackendMaker, azurite_ep: AzuriteEndpoint) -> None:
    be = make_backend(lease_ttl=30)
    lease = be.lock(LOCK, timeout=5)
    with lease:
        body = _lease_body(azurite_ep, be)
        assert body["owner"] == lease.owner
        assert float(body["expires_at"]) > time.time() + 20  # type: ignore[arg-type]
        assert lease.held
    assert be.stat(LOCK) is None
    assert not lease.lost


def test_second_client_times_out_while_lease_is_held(make_backend: BackendMaker) -> None:
    a = make_backend(lease_ttl=30)
    b = make_backend(container=a.container.container_name, prefix=a.prefix, lease_ttl=30)
    with a.lock(LOCK, timeout=5), pytest.raises(TimeoutError), b.lock(LOCK, timeout=0.6):
        pytest.fail("acquired a lease that another client holds")
    # once released, the other client gets it at once
    with b.lock(LOCK, timeout=2) as nothing:
        assert nothing is None
        assert b.stat(LOCK) is not None


def test_lease_excludes_concurrent_holders(make_backend: BackendMaker) -> None:
    clients = [make_backend(lease_ttl=30)]
    clients += [
        make_backend(container=clients[0].container.container_name, prefix=clients[0].prefix, lease_ttl=30)
        for _ in range(3)
    ]
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


def test_renewal_keeps_a_live_lease(make_backend: BackendMaker, azurite_ep: AzuriteEndpoint) -> None:
    a = make_backend(lease_ttl=0.9, clock_skew=0)
    b = make_backend(container=a.container.container_name, prefix=a.prefix, lease_ttl=0.9, clock_skew=0)
    lease = a.lock(LOCK, timeout=5)
    with lease:
        etag0 = a.stat(LOCK).version  # type: ignore[union-attr]
        # hold for several lease times: renewals must stop b from taking over
        with pytest.raises(TimeoutError), b.lock(LOCK, timeout=2.5):
            pytest.fail("took over a lease that is being renewed")
        assert lease.renewals >= 3
        assert a.stat(LOCK).version != etag0  # type: ignore[union-attr]
        assert _lease_body(azurite_ep, a)["owner"] == lease.owner
        assert lease.held
    assert not lease.lost


def test_expired_lease_of_a_dead_holder_is_taken_over(make_backend: BackendMaker, azurite_ep: AzuriteEndpoint) -> None:
    be = make_backend(lease_ttl=30, clock_skew=1)
    dead = {"owner": "dead-client", "expires_at": time.time() - 5, "ttl": 30}
    _outside(azurite_ep, be).upload_blob(json.dumps(dead).encode(), overwrite=True)  # type: ignore[attr-defined]
    lease = be.lock(LOCK, timeout=5)
    with lease:
        assert lease.took_over
        assert _lease_body(azurite_ep, be)["owner"] == lease.owner
    assert be.stat(LOCK) is None


def test_unrenewed_lease_is_taken_over_after_ttl_without_trusting_clocks(
    make_backend: BackendMaker, azurite_ep: AzuriteEndpoint
) -> None:
    be = make_backend(lease_ttl=0.8, clock_skew=0)
    # a holder whose clock says "valid for an hour" but which never renews
    frozen = {"owner": "frozen", "expires_at": time.time() + 3600, "ttl": 0.8}
    _outside(azurite_ep, be).upload_blob(json.dumps(frozen).encode(), overwrite=True)  # type: ignore[attr-defined]
    lease = be.lock(LOCK, timeout=10)
    with lease:
        assert lease.took_over
        assert _lease_body(azurite_ep, be)["owner"] != "frozen"


def test_garbage_lease_is_taken_over_after_ttl(make_backend: BackendMaker, azurite_ep: AzuriteEndpoint) -> None:
    be = make_backend(lease_ttl=0.5)
    _outside(azurite_ep, be).upload_blob(b"not json", overwrite=True)  # type: ignore[attr-defined]
    lease = be.lock(LOCK, timeout=10)
    with lease:
        assert lease.took_over


def test_takeover_race_has_exactly_one_winner(make_backend: BackendMaker, azurite_ep: AzuriteEndpoint) -> None:
    base = make_backend(lease_ttl=30, clock_skew=0)
    clients = [
        make_backend(container=base.container.container_name, prefix=base.prefix, lease_ttl=30, clock_skew=0)
        for _ in range(4)
    ]
    dead = {"owner": "dead", "expires_at": time.time() - 60}
    _outside(azurite_ep, base).upload_blob(json.dumps(dead).encode(), overwrite=True)  # type: ignore[attr-defined]
    barrier = threading.Barrier(len(clients))
    outcomes: list[str] = []
    holders: list[AzureLease] = []
    guard = threading.Lock()

    def contend(be: object) -> None:
        lease: AzureLease = be.lock(LOCK, timeout=0.5)  # type: ignore[attr-defined]
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
        assert _lease_body(azurite_ep, base)["owner"] == holders[0].owner
    finally:
        for h in holders:
            h.release()


def test_stalled_holder_loses_lease_and_is_told(make_backend: BackendMaker, azurite_ep: AzuriteEndpoint) -> None:
    a = make_backend(lease_ttl=0.6, clock_skew=0)
    b = make_backend(container=a.container.container_name, prefix=a.prefix, lease_ttl=0.6, clock_skew=0)
    lease = a.lock(LOCK, timeout=5)
    with pytest.raises(LeaseLost), lease:
        # simulate a stall: the renewal thread stops, the process keeps going
        lease._stop.set()
        assert lease._thread is not None
        lease._thread.join()
        with b.lock(LOCK, timeout=10):
            assert _lease_body(azurite_ep, b)["owner"] != lease.owner
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
    other = make_backend(container=be.container.container_name, prefix=be.prefix)
    assert other.stat(LOCK) is None
