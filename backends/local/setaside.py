"""Conditional replace and delete that never overwrite a writer bypassing vfs.

POSIX has no "rename over this name only if it still is inode X", so the check cannot be atomic
with the rename. Instead the old file is moved aside *atomically with* the publish, and checked
after: ``renameat2(RENAME_EXCHANGE)`` swaps the staged temp file and the target in one step (the
name is never absent, so a reader never sees it missing and an appender opening it with
``O_CREAT`` never starts a new file), leaving the old file under the temp file's vfs-only name.
That file must be the inode vfs looked at and still the expected version; if it is not, a second
exchange puts it back (again never clobbering: whatever is at the name then comes out with it),
and the write is refused. A delete renames the target to a vfs-only name, checks it there, and
links it back (``link(2)``: never over a file that appeared meanwhile) if it fails the check.

A writer that opened the old file *before* the swap still holds it: what it writes after the
check would land in an inode nobody can see any more. So before the check, the set-aside file is
probed for writers with a read lease (``F_SETLEASE``, which the kernel refuses while any process
holds the file open for writing): a file someone has open for writing goes back and the write is
refused ("being written"); a file nobody has open for writing can never be written again (its only
name is vfs's private one), so the check that follows is final. Where leases are unavailable (a
file of another owner without CAP_LEASE, a filesystem without leases) the check stands alone and
bytes written through an old handle after it are kept as below when seen, else lost: the limit of
POSIX rename, stated in the README.

Bytes that cannot go back to the name without displacing something newer (two writers within
microseconds) are kept as ``.vfs-kept-<32 hex>-<name>``: visible, never swept. After a crash,
every vfs-only name left here is a temp name, swept by recovery; the journal restores the rest.
"""

from __future__ import annotations

import errno
import fcntl
import os

# The number from _signal, which `signal` wraps: `import signal` turns every constant into an
# enum member (~3 M instructions of start-up, issue 20) for the one number needed here.
from _signal import SIGURG  # type: ignore[import-not-found]  # no stub: signal re-exports it
from collections.abc import Callable

from backends.base import BeingWritten, PreconditionFailed, Vanished
from backends.local import libc
from backends.local.containment import Directory
from backends.local.publish import discard, fresh_temp_name

Check = Callable[[os.stat_result], bool]
RENAME_EXCHANGE = 2
_NAME_MAX = 255


_RENAMEAT2 = libc.function("renameat2")


def exchange(directory: Directory, a: str, b: str) -> None:
    """Swap the files named ``a`` and ``b`` in ``directory``, atomically."""
    assert _RENAMEAT2 is not None and directory.fd is not None
    if _RENAMEAT2(directory.fd, os.fsencode(a), directory.fd, os.fsencode(b), RENAME_EXCHANGE) != 0:
        code = libc.last_errno()
        raise OSError(code, os.strerror(code), b)


def exchange_works(directory: Directory) -> bool:
    """Whether the kernel swaps names in this directory: two names that do not exist must fail
    with ENOENT (not ENOSYS: old kernel; EINVAL: a filesystem without exchange; EBADF/ENOTDIR:
    the handle is not a real kernel directory handle)."""
    if _RENAMEAT2 is None or directory.fd is None:
        return False
    try:
        exchange(directory, fresh_temp_name(), fresh_temp_name())
    except OSError as exc:
        return exc.errno == errno.ENOENT
    return False  # pragma: no cover - two absent names cannot be swapped


def replace_checked(
    directory: Directory,
    tmp: str,
    name: str,
    key: str,
    old: tuple[int, os.stat_result],
    same: Check,
    staged: int | None = None,
    written: os.stat_result | None = None,
    keep: tuple[Directory, str] | None = None,
) -> None:
    """Swap the temp file ``tmp`` in for ``name``; keep it only if what came out is the file
    ``old`` holds open (with its stat when it was checked) and ``same`` accepts it, else swap
    back and raise ``PreconditionFailed``. ``staged``: the only open handle on ``tmp``, which
    holds a write lease while the new file is visible but not yet checked (see :func:`_blocked`);
    ``written``: that file's stat once written (device, inode and size: it is looked up at
    ``tmp`` where not given); ``keep``: a folder and name to move the checked old file to instead
    of unlinking it (where the move fails, it is unlinked all the same)."""
    held, checked = old
    if has_writers(held):  # refused before the swap: a refused write is never visible at all
        raise BeingWritten(errno.ESTALE, _WHY[BeingWritten], key)
    leased = staged if staged is not None and _take_write_lease(staged) else None
    try:
        _still_there(directory, name, key, checked)  # the last step before the swap: keep it next to it
        ours = written if written is not None else directory.lstat(tmp)
        try:
            _swap_in_and_check(directory, tmp, name, key, held, same, ours, leased, keep)
        except PreconditionFailed:
            raise  # nothing swapped, or already swapped back
        except BaseException:
            # Interrupted anywhere (KeyboardInterrupt included): if the old file sits under the
            # temp name, put it back, so the caller's clean-up of the temp name cannot delete it.
            if _inode(directory, tmp) not in (None, (ours.st_dev, ours.st_ino)):
                _swap_back(directory, tmp, name, key, ours, leased)
            raise
    finally:
        if leased is not None:
            _drop_lease(leased)


