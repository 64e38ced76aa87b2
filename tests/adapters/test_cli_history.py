"""``vfs checkpoint``, ``vfs rewind [--dry-run]``, ``vfs redo`` and ``vfs recover --discard`` as a
user runs them (subprocesses on a real directory)."""

from __future__ import annotations

from pathlib import Path

import vfs
from backends.base import DeleteItem, WriteItem
from tests.adapters.support import run_cli

PATCH = b"""*** Begin Patch
*** Update File: a.txt
@@
-one
+ONE
*** Add File: new/b.txt
+bee
*** End Patch
"""


def _ok(*args: str, input: bytes | None = None) -> str:
    result = run_cli(*args, input=input)
    assert result.returncode == 0, (args, result.stdout, result.stderr)
    return result.stdout.decode()


def test_checkpoint_rewind_dry_run_rewind_redo(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"one\n")
    root = str(tmp_path)
    assert "Checkpoint start at the beginning of history." in _ok("checkpoint", "start", "--root", root)
    _ok("apply", "--root", root, input=PATCH)
    assert "--- checkpoint start (the beginning of history)" in _ok("log", "--root", root)
    preview = _ok("rewind", "start", "--dry-run", "--root", root)
    assert "-ONE\n" in preview and "+one\n" in preview and "-bee\n" in preview
    assert "Would revert 1 transaction(s):" in preview
    assert (tmp_path / "a.txt").read_bytes() == b"ONE\n"  # the dry run changed nothing
    assert "Reverted 1 transaction(s):" in _ok("rewind", "start", "--root", root)
    assert (tmp_path / "a.txt").read_bytes() == b"one\n"
    assert not (tmp_path / "new").exists()
    assert "Redid" in _ok("redo", "--root", root)
    assert (tmp_path / "new" / "b.txt").read_bytes() == b"bee\n"


def test_a_damaged_record_stops_every_verb_until_recover_discard(tmp_path: Path) -> None:
    ws = vfs.open_workspace(str(tmp_path))
    with ws.transaction() as tx:
        tx.write(f"{ws.mount}/a.txt", b"A")
        tx.write(f"{ws.mount}/b.txt", b"B")
    assert tx.result is not None and tx.result.txid is not None
    txid = tx.result.txid
    ws.backend.delete(DeleteItem(f".vfs/tx/{txid}.done"))  # as if cut before its decision
    journal = tmp_path / ".vfs" / "tx" / f"{txid}.journal"
    ws.backend.write(WriteItem(f".vfs/tx/{txid}.journal", journal.read_bytes()[:-3]))
    root = str(tmp_path)
    for verb in (
        ["log"],
        ["undo"],
        ["tool", "str_replace_editor", '{"command": "view", "path": "' + root + '/a.txt"}'],
    ):
        result = run_cli(*verb, "--root", root)
        assert result.returncode != 0, verb
        err = (result.stdout + result.stderr).decode()
        assert "FS_RECOVERY_NEEDED" in err and "vfs recover" in err and "Traceback" not in err, err
    result = run_cli("recover", "--root", root)
    assert result.returncode == 1 and "FS_CORRUPT_METADATA" in result.stdout.decode()
    _ok("recover", "--discard", txid, "--root", root)
    assert "No transactions yet." in _ok("log", "--root", root)
