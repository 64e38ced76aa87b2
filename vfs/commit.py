"""The commit protocol, once: preflight, journal, apply, decide, and rollback on failure.

1. preflight, lock held: an unresolved journal of anyone's is recovered first (or the commit is
   refused, ``FS_RECOVERY_NEEDED``); every path the transaction read or targets is checked
   against what it first saw (``FS_STALE_VERSION``); pre-images are taken (bytes already read
   are reused, never read twice);
2. the journal (pre-images; post-images too where the lock can expire) is written durably
   before the first target changes (a backend may start sending its bytes, unseen, while the
   preflight's checks run: ``Storage.write_ahead``);
3. every target is applied, each atomically and conditionally on the version seen (one apply
   path: batched where the backend batches, a loop where it does not);
4. the decision ``committed`` is written once, create-if-absent: the commit point. Where the
   lock can expire (S3), a recovery that took the lock over may have decided first; the
   decision that stands is the one reported, so a report is never untrue;
5. history is pruned.

A failure in 2-4 rolls back every target already changed (where the lock can expire, only
after deciding ``aborted``: a recovery may have rolled the commit forward meanwhile) and says
so; if the rollback fails, ``FS_ROLLBACK_FAILED`` and the journal stays for ``vfs recover``.

A single file target with no directory to create needs no journal: its one atomic replace (or
unlink) is the commit point; its history record is written after it, and if that fails the
result says so and a gap marker keeps undo from reaching past it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence

from backends.base import DeleteItem, WriteData, WriteItem, iter_parents, joined, load_hash, parent_of
from vfs.context import Context
from vfs.errors import IOFailure, NotADirectory, NotFound, RollbackFailed, StaleVersion, VfsError
from vfs.recovery import recover, rollback
from vfs.staging import Overlay
from vfs.txlog import RECORD_INLINE_MAX, DoneRecord, Journal, Kind, TargetRecord, hash_beside, new_txid
from vfs.types import Change, CommitResult

TYPE_CHECKING = False  # typing's constant, without importing typing at run time (see backends/values.py)
if TYPE_CHECKING:
    from typing import TypeVar

    from vfs.storage import HeldLock

    R = TypeVar("R")

#: Test-only: name of the commit step at which the process kills itself (crash tests).
_CRASH_AT = os.environ.get("VFS_TEST_CRASH_AT", "")


def crash_point(step: str) -> None:
    if _CRASH_AT and step == _CRASH_AT:
        import signal  # not imported otherwise

        os.kill(os.getpid(), signal.SIGKILL)


class Commit:
    """One run of the protocol over a transaction's overlay."""

    def __init__(
        self, ctx: Context, overlay: Overlay, *, label: str, kind: Kind, reverts: list[str], session: str | None = None
    ) -> None:
        self.ctx = ctx
        self.session = session
        self.overlay = overlay
        self.label = label
        self.kind = kind
        self.reverts = reverts
        self.storage = ctx.storage
        #: the digests of the pre-images and post-images by target index (see _prepare_journal)
        self._pre_digests: Callable[[], dict[int, str]] = dict
        self._post_digests: Callable[[], dict[int, str]] = dict
        #: folders found in place under the lock (by the preflight): none of them is created
        self._directories: set[str] = set()
        self._journal_item: WriteItem | None = None  # the journal's, once made (sent ahead)
        self._keep_replaced: str | None = None  # where a single target's replaced file may be kept
        self._held: HeldLock | None = None  # the commit lock, while run() holds it

    def run(self, targets: list[str], prune: Callable[[], None]) -> CommitResult:
        try:
            load_hash()
        except ImportError as exc:  # a broken install: found before any change, not after one
            raise IOFailure(
                f"The content hash cannot be loaded ({type(exc).__name__}: {exc}); nothing was changed. "
                "vfs needs the blake3 package, one of its dependencies: install it in this environment."
            ) from exc
        early = self._journal_before_lock(targets)
        try:
            with self.ctx.commit_lock() as held:
                self._held = held
                crash_point("locked")
                if early is not None and not held.at_once:  # its txid may predate a commit made meanwhile
                    self._drop_early(early)
                    early = None
                self._require_resolved(listed=not held.fresh)
                journal = self._preflight(targets, early)
                result = (self._commit_single if self._single(journal) else self._commit_journaled)(journal)
                prune()
                crash_point("pruned")
        except BaseException:
            if early is not None:
                self._drop_early(early)  # (nothing left to drop once its write took the parts)
            raise
        return result

    # -- preflight ----------------------------------------------------------------------------

    def _preflight(self, targets: list[str], early: Journal | None) -> Journal:
        """The checks under the lock, and the journal they allow (``early`` if one was sent)."""
        verified = self._read_pre_images(targets)
        skip = self._checked_by_the_write(targets) | verified
        if early is not None:
            self._check_seen(skip=skip)
            return early
        if self.storage.sends_ahead:
            return self._journal_sent_ahead(targets, skip)
        self._check_seen(skip=skip)
        return self._prepare_journal(targets)  # after the check: it knows the folders

    def _require_resolved(self, *, listed: bool = True) -> None:
        """Anyone's interrupted commit is finished first (we hold the lock); one that cannot be
        stops every commit until ``vfs recover``. ``listed=False``: the lock was free, so no
        holder left a journal unresolved and the listing is skipped."""
        if self.ctx.unresolved or (listed and self.ctx.log.scan().unfinished()):
            recover(self.ctx)
        self.ctx.require_resolved()

    def _read_pre_images(self, targets: list[str]) -> set[str]:
        """Read the targets never read (blind writes and deletes) for their pre-images, under the
        lock; each read is also the check that the file still holds the version first seen."""
        seen = self.overlay.seen
        unread = [k for k in targets if seen[k].state == "file" and seen[k].data is None]
        for key, result in zip(unread, self.storage.read_many(unread), strict=True):
            path = self.ctx.display(key)
            if isinstance(result, NotFound):
                raise StaleVersion(f'cannot write "{path}": file no longer exists', path=path)
            if isinstance(result, VfsError):
                raise result
            data, info = result
            if info.version != seen[key].version and not self.storage.matches(key, seen[key].version):
                raise StaleVersion(f'cannot write "{path}": file changed since it was read', path=path)
            seen[key].data = data
        return set(unread)

    def _checked_by_the_write(self, targets: list[str]) -> set[str]:
        """File targets whose own conditional write or delete checks them, so the preflight need
        not: all of them where the store enforces the condition, and the only one of a
        single-target commit. A multi-file commit on a store without CAS keeps its preflight:
        a stale file found there costs nothing, found while applying it costs a rollback."""
        if not (self.ctx.capabilities.conditional_write or len(targets) == 1):
            return set()
        seen, staged = self.overlay.seen, self.overlay.staged
        return {k for k in targets if seen[k].state in ("file", "absent") and staged[k].state in ("file", "absent")}

    def _check_seen(self, skip: set[str]) -> None:
        """Everything read or targeted must still be exactly what this transaction first saw."""
        seen = self.overlay.seen
        if len(seen) <= len(skip) and all(k in skip for k in seen):
            return  # (a single file, checked by its own write)
        plain = [
            (k, s.version if s.state == "file" else None) for k, s in seen.items() if s.state in ("file", "absent")
        ]
        plain = [(k, v) for k, v in plain if k not in skip]
        verdicts = dict(zip((k for k, _ in plain), self.storage.matches_many(plain), strict=True))
        others = [k for k in seen if k not in verdicts and k not in skip]
        for key, info in zip(others, self.storage.stat_many(others), strict=True):
            verdicts[key] = info is not None and info.kind == seen[key].state
            if verdicts[key] and info is not None and info.kind == "directory":
                self._directories.add(key)
        for key in seen:
            if not verdicts.get(key, True):
                raise self._stale(key)

    def _stale(self, key: str) -> StaleVersion:
        display = self.ctx.display(key)
        if self.overlay.seen[key].state == "absent":
            return StaleVersion(f'cannot write "{display}": it was created by someone else meanwhile', path=display)
        if self.storage.stat(key) is None:
            return StaleVersion(f'cannot write "{display}": file no longer exists', path=display)
        return StaleVersion(f'cannot write "{display}": file changed since it was read', path=display)

    # -- the journal --------------------------------------------------------------------------

    def _apply_order(self, targets: list[str]) -> list[str]:
        """Directories to create first (outermost first), then files in staging order, then
        directories to remove (innermost first): each step finds the parent it needs."""
        seen, staged = self.overlay.seen, self.overlay.staged

        def phase(key: str) -> tuple[int, int]:
            if staged[key].state == "directory":
                return (0, key.count("/"))
            if seen[key].state == "directory":
                return (2, -key.count("/"))
            return (1, 0)

        return sorted(targets, key=phase)  # stable: files keep their staging order

    def _created_dirs(self, targets: list[str]) -> list[str]:
        """Missing ancestors to create. On an object store a file's prefixes exist by implication:
        only an explicit directory (a marker object) needs its parents made too."""
        real_dirs = self.ctx.capabilities.real_directories
        base_len = len(self.ctx.mapper.base_key)
        seen, staged = self.overlay.seen, self.overlay.staged
        changed = set(targets)  # membership per ancestor: a list would make this quadratic
        # A target that was a file has its folders (a write or delete of it that finds one gone
        # is refused as stale: see _apply_files); only new paths may need theirs made.
        ancestors = sorted(
            {
                a
                for key in targets
                if staged[key].state == "directory" or (real_dirs and seen[key].state != "file")
                for a in iter_parents(key)
                if len(a) > base_len and a not in changed and a not in self._directories
            }
        )
        if not ancestors:
            return []
        missing = {a for a, info in zip(ancestors, self.storage.stat_many(ancestors), strict=True) if info is None}
        return sorted(missing, key=lambda k: (k.count("/"), k))

    def _prepare_journal(self, targets: list[str]) -> Journal:
        targets = self._apply_order(targets)
        journal = Journal(
            new_txid(), self.label, time.time(), [], self._created_dirs(targets), self.kind, list(self.reverts)
        )
        journal.session = self.session
        keep_post = self.ctx.capabilities.lock_can_expire
        post: dict[int, WriteData] = {}
        for index, key in enumerate(targets):
            staged, seen = self.overlay.staged[key], self.overlay.seen[key]
            if seen.state == "file":
                assert seen.data is not None  # read in preflight
                journal.pre_images[index] = seen.data
            if staged.data is not None:
                post[index] = staged.data
        # Hashed on other threads while the commit goes on: waited for by _settle (a journal
        # written first), or by the backend once the bytes are down (the written file's version).
        self._pre_digests = hash_beside(journal.pre_images)
        self._post_digests = hash_beside(post)
        for index, key in enumerate(targets):
            staged, seen = self.overlay.staged[key], self.overlay.seen[key]
            before = seen.state if seen.state in ("file", "directory") else "absent"
            journal.targets.append(TargetRecord(key, before, staged.state, seen.version, seen.mode, None, staged.mode))
            if keep_post and staged.data is not None:
                journal.post_images[index] = joined(staged.data)
        return journal

    def _journal_sent_ahead(self, targets: list[str], skip: set[str]) -> Journal:
        """The journal prepared first, and its bytes sent (unseen until its write completes them)
        while the preflight's checks run: a round trip less where each is one (S3). Dropped if a
        check fails."""
        journal = self._prepare_journal(targets)
        ahead = False
        if not self._single(journal):
            self._journal_item = self.ctx.log.journal_item(self._settle(journal))
            self._will_journal()
            ahead = self.storage.write_ahead(self._journal_item)
        try:
            self._check_seen(skip=skip)
        except BaseException:
            if ahead:
                self.storage.drop_ahead(self.ctx.log.journal_key(journal.txid))
            raise
        return journal

    def _journal_before_lock(self, targets: list[str]) -> Journal | None:
        """Where a journal's bytes can be sent ahead (S3), the journal is made (and a large one's
        parts sent) while the lock is asked for: a round trip less than sending it under the lock. Only where
        nothing of it needs the lock: every pre-image already read (each write's condition
        checks it), no directory among the targets (their ancestors are stat'ed). Its txid is
        drawn before the lock: had the lock to be waited for, a commit made meanwhile has a
        later txid and would be listed after this one, so ``run`` drops it unless the lock was
        free at the first asking. Not covered: this process paused between the drawing and the
        asking (or its lease request held in flight) while another commit runs whole; history
        then lists the two by their txids' clock, as it lists commits of clients whose clocks
        disagree. No byte is at stake: undo refuses a file changed since the commit it undoes."""
        if not self.storage.sends_ahead or (self.kind == "commit" and len(targets) == 1):
            return None
        seen, staged = self.overlay.seen, self.overlay.staged
        for key in targets:
            if seen[key].state == "file" and seen[key].data is None:
                return None
            if "directory" in (seen[key].state, staged[key].state):
                return None
        journal = self._prepare_journal(targets)  # (never single: that needs one target of a commit)
        self._journal_item = self.ctx.log.journal_item(self._settle(journal))
        self.storage.write_ahead(self._journal_item)  # (a small one is sent whole, under the lock)
        return journal

    def _drop_early(self, journal: Journal) -> None:
        self.storage.drop_ahead(self.ctx.log.journal_key(journal.txid))
        self._journal_item = None

    def _settle(self, journal: Journal) -> Journal:
        """The journal with every digest filled in (waited for), as it must be to be written."""
        journal.pre_digests = self._pre_digests()
        for index, sha in self._post_digests().items():
            journal.targets[index].after_sha = sha
        return journal

    def _will_journal(self) -> None:
        """A journal is about to be written: the lock says so first, so that a next holder lists
        the journals if this process is killed from now on (a commit that writes none leaves the
        lock as it found it: see backends.local.lock.LocalLock)."""
        assert self._held is not None
        self._held.mark_busy()

    def _single(self, journal: Journal) -> bool:
        if self.kind != "commit" or journal.created_dirs or len(journal.targets) != 1:
            return False  # history at work is always journaled: a crash must never half-record it
        target = journal.targets[0]
        return "directory" not in (target.before, target.after)

    # -- apply --------------------------------------------------------------------------------

    def _apply(self, journal: Journal, written: dict[str, str | None], untouched: set[str]) -> None:
        """Directories to create, then all file writes at once, then all file deletes at once,
        then directories to remove. ``untouched`` loses each target as it is attempted and gets
        back those refused by their own condition (a stale target never lands)."""
        for target in journal.targets:
            if target.after == "directory":
                untouched.discard(target.key)
                self._apply_directory(target)
                written[target.key] = None
        self._apply_files(journal, written, untouched)
        for target in journal.targets:
            if target.before == "directory" and target.after == "absent":
                untouched.discard(target.key)
                self._apply_directory(target)
                written[target.key] = None

    def _apply_files(self, journal: Journal, written: dict[str, str | None], untouched: set[str]) -> None:
        writes = [(i, t) for i, t in enumerate(journal.targets) if t.after == "file"]
        deletes = [t for t in journal.targets if t.after == "absent" and t.before == "file"]
        untouched.difference_update(t.key for _, t in writes)
        results = self.storage.write_many([self._write_item(i, t) for i, t in writes])
        results = [_gone_is_stale(t, r, self.ctx.display) for (_, t), r in zip(writes, results, strict=True)]
        for (_, target), result in zip(writes, results, strict=True):
            if isinstance(result, StaleVersion):
                untouched.add(target.key)
            elif not isinstance(result, VfsError):
                written[target.key] = result.version
        _raise_first(results)
        crash_point("applied-writes")
        untouched.difference_update(t.key for t in deletes)
        outcomes = self.storage.delete_many([DeleteItem(t.key, t.before_version) for t in deletes])
        outcomes = [_gone_is_stale(t, e, self.ctx.display) for t, e in zip(deletes, outcomes, strict=True)]
        for target, error in zip(deletes, outcomes, strict=True):
            if error is None:
                written[target.key] = None
            elif isinstance(error, StaleVersion):
                untouched.add(target.key)
        _raise_first(outcomes)

    def _write_item(self, index: int, target: TargetRecord) -> WriteItem:
        staged = self.overlay.staged[target.key]
        post = self._post_digests
        return WriteItem(
            target.key,
            staged.data or b"",
            staged.mode,
            target.before_version if target.before == "file" else None,
            target.before == "absent",
            target.after_sha or (lambda: post()[index]),
            keep_replaced=self._keep_replaced,
        )

    def _apply_directory(self, target: TargetRecord) -> None:
        if target.after == "directory":
            if self.storage.stat(target.key) is None:
                self.storage.mkdir(target.key)
        elif self.ctx.capabilities.real_directories:
            self.storage.rmdir(target.key)
        else:
            try:  # asked even when its listing is empty: a store may keep an emptied folder
                self.storage.rmdir(target.key)
            except NotFound:
                pass  # a prefix that left with its last file

    # -- the two commit paths -----------------------------------------------------------------

    def _commit_journaled(self, journal: Journal) -> CommitResult:
        log = self.ctx.log
        written: dict[str, str | None] = {}
        untouched = {t.key for t in journal.targets}
        try:
            self._will_journal()
            item = self._journal_item or log.journal_item(self._settle(journal))
            self.ctx.write_meta(lambda: self.storage.write(item))
            crash_point("journaled")
            for key in journal.created_dirs:
                self.storage.mkdir(key)
            self._apply(journal, written, untouched)
            crash_point("before-mark")
            decided = log.decide(done_record(journal, written, self.ctx.display))
            crash_point("marked")
        except VfsError as exc:
            return self._fail(journal, exc, untouched)
        except BaseException:
            # Not an error of ours (a bug, KeyboardInterrupt): still never leave half a change.
            self._abandon(journal, untouched)
            raise
        if decided.outcome == "aborted":  # a recovery that took the lock over decided first
            self._abandon(journal, untouched)
            raise StaleVersion(
                f"Transaction {journal.txid} was rolled back: this client lost the commit lock (paused"
                " past its lease) and another client's recovery aborted it. Nothing of it is visible."
            )
        return self._result(journal, decided)

    def _fail(self, journal: Journal, exc: VfsError, untouched: set[str]) -> CommitResult:
        """Roll back after ``exc``, or report the commit if a recovery finished it meanwhile."""
        if self.ctx.capabilities.lock_can_expire:
            try:
                decided = self.ctx.log.decide(done_record(journal, {}, self.ctx.display, outcome="aborted"))
            except VfsError as undecided:
                decided = self._await_decision(journal, exc, undecided)
            if decided.outcome == "committed":  # rolled forward by another client's recovery
                return self._result(journal, decided)
        outcome = rollback(self.ctx, journal, untouched=untouched)
        if not outcome.ok:
            self.ctx.unresolved[journal.txid] = "; ".join(outcome.problems)
            raise RollbackFailed(
                f"{exc.message} The commit failed and could not be fully rolled back: "
                + "; ".join(outcome.problems)
                + ". The journal was kept; run `vfs recover` once the cause is fixed.",
                path=exc.path,
            ) from exc
        exc.message = f"{exc.message} The transaction was rolled back; nothing was changed."
        exc.args = (exc.message,)
        raise exc

    def _await_decision(self, journal: Journal, exc: VfsError, undecided: VfsError) -> DoneRecord:
        """This client may no longer decide (its lease ran out while it was paused): another
        client's recovery will. Wait a while for that decision, reading only, so the report can
        say what happened; if none comes, say that the outcome is open."""
        deadline = time.monotonic() + min(self.ctx.lock_timeout, 10.0)
        while time.monotonic() < deadline:
            try:
                return self.ctx.log.read_done(journal.txid)
            except NotFound:
                time.sleep(0.2)
            except VfsError:
                break
        self.ctx.unresolved[journal.txid] = f"its outcome could not be recorded: {undecided.message}"
        raise RollbackFailed(
            f"{exc.message} Transaction {journal.txid} could not record its outcome ({undecided.message}); its"
            " journal was kept, so it is neither committed nor rolled back yet: the next `vfs recover` (or the"
            " next client to open the workspace) finishes it, and `vfs log` then shows whether it landed.",
            path=exc.path,
        ) from exc

    def _abandon(self, journal: Journal, untouched: set[str]) -> None:
        outcome = rollback(self.ctx, journal, untouched=untouched)
        if not outcome.ok:
            self.ctx.unresolved[journal.txid] = "; ".join(outcome.problems)

    def _commit_single(self, journal: Journal) -> CommitResult:
        """One file, no directory to create: its atomic replace/unlink is the commit point."""
        target = journal.targets[0]
        crash_point("journaled")
        written: dict[str, str | None] = {}
        untouched = {target.key}
        self._keep_replaced = self._keep_key(journal)
        assert self._held is not None
        self._held.mark_busy(parent_of(target.key))  # killed mid-write, its temp file is swept by the next holder
        self._apply_files(journal, written, untouched)
        crash_point("applied-0")
        self._settle(journal)
        done = done_record(journal, written, self.ctx.display)
        journal.committed = True
        journal.post_images = {}  # history needs the pre-image only
        warnings = self._record_single(journal, done)
        return self._result(journal, done, warnings)

    def _keep_key(self, journal: Journal) -> str | None:
        """Where the backend may keep the file a single write replaces, as its history record's
        pre-image (a large one, on a backend that can: its bytes are then not written again);
        ``None``: the record holds the pre-image itself."""
        image = journal.pre_images.get(0)
        if not self.ctx.capabilities.keeps_replaced or journal.targets[0].after != "file":
            return None
        if image is None or len(image) <= RECORD_INLINE_MAX:
            return None
        return self.ctx.log.pre_key(journal.txid)  # (killed after the move: swept as a lone .pre)

    def _kept(self) -> bool:
        """Whether the write kept the replaced file where :meth:`_keep_key` asked. Its presence
        is enough: its bytes are checked against the record's length and digest whenever read
        (a stat would hash it: a file renamed this instant is racy)."""
        if self._keep_replaced is None:
            return False
        try:
            return not self.storage.matches(self._keep_replaced, None)
        except VfsError:
            return False

    def _record_single(self, journal: Journal, done: DoneRecord) -> list[str]:
        """Write the history record of a landed single-target commit; what went wrong, if anything.
        Unflushed, as one ``.record`` (one file to create now and to free when pruned; a large
        pre-image that the backend kept stays in its ``.pre`` file), or for another large
        pre-image as journal + decision at once (one round trip on S3): the journal says
        ``committed``, so neither order of landing can be read as an interrupted commit."""
        log = self.ctx.log
        if self._kept():
            journal.kept_pre = 0
            items = [log.record_item(journal, done)]
        elif sum(len(image) for image in journal.pre_images.values()) <= RECORD_INLINE_MAX:
            items = [log.record_item(journal, done)]
        else:
            items = [log.journal_item(journal, durable=False), log.done_item(done, durable=False)]
            self._will_journal()  # either may land alone: a journal alone is found by a listing

        def write() -> None:
            crash_point("before-mark")
            results = self.storage.write_many(items)
            crash_point("marked")
            failed = next((r for r in results if isinstance(r, VfsError)), None)
            if failed is not None:
                raise failed

        failure: VfsError | None = None
        try:
            self.ctx.write_meta(write)
        except VfsError as exc:
            failure = exc
        if failure is None:
            log.remember(done)
            return []
        if self._keep_replaced is not None:  # (a kept file without its record is a leftover)
            try:
                log.delete_quiet(self._keep_replaced)
            except VfsError:
                pass  # swept by the next recovery
        gap = log.mark_gap(journal.txid)
        return [
            f"The change was committed, but its history record could not be written ({failure.message}): "
            + ("undo cannot reach it and will not go past it." if gap else "undo cannot reach it.")
        ]

    def _result(self, journal: Journal, done: DoneRecord, warnings: list[str] | None = None) -> CommitResult:
        return CommitResult(
            journal.txid,
            [Change(path, action) for path, action in done.changes],  # type: ignore[arg-type]
            {self.ctx.display(k): v for k, v in done.versions.items()},
            warnings or [],
        )


