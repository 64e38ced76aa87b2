"""A file is more than its bytes: a replace through vfs keeps owner, group and extended
attributes, refuses hard-linked files and files the caller could not write (local disk)."""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path

import pytest

import vfs
from backends.local import LocalBackend
from backends.local.publish import may_write, owner_to_keep

root_only = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to chown")


def _fake_stat(uid: int, gid: int, mode: int) -> os.stat_result:
    # os.stat_result from a tuple: mode, ino, dev, nlink, uid, gid, size, atime, mtime, ctime
    return os.stat_result((stat.S_IFREG | mode, 1, 1, 1, uid, gid, 0, 0, 0, 0))


def test_capabilities_declare_what_a_replace_keeps(tmp_path: Path) -> None:
    caps = LocalBackend(str(tmp_path)).capabilities
    assert caps.keeps_owner and caps.keeps_xattrs and caps.hard_links == "refused"


@root_only
def test_owner_and_group_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_bytes(b"old\n")
    os.chown(path, 1234, 1234)
    ws = vfs.open_workspace(str(tmp_path))
    ws.write_bytes(str(path), b"new\n")
    st = os.stat(path)
    assert (st.st_uid, st.st_gid) == (1234, 1234)
    assert path.read_bytes() == b"new\n"


def test_extended_attributes_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_bytes(b"old\n")
    try:
        os.setxattr(path, "user.vfs-test", b"kept")
    except OSError as exc:
        if exc.errno in (errno.ENOTSUP, errno.EOPNOTSUPP, errno.EPERM):
            pytest.skip(f"no user xattrs here: {exc}")
        raise
    ws = vfs.open_workspace(str(tmp_path))
    ws.write_bytes(str(path), b"new\n")
    assert os.getxattr(path, "user.vfs-test") == b"kept"
    assert path.read_bytes() == b"new\n"


def test_a_hard_linked_file_is_refused_and_both_names_unchanged(tmp_path: Path) -> None:
    path, other = tmp_path / "a.txt", tmp_path / "b.txt"
    path.write_bytes(b"old\n")
    os.link(path, other)
    ws = vfs.open_workspace(str(tmp_path))
    with pytest.raises(vfs.VfsError) as info:
        ws.write_bytes(str(path), b"new\n")
    assert info.value.code == "FS_HARD_LINKED"
    assert path.read_bytes() == other.read_bytes() == b"old\n"
    assert os.stat(path).st_ino == os.stat(other).st_ino and os.stat(path).st_nlink == 2


@pytest.mark.parametrize(
    ("uid", "gid", "mode", "euid", "groups", "allowed"),
    [
        (1000, 1000, 0o644, 1000, {1000}, True),  # mine, owner-writable
        (1000, 1000, 0o444, 1000, {1000}, False),  # mine, read-only
        (2000, 2000, 0o644, 1000, {1000}, False),  # another owner's 0644
        (2000, 1000, 0o664, 1000, {1000}, True),  # group-writable, my group
        (2000, 3000, 0o664, 1000, {1000}, False),  # group-writable, not my group
        (2000, 3000, 0o666, 1000, {1000}, True),  # world-writable
        (1000, 1000, 0o464, 1000, {1000}, False),  # the owner class decides, not the group's bit
        (2000, 2000, 0o444, 0, {0}, True),  # root bypasses the mode bits, as a plain write does
    ],
)
def test_the_write_permission_decision(uid, gid, mode, euid, groups, allowed) -> None:
    assert may_write(_fake_stat(uid, gid, mode), euid, groups) is allowed


@pytest.mark.parametrize(
    ("old", "new", "euid", "groups", "expected"),
    [
        ((1234, 1234), (0, 0), 0, {0}, (1234, 1234)),  # root: both
        ((1000, 1000), (1000, 1000), 1000, {1000}, None),  # nothing to change
        ((2000, 50), (1000, 1000), 1000, {1000, 50}, (-1, 50)),  # a user: only a group of theirs
        ((2000, 60), (1000, 1000), 1000, {1000, 50}, None),  # not their group: nothing permitted
    ],
)
def test_the_owner_decision(old, new, euid, groups, expected) -> None:
    assert owner_to_keep(_fake_stat(*old, 0o644), _fake_stat(*new, 0o644), euid, groups) == expected


@root_only
@pytest.mark.skipif(not hasattr(os, "fork"), reason="POSIX only")
def test_a_read_only_file_is_refused_for_a_normal_user() -> None:
    """As uid 65534 in a folder it may write (so a rename would succeed), a 0444 file of its own
    and another owner's 0644 file are refused, byte for byte unchanged; its own 0644 file is not."""
    with tempfile.TemporaryDirectory() as top:
        os.chmod(top, 0o777)  # pytest's tmp_path is not reachable for another user
        files = {"ro.txt": (65534, 0o444), "theirs.txt": (0, 0o644), "mine.txt": (65534, 0o644)}
        for name, (uid, mode) in files.items():
            path = os.path.join(top, name)
            with open(path, "wb") as handle:
                handle.write(b"old\n")
            os.chown(path, uid, uid)
            os.chmod(path, mode)
        codes = _run_as_nobody(top, list(files))
        assert codes == {"ro.txt": "FS_PERMISSION_DENIED", "theirs.txt": "FS_PERMISSION_DENIED", "mine.txt": "ok"}
        for name in ("ro.txt", "theirs.txt"):
            with open(os.path.join(top, name), "rb") as handle:
                assert handle.read() == b"old\n"


def _run_as_nobody(top: str, names: list[str]) -> dict[str, str]:
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child drops to uid 65534 and reports one code per file on the pipe
        status = 1
        try:
            os.close(read_end)
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            ws = vfs.open_workspace(top)
            out = []
            for name in names:
                try:
                    ws.write_bytes(os.path.join(top, name), b"new\n")
                    out.append(f"{name}=ok")
                except vfs.VfsError as exc:
                    out.append(f"{name}={exc.code}")
            os.write(write_end, "\n".join(out).encode())
            status = 0
        finally:
            os._exit(status)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as handle:
        report = handle.read().decode()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    return dict(line.split("=", 1) for line in report.splitlines())
