"""The local commit lock: ``flock(2)`` on ``.vfs/lock``, exclusive across processes.

Another process is simulated by a real subprocess holding the lock file with ``flock``; the
commit must wait for it, give up with a coded error after ``lock_timeout`` (changing nothing),
and proceed as soon as the holder releases the lock or dies.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import vfs

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs flock(2) (POSIX)")

HOLDER = textwrap.dedent(
    """
    import fcntl, os, sys, time
    fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o666)
    fcntl.flock(fd, fcntl.LOCK_EX)
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
    """
)


def _hold_lock(path: Path, seconds: float) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(path), str(seconds)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "held"
    return proc


def _reap(proc: subprocess.Popen[str]) -> None:
    proc.wait()
    assert proc.stdout is not None
    proc.stdout.close()


def _workspace(tmp_path: Path, **options: object) -> vfs.Workspace:
    (tmp_path / "a.txt").write_bytes(b"old\n")
    ws = vfs.open_workspace(str(tmp_path), **options)
    ws.transaction().commit()  # nothing staged: no lock taken, but .vfs/ may not exist yet
    ws._ctx.ensure_meta()
    return ws


def test_commit_gives_up_on_a_lock_held_by_another_process(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, lock_timeout=0.3)
    holder = _hold_lock(tmp_path / ".vfs" / "lock", 30)
    try:
        started = time.monotonic()
        with pytest.raises(vfs.VfsError) as info, ws.transaction() as tx:
            tx.write("a.txt", b"new\n")
        waited = time.monotonic() - started
    finally:
        holder.kill()
        _reap(holder)
    assert info.value.code == "FS_IO_ERROR"
    assert "lock" in info.value.message
    assert waited >= 0.25  # it did wait for the holder before giving up
    assert (tmp_path / "a.txt").read_bytes() == b"old\n"


def test_commit_proceeds_once_the_holder_releases(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, lock_timeout=30)
    holder = _hold_lock(tmp_path / ".vfs" / "lock", 0.5)
    try:
        with ws.transaction() as tx:
            tx.write("a.txt", b"new\n")
    finally:
        _reap(holder)
    assert holder.returncode == 0  # the holder finished its sleep: the commit waited for it
    assert (tmp_path / "a.txt").read_bytes() == b"new\n"


def test_a_dead_holders_lock_is_released_by_the_kernel(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, lock_timeout=30)
    holder = _hold_lock(tmp_path / ".vfs" / "lock", 60)
    killer = threading.Timer(0.3, lambda: os.kill(holder.pid, signal.SIGKILL))
    killer.start()
    try:
        with ws.transaction() as tx:
            tx.write("a.txt", b"new\n")
    finally:
        killer.cancel()
        _reap(holder)
    assert holder.returncode == -signal.SIGKILL
    assert (tmp_path / "a.txt").read_bytes() == b"new\n"


def test_threads_of_one_process_are_serialised(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    (tmp_path / "n.txt").write_bytes(b"0")
    errors: list[BaseException] = []

    def bump() -> None:
        for _ in range(20):
            while True:
                try:
                    with ws.transaction() as tx:
                        value = int(tx.read("n.txt").data)
                        tx.write("n.txt", str(value + 1).encode())
                    break
                except vfs.StaleVersion:
                    continue  # lost a race between read and commit: retry, as a caller would
                except vfs.VfsError as exc:  # pragma: no cover - reported below
                    errors.append(exc)
                    return

    threads = [threading.Thread(target=bump) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert (tmp_path / "n.txt").read_bytes() == b"80"  # no increment lost


def _remove_metadata(root: Path, *, keep_folder: bool = False) -> None:
    """``rm -rf .vfs`` (or of its contents only) behind an open workspace's back."""
    meta = root / ".vfs"
    for child in sorted(meta.rglob("*"), reverse=True):
        child.rmdir() if child.is_dir() else child.unlink()
    if not keep_folder:
        meta.rmdir()


def _on_disk(root: Path, backend: str) -> vfs.Workspace:
    """A workspace on ``root`` through the local backend, or through fsspec's local filesystem
    (the generic backend, whose lock file is a file of its own)."""
    if backend == "local":
        return _workspace(root)
    import fsspec

    from backends.fsspec_any import FsspecBackend

    (root / "a.txt").write_bytes(b"old\n")
    return vfs.Workspace(FsspecBackend(fsspec.filesystem("file"), str(root)))


