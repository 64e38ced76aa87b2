"""Escapes: ``..``, absolute paths, symlinks (leaf, ancestor, chains, swapped in during a commit),
hard links, very long and odd names. Under ``workspace-write`` nothing outside the root is
written (not even a temp file); under ``read-only`` nothing is written at all. Each attempt goes
through vfs directly and through both tools (``str_replace_editor`` and ``apply_patch``).

The outside world is checked by a full snapshot: every entry's type, mode, size, content hash,
link target and mtime (a directory's mtime moves when an entry is created in it and removed
again, so a transient temp file is caught too).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from typing import Any

import pytest

import vfs
from backends.local import LocalBackend
from editors.apply_patch import apply_patch
from editors.str_replace_editor import StrReplaceEditor

pytestmark = pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")


def fs_state(top: str) -> dict[str, Any]:
    """Everything observable under ``top`` (symlinks not followed)."""
    out: dict[str, Any] = {}
    for dirpath, dirnames, filenames in os.walk(top):
        for name in [*dirnames, *filenames, "."]:
            path = os.path.normpath(os.path.join(dirpath, name))
            st = os.lstat(path)
            entry: tuple[Any, ...] = (st.st_mode, st.st_size, st.st_mtime_ns, st.st_nlink)
            if os.path.islink(path):
                entry += (os.readlink(path),)
            elif os.path.isfile(path):
                with open(path, "rb") as handle:
                    entry += (hashlib.sha256(handle.read()).hexdigest(),)
            out[os.path.relpath(path, top)] = entry
    return out


class World:
    """tmp/outside (must never be written) and tmp/root (the workspace) with traps inside."""

    def __init__(self, tmp: str) -> None:
        self.tmp = os.path.realpath(tmp)
        self.outside = os.path.join(self.tmp, "outside")
        self.root = os.path.join(self.tmp, "root")
        os.makedirs(os.path.join(self.outside, "dir"))
        os.makedirs(os.path.join(self.root, "sub"))
        self._file(os.path.join(self.outside, "secret.txt"), b"secret\n")
        self._file(os.path.join(self.outside, "dir", "inner.txt"), b"inner\n")
        self._file(os.path.join(self.root, "inside.txt"), b"inside\n")
        self._file(os.path.join(self.root, "sub", "f.txt"), b"f\n")
        os.symlink(os.path.join(self.outside, "secret.txt"), os.path.join(self.root, "leaf_link"))
        os.symlink(self.outside, os.path.join(self.root, "dir_link"))
        os.symlink("../outside", os.path.join(self.root, "rel_dir_link"))
        os.symlink("dir_link", os.path.join(self.root, "chain_link"))  # -> dir_link -> outside
        os.symlink("inside.txt", os.path.join(self.root, "inner_link"))  # stays inside: allowed
        os.link(os.path.join(self.outside, "secret.txt"), os.path.join(self.root, "hard.txt"))

    @staticmethod
    def _file(path: str, data: bytes) -> None:
        with open(path, "wb") as handle:
            handle.write(data)

    def workspace(self, mode: str = "workspace-write") -> vfs.Workspace:
        return vfs.Workspace(LocalBackend(self.root), mount=self.root, mode=mode)

    def abs(self, rel: str) -> str:
        return rel if rel.startswith("/") else f"{self.root}/{rel}"


@pytest.fixture
def world(tmp_path) -> World:
    return World(str(tmp_path))


# Paths that leave the root (relative to the mount unless absolute; "{out}" is the outside dir).
ESCAPING = [
    "../outside/new.txt",
    "sub/../../outside/new.txt",
    "{out}/new.txt",
    "{out}/secret.txt",
    "leaf_link",
    "dir_link/new.txt",
    "dir_link/secret.txt",
    "dir_link/dir/inner.txt",
    "rel_dir_link/new.txt",
    "chain_link/new.txt",
    "chain_link/secret.txt",
    ".vfs/tx/evil.journal",
    "sub/../.vfs/lock",
]

# Odd but legal names (must stay inside, or fail with a coded error); never touch the outside.
ODD = [
    "ünïcødé/çødé ☃ 🐍.txt",
    "new\nline.txt",
    "carriage\rreturn.txt",
    "..\\..\\outside\\backslash.txt",
    "a\\b\\c.txt",
    "...",
    "sub/ leading space.txt",
    "-dash.txt",
    "x" * 255,
    "y" * 300,
    "/".join(["d" * 200] * 25) + "/deep.txt",  # longer than PATH_MAX
    "tab\tname.txt",
    "\u202eright-to-left.txt",
    "combining\u0301.txt",
]


def _resolve(world: World, rel: str) -> str:
    return world.abs(rel.replace("{out}", world.outside))


def _patch_rel(world: World, rel: str) -> str:
    path = _resolve(world, rel)
    return path if rel.startswith("{out}") else rel


# -- the ways a change reaches the disk ----------------------------------------------------------

Attempt = Callable[[World, vfs.Workspace, str], Any]


def vfs_write(world: World, ws: vfs.Workspace, path: str) -> Any:
    with ws.transaction() as tx:
        tx.write(path, b"pwned\n")


def vfs_create(world: World, ws: vfs.Workspace, path: str) -> Any:
    with ws.transaction() as tx:
        tx.create(path, b"pwned\n")


def vfs_delete(world: World, ws: vfs.Workspace, path: str) -> Any:
    with ws.transaction() as tx:
        tx.delete(path)


def vfs_mkdir(world: World, ws: vfs.Workspace, path: str) -> Any:
    with ws.transaction() as tx:
        tx.mkdir(path)


def vfs_move_to(world: World, ws: vfs.Workspace, path: str) -> Any:
    with ws.transaction() as tx:
        tx.move(f"{ws.mount}/inside.txt", path)


def vfs_move_from(world: World, ws: vfs.Workspace, path: str) -> Any:
    with ws.transaction() as tx:
        tx.move(path, f"{ws.mount}/moved_here.txt")


def editor_create(world: World, ws: vfs.Workspace, path: str) -> Any:
    return StrReplaceEditor(ws).run({"command": "create", "path": path, "file_text": "pwned\n"})


def editor_edit(world: World, ws: vfs.Workspace, path: str) -> Any:
    editor = StrReplaceEditor(ws)
    editor.run({"command": "view", "path": path})
    first = editor.run({"command": "str_replace", "path": path, "old_str": "secret", "new_str": "pwned"})
    second = editor.run({"command": "insert", "path": path, "insert_line": 0, "new_str": "pwned\n"})
    return first if first.is_error else second


def patch_add(world: World, ws: vfs.Workspace, path: str) -> Any:
    return apply_patch(ws, f"*** Begin Patch\n*** Add File: {path}\n+pwned\n*** End Patch")


def patch_update(world: World, ws: vfs.Workspace, path: str) -> Any:
    return apply_patch(ws, f"*** Begin Patch\n*** Update File: {path}\n@@\n-secret\n+pwned\n*** End Patch")


def patch_delete(world: World, ws: vfs.Workspace, path: str) -> Any:
    return apply_patch(ws, f"*** Begin Patch\n*** Delete File: {path}\n*** End Patch")


def patch_move(world: World, ws: vfs.Workspace, path: str) -> Any:
    return apply_patch(
        ws, f"*** Begin Patch\n*** Update File: inside.txt\n*** Move to: {path}\n@@\n-inside\n+pwned\n*** End Patch"
    )


ATTEMPTS: dict[str, Attempt] = {
    f.__name__: f
    for f in (
        vfs_write,
        vfs_create,
        vfs_delete,
        vfs_mkdir,
        vfs_move_to,
        vfs_move_from,
        editor_create,
        editor_edit,
        patch_add,
        patch_update,
        patch_delete,
        patch_move,
    )
}


def _outcome(attempt: Attempt, world: World, ws: vfs.Workspace, path: str) -> str:
    """``"ok"`` or the stable code of the refusal; anything else (a foreign exception) fails the test."""
    try:
        result = attempt(world, ws, path)
    except vfs.VfsError as exc:
        return exc.code
    if hasattr(result, "is_error") and result.is_error:
        assert result.code, result
        return result.code
    return "ok"


def _path_for(attempt_name: str, world: World, rel: str) -> str:
    return _patch_rel(world, rel) if attempt_name.startswith("patch") else _resolve(world, rel)


@pytest.mark.parametrize("rel", ESCAPING)
@pytest.mark.parametrize("name", sorted(ATTEMPTS))
def test_escaping_paths_are_denied_and_write_nothing_outside(world, name, rel):
    before_outside = fs_state(world.outside)
    ws = world.workspace()
    code = _outcome(ATTEMPTS[name], world, ws, _path_for(name, world, rel))
    assert fs_state(world.outside) == before_outside
    # every way out is refused by the sandbox (a missing source for delete/move/edit may be
    # reported first, but never "ok")
    assert code != "ok", (name, rel)
    assert code in ("FS_SANDBOX_DENIED", "PATCH_FILE_NOT_FOUND", "FS_NOT_FOUND", "FS_NOT_OBSERVED"), code
    if rel in ("leaf_link", "dir_link/secret.txt", "{out}/secret.txt", "../outside/new.txt", "dir_link/new.txt"):
        assert code == "FS_SANDBOX_DENIED", (name, rel, code)


@pytest.mark.parametrize("rel", ODD)
@pytest.mark.parametrize("name", ["vfs_write", "vfs_mkdir", "editor_create", "patch_add", "patch_move"])
def test_odd_names_stay_inside_or_fail_with_a_code(world, name, rel):
    before_outside = fs_state(world.outside)
    before_root = fs_state(world.root)
    ws = world.workspace()
    path = rel if name.startswith("patch") else world.abs(rel)
    code = _outcome(ATTEMPTS[name], world, ws, path)
    assert fs_state(world.outside) == before_outside
    if code != "ok":
        # a refused change leaves the root as it was too (temp files included)
        def user_tree(state: dict[str, Any]) -> dict[str, Any]:  # the metadata folder may appear
            return {k: v for k, v in state.items() if not k.startswith(".vfs") and k != "."}

        assert user_tree(fs_state(world.root)) == user_tree(before_root)
    else:
        created = os.path.join(world.root, rel.rstrip("/")) if name != "patch_move" else os.path.join(world.root, rel)
        assert os.path.realpath(created).startswith(world.root + os.sep)


@pytest.mark.parametrize("name", ["vfs_write", "editor_edit", "patch_update", "patch_delete", "vfs_delete"])
def test_hard_link_to_outside_file_never_changes_it(world, name):
    """Writing or deleting through a hard link replaces/removes the link, never the shared inode."""
    secret = os.path.join(world.outside, "secret.txt")
    before = fs_state(world.outside)
    before.pop("secret.txt")  # its nlink drops when the link is replaced: that is the only change allowed
    ws = world.workspace()
    path = "hard.txt" if name.startswith("patch") else world.abs("hard.txt")
    _outcome(ATTEMPTS[name], world, ws, path)
    after = fs_state(world.outside)
    assert after.pop("secret.txt")[-1] == hashlib.sha256(b"secret\n").hexdigest()
    assert after == before
    with open(secret, "rb") as handle:
        assert handle.read() == b"secret\n"


@pytest.mark.parametrize("rel", ["inside.txt", "inner_link", "sub/new.txt", "new/deeper/file.txt", *ESCAPING, *ODD[:6]])
@pytest.mark.parametrize("name", sorted(ATTEMPTS))
def test_read_only_writes_nothing_at_all(world, name, rel):
    before = fs_state(world.tmp)
    ws = world.workspace("read-only")
    code = _outcome(ATTEMPTS[name], world, ws, _path_for(name, world, rel))
    assert code != "ok", (name, rel)
    assert fs_state(world.tmp) == before


def test_read_only_cli_writes_nothing(world, capsys):
    from editors.cli import main

    before = fs_state(world.tmp)
    patch = "*** Begin Patch\n*** Add File: a.txt\n+x\n*** Update File: inside.txt\n@@\n-inside\n+out\n*** End Patch"
    assert main(["apply", "--root", world.root, "--mode", "read-only", patch]) == 1
    for verb in (["undo"], ["recover"]):
        try:
            main([*verb, "--root", world.root, "--mode", "read-only"])
        except SystemExit:
            pass
    assert fs_state(world.tmp) == before
    assert "read-only" in capsys.readouterr().err


# -- a symlink swapped in after preflight -------------------------------------------------------


class SwapOnFirstMutation:
    """Wraps a backend: the first mutating call of the commit (after preflight and the version
    checks) swaps ``root/sub`` for a symlink to the outside directory, then proceeds."""

    def __init__(self, inner: LocalBackend, outside: str) -> None:
        self.inner = inner
        self.outside = outside
        self.name = inner.name
        self.capabilities = inner.capabilities
        self.armed = False

    def _swap(self, key: str) -> None:
        if self.armed and key.startswith("sub/"):
            self.armed = False
            os.rename(os.path.join(self.inner.root, "sub"), os.path.join(self.inner.root, "sub_moved"))
            os.symlink(self.outside, os.path.join(self.inner.root, "sub"))

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.inner, name)
        if name in ("write_many", "delete_many"):  # a batch: swap before its first item lands

            def hooked_batch(items: Any, *args: Any, **kwargs: Any) -> Any:
                for item in items:
                    self._swap(item.key)
                return attr(items, *args, **kwargs)

            return hooked_batch
        if name not in ("write", "delete", "mkdir", "rmdir"):
            return attr

        def hooked(target: Any, *args: Any, **kwargs: Any) -> Any:
            self._swap(target if isinstance(target, str) else target.key)  # write/delete take an item
            return attr(target, *args, **kwargs)

        return hooked


SWAP_CHANGES: dict[str, Callable[[vfs.Transaction, str], None]] = {
    "replace": lambda tx, m: tx.write(f"{m}/sub/f.txt", b"pwned\n"),
    "create": lambda tx, m: tx.write(f"{m}/sub/new.txt", b"pwned\n"),
    "mkdir": lambda tx, m: tx.mkdir(f"{m}/sub/newdir"),
    "delete": lambda tx, m: (tx.delete(f"{m}/sub/f.txt"), tx.write(f"{m}/other.txt", b"o\n")),
    "multi": lambda tx, m: (tx.write(f"{m}/a.txt", b"a\n"), tx.write(f"{m}/sub/f.txt", b"pwned\n")),
}


@pytest.mark.parametrize("change", sorted(SWAP_CHANGES))
def test_symlink_swapped_in_after_preflight_is_refused(world, change):
    for name in ("secret.txt", "f.txt"):  # a same-named file outside, as an attacker would place
        World._file(os.path.join(world.outside, name), b"outside " + name.encode() + b"\n")
    before_outside = fs_state(world.outside)
    backend = SwapOnFirstMutation(LocalBackend(world.root), world.outside)
    ws = vfs.Workspace(backend, mount=world.root)  # type: ignore[arg-type]
    tx = ws.transaction()
    SWAP_CHANGES[change](tx, ws.mount)
    backend.armed = True
    with pytest.raises(vfs.VfsError) as info:
        tx.commit()
    assert info.value.code in ("FS_SANDBOX_DENIED", "FS_STALE_VERSION", "FS_ROLLBACK_FAILED"), info.value
    assert not backend.armed  # the swap happened
    assert fs_state(world.outside) == before_outside


class SwapInsideTheWindow(LocalBackend):
    """The swap lands right after the backend's containment check returns: the window between
    ``_check_parent`` and the ``open``/``link``/``mkdir``/``replace`` that follows it."""

    outside = ""
    armed = False

    def _check_parent(self, key: str) -> str:
        directory = super()._check_parent(key)
        if self.armed and key.startswith("sub/"):
            self.armed = False
            os.rename(os.path.join(self.root, "sub"), os.path.join(self.root, "sub_moved"))
            os.symlink(self.outside, os.path.join(self.root, "sub"))
        return directory


# Closed: the local backend acts through directory handles reached with O_NOFOLLOW (dir_fd), so a
# symlink swapped in after its containment check cannot redirect the write. Keep the mechanism for
# any future backend window: name -> reason, run as xfail(strict=True).
WINDOW_XFAIL: dict[str, str] = {}


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(c, marks=pytest.mark.xfail(strict=True, reason=WINDOW_XFAIL[c])) if c in WINDOW_XFAIL else c
        for c in sorted(SWAP_CHANGES)
    ],
)
def test_symlink_swapped_inside_the_backend_check_window(world, change):
    for name in ("secret.txt", "f.txt"):
        World._file(os.path.join(world.outside, name), b"outside " + name.encode() + b"\n")
    before_outside = fs_state(world.outside)
    backend = SwapInsideTheWindow(world.root)
    backend.outside = world.outside
    ws = vfs.Workspace(backend, mount=world.root)
    tx = ws.transaction()
    SWAP_CHANGES[change](tx, ws.mount)
    backend.armed = True
    try:
        tx.commit()
    except vfs.VfsError as exc:
        assert exc.code in ("FS_SANDBOX_DENIED", "FS_STALE_VERSION", "FS_ROLLBACK_FAILED"), exc
    assert not backend.armed
    assert fs_state(world.outside) == before_outside
