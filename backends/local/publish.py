"""Publishing a file: a temp file next to the target, flushed, given the target's mode, owner,
group and extended attributes, then linked (no-replace) or renamed into place. The conditional
replace that never clobbers a writer bypassing vfs is :mod:`backends.local.setaside`.

Temp files are named ``.vfs-tmp-<32 hex>`` (128 random bits; ``backends.base.temp_name``): :func:`is_temp_name` recognises
exactly those, by the full name, so a user's file whose name merely contains ``.vfs-tmp-`` is
never taken for one. A temp file never survives an exception (``KeyboardInterrupt`` included).
"""

from __future__ import annotations

import _thread
import errno
import os
import stat as stat_module
import time
from collections.abc import Callable, Container

from backends.base import HardLinked, PreconditionFailed, WriteData, temp_name
from backends.local import libc
from backends.local.containment import Directory

_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
#: link(2) errors that mean "no hard links on this filesystem" (not "the name exists").
NO_LINKS = (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK, errno.ENOSYS)


def fresh_temp_name() -> str:
    return temp_name()


#: How long an open waits out another process's lease on the file (held for the microseconds of a
#: set-aside swap-and-check) before it gives up.
LEASE_WAIT_S = 2.0


def open_waiting_out_leases(opener: Callable[[], int]) -> int:
    """``opener()`` (an ``O_NONBLOCK`` open, so that a FIFO never hangs it), retried while it
    fails with ``EAGAIN``: on a regular file that means another process holds a lease on it (a
    vfs writer between its swap and its check: see ``setaside``), which a blocking open would
    wait out."""
    delay, deadline = 0.0005, time.monotonic() + LEASE_WAIT_S
    while True:
        try:
            return opener()
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.02)


# -- the file being replaced -------------------------------------------------------------------


def open_existing(directory: Directory, name: str) -> tuple[int, os.stat_result] | None:
    """A read handle on the regular file ``name`` and its ``fstat``; ``None`` when nothing is
    there or it is not a regular file (a symlink is replaced as an entry, never followed)."""
    try:
        st = directory.lstat(name)
    except FileNotFoundError:
        return None
    if stat_module.S_ISDIR(st.st_mode):
        raise IsADirectoryError(errno.EISDIR, "Is a directory", name)
    if not stat_module.S_ISREG(st.st_mode):
        return None
    try:
        # The mode argument is ignored without O_CREAT; passing the file's own keeps emulated
        # filesystems that apply it anyway from changing the file by opening it.
        fd = open_waiting_out_leases(lambda: directory.open(name, _READ_FLAGS, stat_module.S_IMODE(st.st_mode)))
    except (FileNotFoundError, OSError) as exc:
        if isinstance(exc, FileNotFoundError) or exc.errno == errno.ELOOP:
            return None  # replaced meanwhile by nothing or a symlink: no file to carry over
        raise
    return fd, os.fstat(fd)


def read_fd(fd: int) -> bytes:
    """All bytes of a file open for reading, from its start (moves the handle's offset). A short
    read of a regular file is its end: a small file takes one read."""
    os.lseek(fd, 0, os.SEEK_SET)
    chunks = []
    piece = _FIRST_PIECE
    while chunk := os.read(fd, piece):
        chunks.append(chunk)
        if len(chunk) < piece:
            break
        piece = _PIECE
    return b"".join(chunks)


#: The first read's size: below the allocator's threshold for a buffer of its own (mmap, then
#: mremap and munmap to shrink it: three more system calls for a small file).
_FIRST_PIECE = 1 << 16
_PIECE = 1 << 20


def may_write(st: os.stat_result, euid: int, groups: Container[int]) -> bool:
    """Whether a plain ``open(O_WRONLY)`` by this user would be allowed by the mode bits (root
    bypasses them, as it does for a plain write). A rename needs only the folder's permission,
    so without this check vfs would replace files the user could not write."""
    if euid == 0:
        return True
    if st.st_uid == euid:
        return bool(st.st_mode & stat_module.S_IWUSR)
    if st.st_gid in groups:
        return bool(st.st_mode & stat_module.S_IWGRP)
    return bool(st.st_mode & stat_module.S_IWOTH)


