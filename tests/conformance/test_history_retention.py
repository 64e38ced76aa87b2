"""History retention by count and by bytes, on every backend: checkpoints keep the records a
rewind to them needs, and a prune says what it dropped."""

from __future__ import annotations

import pytest

import vfs
from tests.support.trees import snapshot_tree

START = {"a.txt": b"A0\n", "b.txt": b"B0\n"}
BIG = 2000  # bytes per write: each record holds a pre-image this large


def _commit(ws: vfs.Workspace, i: int) -> str:
    result = ws.write_bytes(f"{ws.mount}/a.txt", f"{i:04d}".encode() * (BIG // 4))
    assert result.txid is not None
    return result.txid


def test_commits_keep_the_history_within_its_bytes(make_workspace):
    ws = make_workspace(START, history_limit=4, history_max_bytes=3 * BIG)
    txids = [_commit(ws, i) for i in range(10)]
    count, size = ws.history_usage()
    assert 1 <= count <= 3 and size <= 3 * BIG + 3 * 1024  # record headers aside
    assert ws.log()[0].txid == txids[-1]  # the newest is always kept
    ws.undo()
    assert snapshot_tree(ws)["a.txt"] == f"{8:04d}".encode() * (BIG // 4)


def test_prune_by_bytes_says_what_it_dropped_and_a_dry_run_drops_nothing(make_workspace):
    ws = make_workspace(START)
    txids = [_commit(ws, i) for i in range(6)]
    count, size = ws.history_usage()
    assert count == 6 and size > 6 * BIG
    sizes = ws.txlog.scan(sizes=True).sizes
    budget = sizes[txids[-1]] + sizes[txids[-2]]  # the newest two fit, not three
    preview = ws.prune_report(max_bytes=budget, dry_run=True)
    assert preview.dry_run and ws.history_usage() == (count, size)
    report = ws.prune_report(max_bytes=budget)
    assert report.dropped == preview.dropped == txids[:-2] and report.held == []
    assert report.freed_bytes + report.kept_bytes == size and report.kept == 2
    assert ws.history_usage() == (2, report.kept_bytes)
    assert [e.txid for e in ws.log()] == txids[:-3:-1]


def test_a_checkpoint_holds_its_records_beyond_the_limits(make_workspace):
    ws = make_workspace(START, history_limit=2, history_max_bytes=BIG)
    before = [_commit(ws, i) for i in range(3)]
    tree = snapshot_tree(ws)
    ws.checkpoint("mid")
    after = [_commit(ws, i) for i in range(3, 9)]
    assert {e.txid for e in ws.log(20)} >= set(after[-2:])
    report = ws.prune_report(keep=1, max_bytes=0)
    assert set(report.dropped) <= set(before) and set(report.held) == set(after[:-1])
    ws.rewind("mid")  # every record the rewind needs is still there
    assert snapshot_tree(ws) == tree


def test_prune_limits_are_checked(make_workspace):
    ws = make_workspace(START)
    with pytest.raises(vfs.InvalidArgument):
        ws.prune(keep=0)
    with pytest.raises(vfs.InvalidArgument):
        ws.prune(max_bytes=-1)
    with pytest.raises(vfs.InvalidArgument):
        make_workspace.reopen(ws, history_max_bytes=-5)


def test_vfs_prune_and_log_show_the_size(tmp_path):
    from tests.adapters.support import run_cli

    (tmp_path / "a.txt").write_bytes(b"A0\n")
    ws = vfs.open_workspace(str(tmp_path))
    for i in range(4):
        _commit(ws, i)
    root = str(tmp_path)

    def ok(*args: str) -> str:
        result = run_cli(*args, "--root", root)
        assert result.returncode == 0, result.stderr
        return result.stdout.decode()

    assert "History: 4 record(s), " in ok("log")
    dry = ok("prune", "--keep", "2", "--dry-run")
    assert "Would drop 2 record(s)" in dry and ws.history_usage()[0] == 4
    done = ok("prune", "--max-bytes", "3K")
    assert "Dropped 3 record(s)" in done and "Kept 1 record(s)" in done
    assert ws.history_usage()[0] == 1
    import json

    report = json.loads(ok("prune", "--keep", "1", "--dry-run", "--json"))
    assert report["dropped"] == [] and report["kept"] == report["records_before"] == 1 and report["dry_run"]
    bad = run_cli("prune", "--max-bytes", "lots", "--root", root)
    assert bad.returncode == 2 and b"byte count" in bad.stderr
