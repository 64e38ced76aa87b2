"""The workspace: a backend seen through a mount point, a policy mode, transactions and history."""

from __future__ import annotations

import builtins
import os
from collections.abc import Collection

from backends.base import Backend, Capabilities
from vfs.context import Context
from vfs.errors import InvalidArgument, NotFound, SandboxDenied, Unsupported
from vfs.history import History, Pruned, Rewind
from vfs.paths import META_DIR, MODES, PathMapper
from vfs.recovery import needs_recovery, pending, recover
from vfs.session import ObservationPolicy, Policy, Session
from vfs.storage import Storage, check_root, connect
from vfs.text import decode_text
from vfs.transaction import Transaction
from vfs.txlog import Checkpoint, Kind, TxLog, valid_session_id
from vfs.types import UNCONDITIONAL, CommitResult, HistoryEntry, Intent, Read, RecoveryReport, Stat

TYPE_CHECKING = False  # typing's constant, without importing typing at run time (see backends/values.py)
if TYPE_CHECKING:
    from typing import Any

DEFAULT_MOUNT = "/workspace"
DEFAULT_MAX_FILE_BYTES = 1 << 30
DEFAULT_HISTORY_LIMIT = 50
DEFAULT_LOCK_TIMEOUT = 30.0

_STOCK_POLICY = ObservationPolicy()


