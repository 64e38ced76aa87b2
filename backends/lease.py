"""Commit locks for stores that have no lock primitive: one lease idea, at two strengths.

A lock is an object at a key holding its owner and an expiry; the holder rewrites it every
``ttl/3`` from a background thread and removes it on release. A waiter takes it over once it has
expired by the holder's clock plus ``clock_skew``, or once the waiter has seen it unchanged for a
whole ``ttl`` by its own clock (so a holder with a wrong clock cannot block everyone forever).

:class:`CasLease`
    For stores with compare-and-swap (S3 ``If-None-Match`` / ``If-Match``): create, renew,
    release and takeover are each conditional on the lease object's version, so exactly one
    client wins a takeover and a holder learns for certain that it lost its lease.

:class:`LockFile`
    For stores without it (generic fsspec): an exclusive create where the store has one, plain
    rewrites otherwise. :data:`LOCK_FILE_NOTE` states what that cannot guarantee; a backend using
    it puts the note in its ``Capabilities.notes``.

Either lock can expire while held (the holder paused longer than ``ttl``): such a backend sets
``Capabilities.lock_can_expire``, and the holder gets :class:`LeaseLost` when it releases.

The process-wide pieces live here once: :func:`process_lock` (one registry of named in-process
locks), :class:`HeldLocks` (what a backend's ``close`` must release) and :class:`Backoff` (the
waiting rhythm of every retry loop).
"""

from __future__ import annotations

import errno
import json
import math
import os
import socket
import threading
import time
import uuid
from types import TracebackType
from typing import Any, Protocol

from backends.base import PreconditionFailed

#: What a lock file (no compare-and-swap) cannot guarantee, for ``Capabilities.notes``.
LOCK_FILE_NOTE = (
    "Commit lock: a best-effort lock file with an expiry, not a lease. Without compare-and-swap "
    "the takeover of an expired lock is not atomic (two waiters can both believe they took it), "
    "a renewal can overwrite a lock another client just took, and a holder that paused past the "
    "expiry is not stopped from writing: use it where one client writes at a time."
)


#: The share of the lease time kept in hand: a change is sent only while more than this much of
#: the lease is left.
VALIDITY_MARGIN = 0.25


class LeaseLost(TimeoutError):
    """The commit lock expired while held (the holder stalled) and another client took it."""


def _lost(key: str) -> LeaseLost:
    return LeaseLost(
        errno.ETIMEDOUT,
        "the commit lock expired while held (stalled longer than the lease time) and another "
        "client may have committed concurrently",
        key,
    )


# -- process-wide pieces ----------------------------------------------------------------------


_PROCESS_LOCKS: dict[tuple[str, ...], threading.Lock] = {}
_PROCESS_LOCKS_GUARD = threading.Lock()


def process_lock(*name: str) -> threading.Lock:
    """The one in-process lock called ``name`` (e.g. ``("fsspec-write", protocol, path)``):
    every backend instance of this process that names the same thing gets the same lock."""
    with _PROCESS_LOCKS_GUARD:
        return _PROCESS_LOCKS.setdefault(name, threading.Lock())


class HeldLocks:
    """The locks one backend holds now, so that its ``close`` releases what its users forgot."""

    def __init__(self) -> None:
        self._held: set[_Renewed] = set()
        self._guard = threading.Lock()

    def add(self, lock: _Renewed) -> None:
        with self._guard:
            self._held.add(lock)

    def discard(self, lock: _Renewed) -> None:
        with self._guard:
            self._held.discard(lock)

    def release_all(self) -> None:
        with self._guard:
            held = list(self._held)
        for lock in held:
            lock.release()

    def lease_keys(self) -> set[str]:
        with self._guard:
            return {getattr(lock, "key", "") for lock in self._held}

    def valid_until(self) -> float:
        """Until when (epoch seconds, this host's clock) a change may land under every lease held
        here: ``inf`` if none says; ``LeaseLost`` if one may have run out already."""
        with self._guard:
            held = list(self._held)
        until = math.inf
        for lock in held:
            check = getattr(lock, "valid_until", None)
            if check is not None:
                until = min(until, check())
        return until

    def guards(self, key: str) -> bool:
        """Whether a change of ``key`` goes out under a lease held here (checked before it is sent,
        and fenced where the store can be: ``backends.fence``); the leases' own objects do not."""
        return key not in self.lease_keys() and math.isfinite(self.valid_until())

    def require_valid(self) -> None:
        """``LeaseLost`` if a lease held here may have run out: called right before each request
        that changes the store, so a holder that was paused past its lease stops there instead of
        writing over a commit made since (where versions are content hashes, as S3's ETags are,
        a later commit can restore exactly the bytes the paused holder's condition names)."""
        with self._guard:
            held = list(self._held)
        for lock in held:
            check = getattr(lock, "require_valid", None)
            if check is not None:
                check()


