"""The commit lock: ``flock(2)`` on a lock file (released by the kernel if the holder dies), plus
a per-path ``threading.Lock`` for the threads of this process.

Whether ``flock`` really excludes is probed once per root (:func:`flock_excludes`: two open file
descriptions of the root directory, the second must be refused). Where it does not (an emulated
filesystem, some network mounts) only the thread lock excludes, and the backend declares
``cross_process_lock=False``. Without ``fcntl`` (Windows), ``filelock.FileLock`` is used.
"""

from __future__ import annotations

import contextlib
import os
import time

# _thread, not threading: its Lock is this one, and threading costs ~4 M instructions of start-up
# (issue 20: a small `vfs apply` imports nothing it does not use).
from _thread import LockType, allocate_lock
from collections.abc import Callable, Iterator
from contextlib import contextmanager

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

_PROCESS_LOCKS: dict[str, LockType] = {}
_PROCESS_LOCKS_GUARD = allocate_lock()
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


#: What the lock file holds between holders: ``CLEAN`` when the last holder left nothing
#: unfinished, ``BUSY`` from the moment a holder may leave something (see LocalLock.mark_busy)
#: until it lets go cleanly. After ``BUSY`` may come ``<length>\n<folder key>``: the folder
#: in which the holder was writing a file without a journal (see LocalLock.left_in).
CLEAN = b"vfs-lock clean\n"
BUSY = b"vfs-lock busy \n"
#: The longest folder key a marker names (longer: none named, the next holder sweeps nothing).
_MAX_WHERE = 4096
#: Lock files this process has held: only a later acquisition may be ``fresh`` (see LocalLock).
_HELD_BEFORE: set[str] = set()


class LocalLock:
    """The commit lock as a context manager that also tells whether the holder must look for
    unfinished work (``fresh``) and lets it say it leaves some (``mark_dirty``).

    The lock file says ``BUSY`` while a holder may leave an unresolved journal and ``CLEAN`` once
    it let go without one: a holder killed mid-commit (the kernel drops its ``flock``) leaves
    ``BUSY``, so the next holder is not ``fresh`` and lists the journals. A ``fresh`` holder writes
    ``BUSY`` only when it says it is about to write a journal (:meth:`mark_busy`): a commit of one
    file writes none (its replace is its commit point, its history record says committed), so it
    leaves the marker as it found it; its two writes of the lock file, each an inode change the
    next flush journals, are not made. A holder that is not ``fresh`` writes ``BUSY`` at once: it
    may be about to recover a journal someone left. Not ``fresh`` either:
    the first acquisition in a process (after a power cut the unflushed marker may be older than
    the journals, and every process starts again), a lock file without the marker (made by an
    older vfs or by hand), and where ``flock`` does not exclude.

    The limit: a vfs older than the marker, run on the same workspace at the same time, leaves it
    as it found it; if that process is killed mid-commit after a clean holder of this build, a
    long-lived process of this build does not list until it starts again (the first acquisition
    of every process lists, and recovery settles that journal by content then)."""

    def __init__(self, path: str, timeout: float, *, cross_process: bool, open_file: Callable[[], int]) -> None:
        self.path = path
        self.timeout = timeout
        self.cross_process = cross_process
        self._open_file = open_file
        self.fresh = False
        #: the folder a holder killed since the last clean one was writing in without a journal
        #: (input, as any metadata: the caller checks it as a key before using it)
        self.left_in: str | None = None
        self._dirty = False
        self._busy = False  # BUSY written by this holder (CLEAN is then owed at a clean exit)
        self._where: str | None = None  # the folder this holder's marker names
        self._fd: int | None = None
        self._inner: contextlib.ExitStack | None = None  # the portable lock's (no fcntl)
        self._thread_lock: LockType | None = None

    def mark_busy(self, where: str | None = None) -> None:
        """This holder is about to write something the next one must look for if it is killed:
        a journal, or (``where``) a file in that folder without a journal, whose temp file only
        the marker can name. The marker says so first."""
        if self._fd is None or (self._busy and where in (None, self._where)):
            return
        os.pwrite(self._fd, BUSY + _naming(where), 0)
        self._busy, self._where = True, where

    def mark_dirty(self) -> None:
        """This holder leaves an unresolved journal: the next one must look for it."""
        self._dirty = True
        self.mark_busy()

    def __enter__(self) -> None:
        with _PROCESS_LOCKS_GUARD:
            thread_lock = _PROCESS_LOCKS.setdefault(self.path, allocate_lock())
        deadline = time.monotonic() + self.timeout
        if not thread_lock.acquire(timeout=self.timeout):
            raise TimeoutError(f"could not acquire the commit lock {self.path} within {self.timeout} s")
        self._thread_lock = thread_lock
        try:
            if fcntl is None:
                stack = contextlib.ExitStack()
                stack.enter_context(_filelock(self.path, deadline, self.timeout))
                self._inner = stack
            elif self.cross_process:
                # flock without a context manager of its own: this is every commit's path
                self._fd = _flock_acquire(self._open_file, self.path, deadline, self.timeout)
                try:
                    self._take_marker()
                except BaseException:
                    _flock_release(self._fd)
                    self._fd = None
                    raise
        except BaseException:
            self._thread_lock = None
            thread_lock.release()
            raise

    def _take_marker(self) -> None:
        assert self._fd is not None
        held_before = self.path in _HELD_BEFORE
        head = os.pread(self._fd, len(CLEAN), 0)
        self.fresh = head == CLEAN and held_before
        self.left_in, self._busy, self._where = None, False, None
        if head == BUSY:
            self.left_in = _where_of(os.pread(self._fd, _MAX_WHERE + 8, len(BUSY)))
        if not self.fresh:
            self.mark_busy(self.left_in)  # killed too, this holder leaves that folder named
        _HELD_BEFORE.add(self.path)

    def __exit__(self, *exc: object) -> None:
        fd, inner, thread_lock = self._fd, self._inner, self._thread_lock
        self._fd = self._inner = self._thread_lock = None
        try:
            try:
                if fd is not None and self._busy and not self._dirty:
                    os.pwrite(fd, CLEAN, 0)
            finally:
                if fd is not None:
                    _flock_release(fd)
                elif inner is not None:
                    inner.close()
        finally:
            if thread_lock is not None:
                thread_lock.release()


