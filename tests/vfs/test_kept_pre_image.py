"""A large pre-image kept by moving the replaced file (local disk): a single-file commit whose
old content is over ``RECORD_INLINE_MAX`` keeps the file it replaced as ``tx/<txid>.pre``
(renamed there by the set-aside swap, no byte copied) instead of writing its bytes into the
history record. That file is metadata like any record: read back only through its record's
length and digest, removed with its record, swept when its record never landed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import vfs
from backends.local import LocalBackend
from vfs.txlog import RECORD_INLINE_MAX

OLD = b"".join(b"old line %06d\n" % i for i in range(20_000))  # 320 KB: over RECORD_INLINE_MAX
NEW = OLD.replace(b"old line 000007\n", b"new line 000007\n")


def _tx_names(root: Path) -> list[str]:
    return sorted(os.listdir(root / ".vfs" / "tx"))


def _suffixes(root: Path) -> list[str]:
    return sorted(name.rpartition(".")[2] for name in _tx_names(root))


def _pre_file(root: Path) -> Path:
    (name,) = [n for n in _tx_names(root) if n.endswith(".pre")]
    return root / ".vfs" / "tx" / name


@pytest.fixture
def edited(tmp_path: Path) -> tuple[Path, int]:
    """A workspace whose big.txt (OLD) was replaced by NEW in one commit; the old inode number."""
    (tmp_path / "big.txt").write_bytes(OLD)
    os.chmod(tmp_path / "big.txt", 0o640)
    inode = os.stat(tmp_path / "big.txt").st_ino
    vfs.open_workspace(str(tmp_path)).write_bytes("big.txt", NEW)
    return tmp_path, inode


def test_the_replaced_file_itself_becomes_the_pre_image(edited: tuple[Path, int]) -> None:
    root, old_inode = edited
    assert len(OLD) > RECORD_INLINE_MAX
    assert _suffixes(root) == ["pre", "record"]  # one small record, not journal + decision
    kept = _pre_file(root)
    assert os.stat(kept).st_ino == old_inode  # moved, not copied
    assert kept.read_bytes() == OLD
    record = kept.with_suffix(".record")
    assert record.stat().st_size < 4096  # the pre-image's bytes are not in it
    assert (root / "big.txt").read_bytes() == NEW


def test_undo_restores_the_kept_pre_image_with_its_mode(edited: tuple[Path, int]) -> None:
    root, _ = edited
    ws = vfs.open_workspace(str(root))
    assert ws.txlog.read_journal(ws.log()[0].txid).pre_images == {0: OLD}
    ws.undo()
    assert (root / "big.txt").read_bytes() == OLD
    assert os.stat(root / "big.txt").st_mode & 0o777 == 0o640
    ws.redo()
    assert (root / "big.txt").read_bytes() == NEW


def test_a_small_pre_image_stays_inside_the_record(tmp_path: Path) -> None:
    (tmp_path / "small.txt").write_bytes(b"x" * RECORD_INLINE_MAX)
    vfs.open_workspace(str(tmp_path)).write_bytes("small.txt", b"y")
    assert _suffixes(tmp_path) == ["record"]


def test_where_the_replaced_file_cannot_be_kept_the_record_holds_its_bytes(tmp_path: Path) -> None:
    """Without the set-aside swap (the replaced file is never held under a name of its own) the
    commit falls back to writing the pre-image into its history, and undo works the same."""
    (tmp_path / "big.txt").write_bytes(OLD)
    ws = vfs.open_workspace(str(tmp_path), storage_options={"set_aside": False})
    ws.write_bytes("big.txt", NEW)
    assert _suffixes(tmp_path) == ["done", "journal"]
    assert ws.txlog.read_journal(ws.log()[0].txid).pre_images == {0: OLD}
    ws.undo()
    assert (tmp_path / "big.txt").read_bytes() == OLD


def test_the_memory_backend_declares_it_cannot_keep_a_replaced_file() -> None:
    ws = vfs.open_workspace("memory://kept")
    assert not ws.capabilities.keeps_replaced
    assert LocalBackend.capabilities.keeps_replaced


def _damage(kept: Path, how: str) -> None:
    if how == "flipped":
        data = bytearray(kept.read_bytes())
        data[len(data) // 2] ^= 0x01
        kept.write_bytes(bytes(data))
    elif how == "truncated":
        kept.write_bytes(kept.read_bytes()[:-1])
    elif how == "grown":
        kept.write_bytes(kept.read_bytes() + b"more")
    elif how == "missing":
        kept.unlink()
    elif how == "a symlink":
        target = kept.with_name("elsewhere")
        target.write_bytes(OLD)
        kept.unlink()
        kept.symlink_to(target)
    elif how == "a folder":
        kept.unlink()
        kept.mkdir()
    else:  # pragma: no cover - a parameter of the test below
        raise AssertionError(how)


@pytest.mark.parametrize("how", ["flipped", "truncated", "grown", "missing", "a symlink", "a folder"])
def test_a_damaged_kept_pre_image_is_refused_and_nothing_is_written(edited: tuple[Path, int], how: str) -> None:
    root, _ = edited
    _damage(_pre_file(root), how)
    ws = vfs.open_workspace(str(root))
    with pytest.raises(vfs.VfsError) as info:
        ws.undo()
    assert info.value.code == "FS_CORRUPT_METADATA"
    assert ".pre" in info.value.message
    assert (root / "big.txt").read_bytes() == NEW
    assert [e.label for e in ws.log()] == ["write big.txt"]  # the log reads the decision only: still listed


def test_pruning_removes_the_kept_pre_image_with_its_record(edited: tuple[Path, int]) -> None:
    root, _ = edited
    ws = vfs.open_workspace(str(root), history_limit=1)
    ws.write_bytes("other.txt", b"o")  # a newer commit: the first one's record goes
    ws.prune()
    assert "pre" not in _suffixes(root)
    assert len(ws.log()) == 1


def test_a_kept_pre_image_counts_in_the_history_bytes(edited: tuple[Path, int]) -> None:
    root, _ = edited
    count, size = vfs.open_workspace(str(root)).history_usage()
    assert count == 1
    assert size >= len(OLD)


def test_a_lone_kept_pre_image_is_swept_before_the_next_commit(edited: tuple[Path, int]) -> None:
    """A kept file whose record never landed (its commit killed between the two) is removed by
    the next holder of the lock, which the commit marked busy before the move."""
    root, _ = edited
    kept = _pre_file(root)
    kept.with_suffix(".record").unlink()
    ws = vfs.open_workspace(str(root))
    with ws._ctx.commit_lock() as held:
        held.mark_dirty()  # as the killed holder left it
    ws.write_bytes("other.txt", b"o")
    assert not kept.exists()
    assert (root / "big.txt").read_bytes() == NEW


def test_opening_the_workspace_sweeps_a_lone_kept_pre_image(edited: tuple[Path, int]) -> None:
    root, _ = edited
    kept = _pre_file(root)
    kept.with_suffix(".record").unlink()
    ws = vfs.open_workspace(str(root))  # opening recovers what needs it
    assert not kept.exists()
    assert not ws._ctx.log.scan().unfinished()
    assert (root / "big.txt").read_bytes() == NEW


def test_a_lone_kept_pre_image_is_unfinished_work_for_recovery(edited: tuple[Path, int]) -> None:
    root, _ = edited
    ws = vfs.open_workspace(str(root))
    kept = _pre_file(root)
    kept.with_suffix(".record").unlink()
    assert ws._ctx.log.scan().unfinished()
    report = ws.recover()
    assert not kept.exists()
    assert report.conflicts == []


CHILD = textwrap.dedent(
    """
    import sys, vfs
    ws = vfs.open_workspace(sys.argv[1])
    ws.write_bytes("big.txt", sys.stdin.buffer.read())
    print("committed")
    """
)


@pytest.mark.parametrize(
    ("step", "landed"),
    [("locked", False), ("journaled", False), ("applied-0", True), ("before-mark", True), ("marked", True)],
)
def test_sigkill_around_the_move_never_loses_the_change_or_leaves_a_lone_kept_file(
    tmp_path: Path, step: str, landed: bool
) -> None:
    (tmp_path / "big.txt").write_bytes(OLD)
    env = {**os.environ, "VFS_TEST_CRASH_AT": step, "PYTHONPATH": os.getcwd()}
    result = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path)], env=env, input=NEW, capture_output=True, timeout=60
    )
    assert result.returncode == -signal.SIGKILL, result.stderr
    ws = vfs.open_workspace(str(tmp_path))
    ws.recover(only_if_needed=True)
    assert (tmp_path / "big.txt").read_bytes() == (NEW if landed else OLD)
    assert not ws._ctx.log.scan().unfinished()
    if step == "marked":
        assert _suffixes(tmp_path) == ["pre", "record"]
        ws.undo()
        assert (tmp_path / "big.txt").read_bytes() == OLD
    else:
        assert "pre" not in _suffixes(tmp_path)


@pytest.mark.parametrize("mode", [0o4755, 0o644, 0o2775])
def test_a_kept_pre_image_is_private_data_and_undo_gives_the_mode_back(tmp_path: Path, mode: int) -> None:
    """A setuid program replaced by an edit must not live on, runnable, in the history; its mode
    is the record's to give back."""
    (tmp_path / "tool").write_bytes(OLD)
    os.chmod(tmp_path / "tool", mode)
    ws = vfs.open_workspace(str(tmp_path))
    ws.write_bytes("tool", NEW)
    assert os.stat(_pre_file(tmp_path)).st_mode & 0o7777 == 0o600
    ws.undo()
    assert (tmp_path / "tool").read_bytes() == OLD
    assert os.stat(tmp_path / "tool").st_mode & 0o7777 == mode