class Backoff:
    """Exponential waits between attempts, never past a deadline."""

    def __init__(self, first: float, cap: float) -> None:
        self.delay = first
        self.cap = cap

    def wait(self, deadline: float) -> bool:
        """Sleep the next delay (cut at ``deadline``); False, without sleeping, once it passed."""
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        time.sleep(min(self.delay, remaining))
        self.delay = min(self.delay * 2, self.cap)
        return True


# -- the lock body ----------------------------------------------------------------------------


def lease_body(owner: str, ttl: float, seq: int, *, released: bool = False) -> bytes:
    """What a lock object holds: who (for people reading it) and until when (for waiters).
    ``released``: the holder let go but left work for the next one (see :meth:`CasLease.mark_dirty`):
    a waiter takes it over at once, and knows it must look for that work."""
    now = time.time()
    body: dict[str, Any] = {
        "owner": owner,
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "seq": seq,  # makes every renewal a different body, so "unchanged" means "not renewed"
        "ttl": ttl,
        "renewed_at": now,
        "expires_at": now if released else now + ttl,
    }
    if released:
        body["released"] = True
    return json.dumps(body, sort_keys=True).encode()


def owner_of(body: bytes | None) -> str:
    parsed = _parse(body)
    return str(parsed.get("owner", "?")) if parsed else "?"


def _parse(body: bytes | None) -> dict[str, Any] | None:
    try:
        parsed = json.loads(body or b"")
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) else None


def expired(body: bytes, unchanged_for: float, ttl: float, clock_skew: float) -> bool:
    """Whether a waiter may take over a lock it has seen unchanged for ``unchanged_for`` s."""
    if unchanged_for > ttl:
        return True  # not renewed within a full lease time, by the waiter's own clock
    parsed = _parse(body)
    if parsed and parsed.get("released") is True:
        return True  # let go by its holder, who left work for the next one: take it over now
    try:
        expires_at = float(parsed["expires_at"]) if parsed else None
    except (KeyError, TypeError, ValueError):
        expires_at = None
    # unparsable: only the observed staleness counts
    return expires_at is not None and time.time() > expires_at + clock_skew


class _Staleness:
    """How long a waiter has seen the same lock (by its version or its bytes) unchanged."""

    def __init__(self) -> None:
        self._first_seen: dict[object, float] = {}

    def unchanged_for(self, token: object) -> float:
        now = time.monotonic()
        return now - self._first_seen.setdefault(token, now)


# -- the renewing holder (shared by both locks) -----------------------------------------------


