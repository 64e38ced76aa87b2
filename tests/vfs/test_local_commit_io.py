"""What a commit costs on local disk, counted (not timed): each content hashed once, each
directory flushed once per batch, history pruned without ever leaving a lone journal."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest

import backends.base
import backends.local.backend
import backends.local.containment
import backends.local.setaside
import backends.local.versions
import vfs
from backends.base import DeleteItem
from backends.local import LocalBackend


def _count_content_hashes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    sizes: list[int] = []
    real = backends.base._new_hash or backends.base._blake3()

    def counting(data: bytes = b"") -> object:
        sizes.append(len(data))
        return real(data)

    monkeypatch.setattr(backends.base, "_new_hash", counting)
    return sizes


@pytest.mark.parametrize("files", [1, 3])
def test_each_new_content_is_hashed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: int) -> None:
    # No file is "racy" (recently modified) here, so versions are stat-only; what is left is the
    # commit's own post-image hash, which the backend reuses for the written file's version, and
    # one hash of each pre-image for its record's integrity (records are checked before use).
    monkeypatch.setattr(backends.local.versions, "RACY_WINDOW_NS", 0)
    for i in range(files):
        (tmp_path / f"f{i}.txt").write_bytes(b"old" * 100)
    ws = vfs.open_workspace(str(tmp_path))
    sizes = _count_content_hashes(monkeypatch)
    with ws.transaction() as tx:
        for i in range(files):
            tx.write(str(tmp_path / f"f{i}.txt"), b"new" * (200 + i))
    for i in range(files):
        assert sizes.count(600 + 3 * i) == 1, sizes  # each post-image once
    assert sizes.count(300) == files, sizes  # each pre-image once, for its record's digest


def test_racy_target_version_uses_the_commits_hash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file written this instant is racy, so its version carries a content hash: the one the
    commit computed for its journal, not a second pass over the bytes."""
    (tmp_path / "a.txt").write_bytes(b"a")
    ws = vfs.open_workspace(str(tmp_path))
    data = b"x" * 100_000
    sizes = _count_content_hashes(monkeypatch)
    with ws.transaction() as tx:
        tx.write(str(tmp_path / "a.txt"), data)
    assert sizes.count(len(data)) == 1
    version = tx.result.versions[str(tmp_path / "a.txt")]
    assert version is not None and version.endswith(backends.base.content_digest(data))
    assert ws.is_current(str(tmp_path / "a.txt"), version)


def test_one_directory_flush_per_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for d in ("d1", "d2"):
        (tmp_path / d).mkdir()
        for i in range(3):
            (tmp_path / d / f"f{i}.txt").write_bytes(b"old")
    ws = vfs.open_workspace(str(tmp_path))
    ws._ctx.ensure_meta()
    flushed: list[tuple[bool, int]] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        st = os.fstat(fd)
        flushed.append((stat.S_ISDIR(st.st_mode), st.st_ino))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    with ws.transaction() as tx:
        for d in ("d1", "d2"):
            for i in range(3):
                tx.write(str(tmp_path / d / f"f{i}.txt"), b"new")
    directories = [ino for is_dir, ino in flushed if is_dir]
    for d in ("d1", "d2"):
        assert directories.count(os.stat(tmp_path / d).st_ino) == 1  # not once per file
    files = [ino for is_dir, ino in flushed if not is_dir]
    assert len(files) == 6 + 2  # every target before its rename, the journal, the mark


class FailingJournalDelete(LocalBackend):
    """Deleting the history journal whose name contains ``bad`` fails with EACCES."""

    bad = ""

    def _delete_in(self, directory: backends.local.containment.Directory, item: DeleteItem) -> None:
        if self.bad and self.bad in item.key and item.key.endswith(".journal"):
            raise PermissionError(errno.EACCES, "injected", item.key)
        super()._delete_in(directory, item)