def done_record(
    journal: Journal, written: dict[str, str | None], display: Callable[[str], str], *, outcome: str = "committed"
) -> DoneRecord:
    changes: list[tuple[str, str]] = []
    for target in journal.targets:
        if target.after == "directory":
            action = "mkdir"
        elif target.after == "file":
            action = "modify" if target.before == "file" else "add"
        else:
            action = "rmdir" if target.before == "directory" else "delete"
        changes.append((display(target.key), action))
    return DoneRecord(
        journal.txid,
        journal.label,
        journal.created,
        changes,
        written,
        journal.kind,
        journal.reverts,
        outcome,  # type: ignore[arg-type]
        journal.session,
    )


def _gone_is_stale(target: TargetRecord, result: R, display: Callable[[str], str]) -> R | StaleVersion:
    """A file target whose folder is gone (or no longer a folder) when it is written or deleted:
    the file vanished since it was seen, as its own conditional write says when the file alone
    is gone (its folders are not checked apart: see _created_dirs)."""
    if target.before == "file" and isinstance(result, (NotFound, NotADirectory)):
        path = display(target.key)
        return StaleVersion(f'cannot write "{path}": file no longer exists', path=path)
    return result


def _raise_first(results: Sequence[object]) -> None:
    for result in results:
        if isinstance(result, VfsError):
            raise result


__all__ = ["Commit", "crash_point", "done_record"]
