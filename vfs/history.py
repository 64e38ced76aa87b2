"""History of committed transactions: the log, pruning, and multi-level undo.

A committed transaction is the pair ``tx/<txid>.journal`` (pre-images) + ``tx/<txid>.done``
(what was written). ``undo`` reverts the newest one in a new transaction, guarded by version: it
runs only if every target still holds what that transaction wrote. The undo's own record and the
undone record are then removed, so the next ``undo`` reaches one step further back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from backends.base import DeleteItem
from vfs.errors import NotFound, StaleVersion, VfsError
from vfs.journal import DoneRecord, Journal, digest
from vfs.recovery import read_done
from vfs.types import Change, HistoryEntry, replace_if_version

if TYPE_CHECKING:
    from vfs.workspace import Workspace


class History:
    def __init__(self, workspace: Workspace, limit: int) -> None:
        self._ws = workspace
        self.limit = limit
        self._estimate: int | None = None  # committed records this process believes exist

    def _names(self) -> set[str]:
        try:
            return {e.name for e in self._ws._storage.list(self._ws._tx_key)}
        except NotFound:
            return set()

    def _committed_txids(self, names: set[str]) -> list[str]:
        """Txids with both files, oldest first."""
        return sorted(n[: -len(".done")] for n in names if n.endswith(".done") and n[:-5] + ".journal" in names)

    def _forget(self, *txids: str) -> None:
        """Remove committed records: every journal first (flushed, in one batch), then the marks
        of the journals that are gone. A lone journal would read as an interrupted commit (and be
        rolled back); a lone mark is harmless. No stat first: on local disk it would hash a
        just-written record for nothing."""
        tx_key = self._ws._tx_key
        storage = self._ws._storage
        journals = storage.delete_many([DeleteItem(f"{tx_key}/{t}.journal") for t in txids])
        gone = [t for t, error in zip(txids, journals, strict=True) if error is None or isinstance(error, NotFound)]
        storage.delete_many([DeleteItem(f"{tx_key}/{t}.done") for t in gone])
        failed = [e for e in journals if e is not None and not isinstance(e, NotFound)]
        if failed:
            raise failed[0]

    def prune(self) -> None:
        """Keep the newest ``limit`` committed transactions. Best effort: never fails a commit.

        Listing the history costs a directory scan (a LIST request on S3), so it runs only once
        this process's estimate exceeds the limit by a slack; then it trims back to the limit.
        """
        if self._estimate is not None and self._estimate < self.limit + self._slack:
            self._estimate += 1
            return
        try:
            txids = self._committed_txids(self._names())
            self._forget(*txids[: max(0, len(txids) - self.limit)])
            self._estimate = min(len(txids), self.limit)
        except VfsError:
            return  # pruning again at the next commit is just as good

    @property
    def _slack(self) -> int:
        return max(1, min(16, self.limit // 4))

    def records(self) -> list[DoneRecord]:
        """Committed, not-undone transactions, newest first (undo bookkeeping hidden)."""
        storage = self._ws._storage
        records = [read_done(storage, f"{self._ws._tx_key}/{t}.done") for t in self._committed_txids(self._names())]
        undone = {r.undo_of for r in records if r.undo_of}
        # Pruning lags by a slack; the history promised is the newest `limit` records.
        return [r for r in reversed(records) if not r.undo_of and r.txid not in undone][: self.limit]

    def log(self, limit: int = 20) -> list[HistoryEntry]:
        return [
            HistoryEntry(r.txid, r.created, r.label, [Change(p, a) for p, a in r.changes])  # type: ignore[arg-type]
            for r in self.records()[:limit]
        ]

    def undo(self, expected_txid: str | None = None) -> HistoryEntry:
        ws = self._ws
        storage = ws._storage
        records = self.records()
        if not records:
            raise NotFound("There is no transaction to undo.")
        record = records[0]
        if expected_txid is not None and record.txid != expected_txid:
            raise StaleVersion(
                f"Cannot undo {expected_txid}: a newer transaction ({record.txid}) was committed since.",
            )
        data, _ = storage.read(f"{ws._tx_key}/{record.txid}.journal")
        journal = Journal.decode(data)
        display = ws._mapper.to_display
        with ws.transaction(label=f"undo {record.txid}", undo_of=record.txid) as tx:
            for index in range(len(journal.targets) - 1, -1, -1):
                target = journal.targets[index]
                path = display(target.key)
                if target.after == "file":
                    # Guarded by content, not version: an earlier undo may have rewritten the very
                    # bytes this transaction wrote, under a new version.
                    current = tx.read(path) if tx.exists(path) else None
                    if current is None or digest(current.data) != target.after_sha:
                        raise StaleVersion(
                            f"Cannot undo {record.txid}: {path} changed after that transaction wrote it.",
                            path=path,
                        )
                    assert current.version is not None
                    if target.before == "file":
                        tx.write(
                            path,
                            journal.pre_images[index],
                            intent=replace_if_version(current.version),
                            mode=target.before_mode,
                        )
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
        undo_txid = tx.result.txid if tx.result else None
        self._forget(*([record.txid, undo_txid] if undo_txid else [record.txid]))
        return HistoryEntry(record.txid, record.created, record.label, [Change(p, a) for p, a in record.changes])  # type: ignore[arg-type]