def test_pruning_never_leaves_a_lone_journal(tmp_path: Path) -> None:
    backend = FailingJournalDelete(str(tmp_path))
    ws = vfs.Workspace(backend, mount=str(tmp_path), history_limit=100)
    for k in range(3):  # two files each: journaled commits, whose history is journal + decision
        with ws.transaction(label=f"c{k}") as tx:
            tx.write(str(tmp_path / "a.txt"), f"v{k}".encode())
            tx.write(str(tmp_path / "b.txt"), f"v{k}".encode())
    tx_dir = tmp_path / ".vfs" / "tx"
    txids = sorted(n.removesuffix(".done") for n in os.listdir(tx_dir) if n.endswith(".done"))
    assert len(txids) == 3
    backend.bad = txids[0]
    with pytest.raises(vfs.VfsError) as info:
        ws._ctx.log.forget(txids[0], txids[1])
    assert info.value.code == "FS_PERMISSION_DENIED"
    names = set(os.listdir(tx_dir))
    assert {f"{txids[0]}.journal", f"{txids[0]}.done"} <= names  # kept as a pair: still history
    assert not {f"{txids[1]}.journal", f"{txids[1]}.done"} & names  # the other one went
    assert not ws.pending()
    assert [e.label for e in ws.log()] == ["c2", "c0"]


def test_a_batch_over_many_folders_keeps_few_handles_and_flushes_every_rename(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(backends.local.backend, "BATCH_OPEN_DIRECTORIES", 2)
    folders = [f"d{i}" for i in range(5)]
    for d in folders:
        (tmp_path / d).mkdir()
    order = ["d0", "d1", "d2", "d0", "d3", "d4", "d1", "d0"]  # comes back to evicted folders
    for i, d in enumerate(order):
        (tmp_path / d / f"f{i}.txt").write_bytes(b"old")  # replaced (rename), not created (link)
    ws = vfs.open_workspace(str(tmp_path))
    ws._ctx.ensure_meta()
    events: list[tuple[str, int]] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            events.append(("flush", st.st_ino))
        real_fsync(fd)

    def replace(src: str, dst: str, *, src_dir_fd: int | None = None, dst_dir_fd: int | None = None) -> None:
        real_replace(src, dst, src_dir_fd=src_dir_fd, dst_dir_fd=dst_dir_fd)
        folder = os.fstat(dst_dir_fd).st_ino if dst_dir_fd is not None else os.stat(os.path.dirname(dst)).st_ino
        events.append(("rename", folder))

    real_exchange = backends.local.setaside.exchange

    def exchange(directory: backends.local.containment.Directory, a: str, b: str) -> None:
        real_exchange(directory, a, b)  # a conditional replace publishes by exchange, not rename
        assert directory.fd is not None
        events.append(("rename", os.fstat(directory.fd).st_ino))

    handles = {"open": 0, "most": 0}
    real_check_parent, real_close = LocalBackend._check_parent, backends.local.containment.Directory.close

    def check_parent(self: LocalBackend, key: str) -> backends.local.containment.Directory:
        handles["open"] += 1
        handles["most"] = max(handles["most"], handles["open"])
        return real_check_parent(self, key)

    def close(self: backends.local.containment.Directory) -> None:
        if self.fd is not None:
            handles["open"] -= 1
        real_close(self)

    monkeypatch.setattr(LocalBackend, "_check_parent", check_parent)
    monkeypatch.setattr(backends.local.containment.Directory, "close", close)
    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    monkeypatch.setattr(backends.local.setaside, "exchange", exchange)
    with ws.transaction() as tx:
        for i, d in enumerate(order):
            tx.write(str(tmp_path / d / f"f{i}.txt"), f"new {i}".encode())
    for i, d in enumerate(order):
        assert (tmp_path / d / f"f{i}.txt").read_bytes() == f"new {i}".encode()
    for d in folders:
        ino = os.stat(tmp_path / d).st_ino
        last_rename = max(k for k, e in enumerate(events) if e == ("rename", ino))
        assert ("flush", ino) in events[last_rename:], d  # its entries are durable before the mark
    assert handles["most"] == 2 and handles["open"] == 0


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts descriptors through /proc")
def test_a_commit_across_more_folders_than_descriptors(tmp_path: Path) -> None:
    import resource

    folders = 300
    ws = vfs.open_workspace(str(tmp_path), storage_options={"fsync": False})
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    # Room for 100 more descriptors than are open now: fewer than the folders of the commit.
    resource.setrlimit(resource.RLIMIT_NOFILE, (len(os.listdir("/proc/self/fd")) + 100, hard))
    try:
        with ws.transaction() as tx:
            for i in range(folders):
                tx.write(f"d{i}/f.txt", f"{i}".encode())
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert tx.result is not None and len(tx.result.changes) == folders
    assert all((tmp_path / f"d{i}" / "f.txt").read_bytes() == f"{i}".encode() for i in range(folders))


def test_resolving_a_key_stats_only_below_the_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """realpath stat'ed every folder above the root too (the root was resolved when opened); a
    symlink below the root still takes the full path (and one leading outside is refused)."""
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "f.txt").write_bytes(b"x")
    (tmp_path / "a" / "link").symlink_to(tmp_path / "a" / "b")
    (tmp_path / "a" / "out").symlink_to("/")
    root = backends.local.containment.Root(str(tmp_path), dir_fd=True)
    seen: list[str] = []
    real = os.lstat

    def lstat(path: str, *args: object, **kwargs: object) -> os.stat_result:
        seen.append(str(path))
        return real(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "lstat", lstat)
    assert root.resolve("a/b/f.txt") == "a/b/f.txt"
    assert len(seen) == 3 and all(p.startswith(str(tmp_path) + "/") for p in seen), seen
    assert root.resolve("a/b/missing/deeper.txt") == "a/b/missing/deeper.txt"
    assert root.resolve("a/link/f.txt") == "a/b/f.txt"
    with pytest.raises(backends.base.EscapesRoot):
        root.resolve("a/out/etc")