class Workspace:
    """A transactional view of one storage root.

    Build one with :func:`open_workspace` (from a URL) or directly from a backend instance.
    Reads outside a transaction see committed state; all changes go through
    :meth:`transaction`.
    """

    def __init__(
        self,
        backend: Backend,
        *,
        mount: str = DEFAULT_MOUNT,
        mode: str = "workspace-write",
        base_key: str = "",
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
        history_limit: int = DEFAULT_HISTORY_LIMIT,
        history_max_bytes: int | None = None,
        lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
        recover_on_open: bool = True,
    ) -> None:
        if mode not in MODES:
            raise InvalidArgument(f"Unknown mode {mode!r}; expected one of: {', '.join(MODES)}")
        if history_limit < 1:
            raise InvalidArgument("history_limit must be at least 1 (the newest record is the commit mark)")
        if history_max_bytes is not None and history_max_bytes < 0:
            raise InvalidArgument("history_max_bytes must be at least 0 (the newest record is always kept)")
        self.backend = backend
        self.mode = mode
        self._mapper = PathMapper(mount, mode, base_key=base_key, unfenced=mode == "danger-full-access")
        storage = Storage(backend, self._mapper.to_display, mode)
        self._ctx = Context(
            storage,
            self._mapper,
            backend.capabilities,
            mode=mode,
            max_file_bytes=max_file_bytes,
            lock_timeout=lock_timeout,
        )
        self._history = History(self._ctx, history_limit, self._history_transaction, history_max_bytes)
        self.last_recovery: RecoveryReport | None = None
        if recover_on_open and mode != "read-only":
            self.last_recovery = self.recover(only_if_needed=True)
        elif pending(self._ctx):
            self._ctx.unresolved.update(dict.fromkeys(pending(self._ctx), "found on open"))

    # -- identity -----------------------------------------------------------------------------

    @property
    def mount(self) -> str:
        return self._mapper.mount

    @property
    def capabilities(self) -> Capabilities:
        return self.backend.capabilities

    @property
    def root(self) -> str:
        return self.backend.describe()

    def __repr__(self) -> str:
        return f"Workspace({self.root!r}, mount={self.mount!r}, mode={self.mode!r})"

    def to_path(self, path: str) -> str:
        """The canonical model-facing path; ``SandboxDenied`` if it leaves the workspace."""
        return self._mapper.to_path(path)

    @property
    def max_file_bytes(self) -> int:
        return self._ctx.max_file_bytes

    @property
    def lock_timeout(self) -> float:
        return self._ctx.lock_timeout

    @property
    def txlog(self) -> TxLog:
        """The records under ``.vfs/tx`` (low level: for tools that inspect interrupted commits)."""
        return self._ctx.log

    @property
    def lock_key(self) -> str:
        """The key of the commit lock (for tools that check whether it is held)."""
        return self._ctx.lock_key

    @property
    def unresolved(self) -> dict[str, str]:
        """Interrupted commits this workspace knows are not resolved (txid -> why)."""
        return dict(self._ctx.unresolved)

    def _key(self, path: str) -> str:
        self._ctx.require_resolved()
        return self._ctx.key(path)

    # -- reads --------------------------------------------------------------------------------

    def stat(self, path: str) -> Stat:
        key = self._key(path)
        info = self._ctx.storage.stat(key)
        display = self._mapper.to_display(key)
        if info is None:
            raise NotFound(f"The path {display} does not exist.", path=display)
        return Stat(display, info.kind, info.size, info.mode, info.version)

    def exists(self, path: str) -> bool:
        return self._ctx.storage.stat(self._key(path)) is not None

    def read(self, path: str) -> Read:
        key = self._key(path)
        data, info = self._ctx.read_key(key)
        return Read(self._mapper.to_display(key), data, info.version, info.mode)

    def read_bytes(self, path: str) -> bytes:
        return self.read(path).data

    def read_text(self, path: str) -> str:
        result = self.read(path)
        return decode_text(result.data, result.path)

    def list(self, path: str) -> list[Stat]:
        """Direct children sorted by path; the metadata folder and temp files are never shown."""
        return self._ctx.list_key(self._key(path))

    def is_current(self, path: str, version: str | None) -> bool:
        return self._ctx.storage.matches(self._key(path), version)

    # -- changes ------------------------------------------------------------------------------

    def transaction(self, *, label: str = "", session: str | None = None) -> Transaction:
        """A new transaction; ``session`` (a conversation's id, e.g. ``Session.id``) is recorded
        on its commit, so ``undo(session=...)`` can find it."""
        self._ctx.require_resolved()
        return Transaction(self._ctx, label=label, prune=self._history.prune, session=_session_id(session))

    def _history_transaction(
        self, label: str, kind: Kind, reverts: builtins.list[str], session: str | None
    ) -> Transaction:
        self._ctx.require_resolved()
        return Transaction(
            self._ctx, label=label, kind=kind, reverts=reverts, prune=self._history.prune, session=session
        )

    def write_bytes(self, path: str, data: bytes, *, intent: Intent = UNCONDITIONAL) -> CommitResult:
        """A one-operation transaction (convenience)."""
        with self.transaction(label=f"write {path}") as tx:
            tx.write(path, data, intent=intent)
        assert tx.result is not None
        return tx.result

    def write_text(self, path: str, text: str, *, intent: Intent = UNCONDITIONAL) -> CommitResult:
        return self.write_bytes(path, text.encode("utf-8"), intent=intent)

    def session(self, policy: Policy | None = _STOCK_POLICY, *, id: str | None = None) -> Session:
        """A new observation session; ``policy=None`` turns the observation policy off. ``id``
        names the conversation on its commits (default: a fresh random id)."""
        return Session(self, policy, id=_session_id(id))

    # -- history and recovery -----------------------------------------------------------------

    def log(self, limit: int = 20, *, session: str | None = None) -> builtins.list[HistoryEntry]:
        """Commits in effect, newest first; with ``session``, only that session's."""
        return self._history.log(limit, session)

    def undo(self, expected_txid: str | None = None, *, session: str | None = None) -> HistoryEntry:
        """Revert the newest transaction; with ``expected_txid``, only if it is still that one.
        With ``session``: that session's newest, while other sessions' later commits stay, refused
        (naming them) if one of those changed the same files."""
        if self.mode == "read-only":
            raise SandboxDenied("Cannot undo: the workspace is read-only.", mode=self.mode)
        return self._history.undo(expected_txid, _session_id(session))

    def redo(self, *, session: str | None = None) -> HistoryEntry:
        """Take back the newest undo or rewind (if nothing was committed since), guarded the same way;
        with ``session``, that session's newest."""
        self._require_writable("redo")
        return self._history.redo(_session_id(session))

    def rewind(self, to: str, *, dry_run: bool = False, session: str | None = None) -> Rewind:
        """Revert, as one transaction, every commit in effect after ``to`` (a checkpoint name or a
        txid); with ``session``, only that session's (refused if another session changed the same
        files after them). Refused as a whole, listing each file changed outside those commits since.
        ``dry_run``: the same checks and the changes it would make, nothing committed."""
        if not dry_run:
            self._require_writable("rewind")
        return self._history.rewind(to, dry_run=dry_run, session=_session_id(session))

    def checkpoint(self, name: str) -> Checkpoint:
        """Name the current point of history (``rewind(name)`` comes back to it)."""
        self._require_writable("checkpoint")
        return self._history.checkpoint(name)

    def checkpoints(self) -> builtins.list[Checkpoint]:
        return self._history.checkpoints()

    def prune(
        self, *, keep: int | None = None, max_bytes: int | None = None, dry_run: bool = False
    ) -> builtins.list[str]:
        """Forget all but the newest ``keep`` records, and the oldest beyond ``max_bytes`` (never
        one a checkpoint needs; ``None``: the workspace's ``history_limit`` / ``history_max_bytes``);
        the txids dropped. :meth:`prune_report` says more."""
        return self.prune_report(keep=keep, max_bytes=max_bytes, dry_run=dry_run).dropped

    def prune_report(self, *, keep: int | None = None, max_bytes: int | None = None, dry_run: bool = False) -> Pruned:
        """As :meth:`prune`: what was (``dry_run``: would be) dropped, the bytes freed, what a
        checkpoint kept beyond the limits, and what the history holds after."""
        if not dry_run:
            self._require_writable("prune")
        if (keep is not None and keep < 1) or (max_bytes is not None and max_bytes < 0):
            raise InvalidArgument("prune keeps at least 1 record and at least 0 bytes.")
        self._ctx.require_resolved()
        return self._history.prune_now(keep, max_bytes, dry_run=dry_run)

    def history_usage(self) -> tuple[int, int]:
        """How many committed records the history holds and their bytes (for ``vfs log``)."""
        return self._history.usage()

    def _require_writable(self, what: str) -> None:
        if self.mode == "read-only":
            raise SandboxDenied(f"Cannot {what}: the workspace is read-only.", mode=self.mode)

    def recover(self, *, only_if_needed: bool = False, discard: Collection[str] = ()) -> RecoveryReport:
        """Finish interrupted commits (takes the commit lock). ``discard``: txids of corrupt
        records to set aside once their files have been checked by hand."""
        if only_if_needed and not discard and not needs_recovery(self._ctx):
            return RecoveryReport()
        if self.mode == "read-only":
            raise SandboxDenied("Cannot recover: the workspace is read-only.", mode=self.mode)
        with self._ctx.commit_lock():
            self.last_recovery = recover(self._ctx, discard=discard)
        return self.last_recovery

    def pending(self) -> builtins.list[str]:
        """Txids of commits whose journal has no decision yet (interrupted, or in flight in
        another process): one listing of the metadata folder."""
        return pending(self._ctx)

    def close(self) -> None:
        self.backend.close()

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _session_id(session: str | None) -> str | None:
    if session is not None and not valid_session_id(session):
        raise InvalidArgument(
            f"Invalid session id {session!r}: use letters, digits, '.', '_', ':' and '-' (at most 64)."
        )
    return session


