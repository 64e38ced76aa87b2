"""A broken install without the ``blake3`` package: a commit stops with a coded error before it
changes anything. Before, a new file was created and then reported as not written
(``FS_IO_ERROR``), and a multi-file commit let ``ModuleNotFoundError`` escape."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import vfs
from backends import base
from backends.local import LocalBackend


def files_on_disk(root: Path) -> dict[str, bytes]:
    """Every file below ``root`` outside ``.vfs`` (temp files included: none may be left)."""
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in root.rglob("*")
        if path.is_file() and vfs.META_DIR not in path.relative_to(root).parts
    }


@pytest.fixture
def without_blake3(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(base, "_new_hash", None)
    monkeypatch.setitem(sys.modules, "blake3", None)  # (its import now raises ImportError)


@pytest.mark.parametrize("files", [{"n.txt": b"hello\n"}, {"m.txt": b"a\n", "d/k.txt": b"b\n"}], ids=["one", "two"])
def test_a_commit_without_the_hash_changes_nothing_and_says_so(
    tmp_path: Path, without_blake3: None, files: dict[str, bytes]
) -> None:
    (tmp_path / "a.txt").write_bytes(b"x\n")
    before = files_on_disk(tmp_path)
    ws = vfs.Workspace(LocalBackend(str(tmp_path)), mount=str(tmp_path))
    with pytest.raises(vfs.VfsError) as caught, ws.transaction() as tx:
        for path, data in files.items():
            tx.write(path, data)  # (new files: nothing is read, so the commit is the first to hash)
    assert caught.value.code == "FS_IO_ERROR"
    assert "nothing was changed" in str(caught.value) and "blake3" in str(caught.value)
    assert files_on_disk(tmp_path) == before
