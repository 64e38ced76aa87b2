"""The local backend class: the primitives, each a short composition of the package's parts."""

from __future__ import annotations

import builtins
import errno
import os
import stat as stat_module
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from functools import partial

from backends.base import (
    ROOT_MISSING,
    ROOT_NOT_A_DIRECTORY,
    BadRoot,
    Capabilities,
    DeleteItem,
    FileInfo,
    HardLinked,
    NotRegular,
    TooBig,
    WriteItem,
    check_precondition,
    content_digest,
    given_digest,
    join_key,
    joined,
    parent_of,
)
from backends.local import publish, setaside, syncfs
from backends.local.containment import Directory, Root, has_dir_fd, kind_of
from backends.local.lock import FILE_FLAGS as LOCK_FILE_FLAGS
from backends.local.lock import flock_excludes, local_lock
from backends.local.versions import Versions
from backends.values import replace, value

TYPE_CHECKING = False  # typing's constant, without importing typing at run time (see backends/values.py)
if TYPE_CHECKING:
    from typing import Any, ClassVar, TypeVar

    T = TypeVar("T")

#: Directory handles a batch keeps open at once (well under the usual limit of 1,024 descriptors).
BATCH_OPEN_DIRECTORIES = 64


def _attempt(call: Callable[..., T], *args: Any) -> T | BaseException:
    """One item of a batch: its result, or the backend error it raised (reported in its slot)."""
    try:
        return call(*args)
    except OSError as exc:
        return exc


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