class _Renewed:
    """Acquire, renew from a thread every ``ttl/3``, release; a context manager used once."""

    key: str
    ttl: float
    lost: bool
    kind = "lock"

    def __init__(self, held: HeldLocks | None) -> None:
        self.owner = uuid.uuid4().hex
        self.took_over = False
        self.renewals = 0
        self._seq = 0
        self._held = held
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _next_body(self) -> bytes:
        self._seq += 1
        return lease_body(self.owner, self.ttl, self._seq)

    def _start_renewing(self) -> None:
        if self._held is not None:
            self._held.add(self)
        self._thread = threading.Thread(target=self._renew_loop, name=f"vfs-{self.kind}-{self.key}", daemon=True)
        self._thread.start()

    def _renew_loop(self) -> None:
        while not self._stop.wait(self.ttl / 3):
            self.renew()
            if self.lost:
                return

    def _stop_renewing(self) -> None:
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join()
        if self._held is not None:
            self._held.discard(self)

    def acquire(self) -> Any:
        raise NotImplementedError

    def renew(self) -> bool:
        raise NotImplementedError

    def release(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> None:
        self.acquire()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()
        if self.lost and exc_type is None:
            raise _lost(self.key)


def _timeout(key: str, timeout: float, owner: str) -> TimeoutError:
    return TimeoutError(
        errno.ETIMEDOUT, f"commit lock held by another client (owner {owner}) for more than {timeout} s", key
    )


# -- compare-and-swap lease -------------------------------------------------------------------


class CasStore(Protocol):
    """What a :class:`CasLease` needs from its store. ``etag`` is the store's version of the
    lease object; a failed condition raises ``PreconditionFailed`` (or ``FileNotFoundError``
    when the object is gone)."""

    def lease_get(self, key: str) -> tuple[bytes, str] | None:
        """The body and etag of the lease object; None if there is none."""
        ...

    def lease_put(self, key: str, body: bytes, *, if_etag: str | None) -> str:
        """Write the lease: created only if absent (``if_etag`` None), else only over ``if_etag``;
        returns the new etag."""
        ...

    def lease_delete(self, key: str, *, if_etag: str) -> None:
        """Remove the lease object if it still has ``if_etag``."""
        ...

    # Optional: ``lease_delete_soon(key, *, if_etag)``, the same removal sent without waiting for
    # its answer (a store whose requests cost a network round trip). The store must let it land
    # before its own next ``lease_put`` creating ``key`` and before it closes; a failure there
    # means the lease was taken over meanwhile (or stays until it expires): nothing to undo.


class CasLease(_Renewed):
    """A lease on a compare-and-swap store (see the module docstring)."""

    kind = "lease"

    def __init__(
        self,
        store: CasStore,
        key: str,
        *,
        timeout: float,
        ttl: float,
        clock_skew: float,
        held: HeldLocks | None = None,
        resolution: float = 0.0,
    ) -> None:
        if ttl <= 0:
            raise ValueError("lease ttl must be positive")
        #: Added to every wait before a takeover: the coarseness of the store's own clock where
        #: it fences the holder's requests (``backends.s3.fence``), so nothing it still accepts
        #: lands after a takeover.
        self.resolution = resolution
        super().__init__(held)
        self.store = store
        self.key = key
        self.timeout = timeout
        self.ttl = ttl
        self.clock_skew = clock_skew
        self.etag: str | None = None
        self.lost = False
        #: Taken by creating the lease object where there was none. Its last holder deleted it,
        #: which a holder does only when it leaves nothing unfinished (else it releases it
        #: *dirty*, see :meth:`mark_dirty`); a crashed or paused holder's lease stays until taken
        #: over. So a fresh lease says: no holder left an unresolved journal behind.
        self.fresh = False
        #: Taken by the first request of :meth:`acquire`: the lease was free when asked, so no
        #: other holder committed between the asking and the holding (see ``HeldLock.at_once``).
        self.at_once = False
        self._dirty = False
        self._guard = threading.Lock()
        self._deadline_mono = 0.0  # our own view of when the lease we hold expires

    def acquire(self) -> CasLease:
        deadline = time.monotonic() + self.timeout
        staleness = _Staleness()
        backoff = Backoff(min(0.05, self.ttl / 10), min(1.0, max(self.ttl / 4, 0.05)))
        first = True
        while True:
            started = time.monotonic()
            if self._try_create():
                self.at_once = first
                break
            first = False
            current = self.store.lease_get(self.key)
            if current is None:
                if time.monotonic() < deadline:
                    continue  # released between our create and our read: create again
            elif expired(
                current[0],
                staleness.unchanged_for(current[1]),
                self.ttl + self.resolution,
                self.clock_skew + self.resolution,
            ):
                started = time.monotonic()
                if self._try_takeover(current[1]):
                    break
            if not backoff.wait(deadline):
                raise _timeout(self.key, self.timeout, owner_of(current[0] if current else None))
        self._deadline_mono = started + self.ttl
        self._start_renewing()
        return self

    def _try_create(self) -> bool:
        try:
            self.etag = self.store.lease_put(self.key, self._next_body(), if_etag=None)
        except PreconditionFailed:
            return False
        self.fresh = True
        return True

    def mark_dirty(self) -> None:
        """The holder leaves work unfinished (an unresolved journal): release then leaves the
        lease object in place, marked released, instead of deleting it, so the next holder
        takes it over at once (not ``fresh``) and looks for that work."""
        self._dirty = True

    def _try_takeover(self, etag: str) -> bool:
        try:
            self.etag = self.store.lease_put(self.key, self._next_body(), if_etag=etag)
        except (PreconditionFailed, FileNotFoundError):
            return False  # another waiter won the takeover, or the holder released it
        self.took_over = True
        return True

    def renew(self) -> bool:
        """Extend the lease now; False (and ``lost``) if it was taken over meanwhile."""
        with self._guard:
            if self.etag is None or self.lost:
                return False
            started = time.monotonic()
            try:
                self.etag = self.store.lease_put(self.key, self._next_body(), if_etag=self.etag)
            except (PreconditionFailed, FileNotFoundError):
                self.lost = True
                return False
            except OSError:
                # transient: try again at the next tick, unless our lease has run out already
                self.lost = time.monotonic() > self._deadline_mono
                return False
            self._deadline_mono = started + self.ttl
            self.renewals += 1
            return True

    def release(self) -> None:
        self._stop_renewing()
        with self._guard:
            etag, self.etag = self.etag, None
        if etag is None or self.lost:
            return
        try:
            if self._dirty:
                self._seq += 1
                body = lease_body(self.owner, self.ttl, self._seq, released=True)
                self.store.lease_put(self.key, body, if_etag=etag)
            elif hasattr(self.store, "lease_delete_soon"):
                self.store.lease_delete_soon(self.key, if_etag=etag)
            else:
                self.store.lease_delete(self.key, if_etag=etag)
        except (PreconditionFailed, FileNotFoundError):
            self.lost = True  # expired and taken over (or removed) while we held it

    @property
    def held(self) -> bool:
        return self.etag is not None and not self.lost

    def valid_until(self) -> float:
        """Until when (epoch seconds) a change sent now may land: the end of the lease less the
        margin (``inf`` when none is held); ``LeaseLost`` as :meth:`require_valid`."""
        self.require_valid()
        if self.etag is None:
            return math.inf
        return time.time() + (self._deadline_mono - self.ttl * VALIDITY_MARGIN - time.monotonic())

    def require_valid(self) -> None:
        """``LeaseLost`` unless the lease is certainly still ours for a while: no other client
        takes it over before its expiry, and the margin covers the request about to go out."""
        if self.etag is None:
            return
        if self.lost or time.monotonic() > self._deadline_mono - self.ttl * VALIDITY_MARGIN:
            self.lost = True
            raise _lost(self.key)


# -- best-effort lock file --------------------------------------------------------------------


class PlainStore(Protocol):
    """What a :class:`LockFile` needs from a store without compare-and-swap."""

    def lock_create(self, key: str, body: bytes) -> bool:
        """Create the lock object, as exclusively as the store allows; False if it exists."""
        ...

    def lock_read(self, key: str) -> bytes | None: ...

    def lock_replace(self, key: str, body: bytes) -> None: ...

    def lock_remove(self, key: str) -> None:
        """Remove it; no error if it is already gone."""
        ...


class LockFile(_Renewed):
    """A best-effort commit lock on a store without compare-and-swap (:data:`LOCK_FILE_NOTE`).

    ``thread_lock`` (from :func:`process_lock`) is taken first, so the threads of one process
    always exclude each other; ``store=None`` makes that the whole lock (a store that lives in
    this process only)."""

    kind = "lockfile"

    def __init__(
        self,
        store: PlainStore | None,
        key: str,
        *,
        timeout: float,
        ttl: float,
        thread_lock: threading.Lock,
        clock_skew: float = 0.0,
        held: HeldLocks | None = None,
    ) -> None:
        super().__init__(held)
        self.store = store
        self.key = key
        self.timeout = timeout
        self.ttl = ttl
        self.clock_skew = clock_skew
        self.lost = False
        self._thread_lock = thread_lock
        self._local_held = False
        self._file_held = False
        self._last_body = b""

    def acquire(self) -> LockFile:
        if not self._thread_lock.acquire(timeout=max(self.timeout, 0)):
            raise _timeout(self.key, self.timeout, "another thread of this process")
        self._local_held = True
        if self.store is None:
            return self
        try:
            self._acquire_file(self.store, time.monotonic() + self.timeout)
        except BaseException:
            self._local_held = False
            self._thread_lock.release()
            raise
        self._file_held = True
        self._start_renewing()
        return self

    def _acquire_file(self, store: PlainStore, deadline: float) -> None:
        staleness = _Staleness()
        backoff = Backoff(0.02, 0.5)
        while not self._try_create(store):
            content = store.lock_read(self.key)
            if content is not None and expired(content, staleness.unchanged_for(content), self.ttl, self.clock_skew):
                self._take_over(store, content)
                continue
            if not backoff.wait(deadline):
                raise _timeout(self.key, self.timeout, owner_of(content))

    def _try_create(self, store: PlainStore) -> bool:
        body = self._next_body()
        if not store.lock_create(self.key, body):
            return False
        self._last_body = body
        return True

    def _take_over(self, store: PlainStore, content: bytes) -> None:
        # not atomic: re-read right before removing, to narrow the window (LOCK_FILE_NOTE)
        if store.lock_read(self.key) == content:
            store.lock_remove(self.key)
            self.took_over = True

    def renew(self) -> bool:
        """Rewrite the lock file; False (and ``lost``) if someone else's body is there now."""
        store = self.store
        if store is None or not self._file_held or self.lost:
            return False
        if store.lock_read(self.key) != self._last_body:
            self.lost = True
            return False
        body = self._next_body()
        try:
            store.lock_replace(self.key, body)
        except OSError:
            return False  # transient: the next tick tries again
        self._last_body = body
        self.renewals += 1
        return True

    def release(self) -> None:
        self._stop_renewing()
        store = self.store
        if self._file_held and store is not None:
            self._file_held = False
            if store.lock_read(self.key) == self._last_body:
                store.lock_remove(self.key)
            else:
                self.lost = True
        if self._local_held:
            self._local_held = False
            self._thread_lock.release()

    @property
    def held(self) -> bool:
        return self._local_held and not self.lost


__all__ = [
    "LOCK_FILE_NOTE",
    "Backoff",
    "CasLease",
    "CasStore",
    "HeldLocks",
    "LeaseLost",
    "LockFile",
    "PlainStore",
    "expired",
    "lease_body",
    "owner_of",
    "process_lock",
]
