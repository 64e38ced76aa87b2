"""Transactions: a staging overlay with read-your-writes, a read set, and the commit driver.

Commit protocol (see ``docs/architecture.md`` for what each step rests on):

1. preflight, lock held: every path the transaction read or targets is checked against what the
   transaction first saw (``FS_STALE_VERSION`` otherwise); parent directories to create are
   computed; pre-images are taken (reusing bytes already read, never reading twice);
2. the journal (pre-images + intended changes) is written durably before the first target changes;
3. each target is applied atomically on its own, conditionally on the version seen (the backend's
   compare-and-swap, or its check right before the rename);
4. the commit mark (``.done``) is written: this is the commit point;
5. history is pruned.
Any failure in 2-4 rolls back every target already changed and reports the original error,
saying it was rolled back; if the rollback itself fails: ``FS_ROLLBACK_FAILED`` and the journal
stays for recovery.
"""

from __future__ import annotations

import builtins
import os
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Literal

from backends.base import DeleteItem, FileInfo, WriteItem, iter_parents, parent_of
from vfs.errors import (
    Aborted,
    Exists,
    IsADirectory,
    NotADirectory,
    NotFound,
    NotRegularFile,
    RollbackFailed,
    SandboxDenied,
    StaleVersion,
    VfsError,
)
from vfs.journal import DoneRecord, Journal, TargetRecord, digest, new_txid
from vfs.recovery import rollback
from vfs.types import UNCONDITIONAL, Change, CommitResult, Intent, Read, Stat

if TYPE_CHECKING:
    from vfs.workspace import Workspace

State = Literal["file", "absent", "directory", "other", "symlink"]

#: Test-only: name of the commit step at which the process kills itself (crash tests).
_CRASH_AT = os.environ.get("VFS_TEST_CRASH_AT", "")


def crash_point(step: str) -> None:
    if _CRASH_AT and step == _CRASH_AT:
        import signal  # test-only path: not imported otherwise

        os.kill(os.getpid(), signal.SIGKILL)


@dataclass
class _Seen:
    """What the transaction first saw at a key (the base its commit is checked against)."""

    state: State
    version: str | None = None
    mode: int | None = None
    data: bytes | None = None  # the bytes read, reused as the pre-image

    @classmethod
    def of(cls, info: FileInfo | None) -> _Seen:
        """What a stat saw (``None``: nothing there)."""
        return cls(_state_of(info), info.version if info else None, info.mode if info else None)


@dataclass
class _Staged:
    state: Literal["file", "absent", "directory"]
    data: bytes | None = None
    mode: int | None = None


def _state_of(info: FileInfo | None) -> State:
    return "absent" if info is None else info.kind