def _naming(where: str | None) -> bytes:
    """What follows ``BUSY``: ``<length>\n<folder key>``, or ``-\n`` for no folder (so that a
    stale name after it, from a longer marker before, is never read)."""
    name = b"" if where is None else where.encode("utf-8", "surrogatepass")
    return b"%d\n" % len(name) + name if where is not None and len(name) <= _MAX_WHERE else b"-\n"


def _where_of(tail: bytes) -> str | None:
    """The folder key after a ``BUSY`` marker (``<length>\n<key>``), or ``None``."""
    length, newline, rest = tail.partition(b"\n")
    if not (newline and length.isdigit() and len(length) <= 4 and int(length) <= len(rest)):
        return None
    try:
        return rest[: int(length)].decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return None


def local_lock(path: str, timeout: float, *, cross_process: bool, open_file: Callable[[], int]) -> LocalLock:
    """The lock on the file at ``path`` (its name in messages and this process's table), which
    ``open_file`` opens, creating it if missing (:data:`FILE_FLAGS`): the backend opens it as it
    makes every change, through its root (see ``LocalBackend._open_lock_file``)."""
    return LocalLock(path, timeout, cross_process=cross_process, open_file=open_file)


#: How the lock file is opened: read-write, created if missing, never through a symlink.
FILE_FLAGS = os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)


def _flock_acquire(open_file: Callable[[], int], path: str, deadline: float, timeout: float) -> int:
    """``flock(2)`` on the lock file; its descriptor, to give to :func:`_flock_release`. Called
    directly rather than through filelock, whose fork-safety bookkeeping costs about a
    millisecond per acquire: as much as the durable write a commit protects."""
    assert fcntl is not None
    fd = open_file()
    try:
        delay = 0.001
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return fd
            except BlockingIOError:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(f"could not acquire the commit lock {path} within {timeout} s") from None
                time.sleep(min(delay, remaining))
                delay = min(delay * 2, 0.05)
    except BaseException:
        os.close(fd)
        raise


def _flock_release(fd: int) -> None:
    assert fcntl is not None
    try:
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
