"""Transactions: reads through a staging overlay (read-your-writes), staged changes, and the
hand-over to the commit protocol (``vfs.commit``)."""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable, Iterator
from types import TracebackType

from backends.base import WriteData, data_size, iter_parents, joined, parent_of
from vfs.commit import Commit
from vfs.context import Context
from vfs.errors import (
    Aborted,
    Exists,
    IsADirectory,
    NotADirectory,
    NotFound,
    NotRegularFile,
    SandboxDenied,
    StaleVersion,
    VfsError,
)
from vfs.staging import Overlay, Seen, Staged, State, frozen
from vfs.txlog import Kind
from vfs.types import UNCONDITIONAL, CommitResult, FileChange, Intent, Read, Stat

TYPE_CHECKING = False  # typing's constant, without importing typing at run time (see backends/values.py)
if TYPE_CHECKING:
    from typing import Literal


def _no_prune() -> None:
    return None


class Transaction:
    """A group of reads and changes that commit together or not at all.

    Use as a context manager (commits on normal exit, aborts on an exception) or call
    :meth:`commit` / :meth:`abort`. Not thread-safe: one transaction belongs to one thread.
    """

    def __init__(
        self,
        ctx: Context,
        *,
        label: str = "",
        kind: Kind = "commit",
        reverts: builtins.list[str] | None = None,
        prune: Callable[[], None] = _no_prune,
        session: str | None = None,
    ) -> None:
        self._ctx = ctx
        #: the session (conversation) recorded on the commit (``vfs undo --session`` names it)
        self.session = session
        self._storage = ctx.storage
        self.label = label
        self._kind: Kind = kind
        self._reverts = list(reverts or [])
        self._prune = prune
        self._overlay = Overlay()
        self._seen = self._overlay.seen
        self._staged = self._overlay.staged
        #: folders looked at by a prefetch, taken as first seen when first touched (see prefetch)
        self._prefetched_folders: dict[str, Seen] = {}
        self._resolved: dict[tuple[str, bool], str] = {}  # (key as written, follow) -> key, see _key
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
        """The resolved key of ``path``. Resolved again at each call (a symlink may have moved
        since), except once this transaction holds the key's state (its bytes read, its absence
        seen, or a change staged): then no byte of it is read from the store again (the commit
        writes through handles that refuse a swapped-in symlink) and the first resolution stands
        (an edit reads, then writes, the same path: one resolution, not three)."""
        key = self._ctx.mapper.to_key(path)  # the sandbox's check of the path as written
        known = self._resolved.get((key, follow))
        if known is not None and self._holds(known):
            return known
        resolved = self._resolve(key, follow)
        self._resolved[(key, follow)] = resolved
        return resolved

    def _holds(self, key: str) -> bool:
        if key in self._staged:
            return True
        seen = self._seen.get(key)
        return seen is not None and (seen.data is not None or seen.state == "absent")

    def _resolve(self, key: str, follow: bool) -> str:
        if not follow:
            parent = parent_of(key)
            resolved_parent = self._ctx.resolve(parent) if parent else parent
            name = key.rsplit("/", 1)[-1]
            return f"{resolved_parent}/{name}" if resolved_parent else name
        return self._ctx.resolve(key)

    def _display(self, key: str) -> str:
        return self._ctx.mapper.to_display(key)

    def _see(self, key: str) -> Seen:
        seen = self._seen.get(key)
        if seen is None:
            seen = self._prefetched_folders.pop(key, None) or Seen.of(self._storage.stat(key))
            self._seen[key] = seen
        return seen

    def _parents(self, key: str) -> Iterator[str]:
        """The ancestors of ``key`` below the workspace's base (outermost first)."""
        base_len = len(self._ctx.mapper.base_key)
        return (a for a in iter_parents(key) if len(a) > base_len)

    def _parents_implied(self, key: str) -> bool:
        """Where directories are key prefixes (object stores), a file seen at ``key`` makes its
        ancestors directories: nothing to stat for them, nothing to re-check at commit (the
        file's own conditional write is its check)."""
        seen = self._seen.get(key)
        return seen is not None and seen.state == "file" and not self._ctx.capabilities.real_directories

    def _see_with_parents(self, key: str) -> None:
        """First touch of ``key`` and of its unseen ancestors in one round (concurrent on S3,
        where each would otherwise cost a round trip of its own)."""
        seen = self._seen.get(key)
        if not self._storage.batches or (seen is not None and seen.state == "file"):
            return  # (a file seen: its ancestors are folders, see _require_dir_parents)
        keys = [
            k
            for k in (*self._parents(key), key)
            if k not in self._seen and k not in self._staged and k not in self._prefetched_folders
        ]
        if len(keys) < 2:
            return
        for k, info in zip(keys, self._storage.stat_many(keys), strict=True):
            self._seen[k] = Seen.of(info)

    def _see_by_reading(self, key: str) -> None:
        """First touch of a file about to be replaced: read it rather than stat it. Its bytes are
        the pre-image the commit needs, so the commit does not read it again under the lock (and a
        file changed within the racy window, which a stat would read to hash, is read once). The
        commit still checks, under the lock, that the file holds this version. Anything but a
        readable file (a folder, a special file, one over the size limit) is left to the stat.
        Only where folders are real (local disk): on an object store the key is stat'ed with its
        parents in one concurrent round, which a read first would make two for a new file."""
        if key in self._seen or key in self._staged or not self._ctx.capabilities.real_directories:
            return
        try:
            data, info = self._ctx.read_key(key)
        except NotFound:
            self._seen[key] = Seen("absent")
            return
        except VfsError:
            return
        self._seen[key] = Seen("file", info.version, info.mode, data)

    def _effective(self, key: str) -> State:
        staged = self._staged.get(key)
        return staged.state if staged is not None else self._see(key).state

    def _require_open(self) -> None:
        if self._status != "open":
            raise Aborted(f"This transaction is already {self._status}.")

    def _require_writable(self, path: str) -> None:
        self._require_open()
        if self._ctx.mode == "read-only":
            raise SandboxDenied(f"Cannot modify {path}: the workspace is read-only.", path=path, mode="read-only")

    def _require_dir_parents(self, key: str) -> None:
        if self._parents_implied(key):
            return
        # A file seen at ``key`` was reached through its ancestors: folders, then, unless this
        # transaction staged a change to one (nothing to stat; at commit, the file's own write or
        # version check finds an ancestor changed since).
        seen = self._seen.get(key)
        reached = seen is not None and seen.state == "file"
        for ancestor in self._parents(key):
            if reached and ancestor not in self._staged:
                continue
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
                staged.data = joined(staged.data)  # pieces are joined once, when read back
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
            data, info = self._ctx.read_key(key)
        except NotFound:
            first = self._seen.setdefault(key, Seen("absent"))
            if first.state != "absent":
                raise StaleVersion(f'cannot read "{display}": file no longer exists', path=display) from None
            self._require_dir_parents(key)  # a file where a directory should be: say so, on every backend
            raise
        known = self._seen.get(key)
        if known is None:
            seen = self._seen[key] = Seen("file", info.version, info.mode, data)
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
        keys: dict[str, None] = {}  # ordered, and a membership test that is not a scan
        for path in paths:
            try:
                key = self._key(path)
            except VfsError:
                continue  # reported, in its turn, by the read of that path
            if key not in self._staged and key not in self._seen:
                keys[key] = None
        if len(keys) < 2 or not self._storage.batches:
            return
        folders: dict[str, None] = {}
        if not self._ctx.capabilities.real_directories:
            # The folders a new file's first write stats (``_see_with_parents``) are looked at in
            # this round too, and taken as seen only if a file below them is touched (``_see``).
            # Not where a file was found below them: they are implied (``_parents_implied``).
            folders = {a: None for k in keys for a in self._parents(k) if a not in self._seen and a not in self._staged}
        asked = [*keys, *(a for a in folders if a not in keys)]
        results = dict(zip(asked, self._storage.read_many(asked, self._ctx.max_file_bytes), strict=True))
        implied = {a for k in asked if not isinstance(results[k], VfsError) for a in self._parents(k)}
        for key, result in results.items():
            if key not in keys:  # a folder; anything but a plain verdict is left to its stat
                if key not in implied and isinstance(result, NotFound | IsADirectory):
                    self._prefetched_folders[key] = Seen("absent" if isinstance(result, NotFound) else "directory")
            elif isinstance(result, NotFound):
                self._seen[key] = Seen("absent")
            elif not isinstance(result, VfsError):
                data, info = result
                self._seen[key] = Seen("file", info.version, info.mode, data)

    def stat(self, path: str) -> Stat:
        self._require_open()
        key = self._key(path)
        display = self._display(key)
        staged = self._staged.get(key)
        if staged is not None:
            if staged.state == "absent":
                raise NotFound(f"The path {display} does not exist.", path=display)
            size = data_size(staged.data) if staged.data is not None else 0
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
            for stat in self._ctx.list_key(key):
                children[stat.path] = stat
        for staged_key, staged in self._staged.items():
            if parent_of(staged_key) != key:
                continue
            child = self._display(staged_key)
            if staged.state == "absent":
                children.pop(child, None)
            else:
                size = data_size(staged.data) if staged.data is not None else 0
                kind: State = "file" if staged.state == "file" else "directory"
                children[child] = Stat(child, kind, size, staged.mode, None)  # type: ignore[arg-type]
        return [children[name] for name in sorted(children)]

    # -- changes ------------------------------------------------------------------------------

    def write(self, path: str, data: WriteData, *, intent: Intent = UNCONDITIONAL, mode: int | None = None) -> None:
        """Create or replace the file at ``path``; missing parent directories are created.

        ``data``: the bytes, or a list of pieces (bytes, views of bytes) that the file holds back
        to back: a large edit passes the spans it kept as views of the bytes it read, so they are
        hashed and written where they are, never joined into a second copy of the file.
        """
        self._require_writable(path)
        data = frozen(data)
        key = self._key(path)
        display = self._display(key)
        self._see_by_reading(key)
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
        self._staged[key] = Staged("file", data, mode)

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
            self._ctx.resolve(key)  # a link leading out of the root is a sandbox matter
        if state != "file":
            raise NotRegularFile(f"The path {display} is not a regular file.", path=display)
        if if_version is not None and not self._storage.matches(key, if_version):
            raise StaleVersion(f'cannot delete "{display}": file changed since it was read', path=display)
        self._staged[key] = Staged("absent")

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
        self._staged[key] = Staged("directory")

    def rmdir(self, path: str) -> None:
        """Remove an empty directory."""
        self._require_writable(path)
        if self.list(path):
            display = self._display(self._key(path))
            raise VfsError(f"The directory {display} is not empty.", path=display)
        key = self._key(path)
        self._staged[key] = Staged("absent")

    # -- commit -------------------------------------------------------------------------------

    def abort(self) -> None:
        if self._status == "open":
            self._status = "aborted"

    def staged_changes(self) -> builtins.list[FileChange]:
        """The file changes this transaction would commit, in staging order (for a preview)."""
        out = []
        for key in self._overlay.targets():
            staged, seen = self._staged[key], self._seen[key]
            if "directory" in (staged.state, seen.state):
                continue
            before = seen.data if seen.state == "file" else None
            if seen.state == "file" and before is None:
                before = self._ctx.read_key(key)[0]
            out.append(FileChange(self._display(key), before, joined(staged.data) if staged.data is not None else None))
        return out

    def commit(self) -> CommitResult:
        self._require_open()
        targets = self._overlay.targets()
        if not targets:
            self._status = "committed"
            self.result = CommitResult(None)
            return self.result
        if self._ctx.mode == "read-only":
            raise SandboxDenied("The workspace is read-only.", mode="read-only")
        try:
            self.result = Commit(
                self._ctx, self._overlay, label=self.label, kind=self._kind, reverts=self._reverts, session=self.session
            ).run(targets, self._prune)
        except BaseException:
            self._status = "aborted"
            raise
        self._status = "committed"
        return self.result