class Transaction:
    """A group of reads and changes that commit together or not at all.

    Use as a context manager (commits on normal exit, aborts on an exception) or call
    :meth:`commit` / :meth:`abort`. Not thread-safe: one transaction belongs to one thread.
    """

    def __init__(self, workspace: Workspace, *, label: str = "", undo_of: str | None = None) -> None:
        self._ws = workspace
        self._storage = workspace._storage
        self.label = label
        self._undo_of = undo_of
        self._seen: dict[str, _Seen] = {}
        self._staged: dict[str, _Staged] = {}
        self._status: Literal["open", "committed", "aborted"] = "open"
        self.result: CommitResult | None = None

    # -- context manager ----------------------------------------------------------------------

    def __enter__(self) -> Transaction:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._status != "open":
            return
        if exc_type is None:
            self.commit()
        else:
            self.abort()

    # -- key resolution and the staged view ---------------------------------------------------

    def _key(self, path: str, *, follow: bool = True) -> str:
        key = self._ws._mapper.to_key(path)
        if not follow:
            parent = parent_of(key)
            resolved_parent = self._ws._resolve_key(parent) if parent else parent
            name = key.rsplit("/", 1)[-1]
            return f"{resolved_parent}/{name}" if resolved_parent else name
        return self._ws._resolve_key(key)

    def _display(self, key: str) -> str:
        return self._ws._mapper.to_display(key)

    def _see(self, key: str) -> _Seen:
        seen = self._seen.get(key)
        if seen is None:
            info = self._storage.stat(key)
            seen = _Seen.of(info)
            self._seen[key] = seen
        return seen

    def _parents(self, key: str) -> Iterator[str]:
        """The ancestors of ``key`` below the workspace's base (outermost first)."""
        base_len = len(self._ws._mapper.base_key)
        return (a for a in iter_parents(key) if len(a) > base_len)

    def _see_with_parents(self, key: str) -> None:
        """First touch of ``key`` and of its unseen ancestors in one round (concurrent on S3,
        where each would otherwise cost a round trip of its own)."""
        if not self._storage.batches:
            return
        keys = [k for k in (*self._parents(key), key) if k not in self._seen and k not in self._staged]
        if len(keys) < 2:
            return
        for k, info in zip(keys, self._storage.stat_many(keys), strict=True):
            self._seen[k] = _Seen.of(info)

    def _effective(self, key: str) -> State:
        staged = self._staged.get(key)
        return staged.state if staged is not None else self._see(key).state

    def _require_open(self) -> None:
        if self._status != "open":
            raise Aborted(f"This transaction is already {self._status}.")

    def _require_writable(self, path: str) -> None:
        self._require_open()
        if self._ws.mode == "read-only":
            raise SandboxDenied(f"Cannot modify {path}: the workspace is read-only.", path=path, mode="read-only")

    def _require_dir_parents(self, key: str) -> None:
        for ancestor in self._parents(key):
            state = self._effective(ancestor)
            if state in ("file", "other", "symlink"):
                raise NotADirectory(
                    f"A parent of {self._display(key)} is not a directory: {self._display(ancestor)}.",
                    path=self._display(key),
                )

    # -- reads --------------------------------------------------------------------------------

    def read(self, path: str) -> Read:
        """The bytes at ``path`` as this transaction sees them (its own staged writes included)."""
        self._require_open()
        key = self._key(path)
        display = self._display(key)
        staged = self._staged.get(key)
        if staged is not None:
            if staged.state == "file":
                assert staged.data is not None
                return Read(display, staged.data, None, staged.mode)
            if staged.state == "directory":
                raise IsADirectory(f"The path {display} is a directory.", path=display)
            raise NotFound(f"The path {display} does not exist.", path=display)
        cached = self._seen.get(key)
        if cached is not None and cached.state == "file" and cached.data is not None:
            # Read once per transaction: commit re-checks the version, so the bytes stay valid.
            return Read(display, cached.data, cached.version, cached.mode)
        if cached is not None and cached.state == "absent":
            self._require_dir_parents(key)
            raise NotFound(f"The path {display} does not exist.", path=display)
        try:
            data, info = self._ws._read_key(key)
        except NotFound:
            first = self._seen.setdefault(key, _Seen("absent"))
            if first.state != "absent":
                raise StaleVersion(f'cannot read "{display}": file no longer exists', path=display) from None
            self._require_dir_parents(key)  # a file where a directory should be: say so, on every backend
            raise
        known = self._seen.get(key)
        if known is None:
            seen = self._seen[key] = _Seen("file", info.version, info.mode, data)
        else:
            seen = known
            if seen.state != "file" or not self._storage.matches(key, seen.version):
                raise StaleVersion(f'cannot read "{display}": file changed since it was read', path=display)
            if seen.data is None:
                seen.data = data
        return Read(display, data, seen.version, info.mode)

    def read_bytes(self, path: str) -> bytes:
        return self.read(path).data

    def prefetch(self, paths: Iterable[str]) -> None:
        """Read many files at once (concurrently on a batching backend such as S3), so the
        :meth:`read` calls that follow are served from memory. Errors surface at those reads."""
        self._require_open()
        keys = []
        for path in paths:
            try:
                key = self._key(path)
            except VfsError:
                continue  # reported, in its turn, by the read of that path
            if key not in self._staged and key not in self._seen and key not in keys:
                keys.append(key)
        if len(keys) < 2 or not self._storage.batches:
            return
        for key, result in zip(keys, self._storage.read_many(keys), strict=True):
            if isinstance(result, NotFound):
                self._seen[key] = _Seen("absent")
            elif not isinstance(result, VfsError) and len(result[0]) <= self._ws.max_file_bytes:
                data, info = result
                self._seen[key] = _Seen("file", info.version, info.mode, data)

    def stat(self, path: str) -> Stat:
        self._require_open()
        key = self._key(path)
        display = self._display(key)
        staged = self._staged.get(key)
        if staged is not None:
            if staged.state == "absent":
                raise NotFound(f"The path {display} does not exist.", path=display)
            size = len(staged.data) if staged.data is not None else 0
            return Stat(display, "file" if staged.state == "file" else "directory", size, staged.mode, None)
        seen = self._see(key)
        if seen.state == "absent":
            raise NotFound(f"The path {display} does not exist.", path=display)
        info = self._storage.stat(key)
        if info is None:
            raise NotFound(f"The path {display} does not exist.", path=display)
        return Stat(display, info.kind, info.size, info.mode, seen.version)

    def exists(self, path: str) -> bool:
        self._require_open()
        return self._effective(self._key(path)) != "absent"

    def list(self, path: str) -> list[Stat]:
        """Children of a directory, staged changes included, sorted by name."""
        self._require_open()
        key = self._key(path)
        display = self._display(key)
        state = self._effective(key)
        if state == "absent":
            raise NotFound(f"The path {display} does not exist.", path=display)
        if state != "directory":
            raise NotADirectory(f"The path {display} is not a directory.", path=display)
        children: dict[str, Stat] = {}
        if self._see(key).state == "directory":
            for stat in self._ws._list_key(key):
                children[stat.path] = stat
        for staged_key, staged in self._staged.items():
            if parent_of(staged_key) != key:
                continue
            child = self._display(staged_key)
            if staged.state == "absent":
                children.pop(child, None)
            else:
                size = len(staged.data) if staged.data is not None else 0
                kind: State = "file" if staged.state == "file" else "directory"
                children[child] = Stat(child, kind, size, staged.mode, None)  # type: ignore[arg-type]
        return [children[name] for name in sorted(children)]

    # -- changes ------------------------------------------------------------------------------

    def write(self, path: str, data: bytes, *, intent: Intent = UNCONDITIONAL, mode: int | None = None) -> None:
        """Create or replace the file at ``path``; missing parent directories are created."""
        self._require_writable(path)
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError("data must be bytes")
        key = self._key(path)
        display = self._display(key)
        self._see_with_parents(key)
        state = self._effective(key)
        if state == "directory":
            raise IsADirectory(f"The path {display} is a directory.", path=display)
        if state in ("other", "symlink"):
            raise NotRegularFile(f"The path {display} is not a regular file.", path=display)
        if intent.kind == "create_if_absent" and state != "absent":
            raise Exists(f"The path {display} already exists.", path=display)
        if intent.kind == "replace_if_version":
            seen = self._see(key)
            if state == "absent" or seen.state != "file":
                raise StaleVersion(f'cannot write "{display}": file no longer exists', path=display)
            if seen.version != intent.version and not self._storage.matches(key, intent.version):
                raise StaleVersion(f'cannot write "{display}": file changed since it was read', path=display)
        self._require_dir_parents(key)
        if mode is None:
            staged = self._staged.get(key)
            mode = staged.mode if staged is not None else None
        self._staged[key] = _Staged("file", bytes(data), mode)

    def create(self, path: str, data: bytes, *, mode: int | None = None) -> None:
        """Create ``path``; ``Exists`` if something is there (also if it appears before commit)."""
        self.write(path, data, intent=Intent("create_if_absent"), mode=mode)

    def delete(self, path: str, *, if_version: str | None = None) -> None:
        """Delete the file at ``path`` (not a directory; not a symlink)."""
        self._require_writable(path)
        key = self._key(path, follow=False)
        display = self._display(key)
        state = self._effective(key)
        if state == "absent":
            raise NotFound(f"The path {display} does not exist.", path=display)
        if state == "directory":
            raise IsADirectory(f"The path {display} is a directory.", path=display)
        if state == "symlink":
            self._ws._resolve_key(key)  # a link leading out of the root is a sandbox matter
        if state != "file":
            raise NotRegularFile(f"The path {display} is not a regular file.", path=display)
        if if_version is not None and not self._storage.matches(key, if_version):
            raise StaleVersion(f'cannot delete "{display}": file changed since it was read', path=display)
        self._staged[key] = _Staged("absent")

    def move(self, src: str, dst: str, *, overwrite: bool = True) -> None:
        """Rename ``src`` to ``dst`` (a file; its mode goes with it)."""
        self._require_writable(src)
        source = self.read(src)
        src_key = self._key(src)
        dst_key = self._key(dst)
        if src_key == dst_key:
            return
        dst_display = self._display(dst_key)
        state = self._effective(dst_key)
        if state != "absent" and not overwrite:
            raise Exists(f"The path {dst_display} already exists.", path=dst_display)
        self.write(dst, source.data, mode=source.mode if source.mode is not None else None)
        self.delete(src)

    def mkdir(self, path: str, *, exist_ok: bool = True) -> None:
        """Create a directory and any missing parents."""
        self._require_writable(path)
        key = self._key(path)
        display = self._display(key)
        state = self._effective(key)
        if state == "directory":
            if exist_ok:
                return
            raise Exists(f"The directory {display} already exists.", path=display)
        if state != "absent":
            raise Exists(f"The path {display} already exists and is not a directory.", path=display)
        self._require_dir_parents(key)
        self._staged[key] = _Staged("directory")

    def rmdir(self, path: str) -> None:
        """Remove an empty directory."""
        self._require_writable(path)
        if self.list(path):
            display = self._display(self._key(path))
            raise VfsError(f"The directory {display} is not empty.", path=display)
        key = self._key(path)
        self._staged[key] = _Staged("absent")

    # -- commit -------------------------------------------------------------------------------

    def abort(self) -> None:
        if self._status == "open":
            self._status = "aborted"

    def commit(self) -> CommitResult:
        self._require_open()
        targets = [k for k, s in self._staged.items() if not (s.state == "absent" and self._seen[k].state == "absent")]
        if not targets:
            self._status = "committed"
            self.result = CommitResult(None)
            return self.result
        if self._ws.mode == "read-only":
            raise SandboxDenied("The workspace is read-only.", mode="read-only")
        ws = self._ws
        with ws._commit_lock():
            crash_point("locked")
            verified = self._read_pre_images(targets)
            self._check_seen(skip=self._checked_by_the_write(targets) | verified)
            journal = self._prepare_journal(targets)
            if (
                len(journal.targets) == 1
                and not journal.created_dirs
                and "directory"
                not in (
                    journal.targets[0].before,
                    journal.targets[0].after,
                )
            ):
                return self._commit_single(journal)
            journal_key = f"{ws._tx_key}/{journal.txid}.journal"
            written: dict[str, str | None] = {}
            # Targets this commit never changed: not reached yet, or refused by their own
            # condition (a stale version never lands). Rollback leaves them alone: one of them
            # holding someone else's newer bytes is the reason for the rollback, not a problem.
            untouched = {t.key for t in journal.targets}
            try:
                ws._ensure_meta()
                self._storage.write(WriteItem(journal_key, journal.encode_parts(), versioned=False))
                crash_point("journaled")
                for key in journal.created_dirs:
                    self._storage.mkdir(key)
                if self._storage.batches:
                    self._apply_batched(journal, written, untouched)
                else:
                    for index, target in enumerate(journal.targets):
                        untouched.discard(target.key)
                        try:
                            written[target.key] = self._apply(target)
                        except StaleVersion:
                            untouched.add(target.key)
                            raise
                        crash_point(f"applied-{index}")
                done = self._done_record(journal, written)
                crash_point("before-mark")
                self._storage.write(WriteItem(f"{ws._tx_key}/{journal.txid}.done", done.encode(), versioned=False))
                crash_point("marked")
            except VfsError as exc:
                self._status = "aborted"
                outcome = rollback(self._storage, journal, journal_key, untouched=untouched)
                if not outcome.ok:
                    raise RollbackFailed(
                        f"{exc.message} The commit failed and could not be fully rolled back: "
                        + "; ".join(outcome.problems)
                        + ". The journal was kept; run `vfs recover` once the cause is fixed.",
                        path=exc.path,
                    ) from exc
                exc.message = f"{exc.message} The transaction was rolled back; nothing was changed."
                exc.args = (exc.message,)
                raise
            except BaseException:
                # Not an error of ours (a bug, KeyboardInterrupt): still never leave half a change.
                self._status = "aborted"
                rollback(self._storage, journal, journal_key)
                raise
            self._status = "committed"
            if self._undo_of is None:  # an undo's own record is removed right after; it must not evict one
                ws._history.prune()
            crash_point("pruned")
        return self._result(journal, done, written)

    def _commit_single(self, journal: Journal) -> CommitResult:
        """One file, no directory to create: its atomic replace/unlink is the commit point."""
        ws = self._ws
        target = journal.targets[0]
        crash_point("journaled")
        try:
            written = {target.key: self._apply(target)}
        except BaseException:
            self._status = "aborted"
            raise
        crash_point("applied-0")
        self._status = "committed"
        done = self._done_record(journal, written)
        journal.committed = True
        try:  # best effort: losing a record costs an undo step, never the change
            ws._ensure_meta()
            crash_point("before-mark")
            # Both at once (one round trip on S3, one directory handle on disk): the journal says
            # `committed`, so neither order of landing can be read as an interrupted commit.
            self._storage.write_many(
                [
                    WriteItem(
                        f"{ws._tx_key}/{journal.txid}.journal", journal.encode_parts(), durable=False, versioned=False
                    ),
                    WriteItem(f"{ws._tx_key}/{journal.txid}.done", done.encode(), durable=False, versioned=False),
                ]
            )
            crash_point("marked")
        except VfsError:
            pass
        if self._undo_of is None:
            ws._history.prune()
        crash_point("pruned")
        return self._result(journal, done, written)

    def _result(self, journal: Journal, done: DoneRecord, written: dict[str, str | None]) -> CommitResult:
        self.result = CommitResult(
            journal.txid,
            [Change(path, action) for path, action in done.changes],  # type: ignore[arg-type]
            {self._display(k): v for k, v in written.items()},
        )
        return self.result

    def _checked_by_the_write(self, targets: builtins.list[str]) -> set[str]:
        """File targets whose own write or delete will check the version first seen, so the
        preflight need not check them too: all of them where the store enforces the condition
        (S3 If-Match / If-None-Match: one request per file saved), and the only one of a
        single-target commit (its check would come microseconds before the write's own).
        A multi-file commit on a store without CAS keeps its preflight: a stale file found
        there costs nothing, found while applying it costs a rollback."""
        if not (self._ws.capabilities.conditional_write or len(targets) == 1):
            return set()
        return {
            k
            for k in targets
            if self._seen[k].state in ("file", "absent") and self._staged[k].state in ("file", "absent")
        }

    def _check_seen(self, skip: set[str] | frozenset[str] = frozenset()) -> None:
        """Everything read or targeted must still be exactly what this transaction first saw
        (except ``skip``: targets whose conditional write checks them)."""
        plain = [
            (k, s.version if s.state == "file" else None)
            for k, s in self._seen.items()
            if s.state in ("file", "absent") and k not in skip
        ]
        verdicts = dict(zip((k for k, _ in plain), self._storage.matches_many(plain), strict=True))
        others = [k for k in self._seen if k not in verdicts and k not in skip]
        for key, info in zip(others, self._storage.stat_many(others), strict=True):
            verdicts[key] = info is not None and info.kind == self._seen[key].state
        for key, seen in self._seen.items():
            if not verdicts.get(key, True):
                display = self._display(key)
                if seen.state == "absent":
                    raise StaleVersion(
                        f'cannot write "{display}": it was created by someone else meanwhile', path=display
                    )
                if self._storage.stat(key) is None:
                    raise StaleVersion(f'cannot write "{display}": file no longer exists', path=display)
                raise StaleVersion(f'cannot write "{display}": file changed since it was read', path=display)

    def _read_pre_images(self, targets: builtins.list[str]) -> set[str]:
        """Read the targets never read (blind writes and deletes) for their pre-images, under the
        lock; each read is also the check that the file still holds the version first seen, so
        these keys need no other preflight check. Returns them."""
        unread = [k for k in targets if self._seen[k].state == "file" and self._seen[k].data is None]
        for key, result in zip(unread, self._storage.read_many(unread), strict=True):
            path = self._display(key)
            if isinstance(result, NotFound):
                raise StaleVersion(f'cannot write "{path}": file no longer exists', path=path)
            if isinstance(result, VfsError):
                raise result
            data, info = result
            seen = self._seen[key]
            if info.version != seen.version and not self._storage.matches(key, seen.version):
                raise StaleVersion(f'cannot write "{path}": file changed since it was read', path=path)
            seen.data = data
        return set(unread)

    def _apply_order(self, targets: builtins.list[str]) -> builtins.list[str]:
        """Directories to create first (outermost first), then files in staging order, then
        directories to remove (innermost first): each step finds the parent it needs."""

        def phase(key: str) -> tuple[int, int]:
            if self._staged[key].state == "directory":
                return (0, key.count("/"))
            if self._seen[key].state == "directory":
                return (2, -key.count("/"))
            return (1, 0)

        return sorted(targets, key=phase)  # stable: files keep their staging order

    def _prepare_journal(self, targets: builtins.list[str]) -> Journal:
        targets = self._apply_order(targets)
        records: builtins.list[TargetRecord] = []
        pre_images: dict[int, bytes] = {}
        # On an object store a file's prefixes exist by implication: only an explicit directory
        # (a marker object) needs its parents made too.
        real_dirs = self._ws.capabilities.real_directories
        ancestors = sorted(
            {
                a
                for key in targets
                if real_dirs or self._staged[key].state == "directory"
                for a in self._parents(key)
                if a not in targets
            }
        )
        missing = {a for a, info in zip(ancestors, self._storage.stat_many(ancestors), strict=True) if info is None}
        created_dirs = sorted(missing, key=lambda k: (k.count("/"), k))
        for key in targets:
            staged, seen = self._staged[key], self._seen[key]
            record = TargetRecord(
                key=key,
                path=self._display(key),
                before="file" if seen.state == "file" else "directory" if seen.state == "directory" else "absent",
                after=staged.state,
                before_version=seen.version,
                before_mode=seen.mode,
                after_sha=digest(staged.data) if staged.data is not None else None,
                after_mode=staged.mode,
            )
            if seen.state == "file":
                assert seen.data is not None  # read above
                pre_images[len(records)] = seen.data
            records.append(record)
        return Journal(new_txid(), self.label, time.time(), records, created_dirs, self._undo_of, pre_images)

    def _apply(self, target: TargetRecord) -> str | None:
        staged = self._staged[target.key]
        if target.after == "file":
            assert staged.data is not None
            info = self._storage.write(
                WriteItem(
                    target.key,
                    staged.data,
                    mode=staged.mode,
                    if_version=target.before_version if target.before == "file" else None,
                    if_absent=target.before == "absent",
                    digest=target.after_sha,
                )
            )
            return info.version
        if target.after == "directory":
            if self._storage.stat(target.key) is None:
                self._storage.mkdir(target.key)
            return None
        if target.before == "directory":
            if not self._ws.capabilities.real_directories and self._storage.stat(target.key) is None:
                return None  # an object-store "directory" that was only a prefix left with its last file
            self._storage.rmdir(target.key)
        else:
            self._storage.delete(DeleteItem(target.key, target.before_version))
        return None

    def _apply_batched(self, journal: Journal, written: dict[str, str | None], untouched: set[str]) -> None:
        """Directories to create, then all file writes at once, then all file deletes at once,
        then directories to remove (the order of ``_apply_order``). ``untouched`` loses each
        target as it is attempted and gets back those refused by their condition."""
        for target in journal.targets:
            if target.after == "directory":
                untouched.discard(target.key)
                written[target.key] = self._apply(target)
        writes = [t for t in journal.targets if t.after == "file"]
        deletes = [t for t in journal.targets if t.after == "absent" and t.before == "file"]
        items = [
            WriteItem(
                t.key,
                self._staged[t.key].data or b"",
                self._staged[t.key].mode,
                t.before_version if t.before == "file" else None,
                t.before == "absent",
                t.after_sha,
            )
            for t in writes
        ]
        untouched.difference_update(t.key for t in writes)
        results = self._storage.write_many(items)
        for target, result in zip(writes, results, strict=True):
            if isinstance(result, StaleVersion):
                untouched.add(target.key)
            elif not isinstance(result, VfsError):
                written[target.key] = result.version
        errors = [r for r in results if isinstance(r, VfsError)]
        if errors:
            raise errors[0]
        crash_point("applied-writes")
        untouched.difference_update(t.key for t in deletes)
        delete_results = self._storage.delete_many([DeleteItem(t.key, t.before_version) for t in deletes])
        for target, error in zip(deletes, delete_results, strict=True):
            if error is None:
                written[target.key] = None
            elif isinstance(error, StaleVersion):
                untouched.add(target.key)
        failed = [e for e in delete_results if e is not None]
        if failed:
            raise failed[0]
        for target in journal.targets:
            if target.before == "directory" and target.after == "absent":
                untouched.discard(target.key)
                written[target.key] = self._apply(target)

    def _done_record(self, journal: Journal, written: dict[str, str | None]) -> DoneRecord:
        changes: list[tuple[str, str]] = []
        for target in journal.targets:
            if target.after == "directory":
                action = "mkdir"
            elif target.after == "file":
                action = "modify" if target.before == "file" else "add"
            else:
                action = "rmdir" if target.before == "directory" else "delete"
            changes.append((target.path, action))
        return DoneRecord(journal.txid, journal.label, journal.created, changes, written, journal.undo_of)
