"""backends.lease on its own: the lease rules against in-process stores (real compare-and-swap from
the memory backend; a plain dict for the lock file), no S3 server needed."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import fsspec
import pytest

from backends.base import DeleteItem, WriteItem
from backends.fsspec_any import FsspecBackend
from backends.lease import (
    LOCK_FILE_NOTE,
    Backoff,
    CasLease,
    HeldLocks,
    LeaseLost,
    LockFile,
    expired,
    lease_body,
    process_lock,
)
from backends.memory import MemoryBackend
from backends.s3 import S3Backend

KEY = "lock"


class MemoryCasStore:
    """A CasStore on the memory backend, whose conditional writes are real compare-and-swap."""

    def __init__(self) -> None:
        self.backend = MemoryBackend()

    def lease_get(self, key: str) -> tuple[bytes, str] | None:
        try:
            data, info = self.backend.read(key)
        except FileNotFoundError:
            return None
        return data, str(info.version)

    def lease_put(self, key: str, body: bytes, *, if_etag: str | None) -> str:
        return str(self.backend.write(WriteItem(key, body, if_absent=if_etag is None, if_version=if_etag)).version)

    def lease_delete(self, key: str, *, if_etag: str) -> None:
        self.backend.delete(DeleteItem(key, if_version=if_etag))

    def owner(self) -> str | None:
        got = self.lease_get(KEY)
        return None if got is None else str(json.loads(got[0])["owner"])


class DictStore:
    """A PlainStore without compare-and-swap: a dict, create-if-absent under a lock."""

    def __init__(self) -> None:
        self.objects: dict[str, bytes] = {}
        self.guard = threading.Lock()

    def lock_create(self, key: str, body: bytes) -> bool:
        with self.guard:
            if key in self.objects:
                return False
            self.objects[key] = body
            return True

    def lock_read(self, key: str) -> bytes | None:
        return self.objects.get(key)

    def lock_replace(self, key: str, body: bytes) -> None:
        self.objects[key] = body

    def lock_remove(self, key: str) -> None:
        self.objects.pop(key, None)


def _cas(store: MemoryCasStore, **kw: float) -> CasLease:
    return CasLease(store, KEY, timeout=kw.get("timeout", 2.0), ttl=kw.get("ttl", 30.0), clock_skew=0.0)


# -- shared pieces ----------------------------------------------------------------------------


def test_process_lock_is_one_lock_per_name() -> None:
    assert process_lock("t", "a") is process_lock("t", "a")
    assert process_lock("t", "a") is not process_lock("t", "b")


def test_backoff_doubles_up_to_its_cap_and_stops_at_the_deadline() -> None:
    backoff = Backoff(0.001, 0.004)
    far = time.monotonic() + 60
    delays = []
    for _ in range(4):
        delays.append(backoff.delay)
        assert backoff.wait(far)
    assert delays == [0.001, 0.002, 0.004, 0.004]
    assert not backoff.wait(time.monotonic() - 1)


def test_expiry_by_clock_by_staleness_and_garbage() -> None:
    live = lease_body("x", ttl=30, seq=1)
    assert not expired(live, unchanged_for=0, ttl=30, clock_skew=0)
    assert expired(live, unchanged_for=31, ttl=30, clock_skew=0)  # never renewed: clocks not trusted
    old = json.dumps({"expires_at": time.time() - 10}).encode()
    assert expired(old, unchanged_for=0, ttl=30, clock_skew=0)
    assert not expired(old, unchanged_for=0, ttl=30, clock_skew=60)  # within the skew allowance
    assert not expired(b"garbage", unchanged_for=0, ttl=30, clock_skew=0)
    assert expired(b"garbage", unchanged_for=31, ttl=30, clock_skew=0)


def test_every_body_differs_so_unchanged_means_not_renewed() -> None:
    assert lease_body("x", 30, 1) != lease_body("x", 30, 2)


# -- compare-and-swap lease -------------------------------------------------------------------


def test_cas_lease_excludes_and_releases() -> None:
    store = MemoryCasStore()
    first = _cas(store).acquire()
    assert store.owner() == first.owner and first.held
    with pytest.raises(TimeoutError), _cas(store, timeout=0.1):
        pytest.fail("acquired a live lease")
    first.release()
    assert store.lease_get(KEY) is None and not first.lost


def test_cas_takeover_fences_the_old_holder() -> None:
    store = MemoryCasStore()
    old = _cas(store).acquire()
    old._stop_renewing()  # a paused holder: no more renewals
    store.lease_put(KEY, json.dumps({"owner": old.owner, "expires_at": 0}).encode(), if_etag=old.etag)
    new = _cas(store).acquire()  # expired by its clock: taken over at once
    assert new.took_over and store.owner() == new.owner
    assert not old.renew() and old.lost  # the stale holder learns it, and writes nothing
    with pytest.raises(LeaseLost):
        old.__exit__(None, None, None)  # the end of its ``with`` block tells it
    assert store.owner() == new.owner  # its release did not remove the new holder's lease
    new.release()


def test_a_free_lease_is_fresh_and_a_dirty_release_is_taken_over_at_once() -> None:
    """``fresh`` tells the commit that no holder left work behind: true only for a lease created
    where there was none. A holder that leaves work marks its release dirty: the object stays,
    marked released, and the next holder takes it over without waiting for the expiry (30 s
    here, with no clock skew allowance needed) and is not fresh."""
    store = MemoryCasStore()
    first = _cas(store).acquire()
    assert first.fresh and not first.took_over
    first.mark_dirty()
    first.release()
    left = store.lease_get(KEY)
    assert left is not None and json.loads(left[0])["released"] is True and not first.lost
    started = time.monotonic()
    second = _cas(store, timeout=5.0).acquire()
    assert time.monotonic() - started < 5.0  # not the 30 s lease time
    assert second.took_over and not second.fresh
    second.release()  # clean: deleted
    assert store.lease_get(KEY) is None
    third = _cas(store).acquire()
    assert third.fresh
    third.release()


def test_at_once_only_when_the_first_asking_takes_the_lease() -> None:
    """``at_once``: no other holder came between the asking and the holding, so what the holder
    prepared before asking (a txid drawn then) is still in order. A lease taken after waiting for
    a holder to let go is fresh (created where there was none) but not at once."""
    store = MemoryCasStore()
    first = _cas(store).acquire()
    assert first.at_once and first.fresh
    threading.Timer(0.3, first.release).start()
    second = _cas(store, timeout=5.0).acquire()  # waits for the release, then creates it
    assert second.fresh and not second.at_once
    second.mark_dirty()
    second.release()
    third = _cas(store, timeout=5.0).acquire()  # a dirty release: taken over
    assert third.took_over and not third.at_once
    third.release()


def test_held_locks_are_released_by_release_all() -> None:
    store, held = MemoryCasStore(), HeldLocks()
    lease = CasLease(store, KEY, timeout=1, ttl=30, clock_skew=0, held=held).acquire()
    held.release_all()
    assert not lease.held and store.lease_get(KEY) is None


# -- best-effort lock file --------------------------------------------------------------------


def _lock_file(store: DictStore | None, name: str, **kw: float) -> LockFile:
    return LockFile(
        store, KEY, timeout=kw.get("timeout", 1.0), ttl=kw.get("ttl", 30.0), thread_lock=process_lock("test", name)
    )


def test_lock_file_renewal_notices_a_foreign_body(request: pytest.FixtureRequest) -> None:
    store = DictStore()
    lock = _lock_file(store, request.node.name).acquire()
    lock._stop_renewing()
    assert lock.renew() and lock.renewals == 1
    store.objects[KEY] = b"someone else"
    assert not lock.renew() and lock.lost
    lock.release()
    assert store.objects[KEY] == b"someone else"  # not removed by the loser


def test_lock_file_takes_over_a_dead_holder(request: pytest.FixtureRequest) -> None:
    store = DictStore()
    store.objects[KEY] = json.dumps({"owner": "dead", "expires_at": 0}).encode()
    with _lock_file(store, request.node.name) as nothing:
        assert nothing is None
        assert json.loads(store.objects[KEY])["owner"] != "dead"
    assert KEY not in store.objects


def test_lock_file_without_a_store_is_the_thread_lock(request: pytest.FixtureRequest) -> None:
    thread_lock = process_lock("test", request.node.name)
    lock = LockFile(None, KEY, timeout=1, ttl=30, thread_lock=thread_lock).acquire()
    assert thread_lock.locked()
    lock.release()
    assert not thread_lock.locked()


# -- what the backends declare ----------------------------------------------------------------


def test_expiring_locks_are_declared(tmp_path: Path) -> None:
    assert S3Backend.capabilities.lock_can_expire
    local = FsspecBackend(fsspec.filesystem("file"), str(tmp_path)).capabilities
    generic = FsspecBackend(fsspec.filesystem("dir", path=str(tmp_path), target_protocol="file"), "").capabilities
    memory = FsspecBackend(fsspec.filesystem("memory"), "/declared").capabilities
    assert local.lock_can_expire and generic.lock_can_expire and not memory.lock_can_expire
    assert LOCK_FILE_NOTE in local.notes and LOCK_FILE_NOTE in generic.notes
