"""Rolling a journal back (after a failed commit, or after a crash) and recovering a workspace.

Rollback is decided per target by content, not by trust: a target that still holds its
pre-image is left alone, one that holds exactly what the commit wrote is restored (conditionally,
against the version just seen, so a store with compare-and-swap never clobbers a newer write), and
anything else was written by someone else meanwhile: it is left in place and reported, never
hidden. The same code serves an in-process failure and a crash found later by recovery.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

from backends.base import TEMP_MARKER, DeleteItem, WriteItem, parent_of
from vfs.errors import VfsError
from vfs.journal import DoneRecord, Journal, TargetRecord, digest
from vfs.storage import Storage
from vfs.types import RecoveryReport


@dataclass
class RollbackOutcome:
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def _restore_target(storage: Storage, journal: Journal, index: int, target: TargetRecord) -> str | None:
    """Put one target back to its pre-image; a problem description if that cannot be done safely."""
    current = storage.stat(target.key)
    if target.before == "directory" or target.after == "directory":
        return _restore_directory(storage, target, current is not None and current.kind == "directory", current)
    if current is not None and current.kind != "file":
        return f"{target.path} is now a {current.kind}; left as is"
    data: bytes | None = None
    current_version = None
    if current is not None:
        data, info = storage.read(target.key)
        current_version = info.version
    # The pre-image is in the journal: compare bytes (no hash of it is ever needed).
    holds_before = (target.before == "absent" and data is None) or (
        target.before == "file" and data is not None and data == journal.pre_images[index]
    )
    if holds_before:
        return None
    holds_after = (target.after == "absent" and data is None) or (
        target.after == "file" and data is not None and digest(data) == target.after_sha
    )
    if not holds_after:
        return f"{target.path} was changed by someone else during the commit; left as is"
    if target.before == "file":
        storage.write(
            WriteItem(
                target.key,
                journal.pre_images[index],
                mode=target.before_mode,
                if_version=current_version,
                if_absent=current is None,
            )
        )
    else:
        storage.delete(DeleteItem(target.key, current_version))
    return None


def _restore_directory(storage: Storage, target: TargetRecord, is_dir: bool, current: object) -> str | None:
    if target.before == "directory" and not is_dir:
        if current is not None:
            return f"{target.path} is no longer a directory; left as is"
        storage.mkdir(target.key)
    elif target.before == "absent" and is_dir:
        _remove_empty_dir(storage, target.key)
    return None


def _remove_empty_dir(storage: Storage, key: str) -> None:
    if storage.list(key):
        return  # someone else's files live here now: keep them (and the directory)
    storage.rmdir(key)


def rollback(
    storage: Storage, journal: Journal, journal_key: str | None, *, untouched: Collection[str] = ()
) -> RollbackOutcome:
    """Undo every target of ``journal`` (newest first), remove directories it created, then the
    journal itself. Never raises for a storage error: problems are collected and returned.

    ``untouched``: keys the failed commit knows it never changed (recovery after a crash knows
    nothing, and checks every target)."""
    outcome = RollbackOutcome()
    for index in range(len(journal.targets) - 1, -1, -1):
        target = journal.targets[index]
        if target.key in untouched:
            continue
        try:
            problem = _restore_target(storage, journal, index, target)
        except VfsError as exc:
            problem = f"could not restore {target.path}: {exc.message}"
        if problem:
            outcome.problems.append(problem)
    for key in reversed(journal.created_dirs):
        try:
            info = storage.stat(key)
            if info is not None and info.kind == "directory":
                _remove_empty_dir(storage, key)
        except VfsError as exc:
            outcome.problems.append(f"could not remove the directory {storage.display(key)}: {exc.message}")
    if outcome.ok and journal_key is not None:
        try:
            if storage.stat(journal_key) is not None:
                storage.delete(DeleteItem(journal_key))
        except VfsError:
            pass  # harmless: a later recovery finds every target already restored and retries this
    return outcome


def sweep_temp_files(storage: Storage, directories: set[str]) -> None:
    """Delete temp files a crashed write left next to its target."""
    for directory in sorted(directories):
        try:
            entries = storage.list(directory)
        except VfsError:
            continue
        for entry in entries:
            if entry.kind == "file" and TEMP_MARKER in entry.name and entry.name.startswith("."):
                try:
                    storage.delete(DeleteItem(entry.key))
                except VfsError:
                    continue


def recover(storage: Storage, tx_key: str) -> RecoveryReport:
    """Roll back every interrupted commit found under ``tx_key``. Call with the commit lock held."""
    report = RecoveryReport()
    try:
        entries = storage.list(tx_key)
    except VfsError:
        return report  # no metadata folder yet: nothing was ever committed here
    names = {e.name for e in entries}
    sweep_dirs: set[str] = set()
    if any(TEMP_MARKER in name for name in names):
        sweep_dirs.add(tx_key)
    for name in sorted(names):
        if not name.endswith(".journal"):
            continue
        txid = name[: -len(".journal")]
        if f"{txid}.done" in names:
            continue
        key = f"{tx_key}/{name}"
        data, _ = storage.read(key)
        journal = Journal.decode(data)
        if journal.committed:  # the history record of a landed single-target commit, half written
            storage.delete(DeleteItem(key))
            report.finished.append(txid)
            continue
        # Temp files first: a directory the commit created can only be removed once it is empty.
        sweep_temp_files(storage, {parent_of(t.key) for t in journal.targets})
        outcome = rollback(storage, journal, key)
        if outcome.ok:
            report.rolled_back.append(txid)
        else:
            report.conflicts.extend(f"{txid}: {p}" for p in outcome.problems)
    sweep_temp_files(storage, sweep_dirs)
    for name in sorted(names):  # a lone .done is the harmless leftover of interrupted pruning
        if name.endswith(".done") and f"{name[: -len('.done')]}.journal" not in names:
            storage.delete(DeleteItem(f"{tx_key}/{name}"))
            report.finished.append(name[: -len(".done")])
    return report


def read_done(storage: Storage, key: str) -> DoneRecord:
    data, _ = storage.read(key)
    return DoneRecord.decode(data)