class _Groups:
    """This process's effective group and supplementary groups, asked of the kernel at the first
    membership test: most writes never ask (root; a file of the caller's own, whose group the
    new file gets anyway)."""

    __slots__ = ("_ids",)

    def __init__(self) -> None:
        self._ids: set[int] | None = None

    def __contains__(self, gid: object) -> bool:
        if self._ids is None:
            self._ids = {os.getegid(), *os.getgroups()}
        return gid in self._ids


def identity() -> tuple[int, Container[int]]:
    """This process's effective user and groups (asked once per file written: a refusal and the
    owner carried over rest on the same answer)."""
    return os.geteuid(), _Groups()


def refuse_unsafe(st: os.stat_result, key: str, who: tuple[int, Container[int]]) -> None:
    """Refuse what a replace would silently do wrong: split hard links, or write what the caller
    (``who``: :func:`identity`) may not write."""
    if st.st_nlink > 1:
        raise HardLinked(errno.EMLINK, f"has {st.st_nlink} names (hard links)", key)
    if not may_write(st, *who):
        raise PermissionError(errno.EACCES, "Permission denied", key)


def owner_to_keep(
    old: os.stat_result, new: os.stat_result, euid: int, groups: Container[int]
) -> tuple[int, int] | None:
    """The ``(uid, gid)`` to give the temp file so the replaced file keeps its owner and group:
    root sets both; another user only the group, and only to one of its own groups (what chown(2)
    allows); ``None`` when nothing to change or nothing permitted (-1 keeps a field)."""
    uid = old.st_uid if euid == 0 and old.st_uid != new.st_uid else -1
    gid = old.st_gid if old.st_gid != new.st_gid and (euid == 0 or old.st_gid in groups) else -1
    return None if uid == gid == -1 else (uid, gid)


def copy_xattrs(source: int, target: int) -> None:
    """Extended attributes of ``source`` onto ``target`` (ACLs and SELinux labels included).
    An attribute the filesystem or the caller cannot set is skipped: the bytes still land."""
    try:
        names = os.listxattr(source)
    except OSError as exc:
        if exc.errno in (errno.ENOTSUP, errno.EOPNOTSUPP):
            return
        raise
    for attr in names:
        try:
            os.setxattr(target, attr, os.getxattr(source, attr))
        except OSError as exc:
            if exc.errno not in (errno.ENOTSUP, errno.EOPNOTSUPP, errno.EPERM, errno.EACCES, errno.ENODATA):
                raise


# -- the temp file ------------------------------------------------------------------------------


def stage(
    directory: Directory,
    data: WriteData,
    mode: int,
    old: tuple[int, os.stat_result] | None,
    sync: bool,
    who: tuple[int, Container[int]] | None = None,
) -> tuple[str, int, os.stat_result | None]:
    """A temp file holding ``data`` with ``mode`` (and ``old``'s owner, group and extended
    attributes, as ``who`` may set them: :func:`identity`), flushed when ``sync``: its name, an
    open handle, and where ``old`` is given its ``fstat`` once written (its device, inode and
    size: what identifies it at a swap). Removed on any exception."""
    tmp = fresh_temp_name()
    fd = directory.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600)
    written = None
    try:
        write_all(fd, data, flushing=sync)
        if old is not None:
            written = _carry_over(directory, tmp, fd, old, who or identity())
        os.fchmod(fd, mode)  # after chown, which clears set-id bits
        if sync:
            os.fsync(fd)
    except BaseException:
        os.close(fd)
        discard(directory, tmp)
        raise
    return tmp, fd, written


#: Handles waiting for the closer thread, at most (besides the one it is closing): past that a
#: handle is closed in line, so that a commit of thousands of files never holds more descriptors
#: than this for its replaced files.
LET_GO_PENDING_MAX = 32


