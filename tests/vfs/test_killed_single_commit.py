"""A single-file commit has no journal: its replace is its commit point. Killed while its temp
file is staged beside the target, it leaves that file where no journal names it; the commit lock
names the folder instead (``BUSY`` and the folder, written before the staging), and the next
holder of the lock (a commit, ``vfs recover``) sweeps vfs's temp names there. The lock file is
metadata: a folder it names is checked as a key before anything is deleted."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import vfs
from backends.base import is_temp_name, temp_name
from backends.local.lock import BUSY

CHILD = textwrap.dedent(
    """
    import os, signal, sys
    import backends.local.setaside as setaside
    import vfs

    def killed(*args, **kwargs):  # staged, flushed, not yet swapped in
        os.kill(os.getpid(), signal.SIGKILL)

    setaside.replace_checked = killed
    ws = vfs.open_workspace(sys.argv[1])
    ws.write_bytes(sys.argv[2], b"new bytes")
    """
)


def _temps(folder: Path) -> list[str]:
    return [n for n in os.listdir(folder) if is_temp_name(n)]


@pytest.fixture
def killed_in(tmp_path: Path) -> Path:
    """A workspace whose single-file commit of sub/dir/a.txt was killed with its temp staged."""
    (tmp_path / "sub" / "dir").mkdir(parents=True)
    (tmp_path / "sub" / "dir" / "a.txt").write_bytes(b"old bytes")
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    result = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path), "sub/dir/a.txt"], env=env, capture_output=True, timeout=60
    )
    assert result.returncode == -signal.SIGKILL, result.stderr
    assert len(_temps(tmp_path / "sub" / "dir")) == 1  # what the kill left
    return tmp_path


def test_the_next_commit_sweeps_the_temp_file_a_killed_single_commit_left(killed_in: Path) -> None:
    ws = vfs.open_workspace(str(killed_in))
    ws.write_bytes("elsewhere.txt", b"x")  # any commit, in any folder
    assert _temps(killed_in / "sub" / "dir") == []
    assert (killed_in / "sub" / "dir" / "a.txt").read_bytes() == b"old bytes"  # the change never landed


def test_vfs_recover_sweeps_it_too(killed_in: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "editors.adapters.cli", "recover", "--root", str(killed_in)],
        env={**os.environ, "PYTHONPATH": os.getcwd()},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert _temps(killed_in / "sub" / "dir") == []


def test_a_folder_the_lock_names_outside_the_workspace_is_not_swept(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    outside = tmp_path / temp_name()  # a name only vfs makes, one level above the root
    outside.write_bytes(b"not ours to sweep")
    ws = vfs.open_workspace(str(root))
    ws.write_bytes("a.txt", b"a")  # makes .vfs/lock
    for folder in (b"..", b".vfs/tx/../..", b"/tmp", b"\xff\xfe"):
        (root / ".vfs" / "lock").write_bytes(BUSY + b"%d\n" % len(folder) + folder)
        vfs.open_workspace(str(root)).write_bytes("a.txt", b"b")
        assert outside.read_bytes() == b"not ours to sweep"
    (root / ".vfs" / "lock").write_bytes(BUSY + b"99999999\n" + b"x")  # garbled: names nothing
    vfs.open_workspace(str(root)).write_bytes("a.txt", b"c")
    assert (root / "a.txt").read_bytes() == b"c"


def test_only_vfs_temp_names_are_swept_in_the_named_folder(killed_in: Path) -> None:
    folder = killed_in / "sub" / "dir"
    look_alikes = [".vfs-tmp-notours", ".vfs-tmp-" + "A" * 32, "x.vfs-tmp-" + "a" * 32]
    for name in look_alikes:
        (folder / name).write_bytes(b"mine")
    vfs.open_workspace(str(killed_in)).write_bytes("elsewhere.txt", b"x")
    assert sorted(os.listdir(folder)) == sorted(["a.txt", *look_alikes])


def test_a_clean_single_commit_leaves_the_lock_clean(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"a")
    ws = vfs.open_workspace(str(tmp_path))
    ws.write_bytes("a.txt", b"b")
    ws.write_bytes("a.txt", b"c")
    assert (tmp_path / ".vfs" / "lock").read_bytes().startswith(b"vfs-lock clean\n")


def test_any_holder_of_the_lock_sweeps_it_not_only_a_commit(killed_in: Path) -> None:
    """A checkpoint takes the lock and lets it go clean: had it not swept, the folder the lock
    named would be forgotten with the marker, and the temp file left for good."""
    ws = vfs.open_workspace(str(killed_in))
    ws.checkpoint("after-the-kill")
    assert _temps(killed_in / "sub" / "dir") == []
    assert (killed_in / ".vfs" / "lock").read_bytes().startswith(b"vfs-lock clean\n")