@pytest.mark.parametrize("backend", ["local", "fsspec file"])
@pytest.mark.parametrize("removed", [".vfs", ".vfs/tx"])
def test_metadata_removed_behind_an_open_workspace_is_made_again(tmp_path: Path, removed: str, backend: str) -> None:
    ws = _on_disk(tmp_path, backend)
    with ws.transaction() as tx:
        tx.write("a.txt", b"v1\n")
    _remove_metadata(tmp_path, keep_folder=removed == ".vfs/tx")
    with ws.transaction() as tx:  # one file: its history record needs the folder
        tx.write("a.txt", b"v2\n")
    assert tx.result is not None and tx.result.warnings == []
    assert (tmp_path / ".vfs" / "tx").is_dir()
    if backend == "local":  # (fsspec's lock file is removed when let go)
        assert (tmp_path / ".vfs" / "lock").exists()
    ws.undo()  # its record was written: undo reaches it
    assert (tmp_path / "a.txt").read_bytes() == b"v1\n"
    _remove_metadata(tmp_path, keep_folder=removed == ".vfs/tx")
    with ws.transaction() as tx:  # two files: journaled, the journal needs the folder
        tx.write("a.txt", b"v3\n")
        tx.write("b.txt", b"b\n")
    assert tx.result is not None and tx.result.warnings == []
    assert (tmp_path / "a.txt").read_bytes() == b"v3\n"
    ws.undo()
    assert (tmp_path / "a.txt").read_bytes() == b"v1\n" and not (tmp_path / "b.txt").exists()


def test_a_metadata_folder_swapped_for_a_link_is_refused_and_nothing_outside_changes(tmp_path: Path) -> None:
    """``.vfs`` replaced by a symlink to another folder after the workspace was opened: the lock
    file is not made (nor its marker written) there; the commit is refused and changes nothing."""
    root, outside = tmp_path / "ws", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "lock").write_bytes(b"someone else's lock file\n")
    ws = _workspace(root)
    with ws.transaction() as tx:
        tx.write("a.txt", b"v1\n")
    _remove_metadata(root)
    (root / ".vfs").symlink_to(outside)
    with pytest.raises(vfs.SandboxDenied), ws.transaction() as tx:
        tx.write("a.txt", b"v2\n")
    assert (outside / "lock").read_bytes() == b"someone else's lock file\n"
    assert sorted(p.name for p in outside.iterdir()) == ["lock"]
    assert (root / "a.txt").read_bytes() == b"v1\n"


def _lock(path: Path) -> Any:
    """The local backend's commit lock on the file at ``path`` (a ``LocalLock``)."""
    from backends.local.backend import LocalBackend

    return LocalBackend(str(path.parent)).lock(path.name, timeout=5)


def _fresh(path: Path) -> tuple[bool, bool]:
    """Whether an acquisition of the lock at ``path`` is ``fresh`` (twice: the first and a second)."""
    seen = []
    for _ in range(2):
        lock = _lock(path)
        with lock:
            seen.append(lock.fresh)
    return seen[0], seen[1]


def _marker(path: Path) -> bytes:
    """The lock file's marker (what follows it names a folder, or nothing)."""
    return path.read_bytes()[:15]


def test_a_lock_is_fresh_only_after_this_process_held_it_and_its_holder_left_cleanly(tmp_path: Path) -> None:
    from backends.local.lock import BUSY, CLEAN

    path = tmp_path / "lock"
    path.write_bytes(CLEAN)  # clean, but written before this process ever held it (a power cut?)
    assert _fresh(path) == (False, True)
    assert _marker(path) == CLEAN
    lock = _lock(path)
    with lock:
        assert lock.fresh and _marker(path) == CLEAN  # nothing said yet: nothing to look for
        lock.mark_busy()  # about to write a journal
        assert path.read_bytes().startswith(BUSY + b"-\n")  # a holder killed now leaves it busy, naming no folder
    assert _marker(path) == CLEAN
    lock = _lock(path)
    with lock:
        assert _marker(path) == CLEAN
        lock.mark_dirty()
        assert _marker(path) == BUSY
    assert _marker(path) == BUSY
    again = _lock(path)
    with again:
        assert not again.fresh  # the dirty holder's work must be looked for
        assert _marker(path) == BUSY  # and it may recover it: a holder killed now leaves it busy
    assert _marker(path) == CLEAN


def test_a_one_file_commit_names_its_folder_in_the_lock_and_a_journaled_one_marks_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A one-file commit has no journal to name the folder of its temp file: the lock names it
    (``BUSY``, then the folder) before the file is staged, and says ``CLEAN`` again once done."""
    from backends.local import publish
    from backends.local.lock import BUSY, CLEAN

    ws = _workspace(tmp_path)
    (tmp_path / "sub").mkdir()
    with ws.transaction() as tx:  # the first acquisition in this process: never fresh
        tx.write("sub/a.txt", b"v0\n")
    lock_file = tmp_path / ".vfs" / "lock"
    assert _marker(lock_file) == CLEAN
    staged: list[bytes] = []
    real_stage = publish.stage

    def stage_seen(directory, *args, **kwargs):  # type: ignore[no-untyped-def]
        if directory.path.endswith("sub"):
            staged.append(lock_file.read_bytes())
        return real_stage(directory, *args, **kwargs)

    monkeypatch.setattr(publish, "stage", stage_seen)
    with ws.transaction() as tx:
        tx.write("sub/a.txt", b"v1\n")
    assert staged == [BUSY + b"3\nsub"]
    assert _marker(lock_file) == CLEAN
    assert (tmp_path / "sub" / "a.txt").read_bytes() == b"v1\n"
    written: list[bytes] = []
    real_fsync = os.fsync

    def journal_seen(fd: int) -> None:
        written.append(_marker(lock_file))  # the marker when each flush (the journal's first) runs
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", journal_seen)
    with ws.transaction() as tx:  # two files: journaled
        tx.write("sub/a.txt", b"v2\n")
        tx.write("b.txt", b"b\n")
    assert written and written[0] == BUSY, written  # marked before its journal was flushed
    assert _marker(lock_file) == CLEAN


def test_a_holder_killed_mid_commit_leaves_the_lock_not_fresh(tmp_path: Path) -> None:
    from backends.local.lock import BUSY

    path = tmp_path / "lock"
    _fresh(path)  # this process has held it: only the marker decides from now on
    killed = textwrap.dedent(
        """
        import os, signal, sys
        sys.path.insert(0, sys.argv[2])
        from backends.local.backend import LocalBackend
        with LocalBackend(os.path.dirname(sys.argv[1])).lock(os.path.basename(sys.argv[1]), timeout=5):
            os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    repo = str(Path(__file__).resolve().parents[2])
    proc = subprocess.run([sys.executable, "-c", killed, str(path), repo], check=False)
    assert proc.returncode == -signal.SIGKILL
    assert _marker(path) == BUSY
    lock = _lock(path)
    with lock:
        assert not lock.fresh
        assert lock.left_in is None  # its marker named no folder