def let_go(fd: int) -> None:
    """Close a handle on a file that was just replaced, its name already gone.

    Its blocks are freed at this last close, which costs more than the replace that made it
    (~160 us for a 4 KB file here, ~1.5-2.5 ms for 5 MB on a disk mounted with ``discard``) and
    which nothing the caller does next waits for: the handle goes to one thread that closes
    handles in turn, while this one goes on with the next file (the 2,000-file patch: 7-10 % less
    time, the frees beside the next files' creations on the other core). In line where the
    closer has ``LET_GO_PENDING_MAX`` handles waiting, no thread can be had, or ``os`` is a
    stand-in (its handles are not the kernel's). If the process ends first, the kernel closes them.
    """
    pending = _closer() if _kernel_handles() else None
    if pending is None or len(pending.fds) >= LET_GO_PENDING_MAX:
        os.close(fd)
        return
    pending.put(fd)


class _Pending:
    """Handles waiting for the closer thread: a list, and a lock the closer sleeps on while the
    list is empty (``_thread``'s locks only: ``queue`` imports ``threading``, and ``_queue`` is a
    shared library to load, start-up that every `vfs apply` would pay).

    No state beside the list: an interrupt between a ``put``'s append and its wake-up leaves a
    handle that the next ``put`` wakes the closer for, never a closer asleep for good."""

    def __init__(self) -> None:
        self.fds: list[int] = []
        self._guard = _thread.allocate_lock()
        self._ready = _thread.allocate_lock()  # released by a put; taken by the closer to sleep
        self._ready.acquire()

    def put(self, fd: int) -> None:
        with self._guard:
            self.fds.append(fd)
        try:
            self._ready.release()
        except RuntimeError:  # released already: the closer has not slept since, and takes this one too
            pass

    def take(self) -> int:
        """The oldest handle waiting, once there is one."""
        while True:
            with self._guard:
                if self.fds:
                    return self.fds.pop(0)
            self._ready.acquire()


#: The pending handles of this process's closer thread, made at the first let_go.
_CLOSER: _Pending | None = None
_CLOSER_MADE = _thread.allocate_lock()


def _closer() -> _Pending | None:
    """The pending handles of this process's closer thread, started once; ``None`` where no
    thread can be had."""
    global _CLOSER
    if _CLOSER is not None:
        return _CLOSER
    with _CLOSER_MADE:
        if _CLOSER is None:
            pending = _Pending()
            try:
                _thread.start_new_thread(_close_in_turn, (pending,))
            except RuntimeError:  # no thread to be had
                return None
            _CLOSER = pending
        return _CLOSER


def _forget_closer() -> None:
    """In a forked child, which has no closer thread: what its parent had queued is closed here."""
    global _CLOSER, _CLOSER_MADE
    if _CLOSER is not None:
        for fd in _CLOSER.fds:
            _close_quietly(fd)
    _CLOSER, _CLOSER_MADE = None, _thread.allocate_lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_closer)


def _close_in_turn(pending: _Pending) -> None:
    while True:
        fd = pending.take()
        _close_quietly(fd)


