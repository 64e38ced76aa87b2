"""vfs as an fsspec filesystem: protocol ``vfs``, whose ``fs.transaction`` is really atomic.

Registered through the package's ``fsspec.specs`` entry point, so with nothing imported by hand::

    fs = fsspec.filesystem("vfs", target="s3://bucket/ws", target_options={...})
    fsspec.open("vfs::s3://bucket/ws/data.csv", "w", s3={...})
    fsspec.open("vfs::memory://x/a")          # vfs's own memory store "x", file "a"
    UPath("vfs::file:///repo/src/app.py")

This module is the only one of vfs that imports fsspec; ``import vfs`` never loads it.

Paths
    Paths are the target's own (``bucket/ws/data.csv`` for S3, ``/repo/a.py`` on disk, ``/x/a`` in
    memory), confined to the workspace root. The root is ``target`` when given; a chained URL
    (``vfs::s3://bucket/ws/data.csv``) names a file, and its root is the longest root of a vfs
    filesystem already made in this process that contains it, else the file's folder. Name the
    root explicitly (``vfs={"target": ...}``) when a file lies deeper.

Writes
    Every write (``open`` in ``wb``/``xb``/``ab`` and text modes, ``pipe``, ``put``, ``cp``, ``mv``,
    ``rm``, ``mkdir``, ``makedirs``, ``touch``, ``rmdir``) is a vfs transaction: outside
    ``fs.transaction`` each call is one atomic commit (``cp``/``mv``/``put``/``rm`` of many files
    included); inside it, everything commits together at the end of the outermost block, through
    vfs's journal and recovery. A file's bytes are written when it is closed; a file opened inside
    a transaction belongs to it (still open at commit: closed and included; at discard: dropped).

Conflicts
    The filesystem remembers the version of every file it read or wrote; a later write or delete
    of that file is conditional on that version, and every file read inside a transaction is
    checked again at its commit, so a file changed by someone else makes the write or the commit
    fail with ``vfs.StaleVersion`` and nothing of the transaction lands. ``info()["version"]`` is
    that version (``None`` inside a transaction for what it staged); ``ukey``/``checksum`` derive
    from it. Inside a transaction, reads, listings and ``info`` show its own staged changes.

Transactions, nesting and threads
    One transaction per filesystem instance (fsspec hands out one instance per thread and set of
    arguments). ``with fs.transaction:`` blocks nest: an inner block joins the outer one and only
    the outermost exit commits. An exception leaving any block discards the whole transaction; if
    it was caught before the outermost exit, that exit raises ``vfs.Aborted``. A single call that
    fails inside a transaction leaves it as it was if it had staged nothing, and dooms it
    otherwise. Threads sharing one instance share its transaction: their writes join it, and
    calls on one instance take turns (a lock).
"""

from __future__ import annotations

import io
import posixpath
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import fsspec
from fsspec.implementations.chained import ChainedFileSystem
from fsspec.utils import tokenize

import vfs
from backends.values import field, value
from vfs.types import CommitResult, Intent, Stat

#: Roots of the vfs filesystems made in this process: (protocol, options token, root path).
_ROOTS: list[tuple[str, str, str]] = []
_ROOTS_GUARD = threading.Lock()

_LOCAL = ("", "file", "local")


def _protocol_of(url: str) -> str:
    head, sep, _ = url.partition("://")
    if not sep:
        return "file"
    return "file" if head in _LOCAL else head


def _target_class(protocol: str) -> Any:
    try:
        return fsspec.get_filesystem_class(protocol)
    except ValueError:  # a scheme only vfs's backend registry serves
        return None


def _strip(protocol: str, path: str) -> str:
    """``path`` (a URL of ``protocol`` or a plain path) in the target's own path form."""
    cls = _target_class(protocol)
    if cls is None:
        return path.removeprefix(f"{protocol}://").rstrip("/")
    stripped: str = cls._strip_protocol(path)
    return stripped