def _take_write_lease(fd: int) -> bool:
    """A write lease on our staged file: from the swap until it is dropped, any other open of it
    waits (the kernel holds the opener until the lease is dropped). False where leases are
    unavailable (another handle on it, a filesystem without leases): the check stands alone."""
    try:
        fcntl.fcntl(fd, _F_SETSIG, SIGURG)  # a break must not signal SIGIO: it would kill us
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_WRLCK)
    except OSError:
        return False
    return True


def _drop_lease(fd: int) -> None:
    try:
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)
    except OSError:  # pragma: no cover - broken and removed by the kernel already
        pass


def _blocked(leased: int | None) -> int | None:
    """Who waits to open our staged file, seen by the lease on it: ``F_RDLCK`` only readers,
    ``F_UNLCK`` a writer too, ``None`` nobody (or no lease).

    A reader that opened ``name`` while our refused file stood there would, once let go, read the
    refused bytes and could write them back with its own change (a read-modify-write editor): the
    change it read over, the one that made us refuse, would be lost. So before a refused file's
    lease is dropped, the waiters are given the bytes that stand at ``name`` again instead."""
    if leased is None:
        return None
    try:
        state = fcntl.fcntl(leased, fcntl.F_GETLEASE)
    except OSError:  # pragma: no cover - leases vanished under us
        return None
    return None if state == fcntl.F_WRLCK else state


def _swap_in_and_check(
    directory: Directory,
    tmp: str,
    name: str,
    key: str,
    held: int,
    same: Check,
    ours: os.stat_result,
    leased: int | None = None,
    keep: tuple[Directory, str] | None = None,
) -> None:
    try:
        exchange(directory, tmp, name)
    except FileNotFoundError:
        raise Vanished(errno.ENOENT, "no longer exists", key) from None
    # From here ``tmp`` names the old file; ``name`` holds ours, visible: every step until a swap
    # back is as short as it can be. A write through an old handle after the check is seen by
    # ``_retire``'s second look; after the probe there can be none.
    seen = _verify(directory, tmp, held, same)
    if seen is None:
        raise _swap_back(directory, tmp, name, key, ours, leased)
    if has_writers(held, signal_set=True):
        raise _swap_back(directory, tmp, name, key, ours, leased, error=BeingWritten)
    _retire(directory, tmp, name, held, seen, keep)


def has_writers(held: int, *, signal_set: bool = False) -> bool:
    """Whether any process holds the file open for writing (``held`` is a read-only handle on it).
    A read lease is refused with EAGAIN exactly then; it is dropped at once, so a later open of the
    file (after a swap back) never has to break it. ``False`` also where leases are unavailable.

    An open for writing in the microseconds the lease is held breaks it, and the kernel signals
    the holder: SIGIO by default, which would end the process, so the handle's signal is set to
    SIGURG first (ignored unless the program asked for it; ``signal_set``: an earlier call on the
    same handle did)."""
    try:
        if not signal_set:
            fcntl.fcntl(held, _F_SETSIG, SIGURG)
        fcntl.fcntl(held, fcntl.F_SETLEASE, fcntl.F_RDLCK)
    except OSError as exc:
        return exc.errno in (errno.EAGAIN, errno.EBUSY)
    fcntl.fcntl(held, fcntl.F_SETLEASE, fcntl.F_UNLCK)
    return False


_F_SETSIG = getattr(fcntl, "F_SETSIG", 10)  # Linux's value, for a Python built without the name


def delete_checked(directory: Directory, name: str, key: str, held: int, same: Check) -> None:
    """Delete ``name`` only if it still is the file ``held`` open and ``same`` accepts it."""
    if has_writers(held):  # refused while the name is still there
        raise BeingWritten(errno.ESTALE, _WHY[BeingWritten], key)
    aside = fresh_temp_name()
    try:
        try:
            directory.replace(name, aside)
        except FileNotFoundError:
            raise Vanished(errno.ENOENT, "no longer exists", key) from None
        seen = _verify(directory, aside, held, same)
        if seen is None:
            raise _link_back(directory, aside, name, key)
        if has_writers(held, signal_set=True):
            raise _link_back(directory, aside, name, key, error=BeingWritten)
        if _changed(held, seen):
            raise _link_back(directory, aside, name, key)
        directory.unlink(aside)
    except PreconditionFailed:
        raise
    except BaseException:
        if _inode(directory, aside) is not None:  # interrupted while set aside: it goes back
            _link_back(directory, aside, name, key)
        raise


def _inode(directory: Directory, name: str) -> tuple[int, int] | None:
    try:
        st = directory.lstat(name)
    except FileNotFoundError:
        return None
    return st.st_dev, st.st_ino