def _close_quietly(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:  # (nothing to report to: the file was replaced, its handle is ours alone)
        pass


def write_all(fd: int, data: WriteData, *, flushing: bool = False) -> None:
    """All of ``data`` at the handle's offset. Pieces (an edit of a large file comes as thousands
    of them) go down a batch at a time with ``writev(2)``: up to ``_BATCH_PIECES`` of them and
    about ``_BATCH_BYTES`` per call, never joined into a copy (a larger piece goes in slices).

    ``flushing``: an ``fsync`` follows. After each batch once ``_KICK_AFTER`` bytes are down, the
    kernel is asked to start writing back what is dirty (``sync_file_range`` with
    ``SYNC_FILE_RANGE_WRITE``, which waits for nothing), so the disk works while the rest is
    copied in and the ``fsync`` waits for the tail only. A hint: durability is the ``fsync``'s."""
    if not _kernel_handles():
        for piece in data if isinstance(data, list) else [data]:
            _write_view(fd, memoryview(piece).cast("B"))
        return
    kick = flushing and _SYNC_FILE_RANGE is not None
    batch: list[bytes | memoryview] = []
    size = total = 0
    for piece in data if isinstance(data, list) else [data]:
        length = piece.nbytes if isinstance(piece, memoryview) else len(piece)
        if batch and (size + length > _BATCH_BYTES or len(batch) == _BATCH_PIECES):
            total += _write_batch(fd, batch, size, kick and total + size >= _KICK_AFTER)
            batch, size = [], 0
        if length > _BATCH_BYTES:
            view = memoryview(piece).cast("B")  # (offsets in bytes, whatever the view's format)
            for at in range(0, length, _BATCH_BYTES):
                part, last = view[at : at + _BATCH_BYTES], at + _BATCH_BYTES >= length
                total += _write_batch(fd, [part], part.nbytes, kick and not last and total + part.nbytes >= _KICK_AFTER)
            continue
        batch.append(piece)
        size += length
    if batch:
        _write_batch(fd, batch, size, False)  # (the fsync that follows writes the tail back)


#: A ``writev(2)`` takes at most this many pieces (``IOV_MAX`` is 1024 on Linux) ...
_BATCH_PIECES = 1024
#: ... and about this many bytes (a larger piece goes alone).
_BATCH_BYTES = 1 << 20
#: A file written with an fsync to follow starts its writeback once this much of it is down.
_KICK_AFTER = 1 << 20
_SYNC_FILE_RANGE = libc.function("sync_file_range")
_SYNC_FILE_RANGE_WRITE = 2


def _kernel_handles() -> bool:
    """Whether ``os`` is the real module (its ``write`` the C function), so handles are the
    kernel's. A stand-in (an emulated filesystem in a test) fakes ``write`` but not ``writev``,
    nor can it see a libc call: those would reach whatever the process really has open under
    the stand-in's handle numbers."""
    return type(os.write) is _C_FUNCTION


_C_FUNCTION: type = type(len)


def _write_batch(fd: int, batch: list[bytes | memoryview], size: int, kick: bool) -> int:
    """``batch`` (``size`` bytes) at the handle's offset: one ``writev`` (``write`` for one
    piece), then what a short write left, piece by piece; then, if ``kick``, the writeback of
    the file's dirty pages started. Its size."""
    done = os.write(fd, batch[0]) if len(batch) == 1 else os.writev(fd, batch)
    if done != size:
        for piece in batch:
            view = memoryview(piece).cast("B")
            if done >= view.nbytes:
                done -= view.nbytes
                continue
            _write_view(fd, view[done:])
            done = 0
    if kick:
        assert _SYNC_FILE_RANGE is not None
        # The whole file (offset 0, length 0): pages already under writeback are skipped. Its
        # result is not looked at: where it fails (no such call here), the fsync does the work.
        _SYNC_FILE_RANGE(fd, 0, 0, _SYNC_FILE_RANGE_WRITE)
    return size


def _write_view(fd: int, view: memoryview) -> None:
    while view:
        view = view[os.write(fd, view) :]


def _carry_over(
    directory: Directory, tmp: str, fd: int, old: tuple[int, os.stat_result], who: tuple[int, Container[int]]
) -> os.stat_result:
    """``old``'s owner, group and attributes given to the temp file; its ``fstat`` (before them)."""
    old_fd, old_st = old
    written = os.fstat(fd)
    owner = owner_to_keep(old_st, written, *who)
    if owner is not None:
        directory.chown(tmp, *owner)
    copy_xattrs(old_fd, fd)
    return written


def discard(directory: Directory, name: str) -> None:
    try:
        directory.unlink(name)
    except FileNotFoundError:
        pass


# -- putting it in place -------------------------------------------------------------------------


def link_no_replace(directory: Directory, src: str, dst: str) -> None:
    """Give ``src``'s file the name ``dst`` unless ``dst`` exists (``FileExistsError``), then drop
    ``src``. Where there are no hard links, claim ``dst`` with ``O_EXCL`` and rename over the claim."""
    try:
        directory.link(src, dst)
    except FileExistsError:
        raise
    except OSError as exc:
        if exc.errno not in NO_LINKS:
            raise
        os.close(directory.open(dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        directory.replace(src, dst)
        return
    directory.unlink(src)


def create(directory: Directory, tmp: str, name: str, key: str) -> None:
    """Publish ``tmp`` as ``name``, which must not exist (``if_absent``)."""
    try:
        link_no_replace(directory, tmp, name)
    except FileExistsError as exc:
        raise PreconditionFailed(errno.EEXIST, "already exists", key) from exc