def test_an_edit_resolves_its_path_once_and_an_unread_path_each_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Read then write the same path: one resolution (the transaction holds its bytes from the
    read on). A path it holds nothing of is resolved at every call: a symlink retargeted meanwhile
    is followed where it now points."""
    for name in ("x", "y"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "f.txt").write_bytes(name.encode())
    (tmp_path / "link").symlink_to(tmp_path / "x")
    ws = vfs.open_workspace(str(tmp_path))
    resolved: list[str] = []
    backend = ws._ctx.storage.backend
    real = backend.resolve

    def counting(key: str) -> str:
        resolved.append(key)
        return real(key)  # type: ignore[no-any-return]

    monkeypatch.setattr(backend, "resolve", counting)
    with ws.transaction() as tx:
        assert tx.exists(str(tmp_path / "link" / "f.txt"))  # a stat holds no bytes: resolved again below
        (tmp_path / "link").unlink()
        (tmp_path / "link").symlink_to(tmp_path / "y")
        assert tx.read(str(tmp_path / "link" / "f.txt")).data == b"y"
        tx.write(str(tmp_path / "link" / "f.txt"), b"Y2")
        assert tx.read(str(tmp_path / "link" / "f.txt")).data == b"Y2"
    assert resolved == ["link/f.txt", "link/f.txt"]
    assert (tmp_path / "y" / "f.txt").read_bytes() == b"Y2"
    assert (tmp_path / "x" / "f.txt").read_bytes() == b"x"


def test_a_read_waits_out_a_lease_another_writer_holds(tmp_path: Path) -> None:
    """A vfs writer holds a write lease on its staged file between the swap and the check; an
    O_NONBLOCK open fails there with EAGAIN (a blocking one would wait): the read waits it out."""
    import fcntl
    import signal
    import threading

    (tmp_path / "f.txt").write_bytes(b"bytes")
    fd = os.open(tmp_path / "f.txt", os.O_RDWR)
    try:
        fcntl.fcntl(fd, backends.local.setaside._F_SETSIG, signal.SIGURG)  # a break must not kill us
        try:
            fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_WRLCK)
        except OSError:
            pytest.skip("no leases here")
        with pytest.raises(BlockingIOError):  # what a plain non-blocking open meets
            os.close(os.open(tmp_path / "f.txt", os.O_RDONLY | os.O_NONBLOCK))
        timer = threading.Timer(0.05, lambda: fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK))
        timer.start()
        data, _ = LocalBackend(str(tmp_path)).read("f.txt")
        timer.join()
        assert data == b"bytes"
    finally:
        os.close(fd)


def test_a_blind_write_of_a_racy_file_reads_and_hashes_it_once_before_the_swap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file written this instant is racy: its version carries a hash of its bytes. A blind write
    reads it once, when staged (the bytes are the pre-image: no second read under the lock, and
    no stat that reads it to hash it), and hashes it then only: the history record's digest is
    that one, and the swap's check compares the file that came out with those bytes; the check
    before staging compares stat fields only (the swap's check is the one that holds)."""
    target = tmp_path / "a.txt"
    target.write_bytes(b"p" * 4321)
    ws = vfs.open_workspace(str(tmp_path))
    sizes = _count_content_hashes(monkeypatch)
    reads: list[int] = []
    real_read = os.read

    def counting_read(fd: int, n: int) -> bytes:
        data = real_read(fd, n)
        if len(data) == 4321:
            reads.append(fd)
        return data

    monkeypatch.setattr(os, "read", counting_read)
    with ws.transaction() as tx:
        tx.write(str(target), b"n" * 10)
    assert target.read_bytes() == b"n" * 10
    assert len(reads) == 2, reads  # staged, and the swap's check of the file that came out
    assert sizes.count(4321) == 1, sizes  # its version when read, reused by the record and the check