def test_a_lock_file_without_the_marker_is_never_fresh(tmp_path: Path) -> None:
    path = tmp_path / "lock"
    path.write_bytes(b"")  # as an older vfs (or a hand) leaves it
    _fresh(path)
    path.write_bytes(b"")
    lock = _lock(path)
    with lock:
        assert not lock.fresh


def _count_listings(ws: vfs.Workspace, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    listed: list[str] = []
    backend = ws._ctx.storage.backend
    real = backend.list_names

    def counting(key: str) -> list[str]:
        listed.append(key)
        return real(key)  # type: ignore[no-any-return]

    monkeypatch.setattr(backend, "list_names", counting)
    return listed


def test_a_commit_on_a_fresh_lock_skips_listing_the_journals(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = _workspace(tmp_path, history_limit=1000)
    with ws.transaction() as tx:  # the first acquisition in this process: never fresh
        tx.write("a.txt", b"v0\n")
    listed = _count_listings(ws, monkeypatch)
    for k in range(1, 4):
        with ws.transaction() as tx:
            tx.write("a.txt", f"v{k}\n".encode())
    assert listed == []
    assert (tmp_path / "a.txt").read_bytes() == b"v3\n"


def test_a_journal_left_by_a_killed_process_is_found_by_a_long_lived_workspace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = _workspace(tmp_path)
    (tmp_path / "b.txt").write_bytes(b"b0\n")
    with ws.transaction() as tx:  # this process has held the lock: the marker decides from now on
        tx.write("a.txt", b"a1\n")
    child = textwrap.dedent(
        """
        import sys
        sys.path.insert(0, sys.argv[2])
        import vfs
        ws = vfs.open_workspace(sys.argv[1])
        with ws.transaction() as tx:
            tx.write("a.txt", b"a2\\n")
            tx.write("b.txt", b"b2\\n")
        """
    )
    repo = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "VFS_TEST_CRASH_AT": "applied-writes"}
    proc = subprocess.run([sys.executable, "-c", child, str(tmp_path), repo], env=env, check=False)
    assert proc.returncode == -signal.SIGKILL
    assert (tmp_path / "b.txt").read_bytes() == b"b2\n"  # killed mid-commit: half of it landed
    listed = _count_listings(ws, monkeypatch)
    with ws.transaction() as tx:
        tx.write("c.txt", b"c\n")
    assert listed  # the killed holder left the lock busy: the journals were looked for
    assert (tmp_path / "a.txt").read_bytes() == b"a1\n"  # its journal was rolled back first
    assert (tmp_path / "b.txt").read_bytes() == b"b0\n"
    assert not ws.pending()


@pytest.mark.parametrize("plant", ["hard link", "fifo"])
def test_a_lock_file_that_is_not_its_own_regular_file_is_refused(tmp_path: Path, plant: str) -> None:
    """The marker is written into the lock file in place: never into a file with another name
    (outside the workspace, say), nor into something that is not a regular file."""
    root, outside = tmp_path / "ws", tmp_path / "outside.txt"
    root.mkdir()
    outside.write_bytes(b"a file outside the workspace\n")
    ws = _workspace(root)
    lock = root / ".vfs" / "lock"
    lock.unlink(missing_ok=True)
    os.link(outside, lock) if plant == "hard link" else os.mkfifo(lock)
    with pytest.raises(vfs.VfsError) as info, ws.transaction() as tx:
        tx.write("a.txt", b"new\n")
    assert info.value.code == ("FS_HARD_LINKED" if plant == "hard link" else "FS_NOT_REGULAR_FILE"), info.value.code
    assert outside.read_bytes() == b"a file outside the workspace\n"
    assert (root / "a.txt").read_bytes() == b"old\n"
