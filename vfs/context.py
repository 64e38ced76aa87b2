"""What transactions, the commit protocol, history and recovery share about one workspace.

A :class:`Context` is built once by the workspace and handed to each of them explicitly, so none
of them reaches into another's private members: the storage seen through vfs errors, the path
mapper (the sandbox), the transaction log, the commit lock, and the limits.
"""

from __future__ import annotations

from collections.abc import Callable
from types import TracebackType

from backends.base import Capabilities, FileInfo
from vfs.errors import Exists, NotFound, RecoveryNeeded, SandboxDenied, VfsError
from vfs.paths import PathMapper
from vfs.recovery import sweep_left_in
from vfs.storage import HeldLock, Locking, Storage
from vfs.txlog import TxLog
from vfs.types import Stat

TYPE_CHECKING = False  # typing's constant, without importing typing at run time (see backends/values.py)
if TYPE_CHECKING:
    from typing import TypeVar

    R = TypeVar("R")


class Context:
    def __init__(
        self,
        storage: Storage,
        mapper: PathMapper,
        capabilities: Capabilities,
        *,
        mode: str,
        max_file_bytes: int,
        lock_timeout: float,
    ) -> None:
        self.storage = storage
        self.mapper = mapper
        self.capabilities = capabilities
        self.mode = mode
        self.max_file_bytes = max_file_bytes
        self.lock_timeout = lock_timeout
        self.meta_key = mapper.meta_key
        self.lock_key = f"{self.meta_key}/lock"
        self.log = TxLog(storage, f"{self.meta_key}/tx", mapper.key_ok, mapper.to_display)
        self._meta_ready = False
        #: Unresolved journals (txid -> why) this workspace knows of: every read, commit and log
        #: refuses while there is one, because the tree may be mid-commit.
        self.unresolved: dict[str, str] = {}

    def display(self, key: str) -> str:
        return self.mapper.to_display(key)

    def key(self, path: str) -> str:
        """The resolved key of a model path (symlinks followed; ``SandboxDenied`` if outside)."""
        return self.resolve(self.mapper.to_key(path))

    def resolve(self, key: str) -> str:
        if not self.capabilities.symlinks:
            return key
        resolved = self.storage.resolve(key)
        base = self.mapper.base_key
        outside = base and not (resolved == base or resolved.startswith(base + "/"))
        if self.mapper.is_meta(resolved) or (outside and not self.mapper.unfenced):
            display = self.display(key)
            raise SandboxDenied(f"The path {display} resolves outside the workspace.", path=display, mode=self.mode)
        return resolved

    def read_key(self, key: str) -> tuple[bytes, FileInfo]:
        return self.storage.read(key, self.max_file_bytes)

    def list_key(self, key: str) -> list[Stat]:
        out = []
        for info in self.storage.list(key):
            if self.mapper.is_meta(info.key) or self.storage.is_temp_name(info.name):
                continue
            out.append(Stat(self.display(info.key), info.kind, info.size, info.mode, info.version))
        return sorted(out, key=lambda s: s.path)

    def ensure_meta(self, *, again: bool = False) -> None:
        """The metadata folders exist (made if not). Checked once per workspace object (a stat
        is a round trip on a remote store), and ``again`` when a write into them found them gone:
        see :meth:`write_meta`."""
        if self._meta_ready and not again:
            return
        for key in (self.meta_key, self.log.tx_key):
            if self.storage.stat(key) is None:
                try:
                    self.storage.mkdir(key)
                except Exists:
                    pass  # another client created it between our stat and mkdir: just as good
        self._meta_ready = True

    def write_meta(self, write: Callable[[], R]) -> R:
        """``write``, a write into the metadata folders (the lock file, a journal, a history
        record), made after :meth:`ensure_meta`; if it fails because they were removed behind
        this open workspace's back (``rm -rf .vfs`` while a server runs: vfs itself never removes
        them), they are made again and ``write`` runs once more, so the commit takes its lock and
        keeps its journal or its history record. The one place that makes them again: backends
        only report the folder missing."""
        self.ensure_meta()
        try:
            return write()
        except NotFound:
            if self.storage.stat(self.log.tx_key) is not None:
                raise  # the folder is there: something else is missing
        self.ensure_meta(again=True)
        return write()

    def commit_lock(self) -> CommitLock:
        """The commit lock. Leaving with an unresolved journal (a failed rollback, recovery that
        could not finish, anything but a vfs error escaping mid-commit) marks it dirty, so the
        next holder looks for that journal (see ``Capabilities.lock_knows_resolved``)."""
        return CommitLock(self)

    def require_resolved(self) -> None:
        """``RecoveryNeeded`` while an interrupted commit is unresolved."""
        if not self.unresolved:
            return
        txid, why = next(iter(sorted(self.unresolved.items())))
        more = f" (and {len(self.unresolved) - 1} more)" if len(self.unresolved) > 1 else ""
        raise RecoveryNeeded(
            f"The workspace is mid-commit: transaction {txid}{more} was interrupted and is not resolved "
            f"({why}). Nothing can be read or changed until `vfs recover` finishes it."
        )


class CommitLock:
    """:meth:`Context.commit_lock` (a class, not a generator: every commit takes it)."""

    def __init__(self, ctx: Context) -> None:
        self._ctx = ctx
        self._locking: Locking | None = None
        self._held: HeldLock | None = None

    def __enter__(self) -> HeldLock:
        ctx = self._ctx
        locking = ctx.storage.lock(ctx.lock_key, ctx.lock_timeout)
        held = self._held = ctx.write_meta(locking.__enter__)  # (a lock file needs its folder)
        self._locking = locking
        if held.left_in is not None:  # every holder, whatever it came for, sweeps a killed one's temp file
            try:
                sweep_left_in(ctx, held.left_in)
            except BaseException as exc:
                self.__exit__(type(exc), exc, exc.__traceback__)
                raise
        return held

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        locking, held = self._locking, self._held
        self._locking = self._held = None
        assert locking is not None and held is not None
        try:
            if self._ctx.unresolved or (exc_type is not None and not issubclass(exc_type, VfsError)):
                held.mark_dirty()
        finally:
            locking.__exit__(exc_type, exc, tb)