class LocalBackend:
    name: ClassVar[str] = "local"
    capabilities = Capabilities(
        atomic_replace=True,
        conditional_write=False,
        exclusive_create=True,
        durable=True,
        cross_process_lock=True,
        real_directories=True,
        real_mtime=True,
        modes=True,
        symlinks=True,
        keeps_owner=True,
        keeps_xattrs=True,
        hard_links="refused",
        keeps_replaced=True,  # where the set-aside swap replaces it (see _keep_place)
        lock_knows_resolved=True,  # the lock file's marker: see backends.local.lock.LocalLock
        notes=(
            "Conditional writes swap the new file in with renameat2(RENAME_EXCHANGE) and check the "
            "file that came out (swapping it back if it is not the expected version); conditional "
            "deletes rename the file aside and check it there. So a writer that bypasses vfs is never "
            "overwritten. What remains: a writer that opened the file before the swap and writes to "
            "it after the check (kept as .vfs-kept-* if it lands before the old file is dropped, lost "
            "after). Where the kernel or filesystem has no RENAME_EXCHANGE (not Linux, some network "
            "or FUSE filesystems, emulations), versions are checked immediately before the rename "
            "and a writer inside that window (microseconds) is not detected.",
            "Owner and group are kept where the caller may set them (root: both; others: the group, "
            "if they belong to it).",
        ),
    )

    def __init__(self, root: str, *, fsync: bool = True, trust_ctime: bool = True, set_aside: bool = True) -> None:
        """``trust_ctime=False`` for a filesystem on which opening a file moves its ctime (an
        emulation): versions then rest on inode, size, mtime and the hash of racy files.
        ``set_aside=False`` reopens the check-to-rename window the set-aside protocol closes (see
        the package docstring); an emulated filesystem whose handles are not the kernel's must
        pass it, since the protocol reaches the kernel directly (``renameat2`` through backends.local.libc)."""
        self.set_aside = set_aside
        self._root = Root(root, dir_fd=has_dir_fd())
        self.root = self._root.path
        self.fsync = fsync
        self.versions = Versions(trust_ctime=trust_ctime)
        self._umask = _umask()
        self._exchange_works: dict[int, bool] = {}  # device -> whether renameat2 swaps names there
        if not flock_excludes(self.root):
            note = "The commit lock excludes the threads of this process only (flock does not exclude here)."
            self.capabilities = replace(
                LocalBackend.capabilities, cross_process_lock=False, notes=(*LocalBackend.capabilities.notes, note)
            )

    @classmethod
    def from_url(cls, url: str, storage_options: dict[str, Any]) -> LocalBackend:
        path = url
        for prefix in ("file://", "local://"):
            if url.startswith(prefix):
                path = url[len(prefix) :]
        options = dict(storage_options)
        fsync = bool(options.pop("fsync", True))
        trust_ctime = bool(options.pop("trust_ctime", True))
        set_aside = bool(options.pop("set_aside", True))
        if options:
            raise TypeError(f"unknown storage options for a local root: {', '.join(sorted(options))}")
        return cls(path or ".", fsync=fsync, trust_ctime=trust_ctime, set_aside=set_aside)

    def describe(self) -> str:
        return self.root

    def check_root(self) -> None:
        """An existing directory (a link to one counts: the root is followed once, when opened)."""
        if os.path.isdir(self.root):
            return
        raise BadRoot(ROOT_NOT_A_DIRECTORY if os.path.lexists(self.root) else ROOT_MISSING)

    # -- helpers ------------------------------------------------------------------------------

    def _path(self, key: str) -> str:
        return self._root.path_of(key)

    def _check_parent(self, key: str) -> Directory:
        """The parent directory of ``key``, checked to be inside the root (see containment)."""
        return self._root.parent(key)

    def _sync_dir(self, directory: Directory) -> None:
        if not self.fsync:
            return
        fd = directory.fd if directory.fd is not None else os.open(directory.path, os.O_RDONLY)
        try:
            os.fsync(fd)
        except OSError as exc:  # some filesystems refuse fsync on a directory; data is still synced
            if exc.errno not in (errno.EINVAL, errno.EBADF, errno.ENOTSUP):
                raise
        finally:
            if directory.fd is None:
                os.close(fd)

    def _info(self, key: str, st: os.stat_result, version: str | None) -> FileInfo:
        return FileInfo(key, kind_of(st.st_mode), st.st_size, stat_module.S_IMODE(st.st_mode), version, st.st_mtime)

    def _whole(self, path: str) -> Callable[[], bytes]:
        def content() -> bytes:
            with open(path, "rb") as handle:
                return handle.read()

        return content

    # -- primitives ---------------------------------------------------------------------------

    def stat(self, key: str) -> FileInfo | None:
        path = self._path(key)
        try:
            st = os.lstat(path)
        except (FileNotFoundError, NotADirectoryError):
            return None
        version = self.versions.of(st, self._whole(path)) if stat_module.S_ISREG(st.st_mode) else None
        return self._info(key, st, version)

    def read(self, key: str, *, limit: int | None = None) -> tuple[bytes, FileInfo]:
        path = self._path(key)
        fd, st = self._open_for_read(path, key)
        try:
            if limit is not None and st.st_size > limit:
                raise TooBig(key, st.st_size, limit)  # from the handle's fstat: not a byte read
            data = _read_all(fd, st.st_size)
            st_after = os.fstat(fd)
        finally:
            os.close(fd)
        if self.versions.stat_part(st_after) != (part := self.versions.stat_part(st)):
            # Changed while we read it: the bytes may be a mix. Hash what we got so the version
            # can never vouch for content it did not see.
            return data, self._info(key, st_after, f"{self.versions.stat_part(st_after)}#{content_digest(data)}")
        return data, self._info(key, st, self.versions.of(st, lambda: data, part=part))

    def _open_for_read(self, path: str, key: str) -> tuple[int, os.stat_result]:
        """O_NONBLOCK: opening a FIFO must not hang; O_NOFOLLOW: vfs resolved symlinks already."""
        st = os.lstat(path)
        if stat_module.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "Is a directory", path)
        if stat_module.S_ISLNK(st.st_mode):
            raise NotRegular(errno.ELOOP, "is a symlink", key)
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
        try:
            # the mode is ignored without O_CREAT; the file's own keeps emulations that apply it harmless
            fd = publish.open_waiting_out_leases(lambda: os.open(path, flags, stat_module.S_IMODE(st.st_mode)))
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise NotRegular(errno.ELOOP, "is a symlink", key) from exc
            raise
        st = os.fstat(fd)
        if stat_module.S_ISDIR(st.st_mode) or not stat_module.S_ISREG(st.st_mode):
            os.close(fd)
            if stat_module.S_ISDIR(st.st_mode):
                raise IsADirectoryError(errno.EISDIR, "Is a directory", path)
            raise NotRegular(errno.EINVAL, "not a regular file", key)
        return fd, st

    def write(self, item: WriteItem) -> FileInfo:
        sync = self.fsync and item.durable
        directory = self._check_parent(item.key)
        try:
            info = self._write_in(directory, item, sync)
            if sync:
                self._sync_dir(directory)
            return info
        finally:
            directory.close()

    def _write_in(self, directory: Directory, item: WriteItem, sync: bool) -> FileInfo:
        """Publish ``item`` inside ``directory`` (the file flushed first when ``sync``; the
        directory entry is the caller's to flush); the info of the file written."""
        return self._put_in_place(self._stage_in(directory, item, sync))

    def _stage_in(self, directory: Directory, item: WriteItem, sync: bool) -> _Staged:
        """The checks, then ``item``'s bytes in a temp file beside its target (flushed when
        ``sync``); the handles stay open for :meth:`_put_in_place`, or are closed on failure."""
        name = item.key.rpartition("/")[2]  # (keys are "/"-separated on every platform)
        old = publish.open_existing(directory, name)
        try:
            self._check(item, old, final=item.if_version is None or not self._can_set_aside(directory))
            who = None
            if old is not None:
                who = publish.identity()
                publish.refuse_unsafe(old[1], item.key, who)
            mode = item.mode
            if mode is None:
                mode = stat_module.S_IMODE(old[1].st_mode) if old is not None else (0o666 & ~self._umask)
            tmp, fd, written = publish.stage(directory, item.data, mode, old, sync, who)
        except BaseException:
            if old is not None:
                os.close(old[0])
            raise
        return _Staged(directory, item, name, old, tmp, fd, written)

    def _put_in_place(self, staged: _Staged) -> FileInfo:
        """Rename (or swap) a staged temp file into place; every handle closed, the temp file
        removed if it did not land."""
        directory, item, old = staged.directory, staged.item, staged.old
        keep = None
        try:
            try:
                keep = self._keep_place(item) if old is not None else None
                self._publish(directory, staged.tmp, staged.name, item, old, staged.fd, staged.written, keep)
                st = os.fstat(staged.fd)  # our inode, whatever is at the name by now
            except BaseException:
                publish.discard(directory, staged.tmp)
                raise
            finally:
                os.close(staged.fd)
                if keep is not None:
                    keep[0].close()
        except BaseException:
            if old is not None:
                os.close(old[0])
            raise
        if old is not None:
            publish.let_go(old[0])  # the replaced file: freed at this close
        return self._written_info(item, st)

    def _keep_place(self, item: WriteItem) -> tuple[Directory, str] | None:
        """Where the file ``item`` replaces is to be moved (``item.keep_replaced``'s folder,
        reached as every folder is, and its name), or ``None``: not asked, or that folder cannot
        be reached (then the replaced file is freed as usual)."""
        if item.keep_replaced is None:
            return None
        try:
            return self._check_parent(item.keep_replaced), item.keep_replaced.rpartition("/")[2]
        except OSError:
            return None

    def _discard_staged(self, staged: _Staged) -> None:
        os.close(staged.fd)
        if staged.old is not None:
            os.close(staged.old[0])
        publish.discard(staged.directory, staged.tmp)

    def _check(
        self, item: WriteItem | DeleteItem, old: tuple[int, os.stat_result] | None, *, final: bool = True
    ) -> None:
        """The conditional-write rule, before anything is staged. ``final=False`` where the
        swap-and-check in ``setaside`` follows, which is the one that holds against concurrent
        writers and hashes a racy file's content: this is then a cheap early refusal by stat
        alone (no read of the file: a same-tick change is refused after the swap instead)."""
        part = None if old is None else self.versions.stat_part(old[1])
        current = None if old is None else self._info(item.key, old[1], part)
        held = old

        def same() -> bool:
            assert held is not None and item.if_version is not None
            if not final:
                return item.if_version.partition("#")[0] == part
            return self.versions.matches(held[1], item.if_version, lambda: publish.read_fd(held[0]))

        check_precondition(item, current, same)

    def _publish(
        self,
        directory: Directory,
        tmp: str,
        name: str,
        item: WriteItem,
        old: tuple[int, os.stat_result] | None,
        staged: int,
        written: os.stat_result | None = None,
        keep: tuple[Directory, str] | None = None,
    ) -> None:
        """Put the staged file in place; the file it replaces is moved to ``keep`` only by the
        set-aside swap (the one path that holds it, checked, under a name of its own)."""
        self._root.recheck(directory, item.key)
        if item.if_absent:
            publish.create(directory, tmp, name, item.key)
        elif item.if_version is not None and old is not None and self._can_set_aside(directory):
            same = self._same_as(item.if_version, old[0])
            setaside.replace_checked(directory, tmp, name, item.key, old, same, staged, written, keep)
        elif item.if_version is not None:
            self._recheck(item)  # the microsecond window the set-aside protocol closes
            directory.replace(tmp, name)
        else:
            directory.replace(tmp, name)  # unconditional: vfs's own records

    def _recheck(self, item: WriteItem | DeleteItem) -> None:
        """The condition again, by path, immediately before the rename or unlink."""
        assert item.if_version is not None
        if not self.matches(item.key, item.if_version):
            check_precondition(item, self.stat(item.key), lambda: False)

    def _can_set_aside(self, directory: Directory) -> bool:
        """Whether this folder takes the set-aside protocol: probed once per filesystem (a mount
        point inside the root may differ from the root), the answer kept by device number."""
        if not self.set_aside or directory.fd is None:
            return False
        device = directory.device()
        works = self._exchange_works.get(device)
        if works is None:
            works = self._exchange_works[device] = setaside.exchange_works(directory)
        return works

    def _same_as(self, version: str, held: int) -> setaside.Check:
        return lambda st: self.versions.matches_renamed(st, version, lambda: publish.read_fd(held))

    def _delete_checked(
        self, directory: Directory, name: str, item: DeleteItem, old: tuple[int, os.stat_result] | None
    ) -> bool:
        """The set-aside delete, when it applies; False: the caller unlinks by name."""
        if item.if_version is None or old is None or not self._can_set_aside(directory):
            return False
        setaside.delete_checked(directory, name, item.key, old[0], self._same_as(item.if_version, old[0]))
        return True

    def _written_info(self, item: WriteItem, st: os.stat_result) -> FileInfo:
        # The version of the bytes just written: stat-only once the racy window has passed
        # (never, right after a write), else with their hash: the caller's, if it has one.
        if not item.versioned:
            return self._info(item.key, st, None)
        return self._info(item.key, st, self.versions.of(st, lambda: joined(item.data), given_digest(item)))

    def delete(self, item: DeleteItem) -> None:
        directory = self._check_parent(item.key)
        try:
            self._delete_in(directory, item)
            if item.durable:
                self._sync_dir(directory)
        finally:
            directory.close()

    def _delete_in(self, directory: Directory, item: DeleteItem) -> None:
        name = item.key.rpartition("/")[2]
        if item.if_version is None:  # unconditional (vfs's own records): nothing to hold or check
            directory.unlink(name)  # (a directory: IsADirectoryError, as from open_existing)
            return
        old = publish.open_existing(directory, name)
        try:
            self._check(item, old, final=not self._can_set_aside(directory))
            if not self._delete_checked(directory, name, item, old):
                if item.if_version is not None:
                    self._recheck(item)
                directory.unlink(name)
        finally:
            if old is not None:
                os.close(old[0])

    # -- batches (BatchBackend): loops, but each directory is opened, checked and flushed once ------

    def stat_many(self, keys: Sequence[str]) -> list[FileInfo | BaseException | None]:
        return [_attempt(self.stat, k) for k in keys]

    def read_many(
        self, keys: Sequence[str], *, limit: int | None = None
    ) -> list[tuple[bytes, FileInfo] | BaseException]:
        return [_attempt(partial(self.read, limit=limit), k) for k in keys]

    def matches_many(self, items: Sequence[tuple[str, str | None]]) -> list[bool | BaseException]:
        return [_attempt(self.matches, k, v) for k, v in items]

    def write_many(self, items: Sequence[WriteItem]) -> list[FileInfo | BaseException]:
        """Each file written as by ``write`` (flushed before its rename); each directory's entries
        flushed with one ``fsync`` after the last rename in it, before this returns. A failing item
        does not stop the others (the caller rolls back what landed).

        A large durable batch is flushed with ``syncfs`` instead of one ``fsync`` per file (each
        of which commits the filesystem's journal on its own): chunks of files are staged
        unflushed, the filesystem is synced once, then they are renamed into place. The order a
        crash needs is the same (every file's bytes are durable before its rename is)."""
        if not (self.fsync and syncfs.available() and sum(i.durable for i in items) >= syncfs.BATCH_MIN):
            with self._directories() as directory_of:
                return [
                    _attempt(self._write_in, directory_of(i.key, self.fsync and i.durable), i, self.fsync and i.durable)
                    for i in items
                ]
        results: list[FileInfo | BaseException] = []
        with self._directories() as directory_of:
            for chunk in syncfs.chunks(items, lambda i: parent_of(i.key), BATCH_OPEN_DIRECTORIES // 2):
                results += self._write_chunk(chunk, directory_of)
        return results

    def _write_chunk(
        self, chunk: Sequence[WriteItem], directory_of: Callable[[str, bool], Directory]
    ) -> list[FileInfo | BaseException]:
        """Stage every item unflushed, sync their filesystems once, then put each in place."""
        staged: list[_Staged | BaseException] = []
        try:
            for item in chunk:
                staged.append(_attempt(self._stage_in, directory_of(item.key, item.durable), item, False))
            syncfs.sync_all(s.fd for s in staged if isinstance(s, _Staged))
        except BaseException as exc:
            for s in staged:
                if isinstance(s, _Staged):
                    self._discard_staged(s)
            if isinstance(exc, OSError) and len(staged) == len(chunk):  # the flush failed: every staged item
                return [exc if isinstance(s, _Staged) else s for s in staged]
            raise
        return [_attempt(self._put_in_place, s) if isinstance(s, _Staged) else s for s in staged]

    def delete_many(self, items: Sequence[DeleteItem]) -> list[BaseException | None]:
        with self._directories() as directory_of:
            return [_attempt(self._delete_in, directory_of(i.key, i.durable), i) for i in items]

    @contextmanager
    def _directories(self) -> Iterator[Callable[[str, bool], Directory]]:
        """Parent directories of a batch, each reached (and checked) once while it stays open;
        on a clean exit the ones a durable item used are flushed, one ``fsync`` each. At most
        ``BATCH_OPEN_DIRECTORIES`` stay open (a commit may touch thousands of folders): the
        least recently used one is flushed (if it must be) and closed to make room, and flushed
        again at the end if the batch comes back to it, so every durable rename is followed by a
        flush of its folder."""
        opened: dict[str, Directory] = {}  # insertion order = least recently used first
        to_flush: set[str] = set()

        def release(parent: str, directory: Directory) -> None:
            try:
                if parent in to_flush:
                    self._sync_dir(directory)
                    to_flush.discard(parent)
            finally:
                directory.close()

        def directory_of(key: str, durable: bool = True) -> Directory:
            parent = parent_of(key)
            directory = opened.pop(parent, None)
            if directory is None:
                if len(opened) >= BATCH_OPEN_DIRECTORIES:
                    oldest = next(iter(opened))
                    release(oldest, opened.pop(oldest))
                directory = self._check_parent(key)
            opened[parent] = directory
            if durable:
                to_flush.add(parent)
            return directory

        try:
            yield directory_of
            self._flush_directories([d for parent, d in opened.items() if parent in to_flush])
        finally:
            for directory in opened.values():
                directory.close()

    def _flush_directories(self, directories: builtins.list[Directory]) -> None:
        """One ``fsync`` per directory; several at once with one ``syncfs`` per filesystem."""
        handles = [d.fd for d in directories if d.fd is not None]
        if self.fsync and len(handles) == len(directories) >= syncfs.DIRECTORIES_MIN and syncfs.available():
            syncfs.sync_all(handles)
            return
        for directory in directories:
            self._sync_dir(directory)

    def list(self, key: str) -> list[FileInfo]:
        path = self._path(key)
        st = os.lstat(path)
        if not stat_module.S_ISDIR(st.st_mode):
            raise NotADirectoryError(errno.ENOTDIR, "Not a directory", key)
        out = []
        with os.scandir(path) as entries:
            for entry in entries:
                try:
                    st_child = entry.stat(follow_symlinks=False)
                except FileNotFoundError:
                    continue
                out.append(self._info(join_key(key, entry.name), st_child, None))
        return out

    def list_names(self, key: str) -> builtins.list[str]:
        """The names in ``key``, with no stat per entry (``list`` stats each one)."""
        path = self._path(key)
        if not stat_module.S_ISDIR(os.lstat(path).st_mode):
            raise NotADirectoryError(errno.ENOTDIR, "Not a directory", key)
        return os.listdir(path)

    def mkdir(self, key: str) -> None:
        directory = self._check_parent(key)
        try:
            directory.mkdir(os.path.basename(key))
            self._sync_dir(directory)
        finally:
            directory.close()

    def rmdir(self, key: str) -> None:
        directory = self._check_parent(key)
        try:
            directory.rmdir(os.path.basename(key))
            self._sync_dir(directory)
        finally:
            directory.close()

    def matches(self, key: str, version: str | None) -> bool:
        path = self._path(key)
        try:
            st = os.lstat(path)
        except (FileNotFoundError, NotADirectoryError):
            return version is None
        if version is None or not stat_module.S_ISREG(st.st_mode):
            return False
        try:
            return self.versions.matches(st, version, self._whole(path))
        except FileNotFoundError:
            return False

    def resolve(self, key: str) -> str:
        return self._root.resolve(key)

    def lock(self, key: str, *, timeout: float) -> AbstractContextManager[None]:
        open_file = partial(self._open_lock_file, key)
        return local_lock(
            self._path(key), timeout, cross_process=self.capabilities.cross_process_lock, open_file=open_file
        )

    def _open_lock_file(self, key: str) -> int:
        """The lock file's descriptor (created if missing), reached as every change is: through
        the root, no symlink followed (a ``.vfs`` swapped for a link to another folder would
        otherwise have the lock file made, and its marker written, there). A missing folder is
        ``FileNotFoundError``: vfs makes its metadata folders (``Context.write_meta``)."""
        directory = self._check_parent(key)
        try:
            fd = directory.open(os.path.basename(key), LOCK_FILE_FLAGS, 0o666)
        finally:
            directory.close()
        st = os.fstat(fd)
        if stat_module.S_ISREG(st.st_mode) and st.st_nlink == 1:
            return fd
        os.close(fd)  # its marker is written in place: not into a file that has another name too
        if not stat_module.S_ISREG(st.st_mode):
            raise NotRegular(errno.EINVAL, "not a regular file", key)
        raise HardLinked(errno.EMLINK, f"has {st.st_nlink} names (hard links)", key)

    def close(self) -> None:
        return None


@value(frozen=True, slots=True)
class _Staged:
    """A write staged in a temp file, not yet in place: the handles it holds until then.

    A value class, not a ``NamedTuple``: creating a NamedTuple class costs ~12 M instructions of
    start-up (``collections.namedtuple`` compiles its methods), more than the rest of this module."""

    directory: Directory
    item: WriteItem
    name: str
    old: tuple[int, os.stat_result] | None
    tmp: str
    fd: int
    written: os.stat_result | None  # the temp file's fstat once written (where ``old`` is given)


def _read_all(fd: int, size: int) -> bytes:
    """One read of the whole size (+1 to see the end): the bytes come back as one object, not
    chunks joined into a second copy (5 ms on a 5 MB file). More only if it grew."""
    chunks = [os.read(fd, size + 1)]
    if len(chunks[0]) <= size:
        return chunks[0]  # a short read of a regular file: its end (no second read to see it)
    while chunks[-1]:
        chunks.append(os.read(fd, 1 << 20))
    return chunks[0] if len(chunks) == 2 else b"".join(chunks)