def _still_there(directory: Directory, name: str, key: str, checked: os.stat_result) -> None:
    """Refuse early, without swapping, if the file changed since it was checked (it was staged
    and flushed meanwhile: milliseconds). The swap-and-check still decides; this only keeps a
    refused write from being visible at all in the common case."""
    try:
        st = directory.lstat(name)
    except FileNotFoundError:
        raise Vanished(errno.ENOENT, "no longer exists", key) from None
    if (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns) != (
        checked.st_dev,
        checked.st_ino,
        checked.st_size,
        checked.st_mtime_ns,
        checked.st_ctime_ns,
    ):
        raise PreconditionFailed(errno.ESTALE, "changed since it was read", key)


def _verify(directory: Directory, aside: str, held: int, same: Check) -> os.stat_result | None:
    """The set-aside file's stat if it is the file ``held`` open and ``same`` accepts it: taken
    before ``same`` looks (a write while it hashes then counts as a change, see :func:`_changed`)."""
    st = directory.lstat(aside)
    held_st = os.fstat(held)
    if (st.st_dev, st.st_ino) != (held_st.st_dev, held_st.st_ino) or not same(st):
        return None
    return held_st


def _changed(held: int, seen: os.stat_result) -> bool:
    """Whether the file was written through a handle opened before it was set aside."""
    now = os.fstat(held)
    return (now.st_size, now.st_mtime_ns, now.st_ctime_ns) != (seen.st_size, seen.st_mtime_ns, seen.st_ctime_ns)


def _kept_name(name: str) -> str:
    candidate = f".vfs-kept-{os.urandom(16).hex()}-{name}"
    return candidate if len(os.fsencode(candidate)) <= _NAME_MAX else candidate[:_NAME_MAX]


def _retire(
    directory: Directory, aside: str, name: str, held: int, seen: os.stat_result, keep: tuple[Directory, str] | None
) -> None:
    """Drop the checked old file (or move it to ``keep``, made private: the caller keeps it, as it
    was checked), unless a writer that had it open wrote to it since the check: then those bytes are
    kept under a ``.vfs-kept-`` name, and not moved."""
    if _changed(held, seen):
        directory.replace(aside, _kept_name(name))
        return
    if keep is not None:
        try:
            directory.move_to(aside, *keep)
        except OSError:  # (another filesystem, a folder planted at the name): dropped as usual
            pass
        else:
            _make_private(held)
            return
    directory.unlink(aside)


def _make_private(held: int) -> None:
    """A kept file is data, not the file it was: no set-id or execute bit, not readable by others
    (a setuid program replaced by an edit must not live on, runnable, in the history). Where the
    caller does not own it (no right to change its mode), it keeps the mode it had."""
    try:
        os.fchmod(held, 0o600)
    except OSError:
        pass


def _swap_back(
    directory: Directory,
    aside: str,
    name: str,
    key: str,
    ours: os.stat_result,
    leased: int | None = None,
    error: type[PreconditionFailed] = PreconditionFailed,
) -> PreconditionFailed:
    """Put the old file back at ``name``; whatever is there comes out: ours, as staged, is
    dropped (unless someone waits to write to it: :func:`_give_waiters_the_file`); anything
    else (someone's write in the microseconds since) is kept. The error to raise."""
    exchange(directory, aside, name)
    out = directory.lstat(aside)
    if (out.st_dev, out.st_ino, out.st_size) == (ours.st_dev, ours.st_ino, ours.st_size):
        waiting = _blocked(leased)
        if waiting is None:
            discard(directory, aside)
            return error(errno.ESTALE, _WHY[error], key)
        assert leased is not None
        _give_waiters_the_file(directory, name, leased)
        if waiting == fcntl.F_RDLCK:
            discard(directory, aside)  # the readers hold it open: they read it all the same
            return error(errno.ESTALE, _WHY[error], key)
    kept = _kept_name(name)
    directory.replace(aside, kept)
    return error(errno.ESTALE, f"{_WHY[error]} (a newer version is kept as {kept})", key)


def _give_waiters_the_file(directory: Directory, name: str, leased: int) -> None:
    """Make our refused file, which others wait to open, hold the bytes now at ``name``: what
    they read is then what stands there, never bytes that were refused. A writer among them
    writes into our file, which is therefore kept, not dropped."""
    fd = directory.open(name, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0), 0)
    try:  # piece by piece: the file may be as large as any (never held whole in memory)
        offset = 0
        while piece := os.pread(fd, _COPY_PIECE, offset):
            view = memoryview(piece)
            while view:
                written = os.pwrite(leased, view, offset)
                view, offset = view[written:], offset + written
    finally:
        os.close(fd)
    os.ftruncate(leased, offset)


_COPY_PIECE = 1 << 20


def _link_back(
    directory: Directory, aside: str, name: str, key: str, error: type[PreconditionFailed] = PreconditionFailed
) -> PreconditionFailed:
    """Return the set-aside file to ``name`` without replacing what appeared there meanwhile."""
    try:
        directory.link(aside, name)
    except FileExistsError:
        kept = _kept_name(name)
        directory.replace(aside, kept)
        return error(errno.ESTALE, f"{_WHY[error]} (its other version is kept as {kept})", key)
    directory.unlink(aside)
    return error(errno.ESTALE, _WHY[error], key)


_WHY = {PreconditionFailed: "changed since it was read", BeingWritten: "open for writing by another process"}
