"""The commit lock: ``flock(2)`` on a lock file (released by the kernel if the holder dies), plus
a per-path ``threading.Lock`` for the threads of this process.

Whether ``flock`` really excludes is probed once per root (:func:`flock_excludes`: two open file
descriptions of the root directory, the second must be refused). Where it does not (an emulated
filesystem, some network mounts) only the thread lock excludes, and the backend declares
``cross_process_lock=False``. Without ``fcntl`` (Windows), ``filelock.FileLock`` is used.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

_PROCESS_LOCKS: dict[str, threading.Lock] = {}
_PROCESS_LOCKS_GUARD = threading.Lock()
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)


def flock_excludes(directory: str) -> bool:
    """Whether ``flock`` on one open file description keeps another one out (on ``directory``,
    which is opened read-only: the probe changes nothing)."""
    if fcntl is None:
        return False
    try:
        first = os.open(directory, _DIR_FLAGS)
    except OSError:
        return True  # cannot probe: assume the platform's flock works (it does on local disks)
    try:
        second = os.open(directory, _DIR_FLAGS)
    except OSError:
        os.close(first)
        return True
    try:
        fcntl.flock(first, fcntl.LOCK_EX | fcntl.LOCK_NB)
        try:
            fcntl.flock(second, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            fcntl.flock(first, fcntl.LOCK_UN)
    except BlockingIOError:
        return True  # refused (by our first handle, or by someone else holding it): it excludes
    finally:
        os.close(first)
        os.close(second)
    return False


@contextmanager
def local_lock(path: str, timeout: float, *, cross_process: bool) -> Iterator[None]:
    with _PROCESS_LOCKS_GUARD:
        thread_lock = _PROCESS_LOCKS.setdefault(path, threading.Lock())
    deadline = time.monotonic() + timeout
    if not thread_lock.acquire(timeout=timeout):
        raise TimeoutError(f"could not acquire the commit lock {path} within {timeout} s")
    try:
        if fcntl is None:
            with _filelock(path, deadline, timeout):
                yield
        elif cross_process:
            with _flock(path, deadline, timeout):
                yield
        else:
            yield  # flock would not exclude anyone here: the thread lock is all there is
    finally:
        thread_lock.release()


@contextmanager
def _flock(path: str, deadline: float, timeout: float) -> Iterator[None]:
    """``flock(2)`` on the lock file. Called directly rather than through filelock, whose
    fork-safety bookkeeping costs about a millisecond per acquire: as much as the durable write a
    commit protects."""
    assert fcntl is not None
    flags = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags, 0o666)
    except FileNotFoundError:  # its folder was removed behind an open workspace's back
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd = os.open(path, flags, 0o666)
    try:
        delay = 0.001
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(f"could not acquire the commit lock {path} within {timeout} s") from None
                time.sleep(min(delay, remaining))
                delay = min(delay * 2, 0.05)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


@contextmanager
def _filelock(path: str, deadline: float, timeout: float) -> Iterator[None]:
    """The portable lock (no ``fcntl``: Windows)."""
    import filelock  # only a commit needs it; keeps reads and `vfs` start-up light

    file_lock = filelock.FileLock(path, timeout=max(0.0, deadline - time.monotonic()), is_singleton=False)
    try:
        file_lock.acquire()
    except filelock.Timeout as exc:
        raise TimeoutError(f"could not acquire the commit lock {path} within {timeout} s") from exc
    try:
        yield
    finally:
        file_lock.release()
