"""Finishing interrupted commits: rollback (after a failed commit or a crash), roll-forward
(where the lock can expire), and the recovery of a workspace.

Rollback is decided per target by content, not by trust: a target that still holds its
pre-image is left alone, one that holds exactly what the commit wrote is restored (conditionally,
against the version just seen, so a store with compare-and-swap never clobbers a newer write), and
anything else was written by someone else meanwhile: it is left in place and reported, never
hidden.

Roll-forward: where the commit lock is a lease that can expire (S3), the journal also holds the
post-images. A recovery that finds every target holding its pre-image or its post-image finishes
the commit instead of undoing it, then decides ``committed``; a paused committer that wakes up
afterwards only repeats writes already there (its conditional writes fail) and reads the decision.
Rolling back there first decides ``aborted``, so the two can never both happen.
"""

from __future__ import annotations

from collections.abc import Collection

from backends.base import DeleteItem, FileInfo, WriteItem, parent_of
from backends.values import field, value
from vfs.errors import CorruptMetadata, NotFound, VfsError
from vfs.txlog import DoneRecord, Journal, TargetRecord
from vfs.types import RecoveryReport

TYPE_CHECKING = False  # typing's constant, without importing typing at run time (see backends/values.py)
if TYPE_CHECKING:
    from vfs.context import Context


@value
class RollbackOutcome:
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def _current(ctx: Context, key: str) -> tuple[FileInfo | None, bytes | None]:
    info = ctx.storage.stat(key)
    if info is None or info.kind != "file":
        return info, None
    data, info = ctx.storage.read(key)
    return info, data


def _holds(target: TargetRecord, which: str, data: bytes | None, journal: Journal, index: int) -> bool:
    state = target.before if which == "before" else target.after
    if state == "absent":
        return data is None
    if state != "file" or data is None:
        return False
    if which == "before":
        return data == journal.pre_images[index]  # the pre-image is in the journal: compare bytes
    return journal.digest(data) == target.after_sha


def _restore_target(ctx: Context, journal: Journal, index: int, target: TargetRecord) -> str | None:
    """Put one target back to its pre-image; a problem description if that cannot be done safely."""
    display = ctx.display(target.key)
    current, data = _current(ctx, target.key)
    if target.before == "directory" or target.after == "directory":
        return _restore_directory(ctx, target, current)
    if current is not None and current.kind != "file":
        return f"{display} is now a {current.kind}; left as is"
    if _holds(target, "before", data, journal, index):
        return None
    if not _holds(target, "after", data, journal, index):
        return f"{display} was changed by someone else during the commit; left as is"
    version = current.version if current is not None else None
    if target.before == "file":
        item = WriteItem(target.key, journal.pre_images[index], target.before_mode, version, current is None)
        ctx.storage.write(item)
    else:
        ctx.storage.delete(DeleteItem(target.key, version))
    return None


def _restore_directory(ctx: Context, target: TargetRecord, current: FileInfo | None) -> str | None:
    is_dir = current is not None and current.kind == "directory"
    if target.before == "directory" and not is_dir:
        if current is not None:
            return f"{ctx.display(target.key)} is no longer a directory; left as is"
        ctx.storage.mkdir(target.key)
    elif target.before == "absent" and is_dir:
        _remove_empty_dir(ctx, target.key)
    return None


def _remove_empty_dir(ctx: Context, key: str) -> None:
    if ctx.storage.list(key):
        return  # someone else's files live here now: keep them (and the directory)
    ctx.storage.rmdir(key)


