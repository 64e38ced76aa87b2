"""Sandbox policy: nothing leaves the root, read-only refuses every mutation, metadata is hidden."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import vfs
from tests.support.trees import snapshot_tree

MUTATIONS = {
    "write": lambda tx, p: tx.write(p, b"x"),
    "create": lambda tx, p: tx.create(p, b"x"),
    "delete": lambda tx, p: tx.delete(p),
    "move_from": lambda tx, p: tx.move(p, "inside.txt"),
    "move_to": lambda tx, p: tx.move("inside.txt", p),
    "mkdir": lambda tx, p: tx.mkdir(p),
}


@pytest.mark.parametrize("op", sorted(MUTATIONS))
@pytest.mark.parametrize("path", ["../escape.txt", "/etc/passwd", "sub/../../escape.txt", ".vfs/tx/x", "/elsewhere/x"])
def test_paths_outside_root_are_denied(make_workspace, op, path):
    ws = make_workspace({"inside.txt": b"in", "sub": None})
    before = snapshot_tree(ws)
    with pytest.raises(vfs.SandboxDenied) as info, ws.transaction() as tx:
        MUTATIONS[op](tx, path)
    assert info.value.code == "FS_SANDBOX_DENIED"
    assert "[sandbox: file access denied under workspace-write mode]" in info.value.message
    assert snapshot_tree(ws) == before


@pytest.mark.parametrize("op", sorted(MUTATIONS))
def test_read_only_refuses_every_mutation(make_workspace, op):
    ws = make_workspace({"inside.txt": b"in", "target.txt": b"t"}, mode="read-only")
    before = snapshot_tree(ws)
    with pytest.raises(vfs.SandboxDenied) as info, ws.transaction() as tx:
        MUTATIONS[op](tx, f"{ws.mount}/target.txt")
    assert "read-only mode" in info.value.message
    assert ws.read_bytes(f"{ws.mount}/inside.txt") == b"in"  # reads still work
    assert snapshot_tree(ws) == before
    with pytest.raises(vfs.SandboxDenied):
        ws.undo()


def test_symlinks_out_of_root_are_denied(make_workspace):
    ws = make_workspace({"inside.txt": b"in", "dir": None})
    if not ws.capabilities.symlinks:
        pytest.skip("backend has no symlinks")
    root = ws.backend.describe()
    outside = Path(os.path.dirname(root)) / "outside"  # works in pyfakefs' fake tree too
    outside.mkdir(exist_ok=True)
    (outside / "secret.txt").write_bytes(b"secret")
    os.symlink(str(outside), os.path.join(root, "dirlink"))
    os.symlink(str(outside / "secret.txt"), os.path.join(root, "filelink"))
    os.symlink(os.path.join(root, "inside.txt"), os.path.join(root, "goodlink"))
    m = ws.mount
    for op in sorted(MUTATIONS):
        for target in (f"{m}/dirlink/secret.txt", f"{m}/dirlink/new.txt", f"{m}/filelink"):
            if op in ("delete", "move_from") and target.endswith("new.txt"):
                continue
            with pytest.raises(vfs.SandboxDenied), ws.transaction() as tx:
                MUTATIONS[op](tx, target)
    assert (outside / "secret.txt").read_bytes() == b"secret"
    assert sorted(os.listdir(outside)) == ["secret.txt"]
    # a symlink that stays inside the root is followed
    with ws.transaction() as tx:
        tx.write(f"{m}/goodlink", b"through the link")
    assert ws.read_bytes(f"{m}/inside.txt") == b"through the link"


def test_metadata_folder_is_hidden(make_workspace):
    ws = make_workspace({"a.txt": b"1"})
    ws.write_bytes(f"{ws.mount}/b.txt", b"2")  # creates .vfs/
    assert [s.name for s in ws.list(ws.mount)] == ["a.txt", "b.txt"]
    with pytest.raises(vfs.SandboxDenied):
        ws.read(f"{ws.mount}/.vfs/lock")


def test_relative_paths_resolve_against_mount(make_workspace):
    ws = make_workspace({"dir/a.txt": b"1"})
    assert ws.read_bytes("dir/a.txt") == b"1"
    assert ws.to_path("dir/../dir/a.txt") == f"{ws.mount}/dir/a.txt"
    with pytest.raises(vfs.InvalidArgument):
        ws.to_path("")


def test_danger_full_access_reaches_outside_on_local(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    outside = tmp_path / "outside.txt"
    ws = vfs.open_workspace(str(root), mode="danger-full-access")
    with ws.transaction() as tx:
        tx.write(str(outside), b"allowed")
        tx.write("inside.txt", b"in")
    assert outside.read_bytes() == b"allowed"
    assert (root / "inside.txt").read_bytes() == b"in"
    assert (root / ".vfs").is_dir()
    with pytest.raises(vfs.Unsupported):
        vfs.open_workspace("memory://x", mode="danger-full-access")


def test_unknown_mode_is_rejected():
    with pytest.raises(vfs.InvalidArgument):
        vfs.open_workspace("memory://x", mode="yolo")
