"""History of committed transactions: the log, pruning, and multi-level undo.

A committed transaction is the pair ``tx/<txid>.journal`` (pre-images) + ``tx/<txid>.done``
(what was written); ``vfs.txlog`` owns their layout. ``undo`` reverts the newest one in a new transaction, guarded by version: it
runs only if every target still holds what that transaction wrote. The undo's own record and the
undone record are then removed, so the next ``undo`` reaches one step further back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from vfs.errors import HistoryGap, NotFound, StaleVersion, VfsError
from vfs.txlog import DoneRecord, Journal, digest
from vfs.types import Change, HistoryEntry, replace_if_version

if TYPE_CHECKING:
    from vfs.context import Context
    from vfs.transaction import Transaction


class History:
    """The log and undo over a workspace's transaction log. ``begin`` opens a transaction (undo
    is one, built on the same commit protocol)."""

    def __init__(self, ctx: Context, limit: int, begin: Callable[[str, str], Transaction]) -> None:
        self.ctx = ctx
        self.limit = limit
        self._begin = begin
        self._estimate: int | None = None  # committed records this process believes exist

    def _committed_txids(self) -> list[str]:
        """Txids with both records, oldest first."""
        scan = self.ctx.log.scan()
        return [t for t in scan.journals if t in scan.decided]

    def prune(self) -> None:
        """Keep the newest ``limit`` committed transactions. Best effort: never fails a commit.

        Listing the history costs a directory scan (a LIST request on S3), so it runs only once
        this process's estimate exceeds the limit by a slack; then it trims back to the limit.
        """
        if self._estimate is not None and self._estimate < self.limit + self._slack:
            self._estimate += 1
            return
        try:
            txids = self._committed_txids()
            self.ctx.log.forget(*txids[: max(0, len(txids) - self.limit)])
            self._estimate = min(len(txids), self.limit)
        except VfsError:
            return  # pruning again at the next commit is just as good

    @property
    def _slack(self) -> int:
        return max(1, min(16, self.limit // 4))

    def records(self) -> list[DoneRecord]:
        """Committed, not-undone transactions, newest first (undo bookkeeping hidden)."""
        self.ctx.require_resolved()
        log = self.ctx.log
        records = [log.read_done(t) for t in self._committed_txids()]
        records = [r for r in records if r.outcome == "committed"]
        undone = {r.undo_of for r in records if r.undo_of}
        # Pruning lags by a slack; the history promised is the newest `limit` records.
        return [r for r in reversed(records) if not r.undo_of and r.txid not in undone][: self.limit]

    def log(self, limit: int = 20) -> list[HistoryEntry]:
        return [_entry(r) for r in self.records()[:limit]]

    def undo(self, expected_txid: str | None = None) -> HistoryEntry:
        records = self.records()
        if not records:
            raise NotFound("There is no transaction to undo.")
        record = records[0]
        if expected_txid is not None and record.txid != expected_txid:
            raise StaleVersion(
                f"Cannot undo {expected_txid}: a newer transaction ({record.txid}) was committed since.",
            )
        gaps = [g for g in self.ctx.log.scan().gaps if g > record.txid]
        if gaps:
            raise HistoryGap(
                f"Cannot undo: transaction {gaps[-1]} committed after {record.txid} but left no history record,"
                f" so {record.txid} is not the newest change. Undo it by hand, or continue without undo."
            )
        journal = self.ctx.log.read_journal(record.txid)
        with self._begin(f"undo {record.txid}", record.txid) as tx:
            self._revert(tx, record, journal)
        undo_txid = tx.result.txid if tx.result else None
        self.ctx.log.forget(*([record.txid, undo_txid] if undo_txid else [record.txid]))
        return _entry(record)

    def _revert(self, tx: Transaction, record: DoneRecord, journal: Journal) -> None:
        display = self.ctx.display
        for index in range(len(journal.targets) - 1, -1, -1):
            target = journal.targets[index]
            path = display(target.key)
            if target.after == "file":
                # Guarded by content, not version: an earlier undo may have rewritten the very
                # bytes this transaction wrote, under a new version.
                current = tx.read(path) if tx.exists(path) else None
                if current is None or digest(current.data) != target.after_sha:
                    raise StaleVersion(
                        f"Cannot undo {record.txid}: {path} changed after that transaction wrote it.", path=path
                    )
                assert current.version is not None
                if target.before == "file":
                    pre = journal.pre_images[index]
                    tx.write(path, pre, intent=replace_if_version(current.version), mode=target.before_mode)
                else:
                    tx.delete(path, if_version=current.version)
            elif target.after == "absent" and target.before == "file":
                if tx.exists(path):
                    raise StaleVersion(
                        f"Cannot undo {record.txid}: {path} was created again after that transaction deleted it.",
                        path=path,
                    )
                tx.create(path, journal.pre_images[index], mode=target.before_mode)
            elif target.after == "directory" and target.before == "absent":
                if tx.exists(path) and not tx.list(path):
                    tx.rmdir(path)
            elif target.after == "absent" and target.before == "directory":
                tx.mkdir(path)
        for key in reversed(journal.created_dirs):
            path = display(key)
            if tx.exists(path) and not tx.list(path):
                tx.rmdir(path)


def _entry(record: DoneRecord) -> HistoryEntry:
    return HistoryEntry(record.txid, record.created, record.label, [Change(p, a) for p, a in record.changes])  # type: ignore[arg-type]