def rollback(ctx: Context, journal: Journal, *, untouched: Collection[str] = ()) -> RollbackOutcome:
    """Undo every target of ``journal`` (newest first), remove directories it created, then its
    records. Never raises for a storage error: problems are collected and returned.

    ``untouched``: keys the failed commit knows it never changed (a recovery knows nothing, and
    checks every target)."""
    outcome = RollbackOutcome()
    for index in range(len(journal.targets) - 1, -1, -1):
        target = journal.targets[index]
        if target.key in untouched:
            continue
        try:
            problem = _restore_target(ctx, journal, index, target)
        except VfsError as exc:
            problem = f"could not restore {ctx.display(target.key)}: {exc.message}"
        if problem:
            outcome.problems.append(problem)
    for key in reversed(journal.created_dirs):
        try:
            info = ctx.storage.stat(key)
            if info is not None and info.kind == "directory":
                _remove_empty_dir(ctx, key)
        except VfsError as exc:
            outcome.problems.append(f"could not remove the directory {ctx.display(key)}: {exc.message}")
    if outcome.ok:
        try:
            ctx.log.forget(journal.txid)
        except VfsError:
            pass  # harmless: a later recovery finds every target already restored and retries this
    return outcome


def roll_forward(ctx: Context, journal: Journal) -> dict[str, str | None] | None:
    """Finish ``journal`` when every target holds its pre- or post-image and every post-image is
    in it; the versions now stored, or ``None`` when it cannot be finished (roll back instead)."""
    states = []
    for index, target in enumerate(journal.targets):
        if target.before == "directory" or target.after == "directory":
            return None  # directories are rare in a commit; rolling back is just as good
        if target.after == "file" and index not in journal.post_images:
            return None
        current, data = _current(ctx, target.key)
        if current is not None and current.kind != "file":
            return None
        if _holds(target, "after", data, journal, index):
            states.append((index, target, current, True))
        elif _holds(target, "before", data, journal, index):
            states.append((index, target, current, False))
        else:
            return None
    for key in journal.created_dirs:
        if ctx.storage.stat(key) is None:
            ctx.storage.mkdir(key)
    return {t.key: _finish(ctx, journal, i, t, cur, done) for i, t, cur, done in states}


def _finish(
    ctx: Context, journal: Journal, index: int, target: TargetRecord, current: FileInfo | None, done: bool
) -> str | None:
    if target.after == "absent":
        if not done:
            ctx.storage.delete(DeleteItem(target.key, current.version if current else None))
        return None
    if done:
        return current.version if current else None
    version = current.version if current else None
    item = WriteItem(target.key, journal.post_images[index], target.after_mode, version, current is None)
    return ctx.storage.write(item).version


def _sweep_temp_files(ctx: Context, directories: set[str]) -> None:
    """Delete temp files a crashed write left next to its target (only names that are exactly
    vfs's temp names: a user's file that merely contains the marker is never touched)."""
    for directory in sorted(directories):
        try:
            entries = ctx.storage.list(directory)
        except VfsError:
            continue
        for entry in entries:
            if entry.kind == "file" and ctx.storage.is_temp_name(entry.name):
                try:
                    ctx.storage.delete(DeleteItem(entry.key))
                except VfsError:
                    continue


def sweep_left_in(ctx: Context, folder: str) -> None:
    """Delete the temp files a holder killed while writing in ``folder`` without a journal left
    there (the folder its lock named: input, checked as a key first). Call with the lock held."""
    if folder == "" or ctx.log.key_ok(folder):
        _sweep_temp_files(ctx, {folder})


def _resolve_one(ctx: Context, txid: str, decided: bool, report: RecoveryReport) -> None:
    from vfs.commit import done_record  # the one builder of decision records

    log = ctx.log
    # A decided journal is history, except where the lock can expire: there a decision may be
    # ``aborted`` with its rollback unfinished (elsewhere no one ever writes one).
    if decided and not ctx.capabilities.lock_can_expire:
        return
    decision: DoneRecord | None = log.read_done(txid) if decided else None
    if decision is not None and decision.outcome == "committed":
        return
    journal = log.read_journal(txid)
    if journal.committed and decision is None:  # a landed single-target commit's record, half written
        log.delete_quiet(log.journal_key(txid))
        report.finished.append(txid)
        return
    _sweep_temp_files(ctx, {parent_of(t.key) for t in journal.targets})
    if decision is None and ctx.capabilities.lock_can_expire:
        versions = roll_forward(ctx, journal)
        if versions is not None:
            decision = log.decide(done_record(journal, versions, ctx.display))
            if decision.outcome == "committed":
                report.rolled_forward.append(txid)
                return
        if decision is None:
            decision = log.decide(done_record(journal, {}, ctx.display, outcome="aborted"))
            if decision.outcome == "committed":
                return
    outcome = rollback(ctx, journal)
    if outcome.ok:
        report.rolled_back.append(txid)
    else:
        report.conflicts.extend(f"{txid}: {p}" for p in outcome.problems)
        ctx.unresolved[txid] = "; ".join(outcome.problems)