def _stats_asked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The keys LocalBackend.stat is asked for from now on, in order."""
    asked: list[str] = []
    real = LocalBackend.stat

    def counting(self: LocalBackend, key: str) -> object:
        asked.append(key)
        return real(self, key)

    monkeypatch.setattr(LocalBackend, "stat", counting)
    return asked


def test_a_folder_checked_under_the_lock_is_not_stated_again_to_see_whether_to_create_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "sub").mkdir()
    ws = vfs.open_workspace(str(tmp_path))
    asked = _stats_asked(monkeypatch)
    with ws.transaction() as tx:
        tx.write(str(tmp_path / "sub" / "new.txt"), b"b")
    assert (tmp_path / "sub" / "new.txt").read_bytes() == b"b"
    assert asked.count("sub") == 2, asked  # first seen, then checked under the lock: no third look


def test_the_folders_of_an_existing_file_are_not_stated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "sub" / "deeper").mkdir(parents=True)
    (tmp_path / "sub" / "deeper" / "a.txt").write_bytes(b"a")
    ws = vfs.open_workspace(str(tmp_path))
    asked = _stats_asked(monkeypatch)
    with ws.transaction() as tx:
        tx.write(str(tmp_path / "sub" / "deeper" / "a.txt"), b"b")
    assert (tmp_path / "sub" / "deeper" / "a.txt").read_bytes() == b"b"
    assert "sub" not in asked and "sub/deeper" not in asked, asked  # the file was reached through them


@pytest.mark.parametrize("replacement", ["nothing", "a file"])
def test_the_folder_of_a_written_file_gone_before_the_commit_is_a_stale_version(
    tmp_path: Path, replacement: str
) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.txt").write_bytes(b"a")
    ws = vfs.open_workspace(str(tmp_path))
    tx = ws.transaction()
    tx.write(str(tmp_path / "sub" / "a.txt"), b"b")
    (tmp_path / "sub" / "a.txt").unlink()
    (tmp_path / "sub").rmdir()
    if replacement == "a file":
        (tmp_path / "sub").write_bytes(b"not a folder")
    with pytest.raises(vfs.StaleVersion, match="no longer exists"):
        tx.commit()
    assert not (tmp_path / "sub").is_dir()


def test_a_file_staged_where_a_folder_of_a_read_file_was_still_refuses_writes_below_it(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.txt").write_bytes(b"a")
    ws = vfs.open_workspace(str(tmp_path))
    with ws.transaction() as tx:
        tx.read(str(tmp_path / "sub" / "a.txt"))
        tx.delete(str(tmp_path / "sub" / "a.txt"))
        tx.rmdir(str(tmp_path / "sub"))
        tx.write(str(tmp_path / "sub"), b"now a file")
        with pytest.raises(vfs.NotADirectory):
            tx.write(str(tmp_path / "sub" / "a.txt"), b"b")
        tx.abort()
    assert (tmp_path / "sub" / "a.txt").read_bytes() == b"a"


def test_a_digest_is_remembered_for_the_same_bytes_object_only_and_checked_byte_by_byte() -> None:
    data = os.urandom(5000)
    digest = backends.base.content_digest(data)
    assert backends.base.content_digest(data) == digest  # the same object: remembered
    copy = bytes(bytearray(data))
    assert copy is not data and backends.base.content_digest(copy) == digest
    assert backends.base.has_digest(bytes(bytearray(data)), digest)  # equal bytes: no hash needed
    changed = data[:-1] + bytes([data[-1] ^ 1])
    assert not backends.base.has_digest(changed, digest)
    assert not backends.base.has_digest(data, backends.base.content_digest(changed))
    # pushed out by newer contents (the budget), still right: hashed again
    for _ in range(backends.base._Recent.BUDGET // 500_000 + 2):
        backends.base.content_digest(os.urandom(500_000))
    assert id(data) not in backends.base._recent.by_id
    assert backends.base._recent.size <= backends.base._Recent.BUDGET
    assert backends.base.content_digest(data) == digest and backends.base.has_digest(copy, digest)
