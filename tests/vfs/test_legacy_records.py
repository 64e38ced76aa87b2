"""Records written while vfs's content hash was BLAKE2b (``data/blake2b_records``, made by vfs
at e1ec70a) outlive the move to BLAKE3: their unfinished commit is recovered, their history is
listed, undone and rewound to, and their digests are still checked. New records are BLAKE3's."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import vfs
from vfs.errors import CorruptMetadata
from vfs.txlog import DONE_MAGIC, JOURNAL_MAGIC, RECORD_MAGIC, Journal

blake3 = pytest.importorskip("blake3")

TREE = Path(__file__).parent / "data" / "blake2b_records" / "tree"
BIG_BEFORE = b"0123456789abcdef\n" * 6000
BIG_AFTER = b"0123456789ABCDEF\n" * 6000


@pytest.fixture
def root(tmp_path: Path) -> Path:
    copy = tmp_path / "ws"
    shutil.copytree(TREE, copy)
    return copy


def _open(root: Path) -> vfs.Workspace:
    return vfs.open_workspace(str(root), mount="/workspace")


def test_the_unfinished_commit_of_a_blake2b_journal_is_rolled_back(root: Path) -> None:
    assert (root / "b.txt").read_bytes() == b"b, crashed\n"  # its writes landed, no decision
    ws = _open(root)  # recovery, on opening
    assert not ws.pending()
    assert (root / "b.txt").read_bytes() == b"b, two\n"
    assert not (root / "c.txt").exists()
    assert [e.label for e in ws.log()] == ["big", "two", "one"]


def test_blake2b_history_is_undone_redone_and_rewound_to(root: Path) -> None:
    ws = _open(root)
    assert [c.name for c in ws.checkpoints()] == ["mark"]
    with ws.transaction(label="after") as tx:  # a BLAKE3 record on top of the old ones
        tx.write("/workspace/a.txt", b"a, after\n")
    ws.rewind("mark")  # reverts "after" alone
    assert (root / "a.txt").read_bytes() == b"a, two\n"
    assert ws.undo().label == "big"  # a journal and its decision, a 100 kB pre-image
    assert (root / "big.txt").read_bytes() == BIG_BEFORE
    assert ws.undo().label == "two"
    assert ws.undo().label == "one"  # a one-file .record
    assert [(root / n).read_bytes() for n in ("a.txt", "b.txt")] == [b"a, first\n", b"b, first\n"]
    ws.redo()
    assert (root / "a.txt").read_bytes() == b"a, one\n"


def test_an_old_file_changed_since_is_not_undone(root: Path) -> None:
    # The check against the record's post-image digest must use the record's hash: BLAKE3
    # would call every file changed; no check at all would undo over the change.
    ws = _open(root)
    (root / "big.txt").write_bytes(BIG_AFTER + b"more\n")
    with pytest.raises(vfs.StaleVersion):
        ws.undo()
    assert (root / "big.txt").read_bytes() == BIG_AFTER + b"more\n"


def test_a_blake2b_record_with_a_flipped_byte_is_refused(root: Path) -> None:
    ws = _open(root)
    big = max((root / ".vfs" / "tx").glob("*.journal"), key=lambda p: p.stat().st_size)
    data = bytearray(big.read_bytes())
    data[-100] ^= 1  # in the pre-image
    big.write_bytes(bytes(data))
    with pytest.raises(CorruptMetadata, match="digest mismatch"):
        ws.undo()
    assert (root / "big.txt").read_bytes() == BIG_AFTER


def test_new_records_are_written_with_blake3_digests(root: Path) -> None:
    ws = _open(root)
    with ws.transaction(label="new") as tx:
        tx.write("/workspace/a.txt", b"a, new\n")
    record = max((root / ".vfs" / "tx").glob("*.record"))  # (txids sort by time: the newest)
    data = record.read_bytes()
    assert data.startswith(RECORD_MAGIC)
    decision = data[data.index(b"\n", len(RECORD_MAGIC)) + 1 :]
    assert decision.startswith(DONE_MAGIC) and b"VFSDONE2" not in data
    journal = decision[decision.index(JOURNAL_MAGIC) :]
    length, sha = journal[len(JOURNAL_MAGIC) : journal.index(b"\n", len(JOURNAL_MAGIC))].split(b" ")
    start = journal.index(b"\n", len(JOURNAL_MAGIC)) + 1
    header = journal[start : start + int(length)]
    assert sha.decode() == blake3.blake3(header).hexdigest(16)
    assert blake3.blake3(b"a, two\n").hexdigest(16).encode() in header  # the pre-image's digest


def test_a_journal_read_from_a_blake2b_record_is_never_written_again() -> None:
    journal = Journal("01796537484832941918-eb609967", "old", 0.0, [], legacy=True)
    with pytest.raises(ValueError, match="legacy"):
        journal.encode_parts()