def recover(ctx: Context, *, discard: Collection[str] = ()) -> RecoveryReport:
    """Finish every interrupted commit under ``tx/``. Call with the commit lock held.

    A record that fails its checks is never written from: it stays, the workspace stays
    unresolved, and the report says so; ``discard`` names txids whose records the user has
    looked at and wants set aside (copied to ``.vfs/discarded/``, then removed)."""
    report = RecoveryReport()
    log = ctx.log
    scan = log.scan()
    ctx.unresolved.clear()
    if any(ctx.storage.is_temp_name(n) for n in scan.leftovers):
        _sweep_temp_files(ctx, {log.tx_key})
    sweep_checkpoint_temps(ctx)
    for txid in scan.journals:
        if txid in discard:
            _discard(ctx, txid)
            report.finished.append(txid)
            continue
        try:
            _resolve_one(ctx, txid, txid in scan.decided, report)
        except CorruptMetadata as exc:
            report.conflicts.append(f"{txid}: {exc.message} ({exc.code})")
            ctx.unresolved[txid] = exc.message
        except VfsError as exc:
            report.conflicts.append(f"{txid}: {exc.message}")
            ctx.unresolved[txid] = exc.message
    oldest = min(scan.journals, default=None)
    for txid in sorted(scan.decided - set(scan.journals)):
        # A lone mark older than every journal is the leftover of pruning (oldest first); a newer
        # one lost its journal (an unflushed record in a power cut): undo must not skip past it.
        if oldest is not None and txid > oldest:
            log.mark_gap(txid)
        log.delete_quiet(log.done_key(txid))
        report.finished.append(txid)
    for txid in scan.lone_kept():  # (its commit landed; only its history record is missing)
        log.delete_quiet(log.pre_key(txid))
    return report


def sweep_checkpoint_temps(ctx: Context) -> None:
    """Delete what a checkpoint write killed mid-way left (a temp file beside the checkpoints).
    The caller holds the commit lock, which every checkpoint write takes: none is in flight."""
    _sweep_temp_files(ctx, {ctx.log.checkpoints_key})


def _discard(ctx: Context, txid: str) -> None:
    log = ctx.log
    aside = f"{ctx.meta_key}/discarded"
    if ctx.storage.stat(aside) is None:
        ctx.storage.mkdir(aside)
    for key in (log.journal_key(txid), log.done_key(txid), log.record_key(txid), log.pre_key(txid)):
        try:
            data, _ = ctx.storage.read(key)
        except NotFound:
            continue
        ctx.storage.write(WriteItem(f"{aside}/{key.rsplit('/', 1)[-1]}", data, versioned=False))
        log.delete_quiet(key)


def pending(ctx: Context) -> list[str]:
    """Txids whose journal has no decision yet (cheap: one listing)."""
    scan = ctx.log.scan()
    return [t for t in scan.journals if t not in scan.decided]


def needs_recovery(ctx: Context) -> bool:
    """An undecided journal, a lone kept pre-image, or a temp file a crashed record write left in
    the log's folder."""
    scan = ctx.log.scan()
    return scan.unfinished() or any(ctx.storage.is_temp_name(n) for n in scan.leftovers)