def _contains(root: str, path: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _known_root(protocol: str, options_token: str, path: str) -> str | None:
    with _ROOTS_GUARD:
        roots = [r for p, t, r in _ROOTS if p == protocol and t == options_token and _contains(r, path)]
    return max(roots, key=len) if roots else None


def _root_of_file(protocol: str, options: dict[str, Any], path: str) -> str:
    """The workspace root of a chained URL's file (see the module docstring)."""
    known = _known_root(protocol, tokenize(options), path)
    if known is not None:
        return known
    parent = posixpath.dirname(path.rstrip("/"))
    return parent or getattr(_target_class(protocol), "root_marker", "") or "/"


def canonical_options(args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """One spelling of the constructor's arguments, so that every way of naming one workspace
    (``target=``, a chained URL's ``fo``/``target_protocol``, a first positional argument) gives
    fsspec the same instance token: files written through ``vfs::`` URLs inside
    ``with fs.transaction:`` then join that transaction."""
    out = dict(kwargs)
    target = out.pop("target", None) or (args[0] if args else None)
    fo = out.pop("fo", None)
    protocol = out.pop("target_protocol", None)
    options = dict(out.pop("target_options", None) or {})
    if target is None and fo is None:
        raise ValueError("vfs filesystem needs target= (a URL such as s3://bucket/ws) or a chained URL")
    if target is not None:
        target = str(target)
        protocol = _protocol_of(target) if "://" in target or protocol is None else protocol
        root = _strip(protocol, target)
    else:
        protocol = protocol or "file"
        root = _root_of_file(protocol, options, _strip(protocol, str(fo)))
    out["target"] = f"{protocol}://{root}"
    out["target_options"] = options
    return out


class _Canonical(type(ChainedFileSystem)):  # type: ignore[misc]
    """fsspec's instance-caching metaclass, fed the canonical arguments."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        return super().__call__(**canonical_options(args, kwargs))


@value
class _Open:
    """The transaction open on a filesystem instance, and how deeply its blocks are nested."""

    tx: vfs.Transaction
    depth: int = 0
    doomed: bool = False
    staged: int = 0  # writes staged so far: a failed call that staged nothing leaves it usable
    touched: set[str] = field(default_factory=set)  # paths already staged (their check is done)
    files: list[_WriteFile] = field(default_factory=list)
    ended: bool = False
    discarded: bool = False


class VfsTransaction:
    """``fs.transaction``: fsspec's transaction protocol (``with``, ``start``, ``complete``)
    over the filesystem's one vfs transaction; blocks nest (see the module docstring)."""

    def __init__(self, fs: VfsFileSystem) -> None:
        self.fs = fs
        # fsspec's open() appends deferred files here; ours are tracked by the vfs transaction.
        self.files: list[Any] = []

    def __enter__(self) -> VfsTransaction:
        self.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *exc: object) -> None:
        self.complete(commit=exc_type is None)

    def start(self) -> None:
        self.fs._enter(label="fsspec transaction")

    def complete(self, commit: bool = True) -> None:
        self.fs._exit(ok=commit)

    @property
    def result(self) -> CommitResult | None:
        """What the last commit of this filesystem did."""
        return self.fs.last_result


class VfsFileSystem(ChainedFileSystem, metaclass=_Canonical):  # type: ignore[misc]
    """An fsspec filesystem over a vfs workspace (see the module docstring)."""

    protocol = "vfs"
    root_marker = ""
    transaction_type = VfsTransaction
    _transaction: VfsTransaction | None

    def __init__(
        self,
        target: str,
        target_options: dict[str, Any] | None = None,
        workspace_options: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.target = target
        self.target_protocol = _protocol_of(target)
        self._root = target.partition("://")[2]
        self._mount = "/" + self._root.strip("/") if self._root.strip("/") else "/"
        options = dict(target_options or {})
        self.workspace = vfs.open_workspace(
            target, storage_options=options, mount=self._mount, **(workspace_options or {})
        )
        self._lock = threading.RLock()
        self._pending: _Open | None = None
        self._seen: dict[str, str] = {}
        self.last_result: CommitResult | None = None
        with _ROOTS_GUARD:
            _ROOTS.append((self.target_protocol, tokenize(options), self._root))

    # -- paths --------------------------------------------------------------------------------

    @classmethod
    def _strip_protocol(cls, path: Any) -> Any:
        if isinstance(path, list):
            return [cls._strip_protocol(p) for p in path]
        text = str(fsspec.utils.stringify_path(path))
        for prefix in ("vfs::", "vfs://"):
            if text.startswith(prefix):
                text = text[len(prefix) :]
        if "://" in text:
            return _strip(_protocol_of(text), text)
        if text.startswith("/"):
            return text.rstrip("/") or "/"
        return text.rstrip("/")

    def unstrip_protocol(self, name: str) -> str:
        return f"vfs::{self.target_protocol}://{name}"

    def _path(self, path: str) -> str:
        """``path`` in the target's form (relative local paths made absolute, and so on)."""
        stripped: str = _strip(self.target_protocol, self._strip_protocol(path))
        return stripped

    def _wp(self, path: str) -> str:
        """The workspace path of a filesystem path (``SandboxDenied`` outside the root)."""
        return "/" + self._path(path).lstrip("/")

    def _fp(self, workspace_path: str) -> str:
        """The filesystem path of a workspace path."""
        return workspace_path if self._root.startswith("/") else workspace_path.lstrip("/")

    def _key(self, path: str) -> str:
        """The normalised filesystem path: what this filesystem's memory of versions is keyed by."""
        return self._fp(self.workspace.to_path(self._wp(path)))

    @property
    def fsid(self) -> str:
        return f"vfs::{self.target}"

    # -- transactions -------------------------------------------------------------------------

    @property
    def transaction(self) -> VfsTransaction:
        if self._transaction is None:
            self._transaction = VfsTransaction(self)
        return self._transaction

    def start_transaction(self) -> VfsTransaction:
        self.transaction.start()
        return self.transaction

    def end_transaction(self) -> None:
        self.transaction.complete(commit=True)

    @property
    def in_transaction(self) -> bool:
        return self._pending is not None

    def _enter(self, label: str) -> _Open:
        with self._lock:
            if self._pending is None:
                self._pending = _Open(self.workspace.transaction(label=label))
                self._intrans = True
            self._pending.depth += 1
            return self._pending

    def _exit(self, ok: bool) -> None:
        with self._lock:
            state = self._pending
            if state is None:
                raise vfs.Aborted("No transaction is open on this filesystem.")
            state.depth -= 1
            state.doomed = state.doomed or not ok
            if state.depth > 0:
                return
            self._pending, self._intrans, self._transaction = None, False, None
            self._finish(state, ok)

    def _finish(self, state: _Open, ok: bool) -> None:
        if not state.doomed:
            try:
                for f in list(state.files):  # still open: its bytes belong to this transaction
                    f.close()
                self._record(state.tx.commit())
            except BaseException:
                self._discard(state)
                raise
            finally:
                state.ended = True
            return
        self._discard(state)
        if ok:  # the outermost block ended normally, but an inner one raised
            raise vfs.Aborted("The transaction was discarded: an exception left a nested block or a call failed.")

    def _discard(self, state: _Open) -> None:
        state.ended = state.discarded = True
        state.tx.abort()
        for f in state.files:
            f.discard()

    def _record(self, result: CommitResult) -> None:
        """Remember the versions this commit wrote (the base of this filesystem's next writes)."""
        self.last_result = result
        for path, version in result.versions.items():
            if version is None:
                self._seen.pop(self._fp(path), None)
            else:
                self._seen[self._fp(path)] = version

    @contextmanager
    def _scope(self, label: str) -> Iterator[_Open]:
        """One call's changes: joined to the open transaction, else one commit of their own.
        The lock is held throughout, so another thread's writes never interleave with them."""
        with self._lock:
            joined = self._pending is not None
            state = self._enter(label)
            before = state.staged
            try:
                yield state
            except BaseException:
                # a call that staged nothing leaves the transaction as it was
                self._exit(ok=joined and state.staged == before)
                raise
            self._exit(ok=True)

    # -- what a transaction or the committed tree shows ---------------------------------------

    def _read(self, path: str) -> bytes:
        wp = self._wp(path)
        with self._lock:
            state = self._pending
            read = state.tx.read(wp) if state is not None else self.workspace.read(wp)
            if read.version is not None:
                self._seen[self._fp(read.path)] = read.version
        return read.data

    def _stat(self, path: str) -> Stat:
        wp = self._wp(path)
        with self._lock:
            state = self._pending
            if state is None:
                return self.workspace.stat(wp)
            try:
                return state.tx.stat(wp)
            except vfs.NotFound:
                if not self._staged_below(state, path):
                    raise
                return Stat(self.workspace.to_path(wp), "directory")

    def _list(self, path: str) -> list[Stat]:
        wp = self._wp(path)
        with self._lock:
            state = self._pending
            if state is None:
                return self.workspace.list(wp)
            try:
                listed = state.tx.list(wp)
            except vfs.NotFound:
                if not self._staged_below(state, path):
                    raise
                listed = []
            return self._with_staged_folders(state, path, listed)

    def _staged_below(self, state: _Open, path: str) -> list[str]:
        """Files staged below ``path`` that still exist in the transaction: vfs creates their
        folders only at commit, but a listing inside the transaction must already show them."""
        prefix = self._key(path).rstrip("/") + "/"
        return [t for t in sorted(state.touched) if t.startswith(prefix) and state.tx.exists(self._wp(t))]

    def _with_staged_folders(self, state: _Open, path: str, listed: list[Stat]) -> list[Stat]:
        prefix = self.workspace.to_path(self._wp(path)).rstrip("/") + "/"
        known = {s.path: s for s in listed}
        for staged in self._staged_below(state, path):
            rest = ("/" + staged.lstrip("/"))[len(prefix) :]
            if "/" in rest:
                folder = prefix + rest.split("/", 1)[0]
                known.setdefault(folder, Stat(folder, "directory"))
            elif prefix + rest not in known:  # a file in a folder the transaction creates
                known[prefix + rest] = state.tx.stat(self._wp(staged))
        return [known[p] for p in sorted(known)]

    def _info(self, stat: Stat) -> dict[str, Any]:
        kind = stat.kind if stat.kind in ("file", "directory") else "other"
        return {"name": self._fp(stat.path), "size": stat.size, "type": kind, "version": stat.version, "mode": stat.mode}

    def info(self, path: str, **kwargs: Any) -> dict[str, Any]:
        return self._info(self._stat(path))

    def ls(self, path: str, detail: bool = True, **kwargs: Any) -> list[Any]:
        stat = self._stat(path)
        entries = [self._info(s) for s in self._list(path)] if stat.is_dir else [self._info(stat)]
        return entries if detail else [e["name"] for e in entries]

    def cat_file(self, path: str, start: int | None = None, end: int | None = None, **kwargs: Any) -> bytes:
        return self._read(path)[start:end]

    def ukey(self, path: str) -> str:
        """Derived from the vfs version (staged files and folders have none: their info)."""
        info = self.info(path)
        return str(tokenize(self.fsid, info["name"], info["version"] or info))

    def checksum(self, path: str) -> int:
        return int(self.ukey(path), 16)

    def created(self, path: str) -> Any:
        raise NotImplementedError("vfs keeps no creation times")

    def modified(self, path: str) -> Any:
        raise NotImplementedError("vfs versions are opaque tokens, not times: see info()['version']")

    # -- writes -------------------------------------------------------------------------------

    def _write(self, state: _Open, path: str, data: bytes, *, create: bool = False) -> None:
        """Stage ``data`` at ``path``: exclusive for ``create``, otherwise conditional on the
        version this filesystem last saw there (checked once per transaction: later writes of the
        same path build on its own staged bytes)."""
        fp = self._key(path)
        intent = vfs.CREATE_IF_ABSENT if create else self._base_intent(state, fp)
        state.tx.write(self._wp(path), bytes(data), intent=intent)
        state.touched.add(fp)
        state.staged += 1

    def _base_intent(self, state: _Open, fp: str) -> Intent:
        seen = None if fp in state.touched else self._seen.get(fp)
        return vfs.replace_if_version(seen) if seen is not None else vfs.UNCONDITIONAL

    def _delete(self, state: _Open, path: str) -> None:
        fp = self._key(path)
        seen = None if fp in state.touched else self._seen.get(fp)
        state.tx.delete(self._wp(path), if_version=seen)
        state.touched.add(fp)
        state.staged += 1

    def pipe_file(self, path: str, value: bytes, mode: str = "overwrite", **kwargs: Any) -> None:
        with self._scope(f"pipe {path}") as state:
            self._write(state, path, value, create=mode == "create")

    def touch(self, path: str, truncate: bool = True, **kwargs: Any) -> None:
        with self._scope(f"touch {path}") as state:
            exists = self.exists(path)
            self._write(state, path, b"" if truncate or not exists else self._read(path))

    def mkdir(self, path: str, create_parents: bool = True, **kwargs: Any) -> None:
        with self._scope(f"mkdir {path}") as state:
            if not create_parents and not self.exists(self._parent(self._path(path))):
                raise FileNotFoundError(f"The parent of {path} does not exist.")
            state.tx.mkdir(self._wp(path), exist_ok=False)
            state.staged += 1

    def makedirs(self, path: str, exist_ok: bool = False) -> None:
        with self._scope(f"makedirs {path}") as state:
            state.tx.mkdir(self._wp(path), exist_ok=exist_ok)
            state.staged += 1

    def rmdir(self, path: str) -> None:
        with self._scope(f"rmdir {path}") as state:
            state.tx.rmdir(self._wp(path))
            state.staged += 1

    def rm_file(self, path: str) -> None:
        with self._scope(f"rm {path}") as state:
            self._delete(state, path)

    def _rm(self, path: str) -> None:
        self.rm_file(path)

    def rm(self, path: Any, recursive: bool = False, maxdepth: int | None = None) -> None:
        with self._scope("rm") as state:
            paths = self.expand_path(path, recursive=recursive, maxdepth=maxdepth)
            for p in sorted(paths, key=lambda p: p.count("/"), reverse=True):  # children first
                if self._stat(p).is_dir:
                    state.tx.rmdir(self._wp(p))
                    state.staged += 1
                else:
                    self._delete(state, p)

    def cp_file(self, path1: str, path2: str, **kwargs: Any) -> None:
        with self._scope(f"cp {path1} {path2}") as state:
            if self._stat(path1).is_dir:
                state.tx.mkdir(self._wp(path2), exist_ok=True)
                state.staged += 1
                return
            self._write(state, path2, self._read(path1))

    def put_file(self, lpath: str, rpath: str, callback: Any = None, mode: str = "overwrite", **kwargs: Any) -> None:
        import os  # the local side of put (here, not at import: only put needs it)

        with self._scope(f"put {rpath}") as state:
            if os.path.isdir(lpath):
                state.tx.mkdir(self._wp(rpath), exist_ok=True)
                state.staged += 1
                return
            with open(lpath, "rb") as f:
                self._write(state, rpath, f.read(), create=mode == "create")

    def _atomic(self, label: str, call: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        with self._scope(label):
            return call(*args, **kwargs)

    def copy(self, *args: Any, **kwargs: Any) -> Any:
        return self._atomic("cp", super().copy, *args, **kwargs)

    def mv(self, *args: Any, **kwargs: Any) -> Any:
        return self._atomic("mv", super().mv, *args, **kwargs)

    def put(self, *args: Any, **kwargs: Any) -> Any:
        return self._atomic("put", super().put, *args, **kwargs)

    def pipe(self, *args: Any, **kwargs: Any) -> Any:
        return self._atomic("pipe", super().pipe, *args, **kwargs)

    # -- files --------------------------------------------------------------------------------

    def _open(self, path: str, mode: str = "rb", **kwargs: Any) -> io.BytesIO:
        if mode == "rb":
            return _ReadFile(self._read(path), self._path(path))
        if mode not in ("wb", "xb", "ab"):
            raise ValueError(f"vfs files open in rb, wb, xb or ab (and text modes), not {mode!r}")
        with self._lock:
            if mode == "xb" and self.exists(path):
                raise FileExistsError(f"The path {path} already exists.")
            initial = self._read(path) if mode == "ab" and self.exists(path) else b""
            f = _WriteFile(self, self._path(path), mode, self._pending, initial)
            if self._pending is not None:
                self._pending.files.append(f)
            return f

    def _close_file(self, f: _WriteFile, data: bytes) -> None:
        """A written file's bytes: into the transaction it was opened in, or one commit."""
        state = f.state
        if state is not None:
            with self._lock:
                if state.discarded:
                    return
                state.files.remove(f)
                self._write(state, f.path, data, create=f.open_mode == "xb")
            return
        # opened outside a transaction: one commit of its own, even if one has opened since
        with self._lock:
            alone = _Open(self.workspace.transaction(label=f"write {f.path}"))
            self._write(alone, f.path, data, create=f.open_mode == "xb")
            self._record(alone.tx.commit())


class _ReadFile(io.BytesIO):
    """The bytes of a file as read (vfs reads a file whole, with its version)."""

    def __init__(self, data: bytes, path: str) -> None:
        super().__init__(data)
        self.path = path
        self.size = len(data)

    def writable(self) -> bool:
        return False

    def write(self, data: Any) -> int:
        raise io.UnsupportedOperation("not writable")


class _WriteFile(io.BytesIO):
    """A file being written: buffered here, written when closed (see ``_close_file``)."""

    def __init__(self, fs: VfsFileSystem, path: str, mode: str, state: _Open | None, initial: bytes) -> None:
        super().__init__(initial)
        self.seek(0, io.SEEK_END)
        self.fs = fs
        self.path = path
        self.open_mode = mode
        self.state = state
        self._dropped = False

    def close(self) -> None:
        if self.closed:
            return
        data = self.getvalue()
        super().close()  # closed even when the write fails, as a builtin file is
        if not self._dropped:
            self.fs._close_file(self, data)

    def discard(self) -> None:
        """The transaction it belongs to was discarded: its bytes go nowhere."""
        self._dropped = True
        super().close()

    def commit(self) -> None:
        self.close()


__all__ = ["VfsFileSystem", "VfsTransaction", "canonical_options"]
