"""History of committed transactions: the log, pruning, and multi-level undo.

A committed transaction is the pair ``tx/<txid>.journal`` (pre-images) + ``tx/<txid>.done``
(what was written); ``vfs.txlog`` owns their layout. ``undo`` reverts the newest one in a new transaction, guarded by version: it
runs only if every target still holds what that transaction wrote. Records are kept: an undo or a
rewind is itself a record (``kind``, ``reverts``), so ``redo`` can take it back, and the commits
in effect are computed from the whole timeline. Checkpoints name points of history; pruning keeps
every record a checkpoint needs.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from backends.values import value
from vfs.errors import HistoryGap, InvalidArgument, NotFound, StaleVersion, VfsError
from vfs.recovery import sweep_checkpoint_temps
from vfs.txlog import Checkpoint, DoneRecord, Journal, Kind, valid_checkpoint_name
from vfs.types import UNCONDITIONAL, Change, FileChange, HistoryEntry, Read, replace_if_version

TYPE_CHECKING = False  # typing's constant, without importing typing at run time (see backends/values.py)
if TYPE_CHECKING:
    from vfs.context import Context
    from vfs.transaction import Transaction


class History:
    """The log, checkpoints, undo, redo and rewind over a workspace's transaction log. ``begin``
    opens a transaction of a given kind: history at work is built on the same commit protocol."""

    def __init__(
        self,
        ctx: Context,
        limit: int,
        begin: Callable[[str, Kind, list[str], str | None], Transaction],
        max_bytes: int | None = None,
    ) -> None:
        self.ctx = ctx
        self.limit = limit
        self.max_bytes = max_bytes
        self._begin = begin
        self._estimate: int | None = None  # committed records this process believes exist
        self._unmeasured = 0  # commits since the history's bytes were last listed
        self._known: dict[str, DoneRecord] = {}  # decisions read while pruning, by txid

    def committed_txids(self) -> list[str]:
        """Txids with both records, oldest first."""
        scan = self.ctx.log.scan()
        return [t for t in scan.journals if t in scan.decided]

    # -- pruning ------------------------------------------------------------------------------

    def prune(self) -> None:
        """Keep the newest ``limit`` records (and at most ``max_bytes``), and every record a
        checkpoint needs. Best effort: never fails a commit. Listing costs a directory scan (a
        LIST on S3), so it runs only once this process's estimate exceeds the limit by a slack (or,
        with ``max_bytes``, every slack commits); then it trims back to the limits."""
        self._unmeasured += 1
        bytes_due = self.max_bytes is not None and self._unmeasured >= self._slack
        if self._estimate is not None and self._estimate < self.limit + self._slack and not bytes_due:
            self._estimate += 1
            return
        try:
            self._unmeasured = 0
            scan = self.ctx.log.scan(sizes=self.max_bytes is not None)
            txids = [t for t in scan.journals if t in scan.decided]
            if len(txids) <= self.limit and not _beyond_bytes(txids, scan.sizes, self.max_bytes):
                self._estimate = len(txids)  # nothing to trim: no record needs reading
                return
            timeline = self._known_timeline(txids)
            candidates = set(self._beyond_limit(timeline)) | set(_beyond_bytes(txids, scan.sizes, self.max_bytes))
            dropped = self.drop(sorted(candidates))
            self._estimate = len(timeline) - len(dropped)
        except VfsError:
            return  # pruning again at the next commit is just as good

    def prune_now(self, keep: int | None, max_bytes: int | None, *, dry_run: bool = False) -> Pruned:
        """Prune on demand: all but the newest ``keep`` records, and the oldest beyond ``max_bytes``
        (``None``: the workspace's limits), never one a checkpoint needs; what was (or would be) dropped."""
        keep = self.limit if keep is None else keep
        max_bytes = self.max_bytes if max_bytes is None else max_bytes
        scan = self.ctx.log.scan(sizes=True)
        txids = [t for t in scan.journals if t in scan.decided]
        candidates = sorted(set(txids[: max(0, len(txids) - keep)]) | set(_beyond_bytes(txids, scan.sizes, max_bytes)))
        dropped = self.drop(candidates, dry_run=dry_run)
        held = [t for t in candidates if t not in dropped]
        sizes = scan.sizes
        return Pruned(
            dropped,
            sum(sizes.get(t, 0) for t in dropped),
            held,
            len(txids) - len(dropped),
            sum(sizes.get(t, 0) for t in txids) - sum(sizes.get(t, 0) for t in dropped),
            dry_run,
        )

    def usage(self) -> tuple[int, int]:
        """How many committed records the history holds, and their bytes (one listing)."""
        scan = self.ctx.log.scan(sizes=True)
        txids = [t for t in scan.journals if t in scan.decided]
        return len(txids), sum(scan.sizes.get(t, 0) for t in txids)

    def drop(self, candidates: list[str], *, dry_run: bool = False) -> list[str]:
        """Forget ``candidates`` except those a checkpoint still needs (every record after the
        oldest checkpoint: a rewind to it reverts them); the txids dropped."""
        marks = [c.txid for c in self.ctx.log.checkpoints()]
        keep_from = min((m for m in marks if m is not None), default=None) if marks else None
        if None in marks:
            keep_from = ""  # a checkpoint at the very beginning needs every record
        dropped = [t for t in candidates if keep_from is None or t <= keep_from]
        if not dry_run:
            self.ctx.log.forget(*dropped)
        return dropped

    def _beyond_limit(self, timeline: list[DoneRecord]) -> list[str]:
        """Records older than the ``limit``-th newest commit in effect, and beyond four times the
        limit in all (undo/redo cycles add records without adding commits)."""
        undone, _ = self._undone(timeline)
        in_effect = [r.txid for r in timeline if r.kind == "commit" and r.txid not in undone]
        cutoff = in_effect[-self.limit] if len(in_effect) >= self.limit else ""
        old = [r.txid for r in timeline if r.txid < cutoff]
        excess = [r.txid for r in timeline[: max(0, len(timeline) - 4 * self.limit)]]
        return sorted(set(old) | set(excess))

    def _known_timeline(self, txids: list[str]) -> list[DoneRecord]:
        """``timeline()`` for pruning, reading only the records this process has not read yet:
        a decision is written once and never rewritten, so one read per record is enough."""
        self.ctx.require_resolved()
        known = self._known
        known.update(self.ctx.log.take_written(txids))
        unread = [t for t in txids if t not in known]
        known.update((r.txid, r) for r in self.ctx.log.read_dones(unread))
        self._known = {t: known[t] for t in txids}  # forget what was pruned meanwhile
        return [r for r in self._known.values() if r.outcome == "committed"]

    @property
    def _slack(self) -> int:
        return max(1, min(16, self.limit // 4))

    # -- reading ------------------------------------------------------------------------------

    def timeline(self) -> list[DoneRecord]:
        """Every committed record, oldest first."""
        self.ctx.require_resolved()
        records = self.ctx.log.read_dones(self.committed_txids())
        return [r for r in records if r.outcome == "committed"]

    @staticmethod
    def _undone(timeline: list[DoneRecord]) -> tuple[set[str], list[DoneRecord]]:
        """The commits currently reverted, and the undos/rewinds a redo can still take back."""
        undone: set[str] = set()
        redoable: list[DoneRecord] = []
        by_txid = {r.txid: r for r in timeline}
        for record in timeline:
            if record.kind in ("undo", "rewind"):
                undone.update(record.reverts)
                redoable.append(record)
            elif record.kind == "redo":
                for txid in record.reverts:
                    undone.difference_update(by_txid[txid].reverts if txid in by_txid else [])
                redoable = [r for r in redoable if r.txid not in record.reverts]
            else:
                redoable = []  # a new change ends what can be redone, as in any editor
        return undone, redoable

    def records(self) -> list[DoneRecord]:
        """Commits in effect (not undone; history's own transactions hidden), newest first."""
        timeline = self.timeline()
        undone, _ = self._undone(timeline)
        return [r for r in reversed(timeline) if r.kind == "commit" and r.txid not in undone]

    def log(self, limit: int = 20, session: str | None = None) -> list[HistoryEntry]:
        # Pruning lags by a slack: the history promised is the newest `self.limit` records.
        records = self.records()[: self.limit]
        mine = [r for r in records if session is None or r.session == session]
        return [_entry(r) for r in mine[:limit]]

    # -- checkpoints --------------------------------------------------------------------------

    def checkpoint(self, name: str) -> Checkpoint:
        if not valid_checkpoint_name(name):
            raise InvalidArgument(
                f"Invalid checkpoint name {name!r}: use letters, digits, '.', '_' and '-' (at most 64)."
            )
        # Under the commit lock: the newest commit is the one the mark names when it is written,
        # and no other checkpoint write is in flight, so a killed one's temp file can be swept.
        with self.ctx.commit_lock():
            records = self.records()
            mark = Checkpoint(name, records[0].txid if records else None, time.time())
            sweep_checkpoint_temps(self.ctx)
            self.ctx.log.write_checkpoint(mark)
        return mark

    def checkpoints(self) -> list[Checkpoint]:
        return self.ctx.log.checkpoints()

    # -- undo, redo, rewind -------------------------------------------------------------------

    def undo(self, expected_txid: str | None = None, session: str | None = None) -> HistoryEntry:
        """The newest commit in effect (of ``session``, when given: see :meth:`_own`)."""
        in_effect = self.records()
        records = _of(in_effect, session)
        if not records:
            whose = f" of session {session}" if session is not None else ""
            raise NotFound(f"There is no transaction{whose} to undo.")
        record = records[0]
        if expected_txid is not None and record.txid != expected_txid:
            raise StaleVersion(
                f"Cannot undo {expected_txid}: a newer transaction ({record.txid}) was committed since.",
            )
        self._own("undo", [record], in_effect, session)
        self._revert_all("undo", f"undo {record.txid}", [record], session=session)
        return _entry(record)

    def rewind(self, to: str, *, dry_run: bool = False, session: str | None = None) -> Rewind:
        """Revert every commit in effect after ``to`` (a checkpoint name or a txid), as one
        transaction; with ``session``, only that session's (see :meth:`_own`). ``dry_run``:
        check and compute the same, commit nothing."""
        point = self._point(to)
        in_effect = self.records()
        records = [r for r in _of(in_effect, session) if point is None or r.txid > point]
        if not records:
            return Rewind([], [])
        self._own("rewind", records, in_effect, session)
        label = f"rewind to {to}" + (f" (session {session})" if session is not None else "")
        changes = self._revert_all("rewind", label, records, dry_run=dry_run, session=session)
        return Rewind([_entry(r) for r in records], changes)

    def redo(self, session: str | None = None) -> HistoryEntry:
        """Take back the newest undo or rewind (of ``session``, when given; nothing committed since)."""
        _, redoable = self._undone(self.timeline())
        redoable = _of(redoable, session)
        if not redoable:
            raise NotFound("There is nothing to redo (or a change was committed since the last undo).")
        record = redoable[-1]
        self._revert_all("redo", f"redo {record.txid}", [record], session=session)
        return _entry(record)

    def _own(self, kind: Kind, records: list[DoneRecord], in_effect: list[DoneRecord], session: str | None) -> None:
        """With a session, its ``records`` are reverted while other sessions' commits after them
        stay: refused, naming each, if one of those changed a path the records changed (by key,
        as written in the records: the same whatever mount each client saw)."""
        if session is None:
            return
        problems = []
        for record in records:
            for later in in_effect:
                if later.txid <= record.txid or later.session == session:
                    continue
                for key in sorted(record.versions.keys() & later.versions.keys()):
                    problems.append(
                        f"{self.ctx.display(key)} (changed by {record.txid}) was changed after it by transaction"
                        f" {later.txid} of session {later.session or '(none)'}"
                    )
        if problems:
            raise StaleVersion(
                f"Cannot {kind} session {session}'s changes: " + "; ".join(problems) + ". Nothing was changed."
            )

    def _point(self, to: str) -> str | None:
        marks = {c.name: c for c in self.checkpoints()}
        if to in marks:
            return marks[to].txid
        if to in self.committed_txids():
            return to
        raise NotFound(f"No checkpoint or transaction named {to!r} (see `vfs log`).")

    def _revert_all(
        self, kind: Kind, label: str, records: list[DoneRecord], *, dry_run: bool = False, session: str | None = None
    ) -> list[FileChange]:
        """One transaction reverting ``records`` (newest first), refused as a whole with every
        file changed outside them listed."""
        oldest = min(r.txid for r in records)
        gaps = [g for g in self.ctx.log.scan().gaps if g > oldest]
        if gaps:
            raise HistoryGap(
                f"Cannot {kind}: transaction {gaps[-1]} committed after {oldest} but left no history record,"
                " so reverting would skip a change. Revert it by hand, or continue without undo."
            )
        journals = [(r, self.ctx.log.read_journal(r.txid)) for r in records]
        with self._begin(label, kind, [r.txid for r in records], session) as tx:
            problems: list[str] = []
            for record, journal in journals:
                problems += self._revert(tx, record, journal)
            if problems:
                raise StaleVersion(
                    f"Cannot {kind}: " + "; ".join(problems) + ". Nothing was changed.",
                    path=None,
                )
            changes = tx.staged_changes()
            if dry_run:
                tx.abort()
        return changes

    def _revert(self, tx: Transaction, record: DoneRecord, journal: Journal) -> list[str]:
        display = self.ctx.display
        problems: list[str] = []
        for index in range(len(journal.targets) - 1, -1, -1):
            target = journal.targets[index]
            problem = _revert_target(tx, record, journal, index, display(target.key))
            if problem:
                problems.append(problem)
        for key in reversed(journal.created_dirs):
            path = display(key)
            if tx.exists(path) and not tx.list(path):
                tx.rmdir(path)
        return problems


def _revert_target(tx: Transaction, record: DoneRecord, journal: Journal, index: int, path: str) -> str | None:
    """Put one target back as it was before ``record``; a problem if it changed since."""
    target = journal.targets[index]
    if target.after == "file":
        # Guarded by content, not version: an earlier undo may have rewritten the very bytes
        # this transaction wrote, under a new version. One read (no stat first): it also finds
        # out whether the file is there, and its version is the one the write is checked against.
        current = _current(tx, path)
        if current is None or journal.digest(current.data) != target.after_sha:
            return f"{path} changed after {record.txid} wrote it"
        assert current.version is not None or current.data is not None
        if target.before == "file":
            intent = replace_if_version(current.version) if current.version else UNCONDITIONAL
            tx.write(path, journal.pre_images[index], intent=intent, mode=target.before_mode)
        else:
            tx.delete(path, if_version=current.version)
    elif target.after == "absent" and target.before == "file":
        if tx.exists(path):
            return f"{path} was created again after {record.txid} deleted it"
        tx.create(path, journal.pre_images[index], mode=target.before_mode)
    elif target.after == "directory" and target.before == "absent":
        if tx.exists(path) and not tx.list(path):
            tx.rmdir(path)
    elif target.after == "absent" and target.before == "directory":
        tx.mkdir(path)
    return None


def _beyond_bytes(txids: list[str], sizes: dict[str, int], max_bytes: int | None) -> list[str]:
    """The oldest records beyond ``max_bytes`` in all, counted from the newest (always kept)."""
    if max_bytes is None:
        return []
    total = 0
    for index in range(len(txids) - 1, -1, -1):
        total += sizes.get(txids[index], 0)
        if total > max_bytes and index < len(txids) - 1:
            return txids[: index + 1]
    return []


@value(frozen=True)
class Pruned:
    """What a prune dropped (or would drop: ``dry_run``), what it kept because a checkpoint needs
    it although it is beyond the limits (``held``), and what the history holds after it."""

    dropped: list[str]
    freed_bytes: int
    held: list[str]
    kept: int
    kept_bytes: int
    dry_run: bool = False


def _current(tx: Transaction, path: str) -> Read | None:
    try:
        return tx.read(path)
    except NotFound:
        return None


@value(frozen=True)
class Rewind:
    """What a rewind reverted (newest first) and the file changes it made (or would make)."""

    reverted: list[HistoryEntry]
    changes: list[FileChange]


def _of(records: list[DoneRecord], session: str | None) -> list[DoneRecord]:
    return records if session is None else [r for r in records if r.session == session]


def _entry(record: DoneRecord) -> HistoryEntry:
    changes = [Change(p, a) for p, a in record.changes]  # type: ignore[arg-type]
    return HistoryEntry(record.txid, record.created, record.label, changes, record.session)