def _split_root(root: Any, storage_options: dict[str, Any] | None) -> tuple[str, dict[str, Any]]:
    options = dict(storage_options or {})
    if hasattr(root, "storage_options") and hasattr(root, "protocol"):  # a universal_pathlib UPath
        options = {**dict(root.storage_options), **options}
        protocol = root.protocol
        text = str(root)
        if protocol in ("", "file", "local") and "://" in text:
            text = text.split("://", 1)[1]
        return text, options
    if isinstance(root, os.PathLike):
        return os.fspath(root), options
    if isinstance(root, str):
        return root, options
    raise InvalidArgument(f"A workspace root must be a path or URL string, got {type(root).__name__}")


def open_workspace(
    root: Any,
    *,
    mode: str = "workspace-write",
    mount: str | None = None,
    storage_options: dict[str, Any] | None = None,
    **options: Any,
) -> Workspace:
    """Open a workspace on a local path, ``file://``, ``memory://name``, ``s3://bucket/prefix``,
    any fsspec URL, or a UPath. See :class:`Workspace` for ``options``."""
    if mode not in MODES:
        raise InvalidArgument(f"Unknown mode {mode!r}; expected one of: {', '.join(MODES)}")
    url, opts = _split_root(root, storage_options)
    backend = connect(url, opts)
    check_root(backend, str(root))
    is_local = backend.name == "local"
    if mode == "danger-full-access":
        if not is_local:
            raise Unsupported("danger-full-access is only available on local disk.")
        from backends.local import LocalBackend  # local only, by definition of the mode

        real_root = backend.describe()
        unfenced = LocalBackend("/", fsync=getattr(backend, "fsync", True))
        return Workspace(unfenced, mount=mount or real_root, mode=mode, base_key=real_root.strip("/"), **options)
    if mount is None:
        mount = backend.describe() if is_local else DEFAULT_MOUNT
    return Workspace(backend, mount=mount, mode=mode, **options)


__all__ = ["DEFAULT_MOUNT", "META_DIR", "Workspace", "open_workspace"]
